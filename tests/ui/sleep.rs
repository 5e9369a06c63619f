//! The sleep timer in the player: the menu and typed times send the
//! listener's choice, the bar shows the session's timer (counting, held,
//! at the end of the chapter, fading, stopped) with times at the book's
//! speed; and the whole way through the player's backends on the null
//! output and the reference server. The timer itself (its fade, extend,
//! hold, the automatic hours) is `domain::sleep`'s, tested there.

use crate::driver::Driver;
use crate::fixtures::*;
use crate::up_next_live::saga_library;
use earmark::config::ListeningRules;
use earmark::domain::session::{Command, Event as SessionEvent, Said};
use earmark::domain::sleep::{SleepNews, SleepSettings};
use earmark::domain::*;
use earmark::ui::event_loop::Backends;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

fn typed(app: &mut App, text: &str) -> Vec<Effect> {
    app.update(key('s'));
    for c in text.chars() {
        app.update(key(c));
    }
    app.update(code(KeyCode::Enter))
}

/// The session's timer now `t`.
fn timer(app: &mut App, t: Option<SleepTimer>) {
    let mut s = app.snap.clone();
    s.sleep = t;
    session(app, s);
}

#[test]
fn a_typed_time_sets_the_timer() {
    let mut app = playing();
    let fx = typed(&mut app, "1:30");
    assert_eq!(commands(&fx), [Command::Sleep(SleepChoice::Minutes(90))]);
    assert!(!app.overlays.is_open());
    let fx = typed(&mut app, "1:75");
    assert!(commands(&fx).is_empty());
    assert!(app.toasts.back().unwrap().error, "a bad time is said");
    assert!(app.overlays.is_open(), "and can be typed again");
    app.update(code(KeyCode::Esc));
    let fx = typed(&mut app, "2ch");
    assert_eq!(commands(&fx), [Command::Sleep(SleepChoice::Chapters(2))]);
}

#[test]
fn the_sessions_news_of_the_timer_is_said_in_words() {
    let mut app = playing();
    let set = |choice| Said::Sleep(SleepNews::Set { choice, auto: None });
    for (news, words) in [
        (set(SleepChoice::Minutes(20)), "Sleep timer: 20 min"),
        (set(SleepChoice::Chapters(1)), "Sleep timer: end of chapter"),
        (
            set(SleepChoice::Chapters(3)),
            "Sleep timer: end of 3 chapters",
        ),
        (set(SleepChoice::Off), "Sleep timer off"),
        (
            Said::Sleep(SleepNews::Extended { left_ms: 300_000 }),
            "Sleep timer: 5:00 left",
        ),
        (
            Said::Sleep(SleepNews::SleptAtChapterEnd),
            "Sleep timer: paused at the end of the chapter",
        ),
    ] {
        said(&mut app, news);
        assert_eq!(toast(&app), words);
    }
    let auto = sleep::SleepWindow::parse("22:30-06:00").unwrap();
    said(
        &mut app,
        Said::Sleep(SleepNews::Set {
            choice: SleepChoice::Minutes(20),
            auto: Some(auto),
        }),
    );
    assert_eq!(toast(&app), "Sleep timer: 20 min (automatic, 22:30–06:00)");
}

#[test]
fn the_bar_counts_down_holds_while_paused_and_offers_the_extend_key() {
    let mut app = playing();
    let wall = app.wall_now();
    timer(
        &mut app,
        Some(SleepTimer::Timed {
            left_ms: 600_000,
            since: Some(wall),
        }),
    );
    app.update(Event::Tick(app.now + 60_000));
    let text = render(&mut app, 80, 24);
    assert!(text.contains("sleep 9:00") && !text.contains('⏸'), "{text}");
    timer(
        &mut app,
        Some(SleepTimer::Timed {
            left_ms: 540_000,
            since: None,
        }),
    );
    assert!(render(&mut app, 80, 24).contains("sleep 9:00 ⏸"), "held");
    timer(&mut app, Some(SleepTimer::Chapters { left: 3 }));
    assert!(render(&mut app, 80, 24).contains("sleep: 3 ch"));
    timer(&mut app, Some(SleepTimer::Stopped { at: wall }));
    assert!(render(&mut app, 80, 24).contains("slept · z more"));
    // Each press of the extend key goes to the session, which decides.
    assert_eq!(commands(&app.update(key('z'))), [Command::SleepExtend]);
}

#[test]
fn sleep_bar_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = playing();
        let wall = app.wall_now();
        news(
            &mut app,
            SessionEvent::PlaceMarked {
                book: BookId::new("moby"),
                mark: PlaceMark {
                    at: wall,
                    chapter_id: ChapterId::new("moby-2"),
                    position: 612.0,
                    cause: JumpCause::Sleep,
                },
            },
        );
        heard(&mut app, "moby-2", 612.0, PlayState::Paused);
        timer(&mut app, Some(SleepTimer::Stopped { at: wall }));
        said(&mut app, Said::Sleep(SleepNews::Slept));
        insta::assert_snapshot!(format!("sleep_stopped_{w}x{h}"), render(&mut app, w, h));
        let mut app = playing();
        timer(&mut app, Some(SleepTimer::Chapters { left: 1 }));
        said(
            &mut app,
            Said::Sleep(SleepNews::Set {
                choice: SleepChoice::Chapters(1),
                auto: None,
            }),
        );
        insta::assert_snapshot!(
            format!("sleep_end_of_chapter_{w}x{h}"),
            render(&mut app, w, h)
        );
    }
}

#[test]
fn times_left_are_at_the_speed_and_t_switches_to_book_time() {
    let mut app = playing(); // 1.25×, 20:00 of chapter 2 left
    let text = render(&mut app, 80, 24);
    assert!(text.contains("10:00 / 30:00 -16:00"), "{text}");
    assert!(text.contains("· 40:00 left"), "{text}"); // 50:00 of the book at 1.25×
    app.update(key('T'));
    let text = render(&mut app, 80, 24);
    assert!(text.contains("10:00 / 30:00 -20:00"), "{text}");
    assert!(text.contains("· 50:00 left"), "{text}");
    assert!(text.contains("left in book time"), "{text}");
    timer(&mut app, Some(SleepTimer::Chapters { left: 1 }));
    assert!(render(&mut app, 80, 24).contains("sleep: ch end -20:00"));
    app.update(key('T'));
    assert!(render(&mut app, 80, 24).contains("sleep: ch end -16:00"));
}

/// Saga One (two chapters of `secs` s) open, the session following a
/// sleep fade of `fade_ms`, with no rewind and no up next.
fn saga(secs: u32, fade_ms: u64) -> (Driver, tempfile::TempDir) {
    let lib = saga_library(secs);
    let rules = ListeningRules {
        sleep: SleepSettings {
            fade_ms,
            ..SleepSettings::default()
        },
        rewind: None,
        up_next: UpNextMode::Off,
        ..ListeningRules::default()
    };
    let d = Driver::start_on(lib.path(), rules, |b, _| b.title == "Saga One");
    (d, lib)
}

/// Through the real backends: the end-of-chapter timer fades and pauses
/// the engine, the place reaches the server and the history, the extend
/// key resumes playback, and the fade is never saved as the book's volume.
#[test]
fn the_timer_stops_the_engine_and_extend_resumes_it() {
    let (mut d, _lib) = saga(4, 1_000);
    d.step(code(KeyCode::Enter)); // play chapter 1 from 0
    d.follow(
        "playing",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 0.5),
    );
    for e in typed(&mut d.app, "1ch") {
        d.live.handle(e);
    }
    d.follow("the stop", |a| {
        matches!(a.snap.sleep, Some(SleepTimer::Stopped { .. }))
    });
    d.follow("paused", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let (_, ch, stopped_at) = Driver::at(&d.app).unwrap();
    d.follow("the stop in the history", |a| {
        a.book
            .history
            .of(&a.book.id)
            .iter()
            .any(|m| m.cause == JumpCause::Sleep)
    });
    d.step(key('z'));
    d.follow(
        "playing again",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, ref c, p)) if *c == ch && p > stopped_at + 0.3),
    );
    d.step(key(' '));
    d.follow("paused by hand", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    d.live.shutdown();
    let state = d.rt.block_on(d.client.progress(&d.book.id)).unwrap();
    let p = state.progress.unwrap();
    assert_eq!(p.chapter_id, ch);
    assert!(p.position > stopped_at, "{} vs {stopped_at}", p.position);
    let volume = state.settings.and_then(|s| s.volume);
    assert!(
        volume.is_none_or(|v| v > 0.99),
        "the fade was saved: {volume:?}"
    );
}

/// Through the real backends: a headset's play/pause (MPRIS sends the
/// session's toggle) while the timer fades keeps the engine playing and
/// extends the timer, as the extend key does.
#[test]
fn a_headset_play_pause_during_the_fade_keeps_the_engine_playing() {
    let (mut d, _lib) = saga(12, 8_000);
    d.step(code(KeyCode::Enter));
    d.follow(
        "playing",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 0.5),
    );
    for e in typed(&mut d.app, "1ch") {
        d.live.handle(e);
    }
    d.follow("the fade", |a| {
        matches!(a.snap.sleep, Some(SleepTimer::Fading { .. }))
    });
    d.live.handle(Effect::Session(Command::Toggle));
    d.follow("extended", |a| {
        matches!(a.snap.sleep, Some(SleepTimer::Timed { .. }))
    });
    let (state, _, at) = Driver::at(&d.app).unwrap();
    assert_eq!(state, PlayState::Playing);
    let later = d.app.now + 1_500;
    d.follow("still playing a while later", |a| {
        a.now >= later && matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p > at + 1.0)
    });
    d.live.shutdown();
}
