//! Streaming a chapter's file (HTTP Range via tower-http's `ServeFile`)
//! and book covers. The token and license checks run before any file is
//! touched; files are only ever those the catalog names, and only while
//! their canonical path is inside the library (or, for extracted cover
//! art, the data dir's covers folder).

use super::{AppState, book};
use crate::server::auth::{caller_of, licensed, presented_token};
use crate::server::error::{ApiError, ApiPath, ApiResult};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT_RANGES, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use axum::response::Response;
use std::path::{Path, PathBuf};
use tower::ServiceExt;
use tower_http::services::ServeFile;

/// Checks the token, then serves the file that `find` (blocking) names
/// and checked by [`contained`], with its MIME type.
async fn serve(
    state: AppState,
    req: Request,
    find: impl FnOnce(&AppState) -> ApiResult<(PathBuf, String)> + Send + 'static,
) -> ApiResult<Response> {
    // Only what ServeFile needs: method and Range/conditional headers.
    let (parts, _) = req.into_parts();
    let token = presented_token(&parts, true)?;
    let (file, mime) = state
        .run(move |state| {
            caller_of(state, token)?;
            find(state)
        })
        .await?;
    let mut res = ServeFile::new(file)
        .oneshot(Request::from_parts(parts, Body::empty()))
        .await
        .map_err(ApiError::internal)?
        .map(Body::new);
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&mime) {
        headers.insert(CONTENT_TYPE, v);
    }
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=0"),
    );
    Ok(res)
}

/// The canonical path of a catalogued file if it still resolves inside one
/// of `roots` (canonical). Blocking. The caller opens this path, never the
/// catalogued one, so a symlink re-pointed after the check changes nothing.
fn contained(file: &Path, roots: &[PathBuf]) -> ApiResult<PathBuf> {
    match std::fs::canonicalize(file) {
        Ok(real) if roots.iter().any(|r| real.starts_with(r)) && real.is_file() => Ok(real),
        _ => {
            tracing::warn!(
                "not serving {}: missing or outside the library",
                file.display()
            );
            Err(ApiError::not_found(
                "the file of this item is missing; rescan the library",
            ))
        }
    }
}

pub async fn play(
    State(state): State<AppState>,
    ApiPath(chapter_id): ApiPath<String>,
    req: Request,
) -> ApiResult<Response> {
    serve(state, req, move |state| {
        let lib = licensed(state)?;
        let (_, chapter) = lib
            .chapter(&chapter_id)
            .ok_or_else(|| ApiError::not_found(format!("no chapter with id {chapter_id:?}")))?;
        // A symlink changed since the scan must not lead out of the library.
        let roots: Vec<PathBuf> = lib.root.iter().cloned().collect();
        Ok((contained(&chapter.file, &roots)?, chapter.mime.clone()))
    })
    .await
}

pub async fn cover(
    State(state): State<AppState>,
    ApiPath(book_id): ApiPath<String>,
    req: Request,
) -> ApiResult<Response> {
    serve(state, req, move |state| {
        let lib = state.current_library()?;
        let Some(cover) = &book(&lib, &book_id)?.cover else {
            return Err(ApiError::not_found("this book has no cover"));
        };
        // A cover file of the library, or embedded art extracted into
        // the data dir's covers folder: nothing else.
        let mut roots: Vec<PathBuf> = lib.root.iter().cloned().collect();
        roots.extend(std::fs::canonicalize(state.db.data_dir().join("covers")).ok());
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
        Ok((contained(cover, &roots)?, mime.to_owned()))
    })
    .await
}
