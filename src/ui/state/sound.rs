//! Boost, loudness normalisation and skip silence as the player shows
//! them. The keys change the session book's settings; its owner applies
//! them to the engine and keeps them for the book on this device.

use super::*;
use crate::domain::SoundSettings;
use crate::domain::session::{Command, SoundNow};

/// One press of the boost keys, dB.
const BOOST_STEP: f32 = 1.0;

/// What the player bar shows of a book's sound: only what is on.
pub fn sound_parts(now: &SoundNow) -> Vec<String> {
    let s = &now.settings;
    let mut parts = Vec::new();
    if s.boost_db > 0.0 {
        parts.push(format!("+{:.0} dB", s.boost_db));
    }
    if s.normalize {
        parts.push(match now.norm_gain_db {
            Some(g) => format!("norm {g:+.1} dB"),
            None => "norm".into(),
        });
    }
    if s.skip_silence {
        parts.push(format!(
            "skip −{} (all −{})",
            fmt_time(now.saved_book),
            fmt_time(now.saved_total)
        ));
    }
    parts
}

impl App {
    pub(super) fn sound_action(&mut self, action: Action, fx: &mut Vec<Effect>) {
        let Some(mut s) = self.playing().map(|p| p.sound.settings) else {
            self.toast("Nothing is playing.", false);
            return;
        };
        let s = &mut s;
        let said = match action {
            Action::BoostUp | Action::BoostDown => {
                let d = if action == Action::BoostUp {
                    BOOST_STEP
                } else {
                    -BOOST_STEP
                };
                s.boost_db = (s.boost_db + d).clamp(0.0, SoundSettings::MAX_BOOST_DB);
                format!("Boost +{:.0} dB for this book.", s.boost_db)
            }
            Action::Normalize => {
                s.normalize = !s.normalize;
                if s.normalize {
                    "Loudness normalisation on for this book.".into()
                } else {
                    "Loudness normalisation off for this book.".into()
                }
            }
            _ => {
                s.skip_silence = !s.skip_silence;
                if s.skip_silence {
                    "Skip silence on for this book.".into()
                } else {
                    "Skip silence off for this book.".into()
                }
            }
        };
        let settings = *s;
        fx.push(Effect::Session(Command::Sound(settings)));
        self.toast(said, false);
    }
}
