//! The HTTP surface: the router under `{prefix}/api/v1` and the JSON
//! envelope and paging helpers. The shared state is `server::state`.

mod books;
mod play;
mod progress;
mod session;
mod social;

pub use super::state::AppState;

use super::catalog::{Book, Chapter, Library};
use super::error::{ApiError, ApiResult, BODY_LIMIT};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use serde::Serialize;
use std::sync::Arc;

/// `{"data": …}`
#[derive(Serialize)]
pub struct Data<T> {
    pub data: T,
}

pub fn data<T: Serialize>(value: T) -> axum::Json<Data<T>> {
    axum::Json(Data { data: value })
}

/// The list envelope shared by every list endpoint.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub page: usize,
    pub page_size: usize,
    pub has_more: bool,
}

impl<T> Page<T> {
    /// A whole list as one page.
    pub fn whole(items: Vec<T>) -> Self {
        let total = items.len();
        Self {
            items,
            total,
            page: 1,
            page_size: total.max(1),
            has_more: false,
        }
    }

    /// One page of `all`.
    pub fn slice(all: Vec<T>, paging: Paging) -> Self {
        let total = all.len();
        let start = (paging.page - 1)
            .saturating_mul(paging.page_size)
            .min(total);
        let end = start.saturating_add(paging.page_size).min(total);
        let items = all.into_iter().skip(start).take(end - start).collect();
        Self {
            items,
            total,
            page: paging.page,
            page_size: paging.page_size,
            has_more: end < total,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Paging {
    pub page: usize,
    pub page_size: usize,
}

impl Paging {
    pub fn parse(page: Option<&str>, page_size: Option<&str>) -> ApiResult<Self> {
        let number = |value: Option<&str>, default, ok: &dyn Fn(usize) -> bool, want: &str| {
            let Some(v) = value else { return Ok(default) };
            let parsed = v.trim().parse::<usize>().ok().filter(|n| ok(*n));
            parsed.ok_or_else(|| ApiError::bad_request(format!("{want}, got {v:?}")))
        };
        Ok(Self {
            page: number(page, 1, &|p| p >= 1, "page must be an integer ≥ 1")?,
            page_size: number(
                page_size,
                50,
                &|p| (1..=500).contains(&p),
                "pageSize must be an integer from 1 to 500",
            )?,
        })
    }
}

/// The book `id` of the catalog, else 404.
pub fn book<'a>(lib: &'a Library, id: &str) -> ApiResult<&'a Arc<Book>> {
    lib.book(id).ok_or_else(|| ApiError::book_not_found(id))
}

/// A chapter of book `book_id` (404 / 400 `unknown_chapter`), and
/// `position` clamped to its length when that is known.
pub fn chapter_at<'a>(
    lib: &'a Library,
    book_id: &str,
    chapter_id: &str,
    position: f64,
) -> ApiResult<(&'a Chapter, f64)> {
    let chapter = book(lib, book_id)?
        .chapter(chapter_id)
        .ok_or_else(|| ApiError::unknown_chapter(chapter_id))?;
    let clamped = if chapter.duration_sec > 0.0 {
        position.min(chapter.duration_sec)
    } else {
        position
    };
    Ok((chapter, clamped))
}

pub fn router(state: AppState, prefix: &str) -> Router {
    let api = Router::new()
        .route("/auth/login", post(session::login))
        .route("/auth/logout", post(session::logout))
        .route("/license/status", get(session::license_status))
        .route("/books", get(books::list))
        .route("/books/search", get(books::search))
        .route("/books/{book_id}", get(books::details))
        .route("/books/{book_id}/chapters", get(books::chapters))
        .route("/books/{book_id}/download-manifest", get(books::manifest))
        .route("/books/{book_id}/cover", get(play::cover))
        .route("/categories", get(books::categories))
        .route("/chapters/{chapter_id}/play", get(play::play))
        .route("/auth/reading-progress/batch", post(progress::write_batch))
        .route(
            "/auth/reading-progress/{book_id}",
            get(progress::read)
                .post(progress::write)
                .delete(progress::delete),
        )
        .route(
            "/auth/playback-settings/{book_id}",
            post(progress::write_settings).delete(progress::delete_settings),
        )
        .route("/auth/favorites", get(social::list_favorites))
        .route(
            "/auth/favorites/{book_id}",
            post(social::add_favorite).delete(social::remove_favorite),
        )
        .route(
            "/auth/bookmarks",
            get(social::list_bookmarks).post(social::add_bookmark),
        )
        .route(
            "/auth/bookmarks/{bookmark_id}",
            axum::routing::delete(social::delete_bookmark),
        )
        .method_not_allowed_fallback(super::error::method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state);
    Router::new()
        .nest(&format!("{prefix}/api/v1"), api)
        .fallback(super::error::fallback_not_found)
}
