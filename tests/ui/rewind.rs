//! Smart rewind in the player: the session's owner rewinds (its rule is
//! `domain::rewind`'s, tested there) and the player says so; and the
//! whole way through the player's backends, the real engine on the null
//! output and the reference server.

use crate::driver::Driver;
use crate::fixtures::*;
use earmark::config::ListeningRules;
use earmark::domain::rewind::{RewindAfter, RewindCurve};
use earmark::domain::session::Said;
use earmark::domain::*;
use earmark::ui::event_loop::Backends;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use std::time::Duration;

#[test]
fn a_rewind_is_said_with_its_reason() {
    let mut app = playing();
    for (after, why) in [
        (RewindAfter::Pause, "a pause"),
        (RewindAfter::Interruption, "an interruption"),
        (RewindAfter::Break, "a break"),
    ] {
        said(&mut app, Said::Rewound { back: 10.0, after });
        assert_eq!(toast(&app), format!("Rewound 10 s after {why}"));
    }
}

/// The player's whole path: the owner's rewind goes to the engine as a
/// seek, the history keeps the place before it, and sync reports the
/// earlier place to the server like any seek.
#[test]
fn a_rewind_after_a_pause_reaches_the_engine_and_the_server() {
    // Any pause over 0.1 s rewinds 5 s (the default needs minutes).
    let rules = ListeningRules {
        rewind: Some(RewindCurve::new(vec![(0.0, 0.0), (0.1, 5.0)]).unwrap()),
        ..ListeningRules::default()
    };
    let mut d = Driver::start(rules);
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
    assert!(
        d.app
            .toasts
            .iter()
            .any(|t| t.text == "Rewound 5 s after a pause"),
        "{:?}",
        d.app.toasts
    );
    d.step(key(' '));
    d.follow("paused again", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let marks = d.app.book.history.of(&d.book.id).to_vec();
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
