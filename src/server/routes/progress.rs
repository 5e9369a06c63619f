//! Reading progress and playback settings: per user and book, merged by
//! the server (`merge`), identity headers on every write.

use super::{AppState, book, chapter_at, data};
use crate::server::auth::{Gated, Writer};
use crate::server::catalog::Library;
use crate::server::db::write_clock_ms;
use crate::server::error::{ApiError, ApiJson, ApiPath, ApiResult, parse_json};
use crate::server::merge::{self, Incoming, Outcome, Stored};
use crate::server::write_log;
use axum::extract::State;
use axum::response::IntoResponse;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct ProgressRow {
    pub book_id: String,
    pub chapter_id: String,
    pub position_sec: f64,
    pub finished: bool,
    pub client_updated_at: i64,
    pub server_updated_at: i64,
    pub device_id: Option<String>,
    pub revision: i64,
}

impl ProgressRow {
    /// Position in the whole book, from the current manifest.
    pub fn book_position_sec(&self, lib: &Library) -> f64 {
        lib.chapter(&self.chapter_id)
            .map(|(_, c)| c.book_offset_sec + self.position_sec)
            .unwrap_or(self.position_sec)
    }

    pub fn to_json(&self, lib: &Library) -> Value {
        json!({
            "bookId": self.book_id,
            "chapterId": self.chapter_id,
            "positionSec": self.position_sec,
            "bookPositionSec": self.book_position_sec(lib),
            "finished": self.finished,
            "clientUpdatedAt": self.client_updated_at,
            "serverUpdatedAt": self.server_updated_at,
            "deviceId": self.device_id,
            "revision": self.revision,
        })
    }
}

pub const PROGRESS_COLUMNS: &str = "book_id, chapter_id, position_sec, finished, client_updated_at, server_updated_at, device_id, revision";

pub fn row_to_progress(r: &rusqlite::Row<'_>) -> rusqlite::Result<ProgressRow> {
    Ok(ProgressRow {
        book_id: r.get(0)?,
        chapter_id: r.get(1)?,
        position_sec: r.get(2)?,
        finished: r.get::<_, i64>(3)? != 0,
        client_updated_at: r.get(4)?,
        server_updated_at: r.get(5)?,
        device_id: r.get(6)?,
        revision: r.get(7)?,
    })
}

/// The caller's progress, for one book or all.
pub fn load_progress(
    state: &AppState,
    user_id: u64,
    book_id: Option<&str>,
) -> ApiResult<HashMap<String, ProgressRow>> {
    let conn = state.db.conn()?;
    let mut out = HashMap::new();
    let sql = format!(
        "SELECT {PROGRESS_COLUMNS} FROM progress WHERE user_id = ?1 AND (?2 IS NULL OR book_id = ?2)"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    for row in stmt.query_map(params![user_id as i64, book_id], row_to_progress)? {
        let row = row?;
        out.insert(row.book_id.clone(), row);
    }
    Ok(out)
}

fn settings_json(state: &AppState, user_id: u64, book_id: &str) -> ApiResult<Value> {
    let conn = state.db.conn()?;
    let row = conn
        .query_row(
            "SELECT speed, volume, client_updated_at, server_updated_at FROM settings WHERE user_id = ?1 AND book_id = ?2",
            params![user_id as i64, book_id],
            |r| {
                Ok(json!({
                    "speed": r.get::<_, f64>(0)?,
                    "volume": r.get::<_, Option<f64>>(1)?,
                    "clientUpdatedAt": r.get::<_, i64>(2)?,
                    "serverUpdatedAt": r.get::<_, i64>(3)?,
                }))
            },
        )
        .optional()?;
    Ok(row.unwrap_or(Value::Null))
}

pub async fn read(
    State(state): State<AppState>,
    Gated(caller, lib): Gated,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    book(&lib, &book_id)?;
    let body = state
        .run(move |state| {
            let progress = load_progress(state, caller.user_id, Some(&book_id))?;
            Ok(json!({
                "bookId": book_id,
                "progress": progress.get(&book_id).map(|p| p.to_json(&lib)),
                "playbackSettings": settings_json(state, caller.user_id, &book_id)?,
            }))
        })
        .await?;
    Ok(data(body))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressWrite {
    chapter_id: String,
    position_sec: f64,
    client_updated_at: i64,
    #[serde(default)]
    finished: bool,
    #[serde(default)]
    device_id: Option<String>,
    #[serde(default)]
    reset: bool,
}

/// A write's fields, checked before anything is read or stored.
fn check_write(w: &ProgressWrite) -> ApiResult<()> {
    if !w.position_sec.is_finite() || w.position_sec < 0.0 {
        return Err(ApiError::bad_request(
            "positionSec must be a finite number ≥ 0",
        ));
    }
    if w.client_updated_at <= 0 {
        return Err(ApiError::bad_request(
            "clientUpdatedAt must be a positive integer (ms since the epoch)",
        ));
    }
    if w.device_id
        .as_ref()
        .is_some_and(|d| d.chars().count() > 200)
    {
        return Err(ApiError::bad_request(
            "deviceId is longer than 200 characters",
        ));
    }
    Ok(())
}

/// Validates, merges and stores one write. Returns (applied, merged record).
fn apply_write(
    state: &AppState,
    lib: &Library,
    user_id: u64,
    book_id: &str,
    w: ProgressWrite,
) -> ApiResult<(bool, Value)> {
    let (chapter, position) = chapter_at(lib, book_id, &w.chapter_id, w.position_sec)?;
    check_write(&w)?;
    let now = write_clock_ms();
    let incoming = Incoming {
        chapter_index: chapter.index,
        position_sec: position,
        book_position_sec: chapter.book_offset_sec + position,
        finished: w.finished,
        reset: w.reset,
        client_updated_at: merge::clamp_client_time(w.client_updated_at, now),
    };
    let mut conn = state.db.conn()?;
    // Immediate: the read and the write below are one step for SQLite too.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let stored: Option<ProgressRow> = tx
        .query_row(
            &format!("SELECT {PROGRESS_COLUMNS} FROM progress WHERE user_id = ?1 AND book_id = ?2"),
            params![user_id as i64, book_id],
            row_to_progress,
        )
        .optional()?;
    let stored_view = stored.as_ref().map(|s| Stored {
        book_position_sec: s.book_position_sec(lib),
        finished: s.finished,
        client_updated_at: s.client_updated_at,
    });
    let outcome = merge::decide(stored_view.as_ref(), &incoming);
    let record = match (outcome, stored) {
        (Outcome::Applied, prev) => {
            let row = ProgressRow {
                book_id: book_id.to_owned(),
                chapter_id: chapter.id.clone(),
                position_sec: position,
                finished: w.finished,
                client_updated_at: incoming.client_updated_at,
                server_updated_at: now,
                device_id: w.device_id,
                revision: prev.map(|p| p.revision).unwrap_or(0) + 1,
            };
            tx.execute(
                "INSERT INTO progress(user_id, book_id, chapter_id, position_sec, finished, client_updated_at, server_updated_at, device_id, revision)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT(user_id, book_id) DO UPDATE SET chapter_id = excluded.chapter_id,
                   position_sec = excluded.position_sec, finished = excluded.finished,
                   client_updated_at = excluded.client_updated_at, server_updated_at = excluded.server_updated_at,
                   device_id = excluded.device_id, revision = excluded.revision",
                params![
                    user_id as i64, row.book_id, row.chapter_id, row.position_sec, row.finished as i64,
                    row.client_updated_at, row.server_updated_at, row.device_id, row.revision
                ],
            )?;
            row
        }
        (_, Some(prev)) => prev,
        (_, None) => unreachable!("a write without a stored record is always applied"),
    };
    if let Some(boot) = &state.write_log {
        write_log::record(
            &tx,
            &write_log::LoggedWrite {
                seq: 0,
                boot: boot.clone(),
                user_id,
                book_id: book_id.to_owned(),
                chapter_id: chapter.id.clone(),
                position_sec: position,
                book_position_sec: incoming.book_position_sec,
                finished: w.finished,
                reset: w.reset,
                client_updated_at: incoming.client_updated_at,
                outcome,
                revision: record.revision,
                server_updated_at: now,
            },
        )?;
    }
    tx.commit()?;
    Ok((outcome == Outcome::Applied, record.to_json(lib)))
}

pub async fn write(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiPath(book_id): ApiPath<String>,
    ApiJson(body): ApiJson<ProgressWrite>,
) -> ApiResult<impl IntoResponse> {
    let (applied, progress) = state
        .run(move |state| apply_write(state, &lib, caller.user_id, &book_id, body))
        .await?;
    Ok(data(json!({"applied": applied, "progress": progress})))
}

pub async fn delete(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let sql = "DELETE FROM progress WHERE user_id = ?1 AND book_id = ?2";
    delete_row(&state, &lib, sql, caller.user_id, book_id).await
}

/// Deletes the caller's row of a book: `{"deleted": …}`.
async fn delete_row(
    state: &AppState,
    lib: &Library,
    sql: &'static str,
    user_id: u64,
    book_id: String,
) -> ApiResult<impl IntoResponse + use<>> {
    book(lib, &book_id)?;
    let n = state.execute(sql, (user_id as i64, book_id)).await?;
    Ok(data(json!({"deleted": n > 0})))
}

#[derive(Deserialize)]
pub struct BatchEnvelope {
    items: Vec<Value>,
}

pub async fn write_batch(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiJson(body): ApiJson<BatchEnvelope>,
) -> ApiResult<impl IntoResponse> {
    if body.items.is_empty() || body.items.len() > 100 {
        return Err(ApiError::bad_request(format!(
            "items must hold 1 to 100 entries, got {}",
            body.items.len()
        )));
    }
    let results = state
        .run(move |state| {
            let mut results = Vec::with_capacity(body.items.len());
            for item in body.items {
                let book_id = item
                    .get("bookId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let outcome = match &book_id {
                    None => Err(ApiError::bad_request("each item needs a string bookId")),
                    Some(id) => serde_json::to_vec(&item)
                        .map_err(ApiError::internal)
                        .and_then(|bytes| parse_json::<ProgressWrite>(&bytes))
                        .and_then(|w| apply_write(state, &lib, caller.user_id, id, w)),
                };
                results.push(match outcome {
                    Ok((applied, progress)) => {
                        json!({"bookId": book_id, "status": 200, "applied": applied, "progress": progress})
                    }
                    Err(e) => json!({
                        "bookId": book_id, "status": e.status.as_u16(), "code": e.code, "message": e.message,
                    }),
                });
            }
            Ok(results)
        })
        .await?;
    Ok(data(json!({"results": results})))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsWrite {
    speed: f64,
    #[serde(default)]
    volume: Option<f64>,
    client_updated_at: i64,
}

pub async fn write_settings(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiPath(book_id): ApiPath<String>,
    ApiJson(w): ApiJson<SettingsWrite>,
) -> ApiResult<impl IntoResponse> {
    book(&lib, &book_id)?;
    if !(0.5..=3.0).contains(&w.speed) {
        return Err(ApiError::bad_request(format!(
            "speed must be from 0.5 to 3.0, got {}",
            w.speed
        )));
    }
    if let Some(v) = w.volume
        && !(0.0..=1.0).contains(&v)
    {
        return Err(ApiError::bad_request(format!(
            "volume must be from 0.0 to 1.0, got {v}"
        )));
    }
    if w.client_updated_at <= 0 {
        return Err(ApiError::bad_request(
            "clientUpdatedAt must be a positive integer (ms since the epoch)",
        ));
    }
    let now = write_clock_ms();
    let client_at = merge::clamp_client_time(w.client_updated_at, now);
    let (applied, settings) = state
        .run(move |state| {
            let mut conn = state.db.conn()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let stored: Option<i64> = tx
                .query_row(
                    "SELECT client_updated_at FROM settings WHERE user_id = ?1 AND book_id = ?2",
                    params![caller.user_id as i64, book_id],
                    |r| r.get(0),
                )
                .optional()?;
            let applied = stored.is_none_or(|s| client_at > s);
            if applied {
                tx.execute(
                    "INSERT INTO settings(user_id, book_id, speed, volume, client_updated_at, server_updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(user_id, book_id) DO UPDATE SET speed = excluded.speed, volume = excluded.volume,
                       client_updated_at = excluded.client_updated_at, server_updated_at = excluded.server_updated_at",
                    params![caller.user_id as i64, book_id, w.speed, w.volume, client_at, now],
                )?;
            }
            tx.commit()?;
            drop(conn);
            Ok((applied, settings_json(state, caller.user_id, &book_id)?))
        })
        .await?;
    Ok(data(json!({
        "applied": applied,
        "playbackSettings": settings,
    })))
}

pub async fn delete_settings(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let sql = "DELETE FROM settings WHERE user_id = ?1 AND book_id = ?2";
    delete_row(&state, &lib, sql, caller.user_id, book_id).await
}
