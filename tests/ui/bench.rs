//! Benchmarks, ignored by default (figures go to docs/benchmarks*.md):
//! `cargo test --release --test ui bench_ -- --ignored --nocapture`

use crate::fixtures::*;
use earmark::domain::*;
use earmark::runtime::cache;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Instant;

const WORDS: &[&str] = &[
    "whale", "river", "night", "garden", "iron", "silent", "empire", "winter", "glass", "shadow",
    "crown", "harbor", "storm", "letters", "mountain", "secret", "journey", "island", "stone",
    "fire",
];

pub(crate) fn big_library(n: usize) -> Vec<Book> {
    (0..n)
        .map(|i| {
            let w = |k: usize| WORDS[(i / WORDS.len().pow(k as u32)) % WORDS.len()];
            let mut b = book(
                &format!("b{i}"),
                &format!("The {} of the {} {} {i}", w(0), w(1), w(2)),
                w(3),
                3600.0 + i as f64,
            );
            if i % 7 == 0 {
                b.progress = Some(progress("c1", 10.0, 100.0, i % 21 == 0));
            }
            b
        })
        .collect()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[test]
#[ignore]
fn bench_start_to_first_frame_100k_cached() {
    let dir = tempfile::tempdir().unwrap();
    let scope = cache::Scope {
        server_id: ServerId::new("s"),
        user_id: UserId::from(1),
    };
    cache::save(dir.path(), &scope, &big_library(100_000)).unwrap();
    let size = std::fs::metadata(cache::path(dir.path(), &scope))
        .unwrap()
        .len();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        // What the player does: the head for the first frame; the rest is
        // read on the backend thread (timed separately below).
        let books = cache::load_head(dir.path(), &scope, 200).unwrap();
        let t_load = t.elapsed().as_secs_f64() * 1000.0;
        let mut app = App::new(Default::default(), Default::default());
        app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
            address: "http://127.0.0.1:8686/api/v1".into(),
            user: "u".into(),
            profile: None,
        })));
        app.update(Event::Answer(Answer::LibraryHead(books)));
        let t_state = t.elapsed().as_secs_f64() * 1000.0;
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        term.draw(|f| views::render(&mut app, &Theme::default(), f))
            .unwrap();
        println!(
            "  cache read+decode {t_load:.1} ms, state {:.1} ms, frame {:.1} ms",
            t_state - t_load,
            t.elapsed().as_secs_f64() * 1000.0 - t_state
        );
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let t = Instant::now();
    let all = cache::load(dir.path(), &scope).unwrap();
    let mut app = App::new(Default::default(), Default::default());
    app.update(Event::Answer(Answer::Library {
        books: all,
        from_cache: true,
    }));
    println!(
        "  whole cache read + library state (background): {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    times.sort_by(f64::total_cmp);
    println!(
        "start to first frame, 100k cached books ({:.1} MB cache): median {:.1} ms, max {:.1} ms",
        size as f64 / 1e6,
        pct(&times, 0.5),
        pct(&times, 1.0)
    );
}

#[test]
#[ignore]
fn bench_keystroke_to_frame_fuzzy_100k() {
    let mut app = App::new(Default::default(), Default::default());
    app.update(Event::Answer(Answer::Library {
        books: big_library(100_000),
        from_cache: true,
    }));
    app.screen = Screen::Library;
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let theme = Theme::default();
    app.update(key('/'));
    let mut times = Vec::new();
    let mut scan_frames = 0;
    for _ in 0..10 {
        for c in ["w", "h", "a", "l", "e", " ", "s", "t", "o", "r", "m"]
            .iter()
            .flat_map(|s| s.chars())
        {
            // The keystroke's frame, then one frame per remaining scan
            // chunk, as the event loop runs them (each is a sample).
            let mut ev = key(c);
            loop {
                let t = Instant::now();
                app.update(ev);
                let t_up = t.elapsed().as_secs_f64() * 1000.0;
                term.draw(|f| views::render(&mut app, &theme, f)).unwrap();
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                if *times.last().unwrap() > 16.0 {
                    println!(
                        "  slow: {c:?} update {t_up:.1} ms total {:.1} ms",
                        times.last().unwrap()
                    );
                }
                if !app.library.searching() {
                    break;
                }
                scan_frames += 1;
                ev = Event::Tick(0);
            }
        }
        for _ in 0..11 {
            let t = Instant::now();
            app.update(code(KeyCode::Backspace));
            term.draw(|f| views::render(&mut app, &theme, f)).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "keystroke to frame, fuzzy over 100k titles: n={} ({scan_frames} of them follow-up scan frames) p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        pct(&times, 0.5),
        pct(&times, 0.99),
        pct(&times, 1.0)
    );
}
