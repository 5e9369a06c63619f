//! The reference Audiobook Library Service (`earmark serve`): the whole
//! stable contract (docs/contract.md) over axum, with SQLite storage in a
//! data directory and a scanned library folder.
//!
//! Public API for other modules and tests:
//! - [`ServerConfig`] + [`spawn`] → [`RunningServer`] (`addr`, `base_url`,
//!   `shutdown`). Restarting on the same `listen` address after `shutdown`
//!   works: shutdown closes every connection, streams included.
//! - [`add_user`], [`set_license`], [`rescan`]: the same operations as the
//!   `earmark serve user add | license set | rescan` commands. They act on a
//!   running server at once (the server reads the license per request and
//!   reloads the catalog when a rescan changed it).
//! - [`RunningServer::login_stats`]: the login limiter's counters.
//! - The tests' server and proxy live in tests/harness (never in the
//!   product binary).
//!
//! Inside: `state` (shared by the handlers; imports neither `routes` nor
//! `auth`), `routes` and `auth` (HTTP), `db` (pooled SQLite, private at
//! rest), `login` (abuse limits), `catalog` + `scan` + `media` (the
//! library), `fold` (accent folding, sort keys), `merge` (progress policy),
//! `write_log` (the optional log of every progress write decided).
//! - [`demo::start`]: the demo server that `earmark demo` runs.

pub mod auth;
pub mod catalog;
pub mod cli;
pub mod db;
pub mod demo;
pub mod error;
pub mod fold;
pub mod login;
pub mod media;
pub mod merge;
pub(crate) mod net;
pub mod routes;
pub mod scan;
pub mod state;
pub mod write_log;

use anyhow::Context;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub use db::LicenseSetting;
pub use login::{LoginLimits, LoginStats};

/// Everything a server instance needs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The library folder.
    pub library: PathBuf,
    /// The data directory: database, extracted covers. One per instance.
    pub data_dir: PathBuf,
    /// Address to bind; port 0 picks a free one.
    pub listen: SocketAddr,
    /// Gateway prefix such as `/nas/earmark` (no trailing slash), or "".
    pub prefix: String,
    /// Prefix of the identity header names (`{P}-Expected-Server-Id`).
    pub header_prefix: String,
    /// Login abuse limits.
    pub login: LoginLimits,
    /// Keep every progress write decided in the database's
    /// `progress_log` table ([`write_log`]; soak tests).
    pub log_writes: bool,
    /// Answer HTTP/1.1 only; by default the port answers HTTP/1.1 and
    /// HTTP/2 with prior knowledge (h2c) alike.
    pub http1_only: bool,
}

impl ServerConfig {
    /// Listen on 127.0.0.1 with an ephemeral port, no prefix, `X-Service` headers.
    pub fn new(library: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            library: library.into(),
            data_dir: data_dir.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            prefix: String::new(),
            header_prefix: "X-Service".to_owned(),
            login: LoginLimits::default(),
            log_writes: false,
            http1_only: false,
        }
    }

    /// The prefix normalised: "" or "/a/b" (leading slash, no trailing one).
    pub fn normalized_prefix(&self) -> String {
        let trimmed = self.prefix.trim().trim_matches('/');
        if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        }
    }
}

/// A server serving in a background task.
pub struct RunningServer {
    addr: SocketAddr,
    prefix: String,
    handle: net::ServeHandle,
    state: state::AppState,
}

impl RunningServer {
    /// The bound address (the real port when `listen` had port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT{prefix}/api/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}{}/api/v1", self.addr, self.prefix)
    }

    /// Login limiter counters (peak concurrent hashes, 429s).
    pub fn login_stats(&self) -> LoginStats {
        self.state.login.stats()
    }

    /// Stops accepting, closes every open connection (streams included) and
    /// returns once the port is free.
    pub async fn shutdown(self) {
        self.handle.shutdown().await;
    }
}

/// Scans the library (in the data dir's database), binds and serves in a
/// background task.
pub async fn spawn(config: ServerConfig) -> anyhow::Result<RunningServer> {
    let prefix = config.normalized_prefix();
    let state = {
        let config = config.clone();
        tokio::task::spawn_blocking(move || state::AppState::open(&config))
            .await
            .context("scan task failed")??
    };
    let router = routes::router(state.clone(), &prefix);
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let handle = net::serve(listener, router, config.http1_only);
    tracing::info!(%addr, "serving {}", config.library.display());
    Ok(RunningServer {
        addr,
        prefix,
        handle,
        state,
    })
}

/// Adds a user (argon2id password hash). Returns the new numeric user id.
pub fn add_user(data_dir: &Path, name: &str, password: &str) -> anyhow::Result<u64> {
    db::Db::open(data_dir)?.add_user(name, password)
}

/// Sets the simulated license state; a running server applies it at once.
pub fn set_license(data_dir: &Path, state: LicenseSetting) -> anyhow::Result<()> {
    db::Db::open(data_dir)?.set_license(state)
}

/// Rescans the library into the data dir's catalog; a running server on
/// that data dir picks the new catalog up on its next request.
pub fn rescan(library: &Path, data_dir: &Path) -> anyhow::Result<catalog::ScanSummary> {
    let db = db::Db::open(data_dir)?;
    catalog::rescan(&db, library, data_dir)
}
