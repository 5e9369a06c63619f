//! The terminal player: app state and reducer (`state`), rendering
//! (`views`), keys (`keymap`, `input`), the terminal (`terminal`) and the
//! UI thread's loop (`event_loop`). The UI thread never does I/O besides
//! the terminal: backends answer through channels.

pub mod backend;
pub mod cache;
pub mod event_loop;
pub mod input;
pub mod keymap;
pub mod launch;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod views;

use event_loop::{Backends, ExitReason, LoopStats, UiSender};
use keymap::Keymap;
use state::{App, UiSettings};
use theme::Theme;

/// The UI's part of config.toml: `[keys]`, `[theme]` and `[player]`
/// (`short_skip`, `long_skip` in listened seconds).
#[derive(Debug, Clone)]
pub struct UiConfig {
    pub keymap: Keymap,
    pub theme: Theme,
    pub settings: UiSettings,
}

impl UiConfig {
    /// Reads the UI tables from config.toml's text. Errors name the table
    /// and the setting that is wrong.
    pub fn from_toml(text: &str, no_color: bool) -> Result<UiConfig, String> {
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
                match p.get(key) {
                    None => {}
                    Some(v) => {
                        let secs = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
                        match secs {
                            Some(s) if (1.0..=3600.0).contains(&s) => *slot = s,
                            _ => {
                                return Err(format!(
                                    "[player] in config.toml: `{key}` must be seconds between 1 and 3600"
                                ));
                            }
                        }
                    }
                }
            }
        }
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

/// Runs the player in this terminal until the user quits, a signal arrives
/// or the terminal goes away. `start` gets the channel for backend answers
/// and returns the backends; it runs after signals are blocked, so threads
/// it spawns leave signals to the UI. The terminal is restored on every
/// path, panics included.
pub fn run(
    config: UiConfig,
    initial: impl FnOnce(&mut App),
    start: impl FnOnce(UiSender) -> Box<dyn Backends>,
) -> Result<ExitReason, String> {
    terminal::block_signals();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut backends = start(UiSender(tx.clone()));
    let mut app = App::new(config.keymap, config.settings);
    initial(&mut app);
    // Audio is open by now: from here on nothing may print on the TUI, so
    // stderr (ALSA, cpal, C libraries, panic messages) and tracing go to the
    // log file; the terminal's stderr is back once the guard drops.
    let _stderr = open_log();
    terminal::install_panic_hook();
    terminal::spawn_signal_thread(tx.clone());
    terminal::enter().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let result = (|| {
        terminal::spawn_input_thread(tx.clone())
            .map_err(|e| format!("cannot read the terminal: {e}"))?;
        let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
        let mut term = ratatui::Terminal::new(backend).map_err(|e| format!("terminal: {e}"))?;
        let mut stats = LoopStats::default();
        event_loop::run(
            &mut term,
            &mut app,
            &config.theme,
            &rx,
            backends.as_mut(),
            &mut stats,
        )
    })();
    backends.shutdown();
    terminal::leave();
    result
}

/// The player's log: `$XDG_DATA_HOME/earmark/earmark.log`. Best effort: a
/// player that cannot log still plays.
fn open_log() -> Option<crate::player::output::StderrRedirect> {
    let dir = crate::config::Dirs::discover().ok()?.data;
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("earmark.log");
    let redirect = crate::player::output::redirect_stderr_to(&path).ok()?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("EARMARK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,earmark=info"));
    // Writes to fd 2, which now is the log file.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
    Some(redirect)
}
