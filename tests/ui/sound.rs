//! Boost, normalisation and skip silence keys, and the player bar.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::state::*;

fn sound_fx(fx: &[Effect]) -> Vec<SoundSettings> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Engine(EngineCmd::SetSound(s)) => Some(*s),
            _ => None,
        })
        .collect()
}

/// Moby Dick playing with +3 dB, normalisation at +11.8 dB and skip
/// silence having saved 1:23 in this book.
fn tuned() -> App {
    let mut app = playing();
    for _ in 0..3 {
        app.update(key(')'));
    }
    app.update(key('N'));
    app.update(key('Z'));
    let settings = app.sound.settings;
    app.update(Event::Answer(Answer::Sound(SoundView {
        book: Some(BookId::new("moby")),
        settings,
        norm_gain_db: Some(11.8),
        saved_book: 83.0,
        saved_total: 600.0,
    })));
    app
}

#[test]
fn sound_keys_change_the_playing_books_settings_within_their_limits() {
    let mut app = playing();
    assert_eq!(
        sound_fx(&app.update(key(')'))),
        [SoundSettings {
            boost_db: 1.0,
            ..SoundSettings::default()
        }]
    );
    for _ in 0..20 {
        app.update(key(')'));
    }
    assert_eq!(app.sound.settings.boost_db, 12.0, "at most +12 dB");
    assert_eq!(sound_fx(&app.update(key('(')))[0].boost_db, 11.0);
    let s = sound_fx(&app.update(key('N')))[0];
    assert!(s.normalize && !s.skip_silence);
    let s = sound_fx(&app.update(key('Z')))[0];
    assert!(s.normalize && s.skip_silence && s.boost_db == 11.0);
    let s = sound_fx(&app.update(key('N')))[0];
    assert!(!s.normalize && s.skip_silence);
}

#[test]
fn sound_keys_with_nothing_playing_change_nothing_and_say_so() {
    let mut app = book_open();
    assert!(sound_fx(&app.update(key(')'))).is_empty());
    assert!(app.toasts.iter().any(|t| t.text == "Nothing is playing."));
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
