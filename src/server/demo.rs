//! The demo server: a throw-away server with the demo library, a demo
//! user and a temporary data dir. `earmark demo` (`crate::demo`) starts it
//! beside the player; tests start it too.

use super::{RunningServer, ServerConfig};
use anyhow::Context;
use std::path::PathBuf;

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
