//! `earmark` with no subcommand: open the player for the profile's stored
//! session, or on the login screen. The config's `[keys]`, `[theme]` and
//! `[player]` tables are checked first; a bad keymap stops here with the
//! reason, before the terminal is touched. `earmark demo` (`crate::demo`)
//! comes in through [`run`] with its own server and throw-away profile.
//!
//! The threads of the player start from [`run_terminal`], in this order:
//! - the UI thread (the caller): the event loop, drawing, the reducer;
//! - every backend thread and task, in [`Live::start`] (one list there);
//! - `earmark-signals`: SIGINT, SIGTERM, SIGHUP, SIGWINCH (`ui::terminal`),
//!   once the log has taken stderr;
//! - `earmark-input`: reads terminal events (`ui::terminal`), after the
//!   terminal was asked how it draws covers (its answers are read first).

use super::live::Live;
use super::shared::session_info;
use crate::config::{Dirs, ListeningRules, Profile, ProfileSelector, Session};
use crate::player::AudioMode;
use crate::ui::event_loop::{self, Backends, ExitReason, LoopStats, UiSender};
use crate::ui::state::{App, Screen};
use crate::ui::{UiConfig, terminal, theme::Theme};
use std::process::ExitCode;

/// glibc, once a large block (the read library cache) is freed, raises its
/// mmap threshold so later large blocks (search results) come from the
/// arenas and stay resident after they are freed: fixed thresholds, as the
/// server, keep 2–3 MB of a 100k-book library's RSS down. (Two arenas, as
/// the server, made the first frame wait on the cache reader's allocations:
/// 20–28 → 41–47 ms.) Called before the player's threads start.
fn keep_heap_compact() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator tunables; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
    }
}

/// `accessible`: `--accessible` (docs/ui.md, "The accessible mode").
pub fn open(global: &ProfileSelector, audio: AudioMode, accessible: bool) -> ExitCode {
    let setup = || -> Result<_, String> {
        let profile = Profile::resolve(global).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(profile.dirs.config_file()).unwrap_or_default();
        let config = UiConfig::from_toml(&text, Theme::no_color_env(), accessible)?;
        Ok((config, ListeningRules::from_toml(&text)?, profile))
    };
    let (config, rules, profile) = match setup() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("earmark: {e}");
            return ExitCode::from(2);
        }
    };
    let session = Session::load(&profile).ok();
    run(config, rules, profile, session, audio)
}

/// Runs the player with `profile`, logged in when `session` is given.
pub fn run(
    config: UiConfig,
    rules: ListeningRules,
    profile: Profile,
    session: Option<Session>,
    audio: AudioMode,
) -> ExitCode {
    keep_heap_compact();
    let info = session.as_ref().map(session_info);
    let address = profile.server().map(|s| s.to_string()).unwrap_or_default();
    let user = profile.user.clone().unwrap_or_default();
    let result = run_terminal(
        config,
        |app| {
            app.login.address = address;
            app.login.user = user;
            if !app.login.address.is_empty() && !app.login.user.is_empty() {
                app.login.focus = 2;
            }
            if let Some(info) = info {
                app.session = Some(info);
                app.screen = Screen::Library;
            }
        },
        |ui| match Live::start(ui, profile, session, audio, rules) {
            Ok(live) => Box::new(live),
            Err(e) => {
                eprintln!("earmark: {e}");
                std::process::exit(1);
            }
        },
    );
    match result {
        Ok(ExitReason::Quit) | Ok(ExitReason::Signal(_)) => ExitCode::SUCCESS,
        Ok(ExitReason::TerminalGone(why)) => {
            tracing::info!("the terminal went away: {why}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("earmark: {e}");
            ExitCode::from(1)
        }
    }
}

/// Runs the player in this terminal until the user quits, a signal arrives
/// or the terminal goes away. `start` gets the channel for backend answers
/// and returns the backends; it runs after signals are blocked, so threads
/// it spawns leave signals to the UI. The terminal is restored on every
/// path, panics included.
pub fn run_terminal(
    config: UiConfig,
    initial: impl FnOnce(&mut App),
    start: impl FnOnce(UiSender) -> Box<dyn Backends>,
) -> Result<ExitReason, String> {
    terminal::block_signals();
    let (ui, rx) = UiSender::channel();
    // The backends (`Live::start`): every thread they use inherits the
    // blocked signals, which stay with the UI.
    let mut backends = start(ui.clone());
    let covers = config.settings.covers;
    let mut app = App::new(config.keymap, config.settings);
    initial(&mut app);
    // Audio is open by now: from here on nothing may print on the TUI, so
    // stderr (ALSA, cpal, C libraries, panic messages) and tracing go to the
    // log file; the terminal's stderr is back once the guard drops.
    let stderr = open_log();
    terminal::install_panic_hook();
    // A decoder panic caught at its chapter stays out of the terminal's hook.
    crate::player::decode::quiet_caught_panics();
    // earmark-signals: signals become events of the loop.
    terminal::spawn_signal_thread(ui.0.clone());
    terminal::enter().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let result = (|| {
        // Before the input thread: the terminal's answers are read here.
        if let Some(picker) = crate::ui::graphics::detect(covers) {
            backends.graphics(picker);
        }
        // earmark-input: terminal events (the cover query's answers are read).
        terminal::spawn_input_thread(ui.0.clone())
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
    let farewell = backends.shutdown();
    terminal::leave();
    // The terminal's stderr is back: what quitting left behind is said there.
    drop(stderr);
    if let Some(words) = farewell {
        eprintln!("earmark: {words}");
    }
    result
}

/// The player's log: `$XDG_DATA_HOME/earmark/earmark.log`. Best effort: a
/// player that cannot log still plays.
fn open_log() -> Option<crate::player::output::StderrRedirect> {
    let dir = Dirs::discover().ok()?.data;
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
