//! Favorites and bookmarks (paths of our own; the contract names the
//! capabilities only). License-gated; writes need the identity headers.

use super::books::{Personal, book_json};
use super::{AppState, Page, Paging, book, chapter_at, data};
use crate::server::auth::{Gated, Writer};
use crate::server::db::{now_ms, random_hex};
use crate::server::error::{ApiError, ApiJson, ApiPath, ApiQuery, ApiResult};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    page: Option<String>,
    #[serde(rename = "pageSize")]
    page_size: Option<String>,
}

pub async fn list_favorites(
    State(state): State<AppState>,
    Gated(caller, lib): Gated,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<impl IntoResponse> {
    let paging = Paging::parse(q.page.as_deref(), q.page_size.as_deref())?;
    let items = state
        .run(move |state| {
            let rows: Vec<(String, i64)> = {
                let conn = state.db.conn()?;
                let mut stmt = conn.prepare_cached(
                    "SELECT book_id, created_at FROM favorites WHERE user_id = ?1 ORDER BY created_at DESC, book_id",
                )?;
                stmt.query_map([caller.user_id as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()?
            };
            let personal =
                Personal::of(state, caller.user_id, rows.iter().map(|(id, _)| id.as_str()))?;
            Ok(rows
                .into_iter()
                .filter_map(|(id, at)| {
                    // A favorite of a book that left the library is kept but not listed.
                    let book = lib.book(&id)?;
                    Some(json!({"bookId": id, "createdAt": at, "book": book_json(&lib, book, &personal)}))
                })
                .collect::<Vec<Value>>())
        })
        .await?;
    Ok(data(Page::slice(items, paging)))
}

pub async fn add_favorite(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    book(&lib, &book_id)?;
    let sql = "INSERT OR IGNORE INTO favorites(user_id, book_id, created_at) VALUES (?1, ?2, ?3)";
    let row = (caller.user_id as i64, book_id.clone(), now_ms());
    state.execute(sql, row).await?;
    Ok(data(json!({"bookId": book_id, "favorite": true})))
}

pub async fn remove_favorite(
    State(state): State<AppState>,
    Writer(caller, _lib): Writer,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    // No existence check: removing a favorite of a vanished book must work.
    let sql = "DELETE FROM favorites WHERE user_id = ?1 AND book_id = ?2";
    state
        .execute(sql, (caller.user_id as i64, book_id.clone()))
        .await?;
    Ok(data(json!({"bookId": book_id, "favorite": false})))
}

#[derive(Debug, Deserialize)]
pub struct BookmarkQuery {
    #[serde(rename = "bookId")]
    book_id: Option<String>,
}

const BOOKMARK_COLUMNS: &str = "id, book_id, chapter_id, position_sec, note, created_at, client_id";

fn bookmark_json(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, String>(0)?,
        "bookId": r.get::<_, String>(1)?,
        "chapterId": r.get::<_, String>(2)?,
        "positionSec": r.get::<_, f64>(3)?,
        "note": r.get::<_, Option<String>>(4)?,
        "createdAt": r.get::<_, i64>(5)?,
        "clientId": r.get::<_, Option<String>>(6)?,
    }))
}

pub async fn list_bookmarks(
    State(state): State<AppState>,
    Gated(caller, lib): Gated,
    ApiQuery(q): ApiQuery<BookmarkQuery>,
) -> ApiResult<impl IntoResponse> {
    let book_id = q
        .book_id
        .filter(|b| !b.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("the bookId query parameter is required"))?;
    let book = book(&lib, &book_id)?;
    let mut items: Vec<Value> = state
        .run(move |state| {
            let conn = state.db.conn()?;
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {BOOKMARK_COLUMNS} FROM bookmarks WHERE user_id = ?1 AND book_id = ?2"
            ))?;
            Ok(stmt
                .query_map(params![caller.user_id as i64, book_id], bookmark_json)?
                .collect::<Result<_, _>>()?)
        })
        .await?;
    let order = |v: &Value| {
        let ch = v["chapterId"]
            .as_str()
            .and_then(|c| book.chapter(c))
            .map(|c| c.index)
            .unwrap_or(usize::MAX);
        (ch, v["positionSec"].as_f64().unwrap_or(0.0))
    };
    items.sort_by(|a, b| {
        let ((ca, pa), (cb, pb)) = (order(a), order(b));
        ca.cmp(&cb).then(pa.total_cmp(&pb))
    });
    Ok(data(Page::whole(items)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewBookmark {
    book_id: String,
    chapter_id: String,
    position_sec: f64,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
}

pub async fn add_bookmark(
    State(state): State<AppState>,
    Writer(caller, lib): Writer,
    ApiJson(b): ApiJson<NewBookmark>,
) -> ApiResult<impl IntoResponse> {
    if !b.position_sec.is_finite() || b.position_sec < 0.0 {
        return Err(ApiError::bad_request(
            "positionSec must be a finite number ≥ 0",
        ));
    }
    if b.note.as_ref().is_some_and(|n| n.chars().count() > 2000) {
        return Err(ApiError::bad_request("note is longer than 2000 characters"));
    }
    if b.client_id
        .as_ref()
        .is_some_and(|c| c.is_empty() || c.chars().count() > 200)
    {
        return Err(ApiError::bad_request(
            "clientId must be 1 to 200 characters",
        ));
    }
    let (chapter, position) = chapter_at(&lib, &b.book_id, &b.chapter_id, b.position_sec)?;
    let chapter_id = chapter.id.clone();
    let (status, bookmark) = state
        .run(move |state| {
            let mut conn = state.db.conn()?;
            // Immediate: two retries with one clientId must not both insert.
            let conn = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let select =
                format!("SELECT {BOOKMARK_COLUMNS} FROM bookmarks WHERE user_id = ?1 AND client_id = ?2");
            if let Some(client_id) = &b.client_id {
                let existing = conn
                    .query_row(
                        &select,
                        params![caller.user_id as i64, client_id],
                        bookmark_json,
                    )
                    .optional()?;
                if let Some(existing) = existing {
                    return Ok((StatusCode::OK, existing));
                }
            }
            let id = format!("bm_{}", random_hex(8));
            conn.execute(
                "INSERT INTO bookmarks(id, user_id, book_id, chapter_id, position_sec, note, created_at, client_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![id, caller.user_id as i64, b.book_id, chapter_id, position, b.note, now_ms(), b.client_id],
            )?;
            let created = conn.query_row(
                &format!("SELECT {BOOKMARK_COLUMNS} FROM bookmarks WHERE id = ?1"),
                [&id],
                bookmark_json,
            )?;
            conn.commit()?;
            Ok((StatusCode::CREATED, created))
        })
        .await?;
    Ok((status, data(bookmark)))
}

pub async fn delete_bookmark(
    State(state): State<AppState>,
    Writer(caller, _lib): Writer,
    ApiPath(bookmark_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let sql = "DELETE FROM bookmarks WHERE id = ?1 AND user_id = ?2";
    let n = state
        .execute(sql, (bookmark_id.clone(), caller.user_id as i64))
        .await?;
    if n == 0 {
        return Err(ApiError::not_found(format!(
            "no bookmark with id {bookmark_id:?}"
        )));
    }
    Ok(data(json!({"id": bookmark_id, "deleted": true})))
}
