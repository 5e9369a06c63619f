//! The sleep timer: a duration (picked or typed), the end of this or the
//! Nth chapter, a fade-out of configurable length, an extend key that works
//! while it fades and for a while after the stop, and a countdown that
//! either holds while playback is paused or counts on (config.toml).
//! Deadlines are on the event loop's monotonic clock.

use super::*;
use crate::domain::JumpCause;

/// The extend key still resumes playback this long after the stop.
pub const EXTEND_AFTER_STOP_MS: Millis = 120_000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SleepTimer {
    /// Stops when `left_ms` have run out, counted from `since` (`None`:
    /// held while playback is paused).
    Timed { left_ms: u64, since: Option<Millis> },
    /// Stops at the end of the chapter `left - 1` chapters after this one.
    Chapters { left: u32 },
    /// Fading out from `volume` to silence.
    Fading { since: Millis, volume: f32 },
    /// Stopped playback at `at`; the extend key can still resume.
    Stopped { at: Millis },
}

impl SleepTimer {
    /// Milliseconds left of a timed timer.
    pub fn left_ms(&self, now: Millis) -> Option<u64> {
        match *self {
            SleepTimer::Timed { left_ms, since } => {
                Some(left_ms.saturating_sub(since.map_or(0, |s| now.saturating_sub(s))))
            }
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SleepSettings {
    pub fade_ms: Millis,
    /// What the extend key adds.
    pub extend_ms: Millis,
    /// The countdown goes on while playback is paused.
    pub counts_while_paused: bool,
    /// `[sleep] auto`: the hours the timer sets itself, and how long.
    pub auto: Option<super::sleep_auto::AutoSleep>,
}

impl Default for SleepSettings {
    fn default() -> Self {
        SleepSettings {
            fade_ms: 10_000,
            extend_ms: 5 * 60_000,
            counts_while_paused: false,
            auto: None,
        }
    }
}

/// What the sleep menu (or typed text) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepChoice {
    Minutes(u32),
    /// The end of this chapter (1) or of the Nth.
    Chapters(u32),
    Off,
}

pub const SLEEP_CHOICES: [SleepChoice; 9] = [
    SleepChoice::Minutes(5),
    SleepChoice::Minutes(15),
    SleepChoice::Minutes(30),
    SleepChoice::Minutes(45),
    SleepChoice::Minutes(60),
    SleepChoice::Chapters(1),
    SleepChoice::Chapters(2),
    SleepChoice::Chapters(3),
    SleepChoice::Off,
];

impl SleepChoice {
    pub fn label(self) -> String {
        match self {
            SleepChoice::Minutes(m) => format!("{m} minutes"),
            SleepChoice::Chapters(1) => "End of chapter".into(),
            SleepChoice::Chapters(n) => format!("End of {n} chapters"),
            SleepChoice::Off => "Off".into(),
        }
    }
}

/// Reads a typed sleep time: `25` or `25m` (minutes), `1:30`, `1h`,
/// `1h30`, or `3ch` / `3c` (the end of the third chapter from here).
pub fn parse_sleep(text: &str) -> Result<SleepChoice, String> {
    let t = text.trim().to_ascii_lowercase();
    let bad = || format!("“{text}” is not a sleep time: try 25, 1:30, 1h30 or 3ch");
    let num = |s: &str| s.parse::<u32>().map_err(|_| bad());
    if let Some(n) = t.strip_suffix("ch").or_else(|| t.strip_suffix('c')) {
        let n = num(n)?;
        return match n {
            1..=99 => Ok(SleepChoice::Chapters(n)),
            _ => Err("Chapters: from 1 to 99.".into()),
        };
    }
    let minutes = if let Some((h, m)) = t.split_once(':').or_else(|| t.split_once('h')) {
        let m = if m.is_empty() { 0 } else { num(m)? };
        if m >= 60 {
            return Err(bad());
        }
        num(h)?.saturating_mul(60).saturating_add(m)
    } else {
        num(t.strip_suffix('m').unwrap_or(&t))?
    };
    match minutes {
        1..=1440 => Ok(SleepChoice::Minutes(minutes)),
        _ => Err("A sleep time is from 1 minute to 24 hours.".into()),
    }
}

impl App {
    pub(super) fn set_sleep(&mut self, choice: SleepChoice) {
        self.restore_fade_volume();
        let since = self.sleep_clock_running().then_some(self.now);
        self.sleep = match choice {
            SleepChoice::Minutes(m) => Some(SleepTimer::Timed {
                left_ms: u64::from(m) * 60_000,
                since,
            }),
            SleepChoice::Chapters(n) => Some(SleepTimer::Chapters { left: n.max(1) }),
            SleepChoice::Off => None,
        };
        let text = match choice {
            SleepChoice::Minutes(m) => format!("Sleep timer: {m} min"),
            SleepChoice::Chapters(1) => "Sleep timer: end of chapter".into(),
            SleepChoice::Chapters(n) => format!("Sleep timer: end of {n} chapters"),
            SleepChoice::Off => "Sleep timer off".into(),
        };
        self.toast(text, false);
    }

    /// The timer counts now: playback plays, or it counts on while paused.
    fn sleep_clock_running(&self) -> bool {
        self.is_playing() || self.settings.sleep.counts_while_paused
    }

    /// A fade in progress gives the volume back (the timer was changed).
    fn restore_fade_volume(&mut self) {
        if let Some(SleepTimer::Fading { volume, .. }) = self.sleep {
            self.volume = volume;
        }
    }

    /// The extend key: more time, also while fading and shortly after
    /// the stop (then playback resumes).
    pub(super) fn extend_sleep(&mut self, fx: &mut Vec<Effect>) {
        let extend = self.settings.sleep.extend_ms;
        let since = Some(self.now);
        let next = match self.sleep {
            Some(SleepTimer::Timed { .. }) => {
                let left = self.sleep.and_then(|s| s.left_ms(self.now)).unwrap_or(0);
                SleepTimer::Timed {
                    left_ms: left + extend,
                    since: self.sleep_clock_running().then_some(self.now),
                }
            }
            Some(SleepTimer::Chapters { .. }) => {
                let to_end = self.chapter_left_listened().unwrap_or(0.0);
                SleepTimer::Timed {
                    left_ms: (to_end * 1000.0) as u64 + extend,
                    since: self.sleep_clock_running().then_some(self.now),
                }
            }
            Some(SleepTimer::Fading { volume, .. }) => {
                fx.push(Effect::Engine(EngineCmd::FadeVolume(volume)));
                self.volume = volume;
                SleepTimer::Timed {
                    left_ms: extend,
                    since,
                }
            }
            Some(SleepTimer::Stopped { at }) if self.now < at + EXTEND_AFTER_STOP_MS => {
                if self.playing.is_some() && !self.is_playing() {
                    self.resume_after_pause(fx);
                    fx.push(Effect::Engine(EngineCmd::Toggle));
                }
                SleepTimer::Timed {
                    left_ms: extend,
                    since,
                }
            }
            _ => SleepTimer::Timed {
                left_ms: extend,
                since: self.sleep_clock_running().then_some(self.now),
            },
        };
        self.sleep = Some(next);
        let left = next.left_ms(self.now).unwrap_or(extend) as f64 / 1000.0;
        self.toast(format!("Sleep timer: {} left", fmt_time(left)), false);
    }

    /// Seconds of the book to the end of the chapter.
    pub fn chapter_left_media(&self) -> Option<f64> {
        let np = self.playing.as_ref()?;
        let (pos, dur) = np.chapter_progress();
        dur.map(|d| (d - pos).max(0.0))
    }

    /// Seconds of listening to the end of the chapter, at the current speed.
    pub fn chapter_left_listened(&self) -> Option<f64> {
        self.chapter_left_media()
            .map(|m| m / f64::from(self.speed.max(0.1)))
    }

    /// A time left as the listener chose to see it: at the current speed
    /// (what it takes them), or the book's own time.
    pub fn shown_left(&self, media_secs: f64) -> f64 {
        if self.media_times {
            media_secs
        } else {
            media_secs / f64::from(self.speed.max(0.1))
        }
    }

    /// Playback was paused or resumed: a held countdown holds or goes on.
    fn sleep_follow_playback(&mut self) {
        if self.settings.sleep.counts_while_paused {
            return;
        }
        let playing = self.is_playing();
        if let Some(SleepTimer::Timed { left_ms, since }) = self.sleep {
            match (playing, since) {
                (false, Some(_)) => {
                    let left = self
                        .sleep
                        .and_then(|s| s.left_ms(self.now))
                        .unwrap_or(left_ms);
                    self.sleep = Some(SleepTimer::Timed {
                        left_ms: left,
                        since: None,
                    });
                }
                (true, None) => {
                    self.sleep = Some(SleepTimer::Timed {
                        left_ms,
                        since: Some(self.now),
                    })
                }
                _ => {}
            }
        }
    }

    /// The listener played again after the timer's stop: it is over.
    /// Playback started (not a seek's or a stall's return): the automatic
    /// timer may set itself.
    pub(super) fn sleep_engine_state(&mut self, before: Option<&PlayState>) {
        let now_playing = self
            .playing
            .as_ref()
            .is_some_and(|p| p.state() == PlayState::Playing);
        if matches!(self.sleep, Some(SleepTimer::Stopped { .. }))
            && now_playing
            && before != Some(&PlayState::Playing)
        {
            self.sleep = None;
        }
        let started = matches!(
            before,
            None | Some(
                PlayState::Loading | PlayState::Paused | PlayState::Ended | PlayState::Error(_)
            )
        );
        if now_playing && started {
            self.auto_sleep(true);
        }
    }

    /// A remote's play or play/pause (a headset button) extends the timer
    /// as the extend key does while it fades and up to two minutes after
    /// its stop; true when it did.
    pub(super) fn sleep_remote_play(&mut self, fx: &mut Vec<Effect>) -> bool {
        let extends = match self.sleep {
            Some(SleepTimer::Fading { .. }) => true,
            Some(SleepTimer::Stopped { at }) => self.now < at + EXTEND_AFTER_STOP_MS,
            _ => false,
        };
        if extends {
            self.extend_sleep(fx);
        }
        extends
    }

    /// The engine moved to another chapter.
    pub(super) fn sleep_chapter_changed(&mut self, fx: &mut Vec<Effect>) {
        if let Some(SleepTimer::Chapters { left }) = self.sleep {
            if left <= 1 {
                // The chapter ended before the fade could start (a short one).
                self.sleep_stop(fx, None);
                self.toast("Sleep timer: paused at the end of the chapter", false);
            } else {
                self.sleep = Some(SleepTimer::Chapters { left: left - 1 });
            }
        }
    }

    pub(super) fn sleep_tick(&mut self, fx: &mut Vec<Effect>) {
        self.sleep_follow_playback();
        self.auto_sleep(false);
        let Some(timer) = self.sleep else {
            return;
        };
        let playing = self.is_playing();
        let fade = self.settings.sleep.fade_ms;
        match timer {
            SleepTimer::Timed { .. } => {
                if timer.left_ms(self.now) == Some(0) {
                    if playing {
                        self.start_fade();
                    } else {
                        // Ran out while paused (counting on): nothing to fade.
                        self.sleep = Some(SleepTimer::Stopped { at: self.now });
                    }
                }
            }
            SleepTimer::Chapters { left: 1 } => {
                let left = self.chapter_left_listened();
                if playing && left.is_some_and(|l| l * 1000.0 <= fade as f64) {
                    self.start_fade();
                }
            }
            SleepTimer::Chapters { .. } => {}
            SleepTimer::Fading { since, volume } => {
                let done = if fade == 0 {
                    1.0
                } else {
                    self.now.saturating_sub(since) as f32 / fade as f32
                };
                if done >= 1.0 || !playing {
                    self.sleep_stop(fx, Some(volume));
                    self.toast("Sleep timer: paused (z adds 5 min)", false);
                } else {
                    fx.push(Effect::Engine(EngineCmd::FadeVolume(volume * (1.0 - done))));
                }
            }
            SleepTimer::Stopped { at } => {
                if self.now >= at + EXTEND_AFTER_STOP_MS {
                    self.sleep = None;
                    self.dirty = true;
                }
            }
        }
    }

    /// Pauses, gives the faded volume back, writes the place and remembers
    /// it in the history.
    fn sleep_stop(&mut self, fx: &mut Vec<Effect>, volume: Option<f32>) {
        self.mark_here(JumpCause::Sleep, fx);
        fx.push(Effect::Engine(EngineCmd::Pause));
        if let Some(v) = volume {
            fx.push(Effect::Engine(EngineCmd::FadeVolume(v)));
            self.volume = v;
        }
        fx.push(Effect::FlushProgress);
        self.sleep = Some(SleepTimer::Stopped { at: self.now });
    }

    pub(super) fn start_fade(&mut self) {
        self.sleep = Some(SleepTimer::Fading {
            since: self.now,
            volume: self.volume,
        });
        self.dirty = true;
    }

    /// When the sleep timer needs the loop to wake up.
    pub(super) fn sleep_wake(&self) -> Option<Millis> {
        match self.sleep? {
            SleepTimer::Timed {
                left_ms,
                since: Some(s),
            } => Some((s + left_ms).min(self.now + 1000)),
            SleepTimer::Fading { .. } => Some(self.now + PLAYING_TICK_MS),
            SleepTimer::Stopped { at } => Some(at + EXTEND_AFTER_STOP_MS),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_sleep_times() {
        use SleepChoice::*;
        assert_eq!(parse_sleep("25"), Ok(Minutes(25)));
        assert_eq!(parse_sleep(" 90m "), Ok(Minutes(90)));
        assert_eq!(parse_sleep("1:30"), Ok(Minutes(90)));
        assert_eq!(parse_sleep("1h"), Ok(Minutes(60)));
        assert_eq!(parse_sleep("1h05"), Ok(Minutes(65)));
        assert_eq!(parse_sleep("3ch"), Ok(Chapters(3)));
        assert_eq!(parse_sleep("2C"), Ok(Chapters(2)));
        assert!(parse_sleep("0").is_err());
        assert!(parse_sleep("1:75").is_err());
        assert!(parse_sleep("25:00:00").is_err());
        assert!(parse_sleep("abc").unwrap_err().contains("abc"));
        assert!(parse_sleep("0ch").is_err());
        assert!(parse_sleep("99999999999").is_err());
    }

    #[test]
    fn a_held_countdown_keeps_what_was_left() {
        let t = SleepTimer::Timed {
            left_ms: 60_000,
            since: Some(1_000),
        };
        assert_eq!(t.left_ms(21_000), Some(40_000));
        assert_eq!(t.left_ms(100_000), Some(0));
        let held = SleepTimer::Timed {
            left_ms: 40_000,
            since: None,
        };
        assert_eq!(held.left_ms(1_000_000), Some(40_000));
    }
}
