//! The `[player]` settings of config.toml for smart rewind, the sleep
//! timer and up next, and the `[ui]` and `[sleep]` tables (docs/ui.md).
//! Errors name the setting and what it must be.

use super::covers::CoverMode;
use super::state::rewind::RewindCurve;
use super::state::sleep_auto::AutoSleep;
use super::state::{UiSettings, UpNextSettings};
use crate::domain::UpNextMode;

fn secs(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

fn flag(p: &toml::Table, key: &str) -> Result<Option<bool>, String> {
    match p.get(key) {
        None => Ok(None),
        Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
        Some(_) => Err(format!(
            "[player] in config.toml: `{key}` must be true or false"
        )),
    }
}

/// Reads the settings beside `short_skip` and `long_skip`.
pub(super) fn read(p: &toml::Table, s: &mut UiSettings) -> Result<(), String> {
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
        s.smart_rewind = Some(curve);
    }
    if flag(p, "smart_rewind")? == Some(false) {
        s.smart_rewind = None;
    }
    if let Some(b) = flag(p, "smart_rewind_past_chapter_start")? {
        s.rewind_past_chapter_start = b;
    }
    let ranged = |key: &str, lo: f64, hi: f64, unit: &str| -> Result<Option<f64>, String> {
        match p.get(key) {
            None => Ok(None),
            Some(v) => match secs(v) {
                Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
                _ => Err(format!(
                    "[player] in config.toml: `{key}` must be {unit} between {lo} and {hi}"
                )),
            },
        }
    };
    if let Some(f) = ranged("sleep_fade", 0.0, 120.0, "seconds")? {
        s.sleep.fade_ms = (f * 1000.0) as u64;
    }
    if let Some(m) = ranged("sleep_extend", 1.0, 120.0, "minutes")? {
        s.sleep.extend_ms = (m * 60_000.0) as u64;
    }
    match p.get("sleep_while_paused") {
        None => {}
        Some(toml::Value::String(w)) if w == "pause" => s.sleep.counts_while_paused = false,
        Some(toml::Value::String(w)) if w == "count" => s.sleep.counts_while_paused = true,
        Some(_) => {
            return Err(
                "[player] in config.toml: `sleep_while_paused` must be \"pause\" (the timer waits) or \"count\" (it counts on)".into(),
            );
        }
    }
    s.up_next = up_next(Some(p))?;
    Ok(())
}

/// `[player] up_next` and `up_next_countdown` (`p` is the `[player]`
/// table, if any): the player's, and `earmark play --up-next`'s.
pub fn up_next(p: Option<&toml::Table>) -> Result<UpNextSettings, String> {
    let mut s = UpNextSettings::default();
    let Some(p) = p else {
        return Ok(s);
    };
    s.mode = match p.get("up_next") {
        None => UpNextMode::parse(None)?,
        Some(toml::Value::String(v)) => UpNextMode::parse(Some(v))?,
        Some(v) => UpNextMode::parse(Some(&v.to_string()))?,
    };
    match p.get("up_next_countdown") {
        None => {}
        Some(v) => match secs(v) {
            Some(c) if (0.0..=120.0).contains(&c) => s.countdown_ms = (c * 1000.0) as u64,
            _ => {
                return Err(
                    "[player] in config.toml: `up_next_countdown` must be seconds between 0 and 120"
                        .into(),
                );
            }
        },
    }
    Ok(s)
}

/// Reads `[sleep]`: the automatic sleep timer.
pub(super) fn read_sleep(t: Option<&toml::Table>, s: &mut UiSettings) -> Result<(), String> {
    if let Some(t) = t {
        s.sleep.auto = AutoSleep::from_table(t)?;
    }
    Ok(())
}

/// Reads `[ui]`: `covers` and `accessible` (`flag` is `--accessible`).
/// The accessible mode has no covers unless `covers` says otherwise: a
/// half-block picture is rows of `▀` to a screen reader.
pub(super) fn read_ui(
    u: Option<&toml::Table>,
    flag: bool,
    s: &mut UiSettings,
) -> Result<(), String> {
    let empty = toml::Table::new();
    let u = u.unwrap_or(&empty);
    if let Some(key) = u
        .keys()
        .find(|k| !["covers", "accessible"].contains(&k.as_str()))
    {
        return Err(format!(
            "[ui] in config.toml: unknown setting `{key}` (known: covers, accessible)"
        ));
    }
    let accessible = match u.get("accessible") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => {
            return Err("[ui] in config.toml: `accessible` must be true or false".into());
        }
    };
    s.accessible = accessible || flag;
    s.covers = match u.get("covers") {
        Some(v) => CoverMode::parse(v)?,
        None if s.accessible => CoverMode::Off,
        None => CoverMode::default(),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<UiSettings, String> {
        let t: toml::Table = text.parse().unwrap();
        let mut s = UiSettings::default();
        read(&t, &mut s).map(|_| s)
    }

    #[test]
    fn smart_rewind_settings_are_read_and_checked() {
        let s = read_text(
            "smart_rewind_curve = [[5, 1], [60, 4.5]]\nsmart_rewind_past_chapter_start = true",
        )
        .unwrap();
        assert_eq!(s.smart_rewind.unwrap().rewind(60.0), 4.5);
        assert!(s.rewind_past_chapter_start);
        assert!(
            read_text("smart_rewind = false")
                .unwrap()
                .smart_rewind
                .is_none()
        );
        let e = read_text("smart_rewind_curve = [[60, 2], [10, 1]]").unwrap_err();
        assert!(
            e.contains("smart_rewind_curve") && e.contains("point 2"),
            "{e}"
        );
        let e = read_text("smart_rewind_curve = [1, 2]").unwrap_err();
        assert!(e.contains("pairs"), "{e}");
        assert!(read_text("smart_rewind = \"yes\"").is_err());
    }

    #[test]
    fn sleep_settings_are_read_and_checked() {
        let s = read_text("sleep_fade = 30\nsleep_extend = 10\nsleep_while_paused = \"count\"")
            .unwrap();
        assert_eq!(s.sleep.fade_ms, 30_000);
        assert_eq!(s.sleep.extend_ms, 600_000);
        assert!(s.sleep.counts_while_paused);
        let e = read_text("sleep_fade = 500").unwrap_err();
        assert!(e.contains("sleep_fade") && e.contains("seconds"), "{e}");
        let e = read_text("sleep_while_paused = \"sometimes\"").unwrap_err();
        assert!(e.contains("sleep_while_paused"), "{e}");
    }

    #[test]
    fn up_next_settings_are_read_and_checked() {
        let s = read_text("").unwrap();
        assert_eq!(s.up_next.mode, UpNextMode::Series);
        assert_eq!(s.up_next.countdown_ms, 10_000, "10 s by default");
        let s = read_text("up_next = \"queue\"\nup_next_countdown = 3").unwrap();
        assert_eq!(s.up_next.mode, UpNextMode::Queue);
        assert_eq!(s.up_next.countdown_ms, 3_000);
        assert_eq!(
            read_text("up_next = \"off\"").unwrap().up_next.mode,
            UpNextMode::Off
        );
        let e = read_text("up_next = \"next\"").unwrap_err();
        assert!(e.contains("`up_next`") && e.contains("\"next\""), "{e}");
        let e = read_text("up_next_countdown = 600").unwrap_err();
        assert!(e.contains("up_next_countdown"), "{e}");
    }

    fn read_ui_text(text: &str, flag: bool) -> Result<UiSettings, String> {
        let t: toml::Table = text.parse().unwrap();
        let mut s = UiSettings::default();
        read_ui(Some(&t), flag, &mut s).map(|_| s)
    }

    #[test]
    fn the_accessible_mode_is_read_and_turns_covers_off_unless_asked() {
        let s = read_ui_text("", false).unwrap();
        assert!(!s.accessible);
        assert_eq!(s.covers, CoverMode::Auto);
        let s = read_ui_text("accessible = true", false).unwrap();
        assert!(s.accessible);
        assert_eq!(s.covers, CoverMode::Off);
        let s = read_ui_text("covers = \"halfblocks\"", true).unwrap();
        assert!(s.accessible, "--accessible");
        assert_eq!(s.covers, CoverMode::Halfblocks, "asked for");
        let e = read_ui_text("accessible = \"yes\"", false).unwrap_err();
        assert!(e.contains("`accessible` must be true or false"), "{e}");
        let e = read_ui_text("acessible = true", false).unwrap_err();
        assert!(e.contains("acessible"), "{e}");
    }
}
