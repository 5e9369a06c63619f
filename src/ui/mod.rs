//! The pure terminal player: app state and reducer (`state`), rendering
//! (`views`), keys (`keymap`, `input`), the terminal (`terminal`) and the
//! UI thread's loop (`event_loop`). It imports only `domain`: no HTTP, no
//! audio, no sync. The UI thread never does I/O besides the terminal;
//! `crate::runtime` wires it to the rest and answers through channels.

pub mod covers;
pub mod event_loop;
pub mod graphics;
pub mod input;
pub mod keymap;
mod player_config;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod views;
pub mod words;

use keymap::Keymap;
use state::UiSettings;
use theme::Theme;

/// The UI's part of config.toml: `[keys]`, `[theme]`, `[player]`
/// (`short_skip`, `long_skip` in listened seconds) and `[ui]` (`covers`,
/// `accessible`). The session's rules are `config::ListeningRules`.
#[derive(Debug, Clone)]
pub struct UiConfig {
    pub keymap: Keymap,
    pub theme: Theme,
    pub settings: UiSettings,
}

impl UiConfig {
    /// Reads the UI tables from config.toml's text (`""` when there is no
    /// file); `accessible` is `--accessible`, the same as `[ui] accessible
    /// = true`. Errors name the table and the setting that is wrong.
    pub fn from_toml(text: &str, no_color: bool, accessible: bool) -> Result<UiConfig, String> {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("config.toml is not valid TOML: {e}"))?;
        let table = |name: &str| -> Result<Option<&toml::Table>, String> {
            match doc.get(name) {
                None => Ok(None),
                Some(toml::Value::Table(t)) => Ok(Some(t)),
                Some(_) => Err(format!("config.toml: `{name}` must be a table ([{name}])")),
            }
        };
        let keymap = match table("keys")? {
            Some(t) => Keymap::with_overrides(t).map_err(|e| e.to_string())?,
            None => Keymap::default(),
        };
        let theme = Theme::load(no_color, table("theme")?)?;
        let mut settings = UiSettings::default();
        if let Some(p) = table("player")? {
            for (key, slot) in [
                ("short_skip", &mut settings.short_skip),
                ("long_skip", &mut settings.long_skip),
            ] {
                if let Some(v) = p.get(key) {
                    let secs = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
                    *slot = secs.filter(|s| (1.0..=3600.0).contains(s)).ok_or_else(|| {
                        format!(
                            "[player] in config.toml: `{key}` must be seconds between 1 and 3600"
                        )
                    })?;
                }
            }
        }
        player_config::read_ui(table("ui")?, accessible, &mut settings)?;
        Ok(UiConfig {
            keymap,
            theme,
            settings,
        })
    }
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            keymap: Keymap::default(),
            theme: Theme::load(Theme::no_color_env(), None).unwrap_or_default(),
            settings: UiSettings::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn player_tables_beside_profiles_are_read() {
        let text = "default_profile = \"home\"\n[profiles.home]\nserver = \"nas.local\"\n[keys]\nfavorite = \"F\"\n[theme]\naccent = \"yellow\"\n[player]\nshort_skip = 15\n";
        let ui = super::UiConfig::from_toml(text, true, false).expect("the UI reads them");
        assert_eq!(ui.settings.short_skip, 15.0);
    }
}
