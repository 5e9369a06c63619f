//! Smart rewind: the reducer's rule (pause → rewind by the curve, inside
//! the chapter), and the whole way through the player's backends, the real
//! engine on the null output and the reference server.

use crate::backend::{demo_library, log_in};
use crate::fixtures::*;
use earmark::api::BookQuery;
use earmark::domain::*;
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::server::testing::TestServer;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::keymap::{KeyCode, Keymap};
use earmark::ui::state::rewind::RewindCurve;
use earmark::ui::state::*;
use earmark::ui::terminal::LoopEvent;
use std::time::{Duration, Instant};

fn view(state: PlayState, chapter: &str, position: f64) -> Event {
    Event::Answer(Answer::Engine(EngineView {
        playback_id: 1,
        book: BookId::new("moby"),
        chapter: ChapterId::new(chapter),
        position,
        state,
        speed: 1.25,
        volume: 0.8,
    }))
}

fn engine(fx: &[Effect]) -> Vec<EngineCmd> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Engine(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn paused_for(app: &mut App, ms: u64) -> Vec<Effect> {
    let t = app.now;
    app.update(view(PlayState::Paused, "moby-2", 600.0));
    app.update(Event::Tick(t + ms));
    app.update(key(' '))
}

#[test]
fn a_ten_minute_pause_rewinds_ten_seconds_before_playing_and_remembers_the_place() {
    let mut app = playing();
    let fx = paused_for(&mut app, 600_000);
    assert_eq!(
        engine(&fx),
        [
            EngineCmd::Seek {
                chapter: ChapterId::new("moby-2"),
                position: 590.0
            },
            EngineCmd::Toggle
        ]
    );
    assert!(fx.iter().any(|e| matches!(e, Effect::MarkPlace { mark, .. }
        if mark.cause == JumpCause::Rewind && mark.position == 600.0)));
}

#[test]
fn a_short_pause_does_not_rewind() {
    let mut app = playing();
    assert_eq!(engine(&paused_for(&mut app, 5_000)), [EngineCmd::Toggle]);
}

#[test]
fn the_rewind_stops_at_the_chapter_start() {
    let mut app = playing();
    app.update(view(PlayState::Playing, "moby-2", 4.0));
    let t = app.now;
    app.update(view(PlayState::Paused, "moby-2", 4.0));
    app.update(Event::Tick(t + 3_600_000));
    let fx = app.update(key(' '));
    assert_eq!(
        engine(&fx)[0],
        EngineCmd::Seek {
            chapter: ChapterId::new("moby-2"),
            position: 0.0
        }
    );
}

#[test]
fn a_stall_rewinds_once_playback_comes_back() {
    let mut app = playing();
    let t = app.now;
    app.update(view(PlayState::Stalled, "moby-2", 600.0));
    app.update(Event::Tick(t + 120_000));
    let fx = app.update(view(PlayState::Playing, "moby-2", 600.0));
    assert!(
        // Two minutes: between 2 s (a minute) and 10 s (ten minutes).
        matches!(engine(&fx).as_slice(), [EngineCmd::Seek { position, .. }] if (596.0..598.0).contains(position)),
        "{fx:?}"
    );
}

#[test]
fn resuming_a_book_half_an_hour_after_its_place_was_saved_rewinds() {
    let mut app = book_open();
    // The place was saved at 1_700_000_000_000 (the fixture's progress).
    app.clock_origin = 1_700_000_000_000 + 30 * 60_000 - app.now as i64;
    app.update(key(' '));
    let fx = app.update(view(PlayState::Playing, "moby-2", 600.0));
    // 30 min: 10 s + (1800 - 600) / (3600 - 600) × 20 s = 18 s.
    assert!(
        matches!(engine(&fx).as_slice(), [EngineCmd::Seek { position, .. }] if (*position - 582.0).abs() < 0.01),
        "{fx:?}"
    );
    // Only once: the next state plays on.
    assert!(engine(&app.update(view(PlayState::Playing, "moby-2", 583.0))).is_empty());
}

#[test]
fn off_in_config_means_no_rewind() {
    let mut app = playing();
    app.settings.smart_rewind = None;
    assert_eq!(engine(&paused_for(&mut app, 600_000)), [EngineCmd::Toggle]);
}

/// The player's whole path: the reducer's rewind goes to the engine as a
/// seek, and sync reports the earlier place to the server like any seek.
#[test]
fn a_rewind_after_a_pause_reaches_the_engine_and_the_server() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let (book, manifest) = rt.block_on(async {
        for b in c.books(&BookQuery::default()).await.unwrap() {
            let m = c.manifest(&b.id).await.unwrap();
            if m.items[0].duration.unwrap_or(0.0) > 60.0 {
                return (b, m);
            }
        }
        panic!("no demo book with a chapter over a minute");
    });
    let ch0 = manifest.items[0].chapter_id.clone();
    let mut settings = UiSettings::default();
    // Any pause over 0.1 s rewinds 5 s (the default needs minutes).
    settings.smart_rewind = Some(RewindCurve::new(vec![(0.0, 0.0), (0.1, 5.0)]).unwrap());
    let mut app = App::new(Keymap::default(), settings);
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(ui, profile, Some(done.session), AudioMode::Null).unwrap();
    let start = Instant::now();
    let step = |app: &mut App, live: &mut Live, ev: Option<Event>| {
        let mut fx = app.update(Event::Tick(start.elapsed().as_millis() as u64));
        if let Some(ev) = ev {
            fx.extend(app.update(ev));
        }
        for e in fx {
            live.handle(e);
        }
    };
    step(
        &mut app,
        &mut live,
        Some(Event::Answer(Answer::LoggedIn(SessionInfo {
            address: server.base_url().to_owned(),
            user: server.username.clone(),
            profile: None,
        }))),
    );
    step(
        &mut app,
        &mut live,
        Some(Event::Answer(Answer::Library {
            books: vec![book.clone()],
            from_cache: false,
        })),
    );
    step(&mut app, &mut live, Some(code(KeyCode::Enter)));
    step(
        &mut app,
        &mut live,
        Some(Event::Answer(Answer::BookLoaded {
            book: book.clone(),
            manifest: Some(manifest.clone()),
            bookmarks: vec![],
        })),
    );
    step(&mut app, &mut live, Some(code(KeyCode::Enter))); // play chapter 1 from 0
    // Follow the answers until `done` holds.
    let follow = |app: &mut App, live: &mut Live, what: &str, done: &dyn Fn(&App) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(app) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(LoopEvent::App(ev)) => step(app, live, Some(ev)),
                Ok(_) => {}
                Err(_) => panic!("timed out waiting for {what}"),
            }
        }
    };
    let at = |app: &App| {
        app.playing
            .as_ref()
            .and_then(|p| p.engine.clone())
            .map(|e| (e.state, e.chapter, e.position))
    };
    follow(
        &mut app,
        &mut live,
        "playing past 7 s",
        &|a| matches!(at(a), Some((PlayState::Playing, _, p)) if p >= 7.0),
    );
    step(&mut app, &mut live, Some(key(' ')));
    follow(&mut app, &mut live, "paused", &|a| {
        matches!(at(a), Some((PlayState::Paused, _, _)))
    });
    let paused_at = at(&app).unwrap().2;
    std::thread::sleep(Duration::from_millis(300)); // the pause itself
    step(&mut app, &mut live, Some(key(' ')));
    follow(
        &mut app,
        &mut live,
        "playing again, 5 s earlier",
        &|a| matches!(at(a), Some((PlayState::Playing, ref c, p)) if *c == ch0 && p < paused_at - 3.5),
    );
    step(&mut app, &mut live, Some(key(' ')));
    follow(&mut app, &mut live, "paused again", &|a| {
        matches!(at(a), Some((PlayState::Paused, _, _)))
    });
    let marks = app.history.of(&book.id).to_vec();
    assert!(
        marks
            .iter()
            .any(|m| m.cause == JumpCause::Rewind && (m.position - paused_at).abs() < 0.5),
        "{marks:?}"
    );
    live.shutdown();
    let p = rt.block_on(c.progress(&book.id)).unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch0);
    assert!(
        p.position < paused_at - 3.0,
        "server {} vs paused {paused_at}",
        p.position
    );
}
