//! `earmark demo`: a throw-away server with the demo library, a demo user
//! and a temporary data dir. [`start`] is reusable (the TUI will embed it).

use super::{RunningServer, ServerConfig};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Library to serve instead of the bundled demo library.
    #[arg(long)]
    pub library: Option<PathBuf>,
    /// Only run the server and print its address (no player).
    #[arg(long)]
    pub server_only: bool,
    /// Audio output of the player: the default device, none (paced in real time), or auto.
    #[arg(long, value_enum, default_value_t = crate::player::AudioMode::Auto, env = "EARMARK_AUDIO")]
    pub audio: crate::player::AudioMode,
}

/// A running demo server; the data dir lives as long as this value.
pub struct DemoServer {
    pub server: RunningServer,
    pub username: String,
    pub password: String,
    pub user_id: u64,
    pub data_dir: tempfile::TempDir,
}

impl DemoServer {
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// The bundled demo library (assets/demo of the source tree).
pub fn default_library() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("demo")
}

/// Starts the demo server on 127.0.0.1 with an ephemeral port.
pub async fn start(library: Option<PathBuf>) -> anyhow::Result<DemoServer> {
    let library = library.unwrap_or_else(default_library);
    if !library.is_dir() {
        anyhow::bail!("the demo library {} does not exist", library.display());
    }
    let data_dir = tempfile::Builder::new().prefix("earmark-demo-").tempdir()?;
    let password = super::db::random_hex(6);
    let user_id = super::add_user(data_dir.path(), "demo", &password)?;
    super::set_license(data_dir.path(), super::LicenseSetting::Valid)?;
    let server = super::spawn(ServerConfig::new(library, data_dir.path()))
        .await
        .context("cannot start the demo server")?;
    Ok(DemoServer {
        server,
        username: "demo".to_owned(),
        password,
        user_id,
        data_dir,
    })
}

pub fn run(args: DemoArgs) -> ExitCode {
    if !args.server_only {
        // The player: signals are blocked before any thread starts, and the
        // server's log must not reach the terminal.
        crate::ui::terminal::block_signals();
        return crate::ui::launch::demo(args.library, args.audio);
    }
    super::cli::init_logging();
    let result = tokio::runtime::Runtime::new()
        .map_err(anyhow::Error::from)
        .and_then(|rt| {
            rt.block_on(async {
                let stop = super::cli::shutdown_signal()?;
                let demo = start(args.library).await?;
                super::cli::say(&format!(
                    "earmark demo server\n  address:  {}\n  user:     {}\n  password: {}\nPress Ctrl-C to stop.",
                    demo.base_url(),
                    demo.username,
                    demo.password
                ));
                stop.await;
                demo.shutdown().await;
                anyhow::Ok(())
            })
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("earmark demo: {err:#}");
            ExitCode::FAILURE
        }
    }
}
