//! The player bar's keys: play/pause, skips, chapters, speed, volume,
//! boost, normalisation, skip silence, the sleep timer's extend key and how
//! times left are shown. Each key becomes one command to the listening
//! session (its owner says "Nothing is playing" when there is no book);
//! the player's own state is only how times left are shown.

use super::UiSettings;
use super::toasts::Out;
use crate::domain::SoundSettings;
use crate::domain::session::{Command, Listening, SoundNow};
use crate::ui::keymap::Action;

const SPEED_MIN: f32 = 0.5;
const SPEED_MAX: f32 = 3.0;
/// One press of the boost keys, dB.
const BOOST_STEP: f32 = 1.0;

/// What the player says when a key needs a book and none is open.
pub const NOTHING_PLAYING: &str = "Nothing is playing: open a book first.";

fn step_speed(speed: f32, delta: f32) -> f32 {
    (((speed + delta) * 20.0).round() / 20.0).clamp(SPEED_MIN, SPEED_MAX)
}

#[derive(Debug, Clone, Default)]
pub struct Player {
    /// Times left are shown in the book's time instead of at the speed.
    pub media_times: bool,
}

/// The session's speed (1 without a book).
pub fn speed(np: Option<&Listening>) -> f32 {
    np.map_or(1.0, |p| p.speed)
}

impl Player {
    /// A time left as the listener chose to see it: at the book's speed
    /// (what it takes them), or the book's own time.
    pub fn shown_left(&self, np: Option<&Listening>, media_secs: f64) -> f64 {
        if self.media_times {
            media_secs
        } else {
            media_secs / f64::from(speed(np).max(0.1))
        }
    }

    /// A key of the player bar; false when `a` is not one.
    pub(super) fn action(
        &mut self,
        a: Action,
        np: Option<&Listening>,
        settings: &UiSettings,
        out: &mut Out,
    ) -> bool {
        use Action as A;
        let speed = speed(np);
        // Skips are listened time: at 2× they cover twice the media.
        let skip = |listened: f64| Command::SkipBy(listened * f64::from(speed));
        let c = match a {
            A::PlayPause => Command::Toggle,
            A::SkipBackShort => skip(-settings.short_skip),
            A::SkipForwardShort => skip(settings.short_skip),
            A::SkipBackLong => skip(-settings.long_skip),
            A::SkipForwardLong => skip(settings.long_skip),
            A::SpeedDown => Command::Speed(step_speed(speed, -0.05)),
            A::SpeedUp => Command::Speed(step_speed(speed, 0.05)),
            A::SpeedDownBig => Command::Speed(step_speed(speed, -0.25)),
            A::SpeedUpBig => Command::Speed(step_speed(speed, 0.25)),
            A::VolumeDown | A::VolumeUp => {
                let d = if a == A::VolumeUp { 0.05 } else { -0.05 };
                let now = np.map_or(1.0, |p| p.volume);
                Command::Volume(((now + d) * 20.0).round().clamp(0.0, 20.0) / 20.0)
            }
            // In the last chapter the session goes on to up next.
            A::NextChapter => Command::NextChapter,
            A::PrevChapter => Command::PrevChapter,
            A::SleepExtend => Command::SleepExtend,
            A::BoostDown | A::BoostUp | A::Normalize | A::SkipSilence => {
                sound(a, np.map(|p| &p.sound), out);
                return true;
            }
            A::TimeLeftMode => {
                self.media_times = !self.media_times;
                out.say(match self.media_times {
                    true => "Times left: in the book's time (as at 1×)",
                    false => "Times left: at your speed",
                });
                return true;
            }
            _ => return false,
        };
        out.send(c);
        true
    }
}

/// Boost, normalisation and skip silence: the book's settings, changed.
fn sound(action: Action, now: Option<&SoundNow>, out: &mut Out) {
    let Some(mut s) = now.map(|n| n.settings) else {
        out.say(NOTHING_PLAYING);
        return;
    };
    let on_off = |on: bool| if on { "on" } else { "off" };
    let said = match action {
        Action::BoostUp | Action::BoostDown => {
            let d = match action {
                Action::BoostUp => BOOST_STEP,
                _ => -BOOST_STEP,
            };
            s.boost_db = (s.boost_db + d).clamp(0.0, SoundSettings::MAX_BOOST_DB);
            format!("Boost +{:.0} dB for this book.", s.boost_db)
        }
        Action::Normalize => {
            s.normalize = !s.normalize;
            format!(
                "Loudness normalisation {} for this book.",
                on_off(s.normalize)
            )
        }
        _ => {
            s.skip_silence = !s.skip_silence;
            format!("Skip silence {} for this book.", on_off(s.skip_silence))
        }
    };
    out.send(Command::Sound(s));
    out.say(said);
}
