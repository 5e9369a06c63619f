//! The SQLite database of one server instance: instance id, license,
//! users and tokens, the catalog, and per-user progress, settings,
//! favorites and bookmarks. A small pool of connections (blocking: used
//! from `spawn_blocking`); WAL mode so readers do not wait for the writer
//! and the `earmark serve …` admin commands can write while a server runs.

use crate::domain::locks::lock;
use anyhow::{Context, bail};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::RngCore;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod private;

/// How long a login token stays valid.
pub const TOKEN_LIFETIME_MS: i64 = 30 * 24 * 3600 * 1000;

/// The simulated license state of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LicenseSetting {
    Valid,
    Expired,
    Missing,
}

impl LicenseSetting {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Expired => "expired",
            Self::Missing => "missing",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "valid" => Self::Valid,
            "expired" => Self::Expired,
            _ => Self::Missing,
        }
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// When a write happened, for `serverUpdatedAt`: wall time in ms, but
/// strictly later than the last write this process stamped, so two writes in
/// one millisecond still sort in the order they arrived ("recent" sort).
pub fn write_clock_ms() -> i64 {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = now_ms();
    let prev = LAST
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
            Some(now.max(last + 1))
        })
        .unwrap_or(now);
    now.max(prev + 1)
}

pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS books (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    added_at INTEGER NOT NULL,
    present INTEGER NOT NULL,
    data TEXT NOT NULL,
    sig TEXT NOT NULL DEFAULT '',
    stamp TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS books_path ON books(path);
CREATE INDEX IF NOT EXISTS books_fingerprint ON books(fingerprint);
CREATE TABLE IF NOT EXISTS chapter_keys (
    book_id TEXT NOT NULL,
    key TEXT NOT NULL,
    place TEXT NOT NULL,
    chapter_id TEXT NOT NULL UNIQUE,
    PRIMARY KEY (book_id, key));
CREATE TABLE IF NOT EXISTS progress (
    user_id INTEGER NOT NULL,
    book_id TEXT NOT NULL,
    chapter_id TEXT NOT NULL,
    position_sec REAL NOT NULL,
    finished INTEGER NOT NULL,
    client_updated_at INTEGER NOT NULL,
    server_updated_at INTEGER NOT NULL,
    device_id TEXT,
    revision INTEGER NOT NULL,
    PRIMARY KEY (user_id, book_id));
CREATE TABLE IF NOT EXISTS settings (
    user_id INTEGER NOT NULL,
    book_id TEXT NOT NULL,
    speed REAL NOT NULL,
    volume REAL,
    client_updated_at INTEGER NOT NULL,
    server_updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, book_id));
CREATE TABLE IF NOT EXISTS favorites (
    user_id INTEGER NOT NULL,
    book_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, book_id));
CREATE TABLE IF NOT EXISTS bookmarks (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL,
    book_id TEXT NOT NULL,
    chapter_id TEXT NOT NULL,
    position_sec REAL NOT NULL,
    note TEXT,
    created_at INTEGER NOT NULL,
    client_id TEXT);
CREATE TABLE IF NOT EXISTS probe_cache (path TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS bookmarks_client ON bookmarks(user_id, client_id);
";

/// Creates the tables and brings an older database up to date.
fn migrate(conn: &Connection) -> anyhow::Result<()> {
    conn.execute_batch(SCHEMA)?;
    // '' never equals a computed signature or a stamp: the next scan
    // reads the book and rewrites its row.
    for column in ["sig", "stamp"] {
        let has = conn
            .prepare("SELECT 1 FROM pragma_table_info('books') WHERE name = ?1")?
            .exists([column])?;
        if !has {
            conn.execute_batch(&format!(
                "ALTER TABLE books ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
            ))?;
        }
    }
    Ok(())
}

/// Connections kept open for the handlers: blocking work runs on tokio's
/// blocking threads, each borrowing one; more waiters than this queue up.
fn pool_size() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(4)
        .clamp(4, 16)
}

/// How long a caller waits for a free connection before failing.
const POOL_WAIT: Duration = Duration::from_secs(10);

/// The database of one data directory: a small pool of connections.
pub struct Db {
    pool: Pool,
    data_dir: PathBuf,
}

struct Pool {
    path: PathBuf,
    max: usize,
    /// (idle connections, connections opened)
    state: Mutex<(Vec<Connection>, usize)>,
    returned: Condvar,
}

/// A pooled connection; goes back to the pool when dropped.
pub struct Conn<'a> {
    conn: Option<Connection>,
    pool: &'a Pool,
}

impl std::ops::Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("a pooled connection is present until drop")
    }
}

impl std::ops::DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("a pooled connection is present until drop")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let mut state = lock(&self.pool.state);
            state.0.push(conn);
            self.pool.returned.notify_one();
        }
    }
}

fn open_connection(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

impl Db {
    /// Opens (creating if needed) `{data_dir}/earmark.sqlite3`. A new data
    /// dir gets a fresh `serverId` and a valid license. The data dir is
    /// made private (0700) and the database files 0600, fixing an older
    /// installation with a notice.
    pub fn open(data_dir: &Path) -> anyhow::Result<Self> {
        let fresh = !data_dir.exists();
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("cannot create data dir {}", data_dir.display()))?;
        private::restrict(data_dir, private::DIR_MODE, fresh)?;
        let path = data_dir.join("earmark.sqlite3");
        private::create_private_file(&path)?;
        let conn = open_connection(&path)?;
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        migrate(&conn)?;
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value)
             VALUES ('server_id', ?1), ('license', 'valid'), ('catalog_generation', '0')",
            [format!("srv_{}", random_hex(16))],
        )?;
        // WAL and SHM exist now; SQLite gives them the database's mode,
        // but an older installation may have left them readable.
        for suffix in ["-wal", "-shm"] {
            let side = data_dir.join(format!("earmark.sqlite3{suffix}"));
            if side.exists() {
                private::restrict(&side, private::FILE_MODE, false)?;
            }
        }
        Ok(Self {
            pool: Pool {
                path,
                max: pool_size(),
                state: Mutex::new((vec![conn], 1)),
                returned: Condvar::new(),
            },
            data_dir: data_dir.to_owned(),
        })
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// A connection from the pool, waiting up to 10 s for one to be free.
    /// Blocking: call it from blocking threads, never from async handlers.
    pub fn conn(&self) -> anyhow::Result<Conn<'_>> {
        let pool = &self.pool;
        let deadline = std::time::Instant::now() + POOL_WAIT;
        let mut state = lock(&pool.state);
        loop {
            if let Some(conn) = state.0.pop() {
                return Ok(Conn {
                    conn: Some(conn),
                    pool,
                });
            }
            if state.1 < pool.max {
                state.1 += 1;
                drop(state);
                let conn = open_connection(&pool.path).inspect_err(|_| lock(&pool.state).1 -= 1)?;
                return Ok(Conn {
                    conn: Some(conn),
                    pool,
                });
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                bail!("the database is busy: no free connection after 10 s");
            }
            state = pool
                .returned
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    pub fn meta(&self, key: &str) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn()?
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn server_id(&self) -> anyhow::Result<String> {
        self.meta("server_id")?.context("server id missing")
    }

    /// License and catalog generation in one read (done on every request).
    pub fn license_and_generation(&self) -> anyhow::Result<(LicenseSetting, i64)> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT key, value FROM meta WHERE key IN ('license', 'catalog_generation')",
        )?;
        let mut license = LicenseSetting::Missing;
        let mut generation = 0;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (k, v) = row?;
            if k == "license" {
                license = LicenseSetting::parse(&v);
            } else {
                generation = v.parse().unwrap_or(0);
            }
        }
        Ok((license, generation))
    }

    pub fn set_license(&self, state: LicenseSetting) -> anyhow::Result<()> {
        self.conn()?.execute(
            "INSERT INTO meta(key, value) VALUES ('license', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [state.as_str()],
        )?;
        Ok(())
    }

    pub fn add_user(&self, name: &str, password: &str) -> anyhow::Result<u64> {
        let name = name.trim();
        if name.is_empty() {
            bail!("the user name is empty");
        }
        if password.is_empty() {
            bail!("the password is empty");
        }
        let hash = hash_password(password)?;
        let mut conn = self.conn()?;
        let conn = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let exists: Option<i64> = conn
            .query_row("SELECT id FROM users WHERE username = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?;
        if exists.is_some() {
            bail!("a user named {name:?} already exists");
        }
        conn.execute(
            "INSERT INTO users(username, password_hash, created_at) VALUES (?1, ?2, ?3)",
            params![name, hash, now_ms()],
        )?;
        let id = conn.last_insert_rowid() as u64;
        conn.commit()?;
        Ok(id)
    }

    /// (id, password hash) of a user.
    pub fn user_credentials(&self, name: &str) -> anyhow::Result<Option<(u64, String)>> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT id, password_hash FROM users WHERE username = ?1",
                [name],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
            )
            .optional()?)
    }

    /// Issues a token: returns (token, expiresAt). Only its hash is stored.
    pub fn issue_token(&self, user_id: u64) -> anyhow::Result<(String, i64)> {
        let token = random_hex(32);
        let now = now_ms();
        let expires = now + TOKEN_LIFETIME_MS;
        let conn = self.conn()?;
        conn.execute("DELETE FROM tokens WHERE expires_at <= ?1", [now])?;
        conn.execute(
            "INSERT INTO tokens(hash, user_id, expires_at) VALUES (?1, ?2, ?3)",
            params![sha256_hex(token.as_bytes()), user_id as i64, expires],
        )?;
        Ok((token, expires))
    }

    /// The user id and name of a valid (unexpired) token.
    pub fn token_user(&self, token: &str) -> anyhow::Result<Option<(u64, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT u.id, u.username FROM tokens t JOIN users u ON u.id = t.user_id
             WHERE t.hash = ?1 AND t.expires_at > ?2",
        )?;
        Ok(stmt
            .query_row(params![sha256_hex(token.as_bytes()), now_ms()], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get(1)?))
            })
            .optional()?)
    }

    pub fn revoke_token(&self, token: &str) -> anyhow::Result<()> {
        self.conn()?.execute(
            "DELETE FROM tokens WHERE hash = ?1",
            [sha256_hex(token.as_bytes())],
        )?;
        Ok(())
    }
}

pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("salt: {e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("cannot hash the password: {e}"))
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}
