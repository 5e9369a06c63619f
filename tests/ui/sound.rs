//! Boost, normalisation and skip silence keys, and the player bar.

use crate::fixtures::*;
use earmark::domain::session::{Command, SoundNow};
use earmark::domain::*;
use earmark::ui::state::*;

fn sound_fx(fx: &[Effect]) -> Vec<SoundSettings> {
    commands(fx)
        .into_iter()
        .filter_map(|c| match c {
            Command::Sound(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The session's book's sound now `now` (what its owner publishes).
fn sound(app: &mut App, now: SoundNow) {
    let mut l = app.snap.listening.clone().unwrap();
    l.sound = now;
    session(app, snap(l));
}

/// The sound keys' commands, each applied as the owner would.
fn press(app: &mut App, c: char) -> Vec<SoundSettings> {
    let sent = sound_fx(&app.update(key(c)));
    if let Some(settings) = sent.last() {
        let now = app.playing().unwrap().sound;
        sound(
            app,
            SoundNow {
                settings: *settings,
                ..now
            },
        );
    }
    sent
}

/// Moby Dick playing with +3 dB, normalisation at +11.8 dB and skip
/// silence having saved 1:23 in this book.
fn tuned() -> App {
    let mut app = playing();
    for c in [')', ')', ')', 'N', 'Z'] {
        press(&mut app, c);
    }
    let settings = app.playing().unwrap().sound.settings;
    sound(
        &mut app,
        SoundNow {
            settings,
            norm_gain_db: Some(11.8),
            saved_book: 83.0,
            saved_total: 600.0,
            skipped_now: 0.0,
        },
    );
    app
}

#[test]
fn sound_keys_change_the_playing_books_settings_within_their_limits() {
    let mut app = playing();
    assert_eq!(
        press(&mut app, ')'),
        [SoundSettings {
            boost_db: 1.0,
            ..SoundSettings::default()
        }]
    );
    assert_eq!(toast(&app), "Boost +1 dB for this book.");
    for _ in 0..20 {
        press(&mut app, ')');
    }
    let boost = app.playing().unwrap().sound.settings.boost_db;
    assert_eq!(boost, 12.0, "at most +12 dB");
    assert_eq!(press(&mut app, '(')[0].boost_db, 11.0);
    let s = press(&mut app, 'N')[0];
    assert!(s.normalize && !s.skip_silence);
    let s = press(&mut app, 'Z')[0];
    assert!(s.normalize && s.skip_silence && s.boost_db == 11.0);
    let s = press(&mut app, 'N')[0];
    assert!(!s.normalize && s.skip_silence);
    assert_eq!(toast(&app), "Loudness normalisation off for this book.");
}

#[test]
fn sound_keys_with_nothing_playing_change_nothing_and_say_so() {
    let mut app = book_open();
    assert!(sound_fx(&app.update(key(')'))).is_empty());
    assert_eq!(toast(&app), NOTHING_PLAYING);
}

#[test]
fn the_player_bar_shows_boost_normalisation_gain_and_silence_saved() {
    let mut app = tuned();
    let text = render(&mut app, 80, 24);
    assert!(text.contains("+3 dB"), "{text}");
    assert!(text.contains("norm +11.8 dB"), "{text}");
    assert!(text.contains("skip −1:23 (all −10:00)"), "{text}");
}

#[test]
fn player_bar_with_sound_on() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = tuned();
        insta::assert_snapshot!(format!("sound_bar_{w}x{h}"), render(&mut app, w, h));
    }
}
