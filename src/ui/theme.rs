//! Colors and text styles. `NO_COLOR` (any non-empty value) drops every
//! color and keeps only bold/reverse/underline. A `[theme]` table in
//! config.toml sets colors by name: `accent = "cyan"`, `error = "#ff5555"`.

use ratatui::style::{Color, Modifier, Style};
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub base: Style,
    pub dim: Style,
    pub accent: Style,
    pub title: Style,
    pub selected: Style,
    pub matched: Style,
    pub error: Style,
    pub banner: Style,
    pub bar_done: Style,
    pub bar_todo: Style,
    pub favorite: Style,
}

impl Theme {
    pub fn colored(accent: Color, error: Color) -> Self {
        Theme {
            base: Style::default(),
            dim: Style::default().fg(Color::DarkGray),
            accent: Style::default().fg(accent),
            title: Style::default().add_modifier(Modifier::BOLD),
            selected: Style::default().add_modifier(Modifier::REVERSED),
            matched: Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            error: Style::default().fg(error).add_modifier(Modifier::BOLD),
            banner: Style::default()
                .fg(Color::White)
                .bg(error)
                .add_modifier(Modifier::BOLD),
            bar_done: Style::default().fg(accent),
            bar_todo: Style::default().fg(Color::DarkGray),
            favorite: Style::default().fg(Color::Red),
        }
    }

    pub fn monochrome() -> Self {
        let plain = Style::default();
        Theme {
            base: plain,
            dim: plain,
            accent: plain.add_modifier(Modifier::BOLD),
            title: plain.add_modifier(Modifier::BOLD),
            selected: plain.add_modifier(Modifier::REVERSED),
            matched: plain.add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
            error: plain.add_modifier(Modifier::BOLD),
            banner: plain.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            bar_done: plain,
            bar_todo: plain,
            favorite: plain,
        }
    }

    /// The theme for this process: `NO_COLOR` wins over `[theme]`.
    pub fn load(no_color: bool, table: Option<&toml::Table>) -> Result<Self, String> {
        if no_color {
            return Ok(Self::monochrome());
        }
        let color = |key: &str, default: Color| -> Result<Color, String> {
            match table.and_then(|t| t.get(key)) {
                None => Ok(default),
                Some(toml::Value::String(s)) => Color::from_str(s).map_err(|_| {
                    format!("[theme] in config.toml: `{key} = \"{s}\"` is not a color (use a name like \"cyan\" or \"#rrggbb\")")
                }),
                Some(_) => Err(format!("[theme] in config.toml: `{key}` must be a color string")),
            }
        };
        if let Some(t) = table
            && let Some(k) = t
                .keys()
                .find(|k| !["accent", "error"].contains(&k.as_str()))
        {
            return Err(format!(
                "[theme] in config.toml: unknown setting `{k}` (known: accent, error)"
            ));
        }
        Ok(Self::colored(
            color("accent", Color::Cyan)?,
            color("error", Color::Red)?,
        ))
    }

    pub fn no_color_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}

impl Default for Theme {
    fn default() -> Self {
        Self::colored(Color::Cyan, Color::Red)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_has_no_colors() {
        let t = Theme::load(true, None).unwrap();
        for s in [t.accent, t.error, t.banner, t.matched, t.bar_done] {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
    }

    #[test]
    fn theme_table_is_checked() {
        let tbl: toml::Table = "accent = \"magenta\"".parse().unwrap();
        assert_eq!(
            Theme::load(false, Some(&tbl)).unwrap().accent.fg,
            Some(Color::Magenta)
        );
        let bad: toml::Table = "accent = \"blurple\"".parse().unwrap();
        assert!(
            Theme::load(false, Some(&bad))
                .unwrap_err()
                .contains("blurple")
        );
        let unknown: toml::Table = "accnt = \"red\"".parse().unwrap();
        assert!(
            Theme::load(false, Some(&unknown))
                .unwrap_err()
                .contains("accnt")
        );
    }
}
