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
