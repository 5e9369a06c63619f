//! Browsing: books, search, details, chapters, the playback manifest and
//! categories. None of these is license-gated.

use super::progress::{ProgressRow, load_progress};
use super::{AppState, Page, Paging, data};
use crate::server::auth::Authed;
use crate::server::catalog::{Book, Library};
use crate::server::error::{ApiError, ApiPath, ApiQuery, ApiResult};
use axum::extract::State;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Debug, Deserialize, Default)]
pub struct ListQuery {
    q: Option<String>,
    category: Option<String>,
    favorites: Option<String>,
    sort: Option<String>,
    page: Option<String>,
    #[serde(rename = "pageSize")]
    page_size: Option<String>,
}

/// The caller's view of books: favorites and progress.
pub struct Personal {
    pub favorites: HashSet<String>,
    pub progress: HashMap<String, ProgressRow>,
}

impl Personal {
    pub fn load(state: &AppState, user_id: u64) -> ApiResult<Self> {
        let favorites = {
            let conn = state.db.conn();
            let mut stmt =
                conn.prepare_cached("SELECT book_id FROM favorites WHERE user_id = ?1")?;
            stmt.query_map([user_id as i64], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        Ok(Self {
            favorites,
            progress: load_progress(state, user_id, None)?,
        })
    }
}

pub fn book_json(lib: &Library, book: &Book, personal: &Personal) -> Value {
    json!({
        "id": book.id,
        "title": book.title,
        "author": book.author,
        "narrator": book.narrator,
        "description": book.description,
        "durationSec": book.duration_sec,
        "chapterCount": book.chapters.len(),
        "categories": book.categories.iter().map(|c| json!({"id": c.id, "name": c.name})).collect::<Vec<_>>(),
        "coverUrl": book.cover.as_ref().map(|_| format!("/books/{}/cover", book.id)),
        "favorite": personal.favorites.contains(&book.id),
        "addedAt": book.added_at,
        "progress": personal.progress.get(&book.id).map(|p| p.to_json(lib)),
    })
}

fn parse_bool(name: &str, value: Option<&str>) -> ApiResult<bool> {
    match value.map(str::trim) {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "{name} must be true or false, got {other:?}"
        ))),
    }
}

fn query_books(
    state: &AppState,
    user_id: u64,
    query: ListQuery,
    search: bool,
) -> ApiResult<impl IntoResponse + use<>> {
    let paging = Paging::parse(query.page.as_deref(), query.page_size.as_deref())?;
    let favorites_only = parse_bool("favorites", query.favorites.as_deref())?;
    let sort = query.sort.as_deref().map(str::trim).unwrap_or("title");
    if !matches!(sort, "title" | "author" | "recent" | "added") {
        return Err(ApiError::bad_request(format!(
            "sort must be one of title, author, recent, added; got {sort:?}"
        )));
    }
    let q = query.q.as_deref().map(str::trim).unwrap_or("");
    if search && q.is_empty() {
        return Err(ApiError::bad_request(
            "search needs a non-blank q parameter",
        ));
    }
    let words: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
    let needle = q.to_lowercase();
    let lib = state.current_library()?;
    let personal = Personal::load(state, user_id)?;
    let mut books: Vec<&Arc<Book>> = lib
        .books
        .iter()
        .filter(|b| {
            if search {
                words.iter().all(|w| b.search_long.contains(w.as_str()))
            } else {
                needle.is_empty() || b.search_short.contains(&needle)
            }
        })
        .filter(|b| match query.category.as_deref().map(str::trim) {
            None | Some("") => true,
            Some(cat) => b.categories.iter().any(|c| c.id == cat),
        })
        .filter(|b| !favorites_only || personal.favorites.contains(&b.id))
        .collect();
    match sort {
        "author" => books.sort_by(|a, b| {
            crate::server::scan::natural_cmp(&a.author, &b.author)
                .then_with(|| crate::server::scan::natural_cmp(&a.title, &b.title))
        }),
        "added" => books.sort_by_key(|b| std::cmp::Reverse(b.added_at)),
        "recent" => books.sort_by_key(|b| {
            std::cmp::Reverse(
                personal
                    .progress
                    .get(&b.id)
                    .map(|p| p.server_updated_at)
                    .unwrap_or(i64::MIN),
            )
        }),
        _ => {} // the library is kept in title order
    }
    let items: Vec<Value> = books
        .iter()
        .map(|b| book_json(&lib, b, &personal))
        .collect();
    Ok(data(Page::slice(items, paging)))
}

pub async fn list(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    query_books(&state, caller.user_id, query, false)
}

pub async fn search(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    query_books(&state, caller.user_id, query, true)
}

pub async fn details(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let lib = state.current_library()?;
    let book = lib
        .book(&book_id)
        .ok_or_else(|| ApiError::book_not_found(&book_id))?;
    let personal = Personal::load(&state, caller.user_id)?;
    Ok(data(book_json(&lib, book, &personal)))
}

pub async fn chapters(
    State(state): State<AppState>,
    Authed(_): Authed,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let lib = state.current_library()?;
    let book = lib
        .book(&book_id)
        .ok_or_else(|| ApiError::book_not_found(&book_id))?;
    let items = book
        .chapters
        .iter()
        .map(|c| {
            json!({
                "id": c.id, "title": c.title, "durationSec": c.duration_sec,
                "startSec": c.book_offset_sec,
            })
        })
        .collect();
    Ok(data(Page::whole(items)))
}

pub async fn manifest(
    State(state): State<AppState>,
    Authed(_): Authed,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let lib = state.current_library()?;
    let book = lib
        .book(&book_id)
        .ok_or_else(|| ApiError::book_not_found(&book_id))?;
    let items: Vec<Value> = book
        .chapters
        .iter()
        .map(|c| {
            json!({
                "chapterId": c.id,
                "title": c.title,
                "durationSec": c.duration_sec,
                "url": format!("/chapters/{}/play?raw=1", c.id),
                "mimeType": c.mime,
                "sizeBytes": c.size,
                "startSec": c.start_sec,
                "endSec": c.end_sec,
                "bookStartSec": c.book_offset_sec,
            })
        })
        .collect();
    Ok(data(json!({
        "bookId": book.id,
        "totalDurationSec": book.duration_sec,
        "items": items,
    })))
}

pub async fn categories(
    State(state): State<AppState>,
    Authed(_): Authed,
) -> ApiResult<impl IntoResponse> {
    let lib = state.current_library()?;
    let items = lib
        .categories
        .iter()
        .map(|(c, n)| json!({"id": c.id, "name": c.name, "bookCount": n}))
        .collect();
    Ok(data(Page::whole(items)))
}
