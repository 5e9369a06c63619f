//! `Client`: the async HTTP client for the whole stable contract. Cheap to
//! clone (an `Arc`); safe to share between the sync worker, the player and
//! the UI's background tasks.
//!
//! `addresses`: the server's addresses, which one is in use and which may
//! carry the token; `streams`: audio and other server-given URLs;
//! `transport`: requests, retries, the next address, hand-followed
//! redirects and error mapping; `limits`: what a request waits for before
//! it goes (the server's back-off per origin and kind, a read in flight,
//! the write in flight); `paging`: lists page by page ([`Pager`]);
//! `protocol`: what each address speaks (h2c learned) and the pool per URL.

mod addresses;
mod lengths;
mod limits;
mod paging;
mod prefetch;
mod protocol;
mod streams;
mod transport;

pub use addresses::Address;
pub use lengths::{UnknownLengths, WhyUnknown};
pub use paging::{ItemDecoder, ListPage, Listing, PageCursor, Pager, Shortfall};
pub use protocol::{Speaks, protocol_words};
pub use streams::MAX_COVER_BYTES;
pub use transport::RawAnswer;

use super::Auth;
use super::base::BaseUrl;
use super::bodies::BodyFields;
use super::error::ApiError;
use super::paths::{self, Paths};
use super::wire::{self, LoginData, ProgressRead, ProgressState, WriteOutcome};
use crate::domain::locks::{read, write};
use crate::domain::*;
use reqwest::Method;
use serde_json::Value;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use transport::Access;
use url::Url;

#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub paths: Paths,
    /// `{prefix}-Expected-Server-Id` / `{prefix}-Expected-User-Id`.
    pub identity_header_prefix: String,
    pub connect_timeout: Duration,
    /// Whole-request time-out for JSON calls (not for streams).
    pub request_timeout: Duration,
    /// Extra attempts for idempotent GETs on network errors and 5xx.
    pub retries: u32,
    /// First back-off step (a GET asked again, a 429 or 503 without
    /// `Retry-After`); doubles per failure, with jitter (`domain::backoff`).
    pub backoff: Duration,
    /// The longest back-off step.
    pub backoff_max: Duration,
    /// A read whose address asked to wait at most this much longer waits;
    /// a longer wait fails it at once with `RateLimited`.
    pub throttle_wait: Duration,
    /// Request body field names of the writes (config.toml `fields`).
    pub fields: BodyFields,
    /// A list that has not ended after this many pages is an error.
    pub max_pages: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            paths: Paths::default(),
            identity_header_prefix: "X-Service".into(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            retries: 2,
            backoff: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            throttle_wait: Duration::from_secs(5),
            fields: BodyFields::default(),
            max_pages: 1000,
        }
    }
}

/// Filters of the book list and search.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookQuery {
    pub text: Option<String>,
    pub category: Option<CategoryId>,
    pub favorites: bool,
    /// `title`, `author`, `recent`, `added` (ours); passed through as given.
    pub sort: Option<String>,
}

/// A progress write (`POST /auth/reading-progress/{bookId}`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressWrite {
    pub chapter_id: ChapterId,
    pub position: f64,
    pub client_updated_at: EpochMillis,
    pub finished: bool,
    pub device_id: Option<String>,
    /// An explicit user action (restart, seek to 0, mark unfinished).
    pub reset: bool,
}

/// A playback settings write (also as sync's journal keeps it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsWrite {
    pub speed: f32,
    pub volume: Option<f32>,
    pub client_updated_at: EpochMillis,
}

/// A new bookmark; `client_id` makes a retried create idempotent.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBookmark {
    pub book_id: BookId,
    pub chapter_id: ChapterId,
    pub position: f64,
    pub note: Option<String>,
    pub client_id: Option<String>,
}

/// Everything a player needs to fetch a chapter's audio.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRequest {
    pub url: Url,
    /// `Authorization: Bearer …` when the URL is on the server's origin;
    /// empty for another origin, which never gets the token.
    pub headers: Vec<(String, String)>,
}

#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    /// HTTP/1.1 over cleartext, h2 or HTTP/1.1 by ALPN over https.
    http: reqwest::Client,
    /// The h2c pool and what each address speaks (`protocol`).
    protocols: protocol::Protocols,
    addresses: RwLock<addresses::Addresses>,
    /// The address in use, for those who follow a switch.
    switched: tokio::sync::watch::Sender<BaseUrl>,
    /// Told of each switch, at once (the session store remembers it).
    on_switch: RwLock<Option<SwitchHook>>,
    opts: ClientOptions,
    auth: RwLock<Option<Auth>>,
    /// A progress read started ahead of its reader (`prefetch`).
    prefetched: std::sync::Mutex<Option<prefetch::Prefetched>>,
    /// What a request waits for before it goes (`limits`).
    limits: limits::Limits,
    /// Units learned for lengths that name none (`lengths`).
    units: lengths::Units,
}

type SwitchHook = Arc<dyn Fn(&BaseUrl) + Send + Sync>;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base().as_str())
            .finish_non_exhaustive()
    }
}

impl Client {
    fn progress_body(&self, w: &ProgressWrite) -> Value {
        self.inner.opts.fields.progress(
            &w.chapter_id,
            w.position,
            w.client_updated_at,
            w.finished,
            w.reset,
            w.device_id.as_deref(),
        )
    }

    /// A client of one address.
    pub fn new(base: BaseUrl, opts: ClientOptions) -> Result<Client, ApiError> {
        Client::with_addresses(vec![Address::new(base)], None, opts, None)
    }

    /// The HTTP client of every address of a client (one pool).
    fn http(base: &BaseUrl, opts: &ClientOptions) -> Result<reqwest::Client, ApiError> {
        Client::builder(opts)
            .build()
            .map_err(|e| ApiError::Network {
                address: base.to_string(),
                message: format!("cannot set up HTTP: {e}"),
            })
    }

    /// The settings of every pool of a client.
    fn builder(opts: &ClientOptions) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_keepalive(Duration::from_secs(60))
            // Redirects are followed by hand so the token never leaves the origin.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("earmark/", env!("CARGO_PKG_VERSION")))
    }

    /// A client of one address that is already logged in (through it)
    /// with `auth`.
    pub fn with_auth(base: BaseUrl, opts: ClientOptions, auth: Auth) -> Result<Client, ApiError> {
        let c = Client::new(base, opts)?;
        c.set_auth(Some(auth));
        Ok(c)
    }

    pub fn options(&self) -> &ClientOptions {
        &self.inner.opts
    }

    pub fn auth(&self) -> Option<Auth> {
        read(&self.inner.auth).clone()
    }

    /// Logged in with `auth` (through the address in use: one that no
    /// login went through yet vouches for its server from now on), or out.
    pub fn set_auth(&self, auth: Option<Auth>) {
        if let Some(a) = &auth {
            self.vouch_current(&a.server_id);
        }
        self.inner.limits.wrote();
        *write(&self.inner.auth) = auth;
    }

    // ------------------------------------------------------------ auth

    /// `POST /auth/login`, through the addresses in order (the one in use
    /// first) until one answers. On success the client uses the new token
    /// and ids, through that address.
    pub async fn login(&self, user: &str, password: &str) -> Result<LoginData, ApiError> {
        let mut missed = Vec::new();
        for (i, base) in self.candidates(Access::Anonymous) {
            match self.login_at(&base, user, password).await {
                Ok(data) => {
                    self.adopt(i, &data);
                    return Ok(data);
                }
                Err(e) if addresses::unanswered(&e) => missed.push(e),
                Err(e) => return Err(e),
            }
        }
        Err(missed.pop().unwrap_or(ApiError::NotLoggedIn))
    }

    /// Revoke the token on the server (best effort for servers without logout).
    pub async fn logout(&self) -> Result<(), ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.logout, None);
        let r = self
            .call(Method::POST, &segs, &[], None, Access::Token)
            .await;
        self.set_auth(None);
        match r {
            Ok(_) | Err(ApiError::NotFound { .. }) | Err(ApiError::Unauthorized { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub async fn license_status(&self) -> Result<LicenseStatus, ApiError> {
        let v = self.get(&["license", "status"], &[]).await?;
        wire::decode_license(&v, "GET /license/status")
    }

    // ------------------------------------------------------------ books

    /// One page of the book list at `at` (stateless; see [`Client::book_pager`]).
    pub async fn books_page(
        &self,
        q: &BookQuery,
        at: &PageCursor,
    ) -> Result<ListPage<Book>, ApiError> {
        let query = self.book_query(q);
        self.one_page(
            &["books"],
            query,
            at,
            "GET /books",
            Arc::new(wire::decode_book),
        )
        .await
    }

    /// The book list page by page, as pages arrive.
    pub fn book_pager(&self, q: &BookQuery) -> Pager<Book> {
        let query = self.book_query(q);
        self.pager(&["books"], query, "GET /books", Arc::new(wire::decode_book))
    }

    /// Every book matching `q`, and the items that could not be read.
    pub async fn books_listing(&self, q: &BookQuery) -> Result<Listing<Book>, ApiError> {
        self.book_pager(q).collect_all().await
    }

    /// Every book matching `q`, fetching pages until the list is complete
    /// (unreadable items are left out and logged; see `books_listing`).
    pub async fn books(&self, q: &BookQuery) -> Result<Vec<Book>, ApiError> {
        Ok(self.books_listing(q).await?.items)
    }

    /// Every search result (`q.text` is the search text), the ones that
    /// could not be read, and whether the list is all the server says it
    /// has.
    pub async fn search_listing(&self, q: &BookQuery) -> Result<Listing<Book>, ApiError> {
        let query = self.book_query(q);
        let decode = Arc::new(wire::decode_book);
        self.pager(&["books", "search"], query, "GET /books/search", decode)
            .collect_all()
            .await
    }

    /// Search: `q.text` is the search text.
    pub async fn search(&self, q: &BookQuery) -> Result<Vec<Book>, ApiError> {
        Ok(self.search_listing(q).await?.items)
    }

    fn book_query(&self, q: &BookQuery) -> Vec<(String, String)> {
        let p = &self.inner.opts.paths;
        let mut query = Vec::new();
        if let Some(t) = &q.text {
            query.push((p.search_param.clone(), t.clone()));
        }
        if let Some(c) = &q.category {
            query.push((p.category_param.clone(), c.to_string()));
        }
        if q.favorites {
            query.push((p.favorites_param.clone(), "true".into()));
        }
        if let Some(s) = &q.sort {
            query.push(("sort".into(), s.clone()));
        }
        query
    }

    pub async fn book(&self, id: &BookId) -> Result<Book, ApiError> {
        let v = self.get(&["books", id.as_str()], &[]).await?;
        wire::decode_book(&v, "GET /books/{bookId}")
    }

    pub async fn chapters(&self, id: &BookId) -> Result<Vec<Chapter>, ApiError> {
        let segs = ["books", id.as_str(), "chapters"];
        let decode = Arc::new(wire::decode_chapter);
        let p = self.pager(&segs, Vec::new(), "GET /books/{bookId}/chapters", decode);
        let mut chapters = p.collect_all().await?.items;
        self.read_known_chapter_lengths(&mut chapters);
        Ok(chapters)
    }

    /// The complete, ordered playback queue; server order is kept.
    pub async fn manifest(&self, id: &BookId) -> Result<Manifest, ApiError> {
        let segs = ["books", id.as_str(), "download-manifest"];
        let v = self.get(&segs, &[]).await?;
        let mut m = wire::decode_manifest(&v, id, "GET /books/{bookId}/download-manifest")?;
        self.read_known_lengths(&mut m);
        Ok(m)
    }

    pub async fn categories(&self) -> Result<Vec<Category>, ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.categories, None);
        let decode = Arc::new(wire::decode_category);
        let p = self.pager(&segs, Vec::new(), "GET categories", decode);
        Ok(p.collect_all().await?.items)
    }

    // ------------------------------------------------------------ favorites

    pub async fn favorites(&self) -> Result<Vec<Book>, ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.favorites, None);
        let decode = Arc::new(wire::decode_book);
        let p = self.pager(&segs, Vec::new(), "GET favorites", decode);
        let mut books = p.collect_all().await?.items;
        for b in &mut books {
            b.favorite = true;
        }
        Ok(books)
    }

    pub async fn add_favorite(&self, id: &BookId) -> Result<(), ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.favorite, Some(id.as_str()));
        self.write(Method::POST, &segs, None).await.map(|_| ())
    }

    pub async fn remove_favorite(&self, id: &BookId) -> Result<(), ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.favorite, Some(id.as_str()));
        self.write(Method::DELETE, &segs, None).await.map(|_| ())
    }

    // ------------------------------------------------------------ bookmarks

    pub async fn bookmarks(&self, book: &BookId) -> Result<Vec<Bookmark>, ApiError> {
        let p = &self.inner.opts.paths;
        let segs = paths::segments(&p.bookmarks, Some(book.as_str()));
        let query = vec![(p.bookmarks_book_param.clone(), book.to_string())];
        let owner = book.clone();
        let decode: ItemDecoder<Bookmark> =
            Arc::new(move |v, ep| wire::decode_bookmark(v, Some(&owner), ep));
        let pager = self.pager(&segs, query, "GET bookmarks", decode);
        Ok(pager.collect_all().await?.items)
    }

    pub async fn add_bookmark(&self, b: &NewBookmark) -> Result<Bookmark, ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.bookmarks, Some(b.book_id.as_str()));
        let body = self.inner.opts.fields.bookmark(
            &b.book_id,
            &b.chapter_id,
            b.position,
            b.note.as_deref(),
            b.client_id.as_deref(),
        );
        let v = self.write(Method::POST, &segs, Some(body)).await?;
        wire::decode_bookmark(&v, Some(&b.book_id), "POST bookmarks")
    }

    pub async fn remove_bookmark(&self, id: &BookmarkId) -> Result<(), ApiError> {
        let segs = paths::segments(&self.inner.opts.paths.bookmark, Some(id.as_str()));
        self.write(Method::DELETE, &segs, None).await.map(|_| ())
    }

    // ------------------------------------------------------------ progress

    /// `GET /auth/reading-progress/{bookId}` as it came; a 404 is `null`
    /// (no progress yet), as a 204 is.
    async fn progress_answer(&self, book: &BookId) -> Result<Value, ApiError> {
        if let Some(answer) = self.take_prefetched(book).await {
            return answer;
        }
        self.progress_answer_now(book).await
    }

    async fn progress_answer_now(&self, book: &BookId) -> Result<Value, ApiError> {
        let segs = ["auth", "reading-progress", book.as_str()];
        match self.get(&segs, &[]).await {
            Err(ApiError::NotFound { .. }) => Ok(Value::Null),
            other => other,
        }
    }

    /// `GET /auth/reading-progress/{bookId}`, three-valued, read against
    /// the book's `manifest` (its chapters and their lengths): a record,
    /// no progress yet (404, 204, `null`, `{}`, `[]`, an empty record), or
    /// an answer we cannot read (logged with its raw shape).
    pub async fn progress_read(
        &self,
        book: &BookId,
        manifest: &Manifest,
    ) -> Result<ProgressRead, ApiError> {
        let v = self.progress_answer(book).await?;
        Ok(logged(book, wire::decode_progress_read(&v, book, manifest)))
    }

    /// [`Client::progress_read`] for a caller without the manifest: it is
    /// fetched beside the answer, and needed only when the answer is not
    /// empty (then its failure is this read's).
    pub async fn progress_read_fetching_manifest(
        &self,
        book: &BookId,
    ) -> Result<ProgressRead, ApiError> {
        let (answer, manifest) = tokio::join!(self.progress_answer(book), self.manifest(book));
        let v = answer?;
        let manifest = if wire::says_nothing(&v) {
            Manifest {
                book_id: book.clone(),
                items: Vec::new(),
            }
        } else {
            manifest?
        };
        Ok(logged(
            book,
            wire::decode_progress_read(&v, book, &manifest),
        ))
    }

    /// The progress read as two values (see
    /// [`Client::progress_read_fetching_manifest`]); an unreadable answer
    /// is a `Decode` error (fails closed), never "no progress".
    pub async fn progress(&self, book: &BookId) -> Result<ProgressState, ApiError> {
        match self.progress_read_fetching_manifest(book).await? {
            ProgressRead::Unreadable { shape } => Err(ApiError::Decode {
                endpoint: "GET /auth/reading-progress/{bookId}".into(),
                field: "progress".into(),
                problem: format!(
                    "could not be read, so the place on the server is unknown (not empty): {shape}"
                ),
            }),
            known => Ok(known.known().unwrap_or_default()),
        }
    }

    pub async fn post_progress(
        &self,
        book: &BookId,
        w: &ProgressWrite,
    ) -> Result<WriteOutcome<Progress>, ApiError> {
        let body = self.progress_body(w);
        let segs = ["auth", "reading-progress", book.as_str()];
        let v = self.write(Method::POST, &segs, Some(body)).await?;
        wire::decode_progress_write(&v, "POST /auth/reading-progress/{bookId}")
    }

    /// Returns whether the server had progress to delete (`true` if it does not say).
    pub async fn delete_progress(&self, book: &BookId) -> Result<bool, ApiError> {
        self.delete_record("reading-progress", book).await
    }

    pub async fn post_progress_batch(
        &self,
        writes: &[(BookId, ProgressWrite)],
    ) -> Result<Vec<wire::BatchResult>, ApiError> {
        let f = &self.inner.opts.fields;
        let items: Vec<Value> = writes
            .iter()
            .map(|(b, w)| f.batch_item(b, self.progress_body(w)))
            .collect();
        let segs = ["auth", "reading-progress", "batch"];
        let body = f.batch(items);
        let v = self.write(Method::POST, &segs, Some(body)).await?;
        let endpoint = "POST /auth/reading-progress/batch";
        wire::decode_batch(&v, endpoint, self.base().as_str())
    }

    pub async fn post_playback_settings(
        &self,
        book: &BookId,
        s: &SettingsWrite,
    ) -> Result<WriteOutcome<PlaybackSettings>, ApiError> {
        let f = &self.inner.opts.fields;
        let body = f.settings(s.speed, s.volume, s.client_updated_at);
        let segs = ["auth", "playback-settings", book.as_str()];
        let v = self.write(Method::POST, &segs, Some(body)).await?;
        wire::decode_settings_write(&v, "POST /auth/playback-settings/{bookId}")
    }

    pub async fn delete_playback_settings(&self, book: &BookId) -> Result<bool, ApiError> {
        self.delete_record("playback-settings", book).await
    }

    /// Deletes `book`'s record of `what`: whether the server had one
    /// (`true` if it does not say).
    async fn delete_record(&self, what: &str, book: &BookId) -> Result<bool, ApiError> {
        let segs = ["auth", what, book.as_str()];
        let v = self.write(Method::DELETE, &segs, None).await?;
        let o = wire::content(&v).as_object();
        Ok(
            o.and_then(|o| wire::fields::boolean(o, &["deleted", "removed"]))
                .unwrap_or(true),
        )
    }
}

/// `read`, logged when it could not be read.
fn logged(book: &BookId, read: ProgressRead) -> ProgressRead {
    if let ProgressRead::Unreadable { shape } = &read {
        tracing::warn!(
            "the progress of book {book} could not be read (it is unknown, not empty): {shape}"
        );
    }
    read
}
