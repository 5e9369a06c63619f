//! The `[ui]` table of config.toml (docs/ui.md): covers and the
//! accessible mode. The rest of `[player]` (sleep timer, smart rewind,
//! up next) and `[sleep]` are the session's (`config::ListeningRules`).
//! Errors name the setting and what it must be.

use super::covers::CoverMode;
use super::state::UiSettings;

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
        Some(v) => v
            .as_bool()
            .ok_or("[ui] in config.toml: `accessible` must be true or false")?,
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
