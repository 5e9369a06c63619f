//! The sleep timer, pure: what it is set to ([`SleepChoice`], typed as
//! `25`, `1:30`, `1h30`, `3ch`), the hours it sets itself
//! ([`SleepWindow`], `[sleep] auto`), and [`Sleep`], the machine the
//! session owner drives with the wall clock, the engine's state and the
//! chapter's time left. It returns what to do ([`SleepAct`]); it never
//! acts. A timer belongs to a listening session's book: the owner drops
//! it when another book opens (up next's continuation keeps it).

use super::EpochMillis;
use serde::{Deserialize, Serialize};

/// The extend key still resumes playback this long after the stop.
pub const EXTEND_AFTER_STOP_MS: u64 = 120_000;

/// What the sleep menu, typed text or `earmark ctl sleep` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// Reads a typed sleep time: `25` or `25m` (minutes), `1:30`, `1h`,
/// `1h30`, `3ch` / `3c` (the end of the third chapter from here),
/// `chapter`, or `off`.
pub fn parse_sleep(text: &str) -> Result<SleepChoice, String> {
    let t = text.trim().to_ascii_lowercase();
    let bad = || format!("“{text}” is not a sleep time: try 25, 1:30, 1h30, 3ch or off");
    let num = |s: &str| s.parse::<u32>().map_err(|_| bad());
    match t.as_str() {
        "off" => return Ok(SleepChoice::Off),
        "chapter" => return Ok(SleepChoice::Chapters(1)),
        _ => {}
    }
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

/// Hours of the day, as minutes since local midnight; across midnight
/// when it ends before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SleepWindow {
    from: u32,
    to: u32,
}

const MINUTES_A_DAY: u32 = 24 * 60;

impl SleepWindow {
    /// `HH:MM-HH:MM` (24 h; `22:30-06:00` runs across midnight).
    pub fn parse(text: &str) -> Result<SleepWindow, String> {
        let bad = || {
            format!(
                "[sleep] in config.toml: `auto` = {text:?} is not a range of hours like \"22:30-06:00\""
            )
        };
        let (a, b) = text.split_once('-').ok_or_else(bad)?;
        let at = |t: &str| -> Option<u32> {
            let (h, m) = t.trim().split_once(':')?;
            let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if !all_digits(h) || m.len() != 2 || !all_digits(m) {
                return None;
            }
            let (h, m) = (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?);
            (h < 24 && m < 60).then_some(h * 60 + m)
        };
        let (from, to) = (at(a).ok_or_else(bad)?, at(b).ok_or_else(bad)?);
        if from == to {
            return Err(format!(
                "[sleep] in config.toml: `auto` = {text:?} starts and ends at the same time"
            ));
        }
        Ok(SleepWindow { from, to })
    }

    /// `minute` (since local midnight) lies in the window: its start
    /// included, its end not.
    pub fn contains(&self, minute: u32) -> bool {
        let m = minute % MINUTES_A_DAY;
        if self.from < self.to {
            self.from <= m && m < self.to
        } else {
            m >= self.from || m < self.to
        }
    }

    /// `22:30–06:00`.
    pub fn label(&self) -> String {
        let hm = |m: u32| format!("{:02}:{:02}", m / 60, m % 60);
        format!("{}–{}", hm(self.from), hm(self.to))
    }
}

/// The local minute of the day at `wall` with the local offset from UTC.
pub fn minute_of_day(wall: EpochMillis, utc_offset_s: i64) -> u32 {
    let secs = wall.div_euclid(1000) + utc_offset_s;
    (secs.rem_euclid(86_400) / 60) as u32
}

/// `[sleep]`: the window and the timer it sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoSleep {
    pub window: SleepWindow,
    pub choice: SleepChoice,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SleepSettings {
    pub fade_ms: u64,
    /// What the extend key adds.
    pub extend_ms: u64,
    /// The countdown goes on while playback is paused.
    pub counts_while_paused: bool,
    /// `[sleep] auto`: the hours the timer sets itself, and how long.
    pub auto: Option<AutoSleep>,
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

/// The timer as it stands (published in the session's snapshot).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SleepTimer {
    /// Stops when `left_ms` have run out, counted from `since` (`None`:
    /// held while playback is paused).
    Timed {
        left_ms: u64,
        since: Option<EpochMillis>,
    },
    /// Stops at the end of the chapter `left - 1` chapters after this one.
    Chapters { left: u32 },
    /// Fading out from `volume` to silence.
    Fading { since: EpochMillis, volume: f32 },
    /// Stopped playback at `at`; the extend key can still resume.
    Stopped { at: EpochMillis },
}

impl SleepTimer {
    /// Milliseconds left of a timed timer.
    pub fn left_ms(&self, now: EpochMillis) -> Option<u64> {
        match *self {
            SleepTimer::Timed { left_ms, since } => {
                let ran = since.map_or(0, |s| (now - s).max(0) as u64);
                Some(left_ms.saturating_sub(ran))
            }
            _ => None,
        }
    }
}

/// What the machine asks of the owner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SleepAct {
    /// Set the output's fade volume (never saved).
    Fade(f32),
    /// Pause here: remember the place (the sleep timer moved it last) and
    /// write it now.
    Pause,
    /// Play on (the extend key shortly after the stop).
    Play,
    /// What happened, for the listener.
    Said(SleepNews),
}

/// What the timer did, as data (the screen words it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SleepNews {
    /// Set to this; `auto`: by the automatic hours.
    Set {
        choice: SleepChoice,
        auto: Option<SleepWindow>,
    },
    Extended {
        left_ms: u64,
    },
    /// Stopped after the fade (the extend key still resumes).
    Slept,
    /// Stopped at the end of the chapter (it ended before a fade).
    SleptAtChapterEnd,
}

/// What the owner tells the machine about playback at each look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playing {
    pub now: EpochMillis,
    /// The engine plays (not paused, loading, stalled or ended).
    pub playing: bool,
    /// Playing started since the last look (a play after a pause, a
    /// load's first audio; not a seek's or a stall's return).
    pub started: bool,
    /// The chapter changed since the last look.
    pub chapter_changed: bool,
    /// Seconds of listening (at the speed) to the end of the chapter.
    pub chapter_left: Option<f64>,
    /// The volume the listener set (what a fade starts from).
    pub volume: f32,
    /// The local minute of the day (for the automatic hours).
    pub minute: u32,
}

/// The sleep timer of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sleep {
    pub timer: Option<SleepTimer>,
    pub settings: SleepSettings,
    /// The clock was inside the automatic hours at the last look.
    inside: bool,
}

impl Sleep {
    pub fn new(settings: SleepSettings) -> Sleep {
        Sleep {
            timer: None,
            settings,
            inside: false,
        }
    }

    fn counts(&self, p: &Playing) -> bool {
        p.playing || self.settings.counts_while_paused
    }

    /// The listener's choice (a fade in progress gives its volume back).
    pub fn set(&mut self, choice: SleepChoice, p: &Playing) -> Vec<SleepAct> {
        let mut acts = self.restore_fade();
        let since = self.counts(p).then_some(p.now);
        self.timer = match choice {
            SleepChoice::Minutes(m) => Some(SleepTimer::Timed {
                left_ms: u64::from(m) * 60_000,
                since,
            }),
            SleepChoice::Chapters(n) => Some(SleepTimer::Chapters { left: n.max(1) }),
            SleepChoice::Off => None,
        };
        acts.push(SleepAct::Said(SleepNews::Set { choice, auto: None }));
        acts
    }

    fn restore_fade(&self) -> Vec<SleepAct> {
        match self.timer {
            Some(SleepTimer::Fading { volume, .. }) => vec![SleepAct::Fade(volume)],
            _ => Vec::new(),
        }
    }

    /// The extend key (and a headset's play while it fades or just
    /// stopped): more time, also while fading and shortly after the stop,
    /// when playback resumes.
    pub fn extend(&mut self, p: &Playing) -> Vec<SleepAct> {
        let extend = self.settings.extend_ms;
        let counting = self.counts(p).then_some(p.now);
        let mut acts = Vec::new();
        let next = match self.timer {
            Some(t @ SleepTimer::Timed { .. }) => SleepTimer::Timed {
                left_ms: t.left_ms(p.now).unwrap_or(0) + extend,
                since: counting,
            },
            Some(SleepTimer::Chapters { .. }) => SleepTimer::Timed {
                left_ms: (p.chapter_left.unwrap_or(0.0).max(0.0) * 1000.0) as u64 + extend,
                since: counting,
            },
            Some(SleepTimer::Fading { volume, .. }) => {
                acts.push(SleepAct::Fade(volume));
                SleepTimer::Timed {
                    left_ms: extend,
                    since: Some(p.now),
                }
            }
            Some(SleepTimer::Stopped { at }) if p.now < at + EXTEND_AFTER_STOP_MS as i64 => {
                if !p.playing {
                    acts.push(SleepAct::Play);
                }
                SleepTimer::Timed {
                    left_ms: extend,
                    since: Some(p.now),
                }
            }
            _ => SleepTimer::Timed {
                left_ms: extend,
                since: counting,
            },
        };
        self.timer = Some(next);
        let left_ms = next.left_ms(p.now).unwrap_or(extend);
        acts.push(SleepAct::Said(SleepNews::Extended { left_ms }));
        acts
    }

    /// A headset's play or play/pause extends the timer while it fades
    /// and up to two minutes after its stop (`None`: it does not, the
    /// press is a plain play/pause).
    pub fn remote_play(&mut self, p: &Playing) -> Option<Vec<SleepAct>> {
        let extends = match self.timer {
            Some(SleepTimer::Fading { .. }) => true,
            Some(SleepTimer::Stopped { at }) => p.now < at + EXTEND_AFTER_STOP_MS as i64,
            _ => false,
        };
        extends.then(|| self.extend(p))
    }

    /// Another book opened by the listener: its timer is not this one's.
    pub fn forget(&mut self) -> Vec<SleepAct> {
        let acts = self.restore_fade();
        self.timer = None;
        acts
    }

    /// One look at playback (on every engine change and on the clock).
    pub fn follow(&mut self, p: &Playing) -> Vec<SleepAct> {
        let mut acts = Vec::new();
        self.hold_or_count(p);
        if matches!(self.timer, Some(SleepTimer::Stopped { .. })) && p.playing && p.started {
            // The listener played again after the stop: it is over.
            self.timer = None;
        }
        self.auto(p, &mut acts);
        if p.chapter_changed {
            self.chapter_changed(p, &mut acts);
        }
        self.run(p, &mut acts);
        acts
    }

    /// Paused or resumed: a held countdown holds or goes on.
    fn hold_or_count(&mut self, p: &Playing) {
        if self.settings.counts_while_paused {
            return;
        }
        if let Some(t @ SleepTimer::Timed { left_ms, since }) = self.timer {
            self.timer = match (p.playing, since) {
                (false, Some(_)) => Some(SleepTimer::Timed {
                    left_ms: t.left_ms(p.now).unwrap_or(left_ms),
                    since: None,
                }),
                (true, None) => Some(SleepTimer::Timed {
                    left_ms,
                    since: Some(p.now),
                }),
                _ => self.timer,
            };
        }
    }

    /// The automatic timer sets itself when playback starts inside its
    /// hours, or the clock enters them while playing; never over a timer
    /// that is set (or fading, or just stopped).
    fn auto(&mut self, p: &Playing, acts: &mut Vec<SleepAct>) {
        let Some(auto) = self.settings.auto else {
            return;
        };
        let inside = auto.window.contains(p.minute);
        let entered = inside && !self.inside;
        self.inside = inside;
        if !inside || !(p.started || entered) || self.timer.is_some() || !p.playing {
            return;
        }
        self.set(auto.choice, p);
        acts.push(SleepAct::Said(SleepNews::Set {
            choice: auto.choice,
            auto: Some(auto.window),
        }));
    }

    fn chapter_changed(&mut self, p: &Playing, acts: &mut Vec<SleepAct>) {
        if let Some(SleepTimer::Chapters { left }) = self.timer {
            if left <= 1 {
                // The chapter ended before the fade could start (a short one).
                acts.push(SleepAct::Pause);
                acts.push(SleepAct::Said(SleepNews::SleptAtChapterEnd));
                self.timer = Some(SleepTimer::Stopped { at: p.now });
            } else {
                self.timer = Some(SleepTimer::Chapters { left: left - 1 });
            }
        }
    }

    fn run(&mut self, p: &Playing, acts: &mut Vec<SleepAct>) {
        let Some(timer) = self.timer else { return };
        let fade = self.settings.fade_ms;
        let fade_from = |volume| SleepTimer::Fading {
            since: p.now,
            volume,
        };
        match timer {
            SleepTimer::Timed { .. } if timer.left_ms(p.now) == Some(0) => {
                self.timer = Some(match p.playing {
                    true => fade_from(p.volume),
                    // Ran out while paused (counting on): nothing to fade.
                    false => SleepTimer::Stopped { at: p.now },
                });
            }
            SleepTimer::Chapters { left: 1 }
                if p.playing && p.chapter_left.is_some_and(|l| l * 1000.0 <= fade as f64) =>
            {
                self.timer = Some(fade_from(p.volume));
            }
            SleepTimer::Fading { since, volume } => {
                let done = match fade {
                    0 => 1.0,
                    _ => (p.now - since).max(0) as f32 / fade as f32,
                };
                if done >= 1.0 || !p.playing {
                    acts.push(SleepAct::Pause);
                    acts.push(SleepAct::Fade(volume));
                    acts.push(SleepAct::Said(SleepNews::Slept));
                    self.timer = Some(SleepTimer::Stopped { at: p.now });
                } else {
                    acts.push(SleepAct::Fade(volume * (1.0 - done)));
                }
            }
            SleepTimer::Stopped { at } if p.now >= at + EXTEND_AFTER_STOP_MS as i64 => {
                self.timer = None;
            }
            _ => {}
        }
    }

    /// When the machine wants its next look (`None`: only on a change).
    pub fn wake(&self, now: EpochMillis) -> Option<EpochMillis> {
        let auto = self.settings.auto.map(|_| now + 60_000);
        let timer = match self.timer {
            Some(SleepTimer::Timed {
                left_ms,
                since: Some(s),
            }) => Some((s + left_ms as i64).min(now + 1000)),
            Some(SleepTimer::Fading { .. } | SleepTimer::Chapters { left: 1 }) => Some(now + 250),
            Some(SleepTimer::Stopped { at }) => Some(at + EXTEND_AFTER_STOP_MS as i64),
            _ => None,
        };
        match (timer, auto) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests;
