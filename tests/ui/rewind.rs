//! Smart rewind: the reducer's rule (pause → rewind by the curve, inside
//! the chapter), and the whole way through the player's backends, the real
//! engine on the null output and the reference server.

use crate::driver::Driver;
use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::event_loop::Backends;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::rewind::RewindCurve;
use earmark::ui::state::*;
use std::time::Duration;

fn view(state: PlayState, chapter: &str, position: f64) -> Event {
    Event::Answer(Answer::Engine(EngineView {
        playback_id: 1,
        book: BookId::new("moby"),
        chapter: ChapterId::new(chapter),
        position,
        state,
        speed: 1.25,
        volume: 0.8,
        approximate: false,
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
    // The place was saved at 1_700_000_000_000 (the fixture's progress),
    // as the playback owner says when it opens the book.
    app.clock_origin = 1_700_000_000_000 + 30 * 60_000 - app.now as i64;
    app.update(key(' '));
    app.update(Event::Answer(Answer::Resumed {
        book: BookId::new("moby"),
        saved_at: 1_700_000_000_000,
    }));
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
    // Any pause over 0.1 s rewinds 5 s (the default needs minutes).
    let settings = UiSettings {
        smart_rewind: Some(RewindCurve::new(vec![(0.0, 0.0), (0.1, 5.0)]).unwrap()),
        ..UiSettings::default()
    };
    let mut d = Driver::start(settings);
    let ch0 = d.manifest.items[0].chapter_id.clone();
    d.step(code(KeyCode::Enter)); // play chapter 1 from 0
    d.follow(
        "playing past 7 s",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 7.0),
    );
    d.step(key(' '));
    d.follow("paused", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let paused_at = Driver::at(&d.app).unwrap().2;
    std::thread::sleep(Duration::from_millis(300)); // the pause itself
    d.step(key(' '));
    d.follow("playing again, 5 s earlier", |a| {
        matches!(Driver::at(a), Some((PlayState::Playing, ref c, p)) if *c == ch0 && p < paused_at - 3.5)
    });
    d.step(key(' '));
    d.follow("paused again", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let marks = d.app.history.of(&d.book.id).to_vec();
    assert!(
        marks
            .iter()
            .any(|m| m.cause == JumpCause::Rewind && (m.position - paused_at).abs() < 0.5),
        "{marks:?}"
    );
    d.live.shutdown();
    let p = d.server_progress();
    assert_eq!(p.chapter_id, ch0);
    assert!(
        p.position < paused_at - 3.0,
        "server {} vs paused {paused_at}",
        p.position
    );
}
