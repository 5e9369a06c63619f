//! The automatic sleep timer: `[sleep] auto = "22:30-06:00"` sets the
//! timer (`auto_timer`: minutes, or the end of this or the Nth chapter)
//! by itself when playback starts between those hours, or when the clock
//! enters them while it plays. Turned off, it stays off until playback
//! starts again. The window is local time; the clock comes from the event
//! loop (`App::clock_origin`, `App::utc_offset_s`), so this stays pure.

use super::*;
use crate::domain::EpochMillis;

/// Hours of the day, as minutes since local midnight; across midnight
/// when it ends before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SleepWindow {
    from: u32,
    to: u32,
}

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

const MINUTES_A_DAY: u32 = 24 * 60;

/// The local minute of the day at `wall` (ms since the epoch) with the
/// local offset from UTC.
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

impl AutoSleep {
    /// Reads `[sleep]` (`auto`, `auto_timer`); `None` without `auto`.
    pub fn from_table(t: &toml::Table) -> Result<Option<AutoSleep>, String> {
        if let Some(key) = t
            .keys()
            .find(|k| !["auto", "auto_timer"].contains(&k.as_str()))
        {
            return Err(format!(
                "[sleep] in config.toml: unknown setting `{key}` (known: auto, auto_timer)"
            ));
        }
        let window = match t.get("auto") {
            None => None,
            Some(toml::Value::String(s)) => Some(SleepWindow::parse(s)?),
            Some(v) => return Err(SleepWindow::parse(&v.to_string()).unwrap_err()),
        };
        let bad_timer = |v: &dyn std::fmt::Display| {
            format!(
                "[sleep] in config.toml: `auto_timer` = {v} is not minutes (1 to 1440), \"chapter\" or a sleep time like \"1h30\" or \"2ch\""
            )
        };
        let choice = match t.get("auto_timer") {
            None => SleepChoice::Minutes(30),
            Some(toml::Value::Integer(m)) if (1..=1440).contains(m) => {
                SleepChoice::Minutes(*m as u32)
            }
            Some(toml::Value::String(s)) if s.trim() == "chapter" => SleepChoice::Chapters(1),
            Some(toml::Value::String(s)) => {
                parse_sleep(s).map_err(|_| bad_timer(&format!("{s:?}")))?
            }
            Some(v) => return Err(bad_timer(v)),
        };
        match window {
            Some(window) => Ok(Some(AutoSleep { window, choice })),
            None if t.contains_key("auto_timer") => Err(
                "[sleep] in config.toml: `auto_timer` needs `auto`, the hours it applies (\"22:30-06:00\")".into(),
            ),
            None => Ok(None),
        }
    }
}

impl App {
    /// The local minute of the day now.
    fn local_minute(&self) -> u32 {
        minute_of_day(
            self.clock_origin + self.now as EpochMillis,
            self.utc_offset_s,
        )
    }

    /// Sets the automatic timer when it is due: playback `started` inside
    /// the window, or the clock entered it while playing. Never over a
    /// timer that is set (or fading, or just stopped).
    pub(super) fn auto_sleep(&mut self, started: bool) {
        let Some(auto) = self.settings.sleep.auto else {
            return;
        };
        let inside = auto.window.contains(self.local_minute());
        let entered = inside && !self.sleep_window;
        self.sleep_window = inside;
        if !inside || !(started || entered) || self.sleep.is_some() || !self.is_playing() {
            return;
        }
        self.set_sleep(auto.choice);
        if let Some(t) = self.toasts.back_mut() {
            t.text = format!("{} (automatic, {})", t.text, auto.window.label());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> SleepWindow {
        SleepWindow::parse(text).unwrap()
    }

    #[test]
    fn a_window_across_midnight_holds_the_late_evening_and_the_early_morning() {
        let night = w("22:30-06:00");
        let hm = |h: u32, m: u32| h * 60 + m;
        assert!(!night.contains(hm(22, 29)));
        assert!(night.contains(hm(22, 30)), "the start is in");
        assert!(night.contains(hm(23, 59)));
        assert!(night.contains(hm(0, 0)));
        assert!(night.contains(hm(5, 59)));
        assert!(!night.contains(hm(6, 0)), "the end is out");
        assert!(!night.contains(hm(12, 0)));
        let nap = w("13:00-14:30");
        assert!(nap.contains(hm(13, 0)) && nap.contains(hm(14, 29)));
        assert!(!nap.contains(hm(14, 30)) && !nap.contains(hm(23, 0)));
        assert_eq!(night.label(), "22:30–06:00");
        assert_eq!(w(" 9:05 - 10:00 ").label(), "09:05–10:00");
    }

    #[test]
    fn the_minute_of_the_day_follows_the_given_clock_and_offset() {
        // 2026-11-22 23:10 UTC.
        let wall = 1_795_389_000_000;
        assert_eq!(minute_of_day(wall, 0), 23 * 60 + 10);
        assert_eq!(minute_of_day(wall, 3600), 10, "00:10 the next day at UTC+1");
        assert_eq!(minute_of_day(wall, -5 * 3600), 18 * 60 + 10);
        assert_eq!(minute_of_day(-60_000, 0), 23 * 60 + 59, "before 1970");
    }

    #[test]
    fn bad_windows_and_timers_are_named() {
        for bad in [
            "22:30",
            "25:00-06:00",
            "22:60-06:00",
            "2230-0600",
            "a-b",
            "22:5-06:00",
        ] {
            let e = SleepWindow::parse(bad).unwrap_err();
            assert!(e.contains("`auto`") && e.contains(bad), "{e}");
        }
        let e = SleepWindow::parse("06:00-06:00").unwrap_err();
        assert!(e.contains("same time"), "{e}");
        let table = |t: &str| AutoSleep::from_table(&t.parse::<toml::Table>().unwrap());
        let a = table("auto = \"22:30-06:00\"").unwrap().unwrap();
        assert_eq!(a.choice, SleepChoice::Minutes(30), "the default length");
        let a = table("auto = \"22:30-06:00\"\nauto_timer = \"chapter\"").unwrap();
        assert_eq!(a.unwrap().choice, SleepChoice::Chapters(1));
        let a = table("auto = \"22:30-06:00\"\nauto_timer = 45").unwrap();
        assert_eq!(a.unwrap().choice, SleepChoice::Minutes(45));
        let a = table("auto = \"22:30-06:00\"\nauto_timer = \"2ch\"").unwrap();
        assert_eq!(a.unwrap().choice, SleepChoice::Chapters(2));
        assert_eq!(table("").unwrap(), None);
        let e = table("auto = \"22:30-06:00\"\nauto_timer = 0").unwrap_err();
        assert!(e.contains("`auto_timer` = 0"), "{e}");
        let e = table("auto = \"22:30-06:00\"\nauto_timer = \"soon\"").unwrap_err();
        assert!(e.contains("\"soon\""), "{e}");
        let e = table("auto_timer = 20").unwrap_err();
        assert!(e.contains("needs `auto`"), "{e}");
        let e = table("auto = 2230").unwrap_err();
        assert!(e.contains("2230"), "{e}");
        let e = table("start = \"22:00\"").unwrap_err();
        assert!(e.contains("`start`"), "{e}");
    }
}
