//! What the sync worker needs from the server, and how each failure is
//! handled. The contract client implements it (see `client_remote`); the
//! seam keeps the worker's error handling in one enum.

use super::outbox::{QueuedProgress, QueuedSettings, Scope};
use crate::domain::{BookId, ChapterId, PlaybackSettings, Progress};
use std::future::Future;

/// How a failed request is handled (the contract's error table).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// Network trouble or 5xx: keep local state, retry with back-off.
    #[error("{0}")]
    Retry(String),
    /// 401: pause sync and ask for a login.
    #[error("{0}")]
    Unauthorized(String),
    /// 403 `license_required`: stop playback and all background sync.
    #[error("{0}")]
    License(String),
    /// 409 `listening_scope_mismatch`: log in again; hold other scopes.
    #[error("{0}")]
    ScopeMismatch(String),
    /// 428 / 400 scope errors: a client bug. Logged loudly, write kept.
    #[error("{0}")]
    ScopeBug(String),
    /// 404: the book is gone; drop the entry with a notice.
    #[error("{0}")]
    NotFound(String),
    /// Any other refusal (400, 403 without the license code, 413, …).
    #[error("{message}")]
    Rejected {
        code: Option<String>,
        message: String,
    },
}

/// The server's state of one book.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerBook {
    pub progress: Option<Progress>,
    pub settings: Option<PlaybackSettings>,
}

/// One result of a batch write, in request order.
pub type ItemResult = Result<Option<Progress>, Failure>;

pub trait Remote: Send + Sync + 'static {
    /// The scope of the current login; `None` when not logged in.
    fn scope(&self) -> Option<Scope>;

    fn fetch(&self, book: &BookId) -> impl Future<Output = Result<ServerBook, Failure>> + Send;

    /// `POST /auth/reading-progress/{bookId}`: the merged record.
    fn write_progress(
        &self,
        book: &BookId,
        progress: &QueuedProgress,
    ) -> impl Future<Output = ItemResult> + Send;

    /// `POST /auth/reading-progress/batch`: one result per item, in order.
    fn write_progress_batch(
        &self,
        items: &[(BookId, QueuedProgress)],
    ) -> impl Future<Output = Result<Vec<ItemResult>, Failure>> + Send;

    fn delete_progress(&self, book: &BookId) -> impl Future<Output = Result<(), Failure>> + Send;

    fn write_settings(
        &self,
        book: &BookId,
        settings: &QueuedSettings,
    ) -> impl Future<Output = Result<Option<PlaybackSettings>, Failure>> + Send;

    fn delete_settings(&self, book: &BookId) -> impl Future<Output = Result<(), Failure>> + Send;

    fn set_favorite(
        &self,
        book: &BookId,
        favorite: bool,
    ) -> impl Future<Output = Result<(), Failure>> + Send;

    fn add_bookmark(
        &self,
        book: &BookId,
        client_id: &str,
        chapter: &ChapterId,
        position: f64,
        note: Option<&str>,
    ) -> impl Future<Output = Result<(), Failure>> + Send;

    fn remove_bookmark(&self, id: &str) -> impl Future<Output = Result<(), Failure>> + Send;

    /// `GET /license/status`: `Ok(None)` when valid, else the message.
    fn license(&self) -> impl Future<Output = Result<Option<String>, Failure>> + Send;
}
