//! How the sync worker sees the server's answers: each failure of the
//! contract client becomes one [`Failure`], so the worker's error handling
//! is one match (see `client_remote`).

use crate::api::WriteOutcome;
use crate::domain::Progress;

/// How a failed request is handled (the contract's error table).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// Network trouble or 5xx: keep local state, retry with back-off.
    #[error("{0}")]
    Retry(String),
    /// The server asked to be left alone (429, 503 with `Retry-After`),
    /// or its back-off for this kind still waits: keep local state and
    /// send nothing of that kind until the client's back-off allows.
    #[error("{0}")]
    Throttled(String),
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

/// One result of a progress write (of a batch, in request order): whether
/// the server applied it, and the record it holds now.
pub type ItemResult = Result<WriteOutcome<Progress>, Failure>;
