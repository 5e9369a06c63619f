//! The state every handler shares: the database pool, the instance's
//! identity, the login limits and the current catalog snapshot. Imports
//! nothing from `routes` or `auth` (they import it).

use super::ServerConfig;
use super::catalog::{self, Library};
use super::db::Db;
use super::error::{ApiError, ApiResult};
use super::login::LoginGuard;
use crate::domain::locks::{lock, read, write};
use axum::http::HeaderName;
use std::sync::{Arc, Mutex, RwLock};

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: Db,
    pub server_id: String,
    pub server_id_header: HeaderName,
    pub user_id_header: HeaderName,
    pub login: LoginGuard,
    /// This run's boot id when progress writes are logged (`write_log`).
    pub write_log: Option<String>,
    library: RwLock<(i64, Arc<Library>)>,
    /// Held while a new snapshot loads, so only one request loads it.
    reloading: Mutex<()>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// Opens the data dir, rescans the library and loads the catalog.
    /// Blocking.
    pub fn open(config: &ServerConfig) -> anyhow::Result<Self> {
        let db = Db::open(&config.data_dir)?;
        tracing::info!("scanning library {}", config.library.display());
        let summary = catalog::rescan(&db, &config.library, &config.data_dir)?;
        tracing::info!(
            "library scanned: {} books, {} chapters ({} new, {} gone, {} unchanged, {} of them not read)",
            summary.books,
            summary.chapters,
            summary.new_books,
            summary.removed_books,
            summary.unchanged_books,
            summary.unread_books
        );
        let (_, generation) = db.license_and_generation()?;
        let write_log = if config.log_writes {
            db.conn()?.execute_batch(super::write_log::SCHEMA)?;
            Some(super::write_log::boot_id())
        } else {
            None
        };
        let library = Library::load(&db)?;
        let prefix = config.header_prefix.trim().trim_end_matches('-');
        let header = |suffix: &str| {
            HeaderName::try_from(format!("{prefix}-{suffix}"))
                .map_err(|_| anyhow::anyhow!("invalid header prefix {:?}", config.header_prefix))
        };
        Ok(Self(Arc::new(Inner {
            server_id: db.server_id()?,
            server_id_header: header("Expected-Server-Id")?,
            user_id_header: header("Expected-User-Id")?,
            login: LoginGuard::new(config.login.clone()),
            write_log,
            db,
            library: RwLock::new((generation, Arc::new(library))),
            reloading: Mutex::new(()),
        })))
    }

    /// Runs blocking work (database, files) on tokio's blocking threads,
    /// never on the async runtime's.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&AppState) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let state = self.clone();
        tokio::task::spawn_blocking(move || work(&state))
            .await
            .map_err(ApiError::internal)?
    }

    /// One SQL statement, run as [`AppState::run`] runs work: the number
    /// of rows it changed.
    pub async fn execute(
        &self,
        sql: &'static str,
        params: impl rusqlite::Params + Send + 'static,
    ) -> ApiResult<usize> {
        self.run(move |state| Ok(state.db.conn()?.execute(sql, params)?))
            .await
    }

    fn cached(&self, generation: i64) -> Option<Arc<Library>> {
        let guard = read(&self.library);
        (guard.0 == generation).then(|| guard.1.clone())
    }

    /// The current catalog, reloaded when a rescan bumped its generation.
    /// Blocking.
    pub fn library(&self, generation: i64) -> ApiResult<Arc<Library>> {
        if let Some(lib) = self.cached(generation) {
            return Ok(lib);
        }
        let _loading = lock(&self.reloading);
        if let Some(lib) = self.cached(generation) {
            return Ok(lib); // another request loaded it meanwhile
        }
        let fresh = Arc::new(Library::load(&self.db)?);
        let mut guard = write(&self.library);
        *guard = (generation, fresh.clone());
        Ok(fresh)
    }

    /// The catalog, checking the generation first (for handlers that did
    /// not go through a license check). Blocking.
    pub fn current_library(&self) -> ApiResult<Arc<Library>> {
        let (_, generation) = self.db.license_and_generation()?;
        self.library(generation)
    }
}
