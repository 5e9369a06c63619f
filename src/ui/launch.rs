//! `earmark` with no subcommand: open the player for the profile's stored
//! session, or on the login screen. The config's `[keys]`, `[theme]` and
//! `[player]` tables are checked first; a bad keymap stops here with the
//! reason, before the terminal is touched.

use super::backend::{Live, session_info};
use super::event_loop::ExitReason;
use super::state::Screen;
use super::{UiConfig, theme::Theme};
use crate::cli::GlobalArgs;
use crate::config::{Profile, Session};
use crate::player::AudioMode;
use std::process::ExitCode;

pub fn open(global: &GlobalArgs, audio: AudioMode) -> ExitCode {
    let profile = match Profile::resolve(global) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("earmark: {e}");
            return ExitCode::from(2);
        }
    };
    let config = match std::fs::read_to_string(profile.dirs.config_file()) {
        Ok(text) => UiConfig::from_toml(&text, Theme::no_color_env()),
        Err(_) => Ok(UiConfig::default()),
    };
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            eprintln!("earmark: {e}");
            return ExitCode::from(2);
        }
    };
    let session = Session::load(&profile).ok();
    run(config, profile, session, audio)
}

/// Runs the player with `profile`, logged in when `session` is given.
pub fn run(
    config: UiConfig,
    profile: Profile,
    session: Option<Session>,
    audio: AudioMode,
) -> ExitCode {
    let info = session.as_ref().map(session_info);
    let address = profile
        .server
        .as_ref()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let user = profile.user.clone().unwrap_or_default();
    let result = super::run(
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
        |ui| match Live::start(ui, profile, session, audio) {
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

/// `earmark demo`: the demo server on a loopback port, a throw-away
/// profile in its data dir (nothing of the user's config is touched), a
/// login as the demo user, then the player.
pub fn demo(library: Option<std::path::PathBuf>, audio: AudioMode) -> ExitCode {
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("earmark demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let prepared = rt.block_on(async {
        let demo = crate::server::demo::start(library).await?;
        let root = demo.data_dir.path().join("client");
        let dirs = crate::config::Dirs {
            config: root.join("config"),
            data: root.join("data"),
            cache: root.join("cache"),
        };
        let global = GlobalArgs {
            profile: Some("demo".into()),
            server: Some(demo.base_url()),
            user: Some(demo.username.clone()),
            json: false,
        };
        let profile = Profile::resolve_in(&global, dirs)?;
        let done = crate::config::login(&profile, None, &demo.password).await?;
        anyhow::Ok((demo, profile, done.session))
    });
    let (demo, profile, session) = match prepared {
        Ok(p) => p,
        Err(e) => {
            eprintln!("earmark demo: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let config = UiConfig::default();
    let code = run(config, profile, Some(session), audio);
    rt.block_on(demo.shutdown());
    code
}
