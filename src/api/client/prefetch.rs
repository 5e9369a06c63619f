//! A progress read started ahead of the code that reads it: start-up
//! (`earmark play`) asks for a book's place while it reads the manifest, so
//! the two round trips are one. The next read of that book's progress
//! within [`FRESH_FOR`] takes the answer (or waits for it) instead of
//! asking again; sync forgets it when it has writes to send first (the
//! server must merge them before it is asked).

use super::Client;
use crate::api::error::ApiError;
use crate::domain::BookId;
use crate::domain::locks::lock;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// An answer older than this is asked for again.
const FRESH_FOR: Duration = Duration::from_secs(10);

pub(super) struct Prefetched {
    book: BookId,
    at: Instant,
    answer: oneshot::Receiver<Result<Value, ApiError>>,
}

impl Client {
    fn prefetched(&self) -> std::sync::MutexGuard<'_, Option<Prefetched>> {
        lock(&self.inner.prefetched)
    }

    /// Starts reading `book`'s progress now, on the current tokio runtime
    /// (none: nothing is started), for the next progress read of it (one
    /// is kept at a time).
    pub fn prefetch_progress(&self, book: &BookId) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (tx, answer) = oneshot::channel();
        let (c, b) = (self.clone(), book.clone());
        rt.spawn(async move {
            let _ = tx.send(c.progress_answer_now(&b).await);
        });
        *self.prefetched() = Some(Prefetched {
            book: book.clone(),
            at: Instant::now(),
            answer,
        });
    }

    /// Drops a progress read started ahead for `book`: what it says may
    /// predate a write about to be sent.
    pub fn forget_prefetched(&self, book: &BookId) {
        let mut p = self.prefetched();
        if p.as_ref().is_some_and(|p| &p.book == book) {
            *p = None;
        }
    }

    /// The answer read ahead for `book`, when there is a fresh one.
    pub(super) async fn take_prefetched(&self, book: &BookId) -> Option<Result<Value, ApiError>> {
        let p = {
            let mut slot = self.prefetched();
            match slot.as_ref() {
                Some(p) if &p.book == book => slot.take(),
                _ => None,
            }
        }?;
        if p.at.elapsed() > FRESH_FOR {
            return None;
        }
        p.answer.await.ok()
    }
}
