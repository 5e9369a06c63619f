//! `earmark demo`: the demo server (`server::demo`) on a loopback port and
//! the player (`runtime`) logged in to it, or with `--server-only` just the
//! server. It sits on top so that neither `server` nor `ui` knows the other.

use crate::config::{Dirs, Profile, ProfileSelector};
use crate::player::AudioMode;
use crate::server;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `earmark demo` was asked for (parsed in `crate::cli`).
#[derive(Debug)]
pub struct DemoArgs {
    /// Library to serve instead of the bundled demo library.
    pub library: Option<PathBuf>,
    /// Only run the server and print its address (no player).
    pub server_only: bool,
    pub audio: AudioMode,
    /// The player for screen readers and braille displays.
    pub accessible: bool,
}

pub fn run(args: DemoArgs) -> ExitCode {
    let result = if args.server_only {
        server_only(args.library)
    } else {
        // The player: signals are blocked before any thread starts, and the
        // server's log must not reach the terminal.
        crate::ui::terminal::block_signals();
        player(args.library, args.audio, args.accessible)
    };
    result.unwrap_or_else(|err| {
        eprintln!("earmark demo: {err:#}");
        ExitCode::FAILURE
    })
}

/// `earmark demo --server-only`: the server until Ctrl-C.
fn server_only(library: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    server::cli::init_logging();
    tokio::runtime::Runtime::new()?.block_on(async {
        let stop = server::cli::shutdown_signal()?;
        let demo = server::demo::start(library).await?;
        server::cli::say(&format!(
            "earmark demo server\n  address:  {}\n  user:     {}\n  password: {}\nPress Ctrl-C to stop.",
            demo.base_url(),
            demo.username,
            demo.password
        ));
        stop.await;
        demo.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// `earmark demo`: the demo server on a loopback port, a throw-away
/// profile in its data dir (nothing of the user's config is touched), a
/// login as the demo user, then the player.
fn player(
    library: Option<PathBuf>,
    audio: AudioMode,
    accessible: bool,
) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new()?;
    let (demo, profile, session) = rt.block_on(async {
        let demo = server::demo::start(library).await?;
        let dirs = Dirs::under(&demo.data_dir.path().join("client"));
        let global = ProfileSelector {
            profile: Some("demo".into()),
            server: Some(demo.base_url()),
            user: Some(demo.username.clone()),
        };
        let profile = Profile::resolve_in(&global, dirs)?;
        let done = crate::config::login(&profile, None, &demo.password).await?;
        anyhow::Ok((demo, profile, done.session))
    })?;
    let no_color = crate::ui::theme::Theme::no_color_env();
    let config =
        crate::ui::UiConfig::from_toml("", no_color, accessible).map_err(anyhow::Error::msg)?;
    let rules = crate::config::ListeningRules::default();
    let code = crate::runtime::run(config, rules, profile, Some(session), audio);
    rt.block_on(demo.shutdown());
    Ok(code)
}
