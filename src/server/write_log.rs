//! The optional log of progress writes (`earmark serve --log-writes`): one
//! row per write the server decided (applied, stale or zero-guarded), in
//! the same transaction as the write itself, so a server killed at any
//! instant never has a write applied and not logged, or logged and not
//! applied. Soak tests read it to assert on the sequence of writes, not
//! only the end state; a server without the flag writes nothing here.

use super::merge::Outcome;
use rusqlite::{Connection, params};
use std::path::Path;

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS progress_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    boot TEXT NOT NULL,
    user_id INTEGER NOT NULL,
    book_id TEXT NOT NULL,
    chapter_id TEXT NOT NULL,
    position_sec REAL NOT NULL,
    book_position_sec REAL NOT NULL,
    finished INTEGER NOT NULL,
    reset INTEGER NOT NULL,
    client_updated_at INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    revision INTEGER NOT NULL,
    server_updated_at INTEGER NOT NULL);
";

/// One write as the server decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedWrite {
    /// Order of decision (commit order).
    pub seq: i64,
    /// Which run of the server decided it ([`boot_id`]).
    pub boot: String,
    pub user_id: u64,
    pub book_id: String,
    pub chapter_id: String,
    /// As written (clamped to the chapter's length).
    pub position_sec: f64,
    pub book_position_sec: f64,
    pub finished: bool,
    pub reset: bool,
    pub client_updated_at: i64,
    /// What the merge policy decided (stored as `applied`, `stale` or
    /// `zero_guarded`).
    pub outcome: Outcome,
    /// The stored record's revision after the decision.
    pub revision: i64,
    pub server_updated_at: i64,
}

/// Names one run of the server: its process id and start time (ms).
pub fn boot_id() -> String {
    format!("{}-{}", std::process::id(), super::db::now_ms())
}

const OUTCOMES: [(Outcome, &str); 3] = [
    (Outcome::Applied, "applied"),
    (Outcome::Stale, "stale"),
    (Outcome::ZeroGuarded, "zero_guarded"),
];

fn outcome_name(o: Outcome) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(x, _)| *x == o)
        .map_or("?", |(_, n)| n)
}

fn outcome_named(name: &str) -> Option<Outcome> {
    OUTCOMES.iter().find(|(_, n)| *n == name).map(|(o, _)| *o)
}

/// Appends `w` inside the caller's transaction (`w.seq` is ignored: the
/// table assigns it).
pub fn record(tx: &Connection, w: &LoggedWrite) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO progress_log(boot, user_id, book_id, chapter_id, position_sec, book_position_sec,
           finished, reset, client_updated_at, outcome, revision, server_updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            w.boot,
            w.user_id as i64,
            w.book_id,
            w.chapter_id,
            w.position_sec,
            w.book_position_sec,
            w.finished as i64,
            w.reset as i64,
            w.client_updated_at,
            outcome_name(w.outcome),
            w.revision,
            w.server_updated_at
        ],
    )?;
    Ok(())
}

/// Every logged write of the data dir's database, in the order decided
/// (readable while a server runs: WAL).
pub fn read(data_dir: &Path) -> anyhow::Result<Vec<LoggedWrite>> {
    let db = super::db::Db::open(data_dir)?;
    let conn = db.conn()?;
    let mut stmt = conn.prepare(
        "SELECT seq, boot, user_id, book_id, chapter_id, position_sec, book_position_sec, finished,
           reset, client_updated_at, outcome, revision, server_updated_at
         FROM progress_log ORDER BY seq",
    )?;
    let rows = stmt.query_map([], |r| {
        let outcome: String = r.get(10)?;
        let outcome = outcome_named(&outcome).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                10,
                rusqlite::types::Type::Text,
                format!("unknown outcome {outcome:?}").into(),
            )
        })?;
        Ok(LoggedWrite {
            seq: r.get(0)?,
            boot: r.get(1)?,
            user_id: r.get::<_, i64>(2)? as u64,
            book_id: r.get(3)?,
            chapter_id: r.get(4)?,
            position_sec: r.get(5)?,
            book_position_sec: r.get(6)?,
            finished: r.get::<_, i64>(7)? != 0,
            reset: r.get::<_, i64>(8)? != 0,
            client_updated_at: r.get(9)?,
            outcome,
            revision: r.get(11)?,
            server_updated_at: r.get(12)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
