//! The HTTP surface: the router under `{prefix}/api/v1` and the JSON
//! envelope and paging helpers. The shared state is `server::state`.

mod books;
mod play;
mod progress;
mod session;
mod social;

pub use super::state::AppState;

use super::error::{ApiError, ApiResult, BODY_LIMIT};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use serde::Serialize;

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
        let page = match page {
            None => 1,
            Some(p) => p
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&p| p >= 1)
                .ok_or_else(|| {
                    ApiError::bad_request(format!("page must be an integer ≥ 1, got {p:?}"))
                })?,
        };
        let page_size = match page_size {
            None => 50,
            Some(p) => p
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|p| (1..=500).contains(p))
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "pageSize must be an integer from 1 to 500, got {p:?}"
                    ))
                })?,
        };
        Ok(Self { page, page_size })
    }
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
