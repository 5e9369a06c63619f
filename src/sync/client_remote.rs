//! The contract client as the sync worker sees it: maps each `ApiError`
//! to the way sync handles it ([`Failure`]), and the client's session to
//! an outbox [`Scope`]. Without a login every call is `Unauthorized`.

use super::outbox::{QueuedProgress, QueuedSettings, Scope};
use super::remote::{Failure, ItemResult};
use crate::api::{ApiError, Client, ErrorClass, NewBookmark, ProgressRead, ProgressWrite};
use crate::domain::backoff::{Kind, Throttle};
use crate::domain::{BookId, BookmarkId, ChapterId, LicenseState, Manifest, PlaybackSettings};

#[derive(Debug, Clone)]
pub(super) struct ClientRemote {
    client: Option<Client>,
}

impl ClientRemote {
    pub fn new(client: Option<Client>) -> Self {
        Self { client }
    }

    fn client(&self) -> Result<&Client, Failure> {
        self.client
            .as_ref()
            .ok_or_else(|| Failure::Unauthorized("not logged in".into()))
    }

    fn wire(&self, p: &QueuedProgress) -> ProgressWrite {
        ProgressWrite {
            chapter_id: p.chapter_id.clone(),
            position: p.position_sec,
            client_updated_at: p.client_updated_at,
            finished: p.finished,
            device_id: None,
            reset: p.reset,
        }
    }
}

/// The scope of a client's current login.
pub(super) fn scope_of(client: &Client) -> Option<Scope> {
    client.auth().map(|a| Scope {
        server_id: a.server_id,
        user_id: a.user_id,
    })
}

/// How sync handles an error of the client: read from the error's one
/// classification (`ApiError::class` and its predicates), never decided here.
fn classify(e: ApiError) -> Failure {
    let message = e.to_string();
    if e.is_throttle() {
        return Failure::Throttled(message);
    }
    if e.is_transient() {
        return Failure::Retry(message);
    }
    if e.is_license() {
        return Failure::License(message);
    }
    match e.class() {
        ErrorClass::Auth => Failure::Unauthorized(message),
        ErrorClass::Scope if e.needs_login() => Failure::ScopeMismatch(message),
        ErrorClass::Scope => Failure::ScopeBug(message),
        ErrorClass::NotFound => Failure::NotFound(message),
        ErrorClass::License
        | ErrorClass::Request
        | ErrorClass::Forbidden
        | ErrorClass::NetworkOrServer => Failure::Rejected {
            code: e.code().map(str::to_owned),
            message,
        },
    }
}

impl ClientRemote {
    pub fn scope(&self) -> Option<Scope> {
        scope_of(self.client.as_ref()?)
    }

    /// The longest wait the server's back-off holds at the address in
    /// use for any kind (reads, writes, and the streams the link shows).
    pub fn throttled(&self) -> Option<Throttle> {
        let c = self.client.as_ref()?;
        [Kind::Read, Kind::ProgressWrite, Kind::Write, Kind::Audio]
            .into_iter()
            .filter_map(|k| c.throttle(k))
            .max_by_key(|t| t.until)
    }

    /// The wait in force for `kind`, if any.
    pub fn throttle(&self, kind: Kind) -> Option<Throttle> {
        self.client.as_ref()?.throttle(kind)
    }

    /// A progress read of `book` started ahead is not to be used.
    pub fn forget_prefetched(&self, book: &BookId) {
        if let Some(c) = &self.client {
            c.forget_prefetched(book);
        }
    }

    pub async fn manifest(&self, book: &BookId) -> Result<Manifest, Failure> {
        self.client()?.manifest(book).await.map_err(classify)
    }

    /// The server's place of `book`: a record, none yet, or unreadable,
    /// read against the book's manifest (fetched beside it when `manifest`
    /// is `None`).
    pub async fn fetch(
        &self,
        book: &BookId,
        manifest: Option<&Manifest>,
    ) -> Result<ProgressRead, Failure> {
        let c = self.client()?;
        match manifest {
            Some(m) => c.progress_read(book, m).await,
            None => c.progress_read_fetching_manifest(book).await,
        }
        .map_err(classify)
    }

    pub async fn write_progress(&self, book: &BookId, p: &QueuedProgress) -> ItemResult {
        self.client()?
            .post_progress(book, &self.wire(p))
            .await
            .map_err(classify)
    }

    pub async fn write_progress_batch(
        &self,
        items: &[(BookId, QueuedProgress)],
    ) -> Result<Vec<ItemResult>, Failure> {
        let writes: Vec<(BookId, ProgressWrite)> = items
            .iter()
            .map(|(b, p)| (b.clone(), self.wire(p)))
            .collect();
        let results = self
            .client()?
            .post_progress_batch(&writes)
            .await
            .map_err(classify)?;
        // One result per item, in order; a short answer leaves the rest
        // queued (they are retried), never counted as sent.
        let mut out: Vec<ItemResult> = Vec::with_capacity(items.len());
        for (i, (book, _)) in items.iter().enumerate() {
            let r = match results.get(i) {
                Some(r) if r.book_id.as_ref().is_none_or(|b| b == book) => {
                    r.outcome.clone().map_err(classify)
                }
                Some(_) => Err(Failure::Retry(format!(
                    "batch result {i} names another book than {book}"
                ))),
                None => Err(Failure::Retry(format!("no batch result for {book}"))),
            };
            out.push(r);
        }
        Ok(out)
    }

    pub async fn delete_progress(&self, book: &BookId) -> Result<(), Failure> {
        self.client()?
            .delete_progress(book)
            .await
            .map(|_| ())
            .map_err(classify)
    }

    pub async fn write_settings(
        &self,
        book: &BookId,
        s: &QueuedSettings,
    ) -> Result<Option<PlaybackSettings>, Failure> {
        self.client()?
            .post_playback_settings(book, s)
            .await
            .map(|o| o.record)
            .map_err(classify)
    }

    pub async fn delete_settings(&self, book: &BookId) -> Result<(), Failure> {
        self.client()?
            .delete_playback_settings(book)
            .await
            .map(|_| ())
            .map_err(classify)
    }

    pub async fn set_favorite(&self, book: &BookId, favorite: bool) -> Result<(), Failure> {
        let c = self.client()?;
        let r = if favorite {
            c.add_favorite(book).await
        } else {
            c.remove_favorite(book).await
        };
        r.map_err(classify)
    }

    pub async fn add_bookmark(
        &self,
        book: &BookId,
        client_id: &str,
        chapter: &ChapterId,
        position: f64,
        note: Option<&str>,
    ) -> Result<(), Failure> {
        let b = NewBookmark {
            book_id: book.clone(),
            chapter_id: chapter.clone(),
            position,
            note: note.map(str::to_owned),
            client_id: Some(client_id.to_owned()),
        };
        self.client()?
            .add_bookmark(&b)
            .await
            .map(|_| ())
            .map_err(classify)
    }

    pub async fn remove_bookmark(&self, id: &str) -> Result<(), Failure> {
        self.client()?
            .remove_bookmark(&BookmarkId::new(id))
            .await
            .map_err(classify)
    }

    pub async fn license(&self) -> Result<Option<String>, Failure> {
        let s = self.client()?.license_status().await.map_err(classify)?;
        if s.valid || s.state == LicenseState::Valid {
            Ok(None)
        } else {
            Ok(Some(s.message.unwrap_or_else(|| {
                "the server's license is not valid; ask the administrator".into()
            })))
        }
    }
}
