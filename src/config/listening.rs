//! The session's rules from config.toml: the sleep timer (`[player]
//! sleep_fade`, `sleep_extend`, `sleep_while_paused`, and `[sleep] auto`,
//! `auto_timer`), smart rewind (`[player] smart_rewind`,
//! `smart_rewind_curve`, `smart_rewind_past_chapter_start`) and up next
//! (`[player] up_next`, `up_next_countdown`). The session owner follows
//! them for the player, `earmark play` and a detached session alike.
//! Errors name the setting and what it must be.

use crate::domain::UpNextMode;
use crate::domain::rewind::RewindCurve;
use crate::domain::sleep::{AutoSleep, SleepChoice, SleepSettings, SleepWindow, parse_sleep};
use std::time::Duration;

/// What a session follows besides what the listener asks.
#[derive(Debug, Clone, PartialEq)]
pub struct ListeningRules {
    pub sleep: SleepSettings,
    /// `None`: smart rewind is off.
    pub rewind: Option<RewindCurve>,
    pub rewind_past_chapter_start: bool,
    pub up_next: UpNextMode,
    /// How long the next book is announced before it starts.
    pub up_next_countdown: Duration,
}

impl Default for ListeningRules {
    fn default() -> Self {
        ListeningRules {
            sleep: SleepSettings::default(),
            rewind: Some(RewindCurve::default()),
            rewind_past_chapter_start: false,
            up_next: UpNextMode::Series,
            up_next_countdown: Duration::from_secs(10),
        }
    }
}

fn secs(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// `[player] key`, a number of `unit` from `lo` to `hi`.
fn ranged(p: &toml::Table, key: &str, lo: f64, hi: f64, unit: &str) -> Result<Option<f64>, String> {
    let bad = || format!("[player] in config.toml: `{key}` must be {unit} between {lo} and {hi}");
    let read = |v| secs(v).filter(|x| (lo..=hi).contains(x)).ok_or_else(bad);
    p.get(key).map(read).transpose()
}

fn flag(p: &toml::Table, key: &str) -> Result<Option<bool>, String> {
    let bad = || format!("[player] in config.toml: `{key}` must be true or false");
    p.get(key).map(|v| v.as_bool().ok_or_else(bad)).transpose()
}

impl ListeningRules {
    /// From config.toml's `[player]` and `[sleep]` tables (absent: the
    /// defaults).
    pub fn read(
        player: Option<&toml::Table>,
        sleep: Option<&toml::Table>,
    ) -> Result<ListeningRules, String> {
        let mut r = ListeningRules::default();
        if let Some(p) = player {
            r.read_rewind(p)?;
            r.read_sleep(p)?;
            r.read_up_next(p)?;
        }
        if let Some(t) = sleep {
            r.sleep.auto = auto_sleep(t)?;
        }
        Ok(r)
    }

    /// The rules of a profile's config.toml (`config`).
    pub fn of(config: &super::Config) -> Result<ListeningRules, String> {
        ListeningRules::read(config.player.as_ref(), config.sleep.as_ref())
    }

    /// The rules in config.toml's text (`""` when there is no file).
    pub fn from_toml(text: &str) -> Result<ListeningRules, String> {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("config.toml is not valid TOML: {e}"))?;
        let table = |name: &str| match doc.get(name) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(t)),
            Some(_) => Err(format!("config.toml: `{name}` must be a table ([{name}])")),
        };
        ListeningRules::read(table("player")?, table("sleep")?)
    }

    fn read_rewind(&mut self, p: &toml::Table) -> Result<(), String> {
        if let Some(curve) = p.get("smart_rewind_curve") {
            let bad = || {
                "[player] in config.toml: `smart_rewind_curve` must be a list of [pause seconds, rewind seconds] pairs".to_owned()
            };
            let points = curve
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|pt| match pt.as_array().map(|a| a.as_slice()) {
                    Some([a, b]) => Some((secs(a)?, secs(b)?)),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(bad)?;
            let curve = RewindCurve::new(points)
                .map_err(|e| format!("[player] in config.toml: `smart_rewind_curve`: {e}"))?;
            self.rewind = Some(curve);
        }
        if flag(p, "smart_rewind")? == Some(false) {
            self.rewind = None;
        }
        if let Some(b) = flag(p, "smart_rewind_past_chapter_start")? {
            self.rewind_past_chapter_start = b;
        }
        Ok(())
    }

    fn read_sleep(&mut self, p: &toml::Table) -> Result<(), String> {
        if let Some(f) = ranged(p, "sleep_fade", 0.0, 120.0, "seconds")? {
            self.sleep.fade_ms = (f * 1000.0) as u64;
        }
        if let Some(m) = ranged(p, "sleep_extend", 1.0, 120.0, "minutes")? {
            self.sleep.extend_ms = (m * 60_000.0) as u64;
        }
        match p.get("sleep_while_paused") {
            None => {}
            Some(toml::Value::String(w)) if w == "pause" => self.sleep.counts_while_paused = false,
            Some(toml::Value::String(w)) if w == "count" => self.sleep.counts_while_paused = true,
            Some(_) => {
                return Err(
                    "[player] in config.toml: `sleep_while_paused` must be \"pause\" (the timer waits) or \"count\" (it counts on)".into(),
                );
            }
        }
        Ok(())
    }

    fn read_up_next(&mut self, p: &toml::Table) -> Result<(), String> {
        self.up_next = match p.get("up_next") {
            None => UpNextMode::parse(None)?,
            Some(toml::Value::String(v)) => UpNextMode::parse(Some(v))?,
            Some(v) => UpNextMode::parse(Some(&v.to_string()))?,
        };
        if let Some(c) = ranged(p, "up_next_countdown", 0.0, 120.0, "seconds")? {
            self.up_next_countdown = Duration::from_secs_f64(c);
        }
        Ok(())
    }
}

/// Reads `[sleep]` (`auto`, `auto_timer`); `None` without `auto`.
fn auto_sleep(t: &toml::Table) -> Result<Option<AutoSleep>, String> {
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
        Some(toml::Value::Integer(m)) if (1..=1440).contains(m) => SleepChoice::Minutes(*m as u32),
        Some(toml::Value::String(s)) => match parse_sleep(s) {
            Ok(c @ (SleepChoice::Minutes(_) | SleepChoice::Chapters(_))) => c,
            _ => return Err(bad_timer(&format!("{s:?}"))),
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Result<ListeningRules, String> {
        let doc: toml::Table = text.parse().unwrap();
        let t = |k: &str| doc.get(k).and_then(|v| v.as_table());
        ListeningRules::read(t("player"), t("sleep"))
    }

    #[test]
    fn smart_rewind_settings_are_read_and_checked() {
        let r = rules("[player]\nsmart_rewind_curve = [[5, 1], [60, 4]]\n").unwrap();
        assert_eq!(r.rewind.unwrap().rewind(60.0), 4.0);
        assert_eq!(
            rules("[player]\nsmart_rewind = false\n").unwrap().rewind,
            None
        );
        let e = rules("[player]\nsmart_rewind_curve = [[60, 2], [30, 4]]\n").unwrap_err();
        assert!(e.contains("point 2"), "{e}");
        assert!(rules("[player]\nsmart_rewind = 1\n").is_err());
    }

    #[test]
    fn sleep_settings_are_read_and_checked() {
        let r =
            rules("[player]\nsleep_fade = 5\nsleep_extend = 10\nsleep_while_paused = \"count\"\n")
                .unwrap();
        assert_eq!(
            (
                r.sleep.fade_ms,
                r.sleep.extend_ms,
                r.sleep.counts_while_paused
            ),
            (5_000, 600_000, true)
        );
        assert!(rules("[player]\nsleep_fade = 500\n").is_err());
        assert!(rules("[player]\nsleep_while_paused = \"maybe\"\n").is_err());
        let a = rules("[sleep]\nauto = \"22:30-06:00\"\nauto_timer = \"chapter\"\n").unwrap();
        assert_eq!(a.sleep.auto.unwrap().choice, SleepChoice::Chapters(1));
        let a = rules("[sleep]\nauto = \"22:30-06:00\"\n").unwrap();
        assert_eq!(a.sleep.auto.unwrap().choice, SleepChoice::Minutes(30));
        for (bad, says) in [
            ("auto = \"22:30-06:00\"\nauto_timer = 0", "`auto_timer` = 0"),
            ("auto = \"22:30-06:00\"\nauto_timer = \"soon\"", "\"soon\""),
            ("auto = \"22:30-06:00\"\nauto_timer = \"off\"", "\"off\""),
            ("auto_timer = 20", "needs `auto`"),
            ("auto = 2230", "2230"),
            ("start = \"22:00\"", "`start`"),
        ] {
            let e = rules(&format!("[sleep]\n{bad}\n")).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn up_next_settings_are_read_and_checked() {
        let r = rules("[player]\nup_next = \"queue\"\nup_next_countdown = 3\n").unwrap();
        assert_eq!(
            (r.up_next, r.up_next_countdown),
            (UpNextMode::Queue, Duration::from_secs(3))
        );
        assert!(rules("[player]\nup_next = \"always\"\n").is_err());
        assert!(rules("[player]\nup_next_countdown = 500\n").is_err());
        assert_eq!(rules("").unwrap(), ListeningRules::default());
    }
}
