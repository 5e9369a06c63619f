//! Browsing: books, search, details, chapters, the playback manifest and
//! categories. None of these is license-gated.

use super::progress::{PROGRESS_COLUMNS, ProgressRow, row_to_progress};
use super::{AppState, Data, Page, Paging, book, data};
use crate::domain::SeriesRef;
use crate::server::auth::{Authed, Caller};
use crate::server::catalog::{Book, Category, Filter, Library, Sort};
use crate::server::error::{ApiError, ApiPath, ApiQuery, ApiResult};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};
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

/// The caller's view of some books: favorites and progress.
pub struct Personal {
    pub favorites: HashSet<String>,
    pub progress: HashMap<String, ProgressRow>,
}

impl Personal {
    /// The caller's favorites and progress among `books` only: a page
    /// costs its books, not everything the caller ever touched.
    pub fn of<'a>(
        state: &AppState,
        user_id: u64,
        books: impl IntoIterator<Item = &'a str>,
    ) -> ApiResult<Self> {
        let conn = state.db.conn()?;
        let mut favorite =
            conn.prepare_cached("SELECT 1 FROM favorites WHERE user_id = ?1 AND book_id = ?2")?;
        let mut progress = conn.prepare_cached(&format!(
            "SELECT {PROGRESS_COLUMNS} FROM progress WHERE user_id = ?1 AND book_id = ?2"
        ))?;
        let mut out = Self {
            favorites: HashSet::new(),
            progress: HashMap::new(),
        };
        for book in books {
            let user = user_id as i64;
            if favorite.exists(rusqlite::params![user, book])? {
                out.favorites.insert(book.to_owned());
            }
            if let Some(row) = progress
                .query_row(rusqlite::params![user, book], row_to_progress)
                .optional()?
            {
                out.progress.insert(book.to_owned(), row);
            }
        }
        Ok(out)
    }
}

/// All the caller's favorites (the `favorites=true` filter).
fn all_favorites(state: &AppState, user_id: u64) -> ApiResult<HashSet<String>> {
    let conn = state.db.conn()?;
    let mut stmt = conn.prepare_cached("SELECT book_id FROM favorites WHERE user_id = ?1")?;
    Ok(stmt
        .query_map([user_id as i64], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// When the caller last wrote progress to each book (`sort=recent`).
fn progress_times(state: &AppState, user_id: u64) -> ApiResult<HashMap<String, i64>> {
    let conn = state.db.conn()?;
    let mut stmt =
        conn.prepare_cached("SELECT book_id, server_updated_at FROM progress WHERE user_id = ?1")?;
    Ok(stmt
        .query_map([user_id as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?)
}

/// A book as the caller sees it, borrowed from the catalog: a page of
/// them is written straight to the response body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BookView<'a> {
    id: &'a str,
    title: &'a str,
    author: &'a str,
    narrator: Option<&'a str>,
    /// `{name, sequence}`, the sequence as written.
    series: &'a [SeriesRef],
    description: Option<&'a str>,
    duration_sec: f64,
    chapter_count: usize,
    categories: &'a [Category],
    cover_url: Option<String>,
    favorite: bool,
    added_at: i64,
    progress: Option<Value>,
}

pub fn book_view<'a>(lib: &Library, book: &'a Book, personal: &Personal) -> BookView<'a> {
    BookView {
        id: &book.id,
        title: &book.title,
        author: &book.author,
        narrator: book.narrator.as_deref(),
        series: &book.series,
        description: book.description.as_deref(),
        duration_sec: book.duration_sec,
        chapter_count: book.chapters.len(),
        categories: &book.categories,
        cover_url: book
            .cover
            .as_ref()
            .map(|_| format!("/books/{}/cover", book.id)),
        favorite: personal.favorites.contains(&book.id),
        added_at: book.added_at,
        progress: personal.progress.get(&book.id).map(|p| p.to_json(lib)),
    }
}

pub fn book_json(lib: &Library, book: &Book, personal: &Personal) -> Value {
    json!(book_view(lib, book, personal))
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

/// The page as the response body (JSON bytes).
fn query_books(
    state: &AppState,
    user_id: u64,
    query: ListQuery,
    search: bool,
) -> ApiResult<Vec<u8>> {
    let paging = Paging::parse(query.page.as_deref(), query.page_size.as_deref())?;
    let favorites_only = parse_bool("favorites", query.favorites.as_deref())?;
    let sort_name = query.sort.as_deref().map(str::trim).unwrap_or("title");
    let sort = Sort::parse(sort_name).ok_or_else(|| {
        ApiError::bad_request(format!(
            "sort must be one of title, author, recent, added; got {sort_name:?}"
        ))
    })?;
    let q = query.q.as_deref().map(str::trim).unwrap_or("");
    if search && q.is_empty() {
        return Err(ApiError::bad_request(
            "search needs a non-blank q parameter",
        ));
    }
    let (substring, all_words) = if search {
        Filter::text(None, Some(q))
    } else {
        Filter::text(Some(q), None)
    };
    let lib = state.current_library()?;
    let favorites = if favorites_only {
        Some(all_favorites(state, user_id)?)
    } else {
        None
    };
    let recent = if matches!(sort, Sort::Recent) {
        progress_times(state, user_id)?
    } else {
        HashMap::new()
    };
    let filter = Filter {
        substring,
        all_words,
        category: query
            .category
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty()),
        only: favorites.as_ref(),
    };
    let start = (paging.page - 1).saturating_mul(paging.page_size);
    let listed = lib.list(&filter, sort, &recent, start, paging.page_size);
    let personal = Personal::of(state, user_id, listed.books.iter().map(|b| b.id.as_str()))?;
    let items: Vec<BookView<'_>> = listed
        .books
        .iter()
        .map(|b| book_view(&lib, b, &personal))
        .collect();
    let has_more = start.saturating_add(items.len()) < listed.total;
    let page = Data {
        data: Page {
            items,
            total: listed.total,
            page: paging.page,
            page_size: paging.page_size,
            has_more,
        },
    };
    serde_json::to_vec(&page).map_err(ApiError::internal)
}

/// `GET /books` and (`search`) `GET /books/search`.
async fn books_page(
    state: AppState,
    caller: Caller,
    query: ListQuery,
    search: bool,
) -> ApiResult<impl IntoResponse> {
    let body = state
        .run(move |state| query_books(state, caller.user_id, query, search))
        .await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body))
}

pub async fn list(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    books_page(state, caller, query, false).await
}

pub async fn search(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    books_page(state, caller, query, true).await
}

/// The current catalog and the position of a book in it (404 if absent).
async fn book_of(state: &AppState, book_id: String) -> ApiResult<(Arc<Library>, usize)> {
    state
        .run(move |state| {
            let lib = state.current_library()?;
            let position = lib
                .position(&book_id)
                .ok_or_else(|| ApiError::book_not_found(&book_id))?;
            Ok((lib, position))
        })
        .await
}

pub async fn details(
    State(state): State<AppState>,
    Authed(caller): Authed,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let book = state
        .run(move |state| {
            let lib = state.current_library()?;
            let book = book(&lib, &book_id)?;
            let personal = Personal::of(state, caller.user_id, [book.id.as_str()])?;
            Ok(book_json(&lib, book, &personal))
        })
        .await?;
    Ok(data(book))
}

pub async fn chapters(
    State(state): State<AppState>,
    Authed(_): Authed,
    ApiPath(book_id): ApiPath<String>,
) -> ApiResult<impl IntoResponse> {
    let (lib, book) = book_of(&state, book_id).await?;
    let book = &lib.books[book];
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
    let (lib, book) = book_of(&state, book_id).await?;
    let book = &lib.books[book];
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
    let lib = state.run(|state| state.current_library()).await?;
    let items = lib
        .categories
        .iter()
        .map(|(c, n)| json!({"id": c.id, "name": c.name, "bookCount": n}))
        .collect();
    Ok(data(Page::whole(items)))
}
