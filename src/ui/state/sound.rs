//! Boost, loudness normalisation and skip silence as the player shows
//! them. The keys change the playing book's settings; the runtime applies
//! them to the engine and keeps them for the book on this device.

use super::*;
use crate::domain::SoundSettings;

/// One press of the boost keys, dB.
const BOOST_STEP: f32 = 1.0;

/// The playing book's sound, and what skip silence saved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SoundView {
    /// The book these belong to.
    pub book: Option<BookId>,
    pub settings: SoundSettings,
    /// The normalisation gain applied now (dB), while normalising.
    pub norm_gain_db: Option<f32>,
    /// Media seconds skip silence played past in this book, and in every
    /// book, on this device.
    pub saved_book: f64,
    pub saved_total: f64,
}

impl SoundView {
    /// What the player bar shows: only what is on.
    pub fn bar_parts(&self) -> Vec<String> {
        let s = &self.settings;
        let mut parts = Vec::new();
        if s.boost_db > 0.0 {
            parts.push(format!("+{:.0} dB", s.boost_db));
        }
        if s.normalize {
            parts.push(match self.norm_gain_db {
                Some(g) => format!("norm {g:+.1} dB"),
                None => "norm".into(),
            });
        }
        if s.skip_silence {
            parts.push(format!(
                "skip −{} (all −{})",
                fmt_time(self.saved_book),
                fmt_time(self.saved_total)
            ));
        }
        parts
    }
}

impl App {
    pub(super) fn sound_action(&mut self, action: Action, fx: &mut Vec<Effect>) {
        let Some(book) = self.playing.as_ref().map(|p| p.book.id.clone()) else {
            self.toast("Nothing is playing.", false);
            return;
        };
        if self.sound.book.as_ref() != Some(&book) {
            // Not heard from the runtime yet: start from neutral.
            self.sound = SoundView {
                book: Some(book),
                ..SoundView::default()
            };
        }
        let s = &mut self.sound.settings;
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
        if !settings.normalize {
            self.sound.norm_gain_db = None;
        }
        fx.push(Effect::Engine(EngineCmd::SetSound(settings)));
        self.toast(said, false);
    }
}
