//! What a request waits for before it goes, so a slow or busy server gets
//! less traffic, never more:
//!
//! - the back-off of its origin and kind (`domain::backoff::Throttles`),
//!   closed by a 429 or a 503 for `Retry-After` (else by the ladder of
//!   [`ClientOptions::backoff`](super::ClientOptions) up to `backoff_max`)
//!   and opened by the next answer of that kind. While it is closed a
//!   request is not sent: a read whose wait is at most
//!   [`ClientOptions::throttle_wait`](super::ClientOptions) waits for it,
//!   anything else gets [`ApiError::RateLimited`] at once;
//! - a read of a URL that is in flight already: it is joined, not sent
//!   again beside itself (a caller that stops waiting leaves it running
//!   for the next); a read started after a write is never joined to one
//!   started before it;
//! - a write in flight: one at a time, so never two of one book.

use super::Client;
use super::addresses::Miss;
use super::transport::Access;
use crate::api::BaseUrl;
use crate::api::error::ApiError;
use crate::domain::backoff::{Kind, Ladder, Throttle, Throttles};
use crate::domain::locks::lock;
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use url::Url;

type SharedRead = Shared<BoxFuture<'static, Result<Value, ApiError>>>;

pub(super) struct Limits {
    throttles: Arc<Throttles>,
    pub(super) writing: tokio::sync::Mutex<()>,
    reads: Mutex<HashMap<String, SharedRead>>,
    /// Bumped by each write and login: later reads are asked anew.
    generation: AtomicU64,
}

impl Limits {
    pub(super) fn new(ladder: Ladder) -> Limits {
        Limits {
            throttles: Arc::new(Throttles::new(ladder)),
            writing: tokio::sync::Mutex::new(()),
            reads: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
        }
    }

    /// A write (or a new login) is about to go: reads in flight may
    /// predate it.
    pub(super) fn wrote(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn reads(&self) -> std::sync::MutexGuard<'_, HashMap<String, SharedRead>> {
        lock(&self.reads)
    }
}

/// The origin of a URL, as the back-off states are keyed.
pub(super) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

impl Client {
    pub(super) fn ladder(&self) -> Ladder {
        Ladder::new(self.inner.opts.backoff, self.inner.opts.backoff_max)
    }

    /// The back-off states of this client's servers, for whoever else
    /// asks them (the player's streams share the audio's).
    pub fn throttles(&self) -> Arc<Throttles> {
        self.inner.limits.throttles.clone()
    }

    /// The wait still in force for `kind` at the address in use, if any:
    /// what sync shows and waits for.
    pub fn throttle(&self, kind: Kind) -> Option<Throttle> {
        let o = origin(self.base().as_url());
        self.inner.limits.throttles.closed(&o, kind, Instant::now())
    }

    /// Ok when a request of `kind` may go to `url`'s origin now; a read
    /// (`may_wait`) waits for a short wait first.
    pub(super) async fn open_to(
        &self,
        url: &Url,
        kind: Kind,
        may_wait: bool,
    ) -> Result<(), ApiError> {
        let o = origin(url);
        let now = Instant::now();
        let Some(t) = self.inner.limits.throttles.closed(&o, kind, now) else {
            return Ok(());
        };
        let left = t.until.saturating_duration_since(now);
        if may_wait && left <= self.inner.opts.throttle_wait {
            tokio::time::sleep_until(t.until.into()).await;
            return Ok(());
        }
        Err(ApiError::RateLimited {
            status: 429,
            retry_after: t.asked,
            message: format!(
                "earmark waits {} s more before asking {o} again",
                left.as_secs_f64().ceil()
            ),
        })
    }

    /// What an answer of `kind` from `url`'s origin says of its load: a
    /// 429 or 503 closes its back-off, any other answer opens it; no
    /// answer says nothing (that is the link's business).
    pub(super) fn note_answer(&self, url: &Url, kind: Kind, e: Option<&ApiError>) {
        let t = &self.inner.limits.throttles;
        match e {
            Some(e) if e.slows_down() => {
                let th = t.refused(&origin(url), kind, e.retry_after(), Instant::now());
                tracing::info!(
                    "{} asked earmark to wait ({e}); the next {kind:?} request in {:.1} s",
                    origin(url),
                    th.until
                        .saturating_duration_since(Instant::now())
                        .as_secs_f64()
                );
            }
            _ => t.passed(&origin(url), kind),
        }
    }

    /// [`Client::note_answer`] of one attempt at address `at`.
    pub(super) fn note_load(&self, at: &BaseUrl, kind: Kind, sent: &Result<Value, Miss>) {
        match sent {
            Ok(_) => self.note_answer(at.as_url(), kind, None),
            Err(Miss::Answered(e) | Miss::Unanswered(e)) if e.status().is_some() => {
                self.note_answer(at.as_url(), kind, Some(e))
            }
            Err(_) => {}
        }
    }

    /// The read of `url` in flight, joined; else `read`, started on its
    /// own task (a caller that stops waiting does not cancel it).
    pub(super) async fn join_read(
        &self,
        url: &Url,
        access: Access,
        read: impl Future<Output = Result<Value, ApiError>> + Send + 'static,
    ) -> Result<Value, ApiError> {
        let limits = &self.inner.limits;
        let key = format!(
            "{} {access:?} {url}",
            limits.generation.load(Ordering::SeqCst)
        );
        let shared = {
            let mut reads = limits.reads();
            match reads.get(&key) {
                Some(f) => f.clone(),
                None => {
                    let (c, k) = (self.clone(), key.clone());
                    let task = tokio::spawn(async move {
                        let r = read.await;
                        c.inner.limits.reads().remove(&k);
                        r
                    });
                    let address = self.base().to_string();
                    let f = async move {
                        task.await.unwrap_or_else(|e| {
                            Err(ApiError::Network {
                                address,
                                message: format!("the request stopped: {e}"),
                            })
                        })
                    }
                    .boxed()
                    .shared();
                    reads.insert(key, f.clone());
                    f
                }
            }
        };
        shared.await
    }
}
