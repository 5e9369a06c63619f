//! Streaming a chapter's file (HTTP Range via tower-http's `ServeFile`)
//! and book covers. The token and license checks run before any file is
//! touched; files are only ever those the catalog names.

use super::AppState;
use crate::server::auth::{authenticate, licensed};
use crate::server::error::{ApiError, ApiPath, ApiResult};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT_RANGES, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use axum::response::Response;
use tower::ServiceExt;
use tower_http::services::ServeFile;

async fn serve_file(path: &std::path::Path, mime: &str, req: Request) -> ApiResult<Response> {
    if !path.is_file() {
        tracing::warn!("catalogued file is gone: {}", path.display());
        return Err(ApiError::not_found(
            "the file of this item is missing; rescan the library",
        ));
    }
    // Only what ServeFile needs: method and Range/conditional headers.
    let (parts, _) = req.into_parts();
    let req = Request::from_parts(parts, Body::empty());
    let mut res = ServeFile::new(path)
        .oneshot(req)
        .await
        .map_err(ApiError::internal)?
        .map(Body::new);
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(mime) {
        headers.insert(CONTENT_TYPE, v);
    }
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=0"),
    );
    Ok(res)
}

pub async fn play(
    State(state): State<AppState>,
    ApiPath(chapter_id): ApiPath<String>,
    req: Request,
) -> ApiResult<Response> {
    let (parts, body) = req.into_parts();
    authenticate(&state, &parts, true)?;
    let lib = licensed(&state)?;
    let (_, chapter) = lib
        .chapter(&chapter_id)
        .ok_or_else(|| ApiError::not_found(format!("no chapter with id {chapter_id:?}")))?;
    // A symlink changed since the scan must not lead out of the library.
    let inside = match (&lib.root, std::fs::canonicalize(&chapter.file)) {
        (Some(root), Ok(real)) => real.starts_with(root),
        (None, Ok(_)) => true,
        (_, Err(_)) => false,
    };
    if !inside {
        tracing::warn!(
            "not serving {}: missing or outside the library",
            chapter.file.display()
        );
        return Err(ApiError::not_found(
            "the file of this item is missing; rescan the library",
        ));
    }
    serve_file(
        &chapter.file,
        &chapter.mime,
        Request::from_parts(parts, body),
    )
    .await
}

pub async fn cover(
    State(state): State<AppState>,
    ApiPath(book_id): ApiPath<String>,
    req: Request,
) -> ApiResult<Response> {
    let (parts, body) = req.into_parts();
    authenticate(&state, &parts, true)?;
    let lib = state.current_library()?;
    let book = lib
        .book(&book_id)
        .ok_or_else(|| ApiError::book_not_found(&book_id))?;
    let Some(cover) = &book.cover else {
        return Err(ApiError::not_found("this book has no cover"));
    };
    let mime = match cover
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("bmp") => "image/bmp",
        _ => "image/jpeg",
    };
    serve_file(cover, mime, Request::from_parts(parts, body)).await
}
