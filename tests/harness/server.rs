//! The reference server for tests of every area (and the benchmarks, by
//! `#[path]`; never in the product binary): a real server on 127.0.0.1 with a temp
//! data dir, one user and a valid license, that can stop and restart on
//! the same port; and (in `proxy.rs`) a TCP proxy that slows, cuts and counts the
//! traffic to it.

use earmark::server::{RunningServer, ServerConfig};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub struct TestServer {
    server: Option<RunningServer>,
    config: ServerConfig,
    base_url: String,
    pub username: String,
    pub password: String,
    pub user_id: u64,
    /// Keeps the data dir alive.
    pub data_dir: tempfile::TempDir,
}

/// What a login returns, for tests that want to skip the client.
#[derive(Debug, Clone)]
pub struct TestSession {
    pub token: String,
    pub server_id: String,
    pub user_id: u64,
}

impl TestServer {
    /// Serves `library` with a fresh data dir and user `alice`.
    pub async fn start(library: impl Into<PathBuf>) -> anyhow::Result<Self> {
        Self::start_with(library, |_| {}).await
    }

    /// Like [`start`](Self::start), with a chance to adjust the config
    /// (prefix, header prefix, listen address).
    pub async fn start_with(
        library: impl Into<PathBuf>,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> anyhow::Result<Self> {
        let data_dir = tempfile::Builder::new().prefix("earmark-test-").tempdir()?;
        let password = "correct horse battery staple".to_owned();
        let user_id = earmark::server::add_user(data_dir.path(), "alice", &password)?;
        earmark::server::set_license(data_dir.path(), earmark::server::LicenseSetting::Valid)?;
        let mut config = ServerConfig::new(library, data_dir.path());
        adjust(&mut config);
        let server = earmark::server::spawn(config.clone()).await?;
        config.listen = server.addr();
        Ok(Self {
            base_url: server.base_url(),
            server: Some(server),
            config,
            username: "alice".to_owned(),
            password,
            user_id,
            data_dir,
        })
    }

    /// `http://127.0.0.1:PORT{prefix}/api/v1` (stable across restarts).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn addr(&self) -> SocketAddr {
        self.config.listen
    }

    pub fn data_path(&self) -> &Path {
        self.data_dir.path()
    }

    pub fn library(&self) -> &Path {
        &self.config.library
    }

    /// The login limiter's counters of the running server.
    pub fn login_stats(&self) -> Option<earmark::server::LoginStats> {
        self.server.as_ref().map(|s| s.login_stats())
    }

    /// Stops the server (open streams are cut). Idempotent.
    pub async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
    }

    /// Starts again on the same port and data dir (rescans the library).
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.stop().await;
        self.server = Some(earmark::server::spawn(self.config.clone()).await?);
        Ok(())
    }

    /// [`restart`](Self::restart)s with the config adjusted (the same port
    /// and data dir): a server that changed, e.g. `http1_only`.
    pub async fn restart_with(
        &mut self,
        adjust: impl FnOnce(&mut ServerConfig),
    ) -> anyhow::Result<()> {
        adjust(&mut self.config);
        self.restart().await
    }

    pub fn set_license(&self, state: earmark::server::LicenseSetting) -> anyhow::Result<()> {
        earmark::server::set_license(self.data_path(), state)
    }

    pub fn add_user(&self, name: &str, password: &str) -> anyhow::Result<u64> {
        earmark::server::add_user(self.data_path(), name, password)
    }

    /// Logs `alice` in over HTTP.
    pub async fn login(&self) -> anyhow::Result<TestSession> {
        self.login_as(&self.username, &self.password).await
    }

    pub async fn login_as(&self, username: &str, password: &str) -> anyhow::Result<TestSession> {
        let res = reqwest::Client::new()
            .post(format!("{}/auth/login", self.base_url))
            .json(&serde_json::json!({"username": username, "password": password}))
            .send()
            .await?
            .error_for_status()?;
        let v: serde_json::Value = res.json().await?;
        let d = &v["data"];
        Ok(TestSession {
            token: d["token"].as_str().unwrap_or_default().to_owned(),
            server_id: d["serverId"].as_str().unwrap_or_default().to_owned(),
            user_id: d["user"]["id"].as_u64().unwrap_or_default(),
        })
    }
}
