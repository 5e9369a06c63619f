//! Stream URLs for the player and other server-given URLs (covers).

use super::transport::{MAX_REDIRECTS, Said, content_type, redirect_target};
use super::{Client, StreamRequest};
use crate::api::error::ApiError;
use crate::api::wire;
use crate::domain::backoff::Kind;
use crate::domain::{Book, BookId, ManifestItem};
use reqwest::header;
use url::Url;

impl Client {
    // ------------------------------------------------------------ streams

    /// The URL of a chapter's audio: the manifest `url` resolved against the
    /// base, else `/chapters/{chapterId}/play?raw=1`.
    /// A URL below another address of the server is taken below the one
    /// in use (`addresses`).
    pub fn stream_url(&self, item: &ManifestItem) -> Url {
        let base = &self.base();
        item.url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .and_then(|u| base.resolve(u).ok())
            .map(|u| self.below_in_use(u))
            .unwrap_or_else(|| {
                let mut u = base.endpoint(["chapters", item.chapter_id.as_str(), "play"]);
                u.set_query(Some("raw=1"));
                u
            })
    }

    /// What a chapter stream's answer that is not audio means, read as
    /// every other endpoint's errors are read (the player's judge,
    /// `player::EngineConfig::judge`, is built on this): an error status
    /// by its status and body; a success status whose body is an error
    /// answer (an envelope that reports a failure, a problem document, or
    /// any JSON or page naming a known code) as that error; any other
    /// success body that is not audio as [`ApiError::NotAudio`].
    pub fn stream_refusal(&self, status: u16, content_type: Option<&str>, body: &[u8]) -> ApiError {
        let st = reqwest::StatusCode::from_u16(status).unwrap_or(reqwest::StatusCode::BAD_GATEWAY);
        if !st.is_success() {
            return self.error_from_body(&self.base(), st, content_type, body);
        }
        let base = self.base();
        let address = base.as_str();
        let from_code = |code: Option<String>, message: Option<String>, said: Option<u16>| {
            let st = said
                .filter(|s| *s >= 400)
                .or_else(|| code.as_deref().and_then(wire::status_of_code))?;
            Some(ApiError::from_status(st, code, message, address))
        };
        let kind = match wire::parse_body(content_type, body) {
            Ok(v) => {
                if let Some((s, code, msg)) = wire::envelope_error(&v) {
                    return ApiError::from_status(s, code, msg, address);
                }
                // Audio was asked for: any JSON is an answer about it.
                let b = wire::error_body(&v);
                if let Some(e) = from_code(b.code, b.message, b.status) {
                    return e;
                }
                tracing::warn!(
                    "the chapter stream answered HTTP {status} with JSON: {}",
                    wire::describe_shape(&v)
                );
                None
            }
            Err(kind) => {
                let text = String::from_utf8_lossy(body);
                let code = wire::contract_code_in_text(&text).map(str::to_owned);
                let message = code.as_deref().map(|c| {
                    format!(
                        "the server answered the chapter stream with {kind} naming {c} (HTTP {status})"
                    )
                });
                if let Some(e) = from_code(code, message, None) {
                    return e;
                }
                Some(kind)
            }
        };
        ApiError::NotAudio {
            address: address.to_owned(),
            status,
            kind,
        }
    }

    /// The stream URL of `item` as the profile's first address names it:
    /// the same whichever address is in use (a download's files are
    /// named by it).
    pub fn stream_key(&self, item: &ManifestItem) -> Url {
        let url = self.stream_url(item);
        let first = self.addresses().swap_remove(0).base;
        self.base().rebase(&url, &first).unwrap_or(url)
    }

    /// URL plus the Bearer header (only for the server's own origin).
    pub fn stream_request(&self, item: &ManifestItem) -> StreamRequest {
        self.request_to(self.stream_url(item))
    }

    /// `url` with the Bearer header when it is on the origin of the
    /// address in use, and that address vouches for the login's server.
    fn request_to(&self, url: Url) -> StreamRequest {
        let headers = match self.auth() {
            Some(a) if self.may_carry_token(&url, &a) => {
                vec![(
                    "Authorization".to_owned(),
                    format!("Bearer {}", a.token.expose()),
                )]
            }
            _ => Vec::new(),
        };
        StreamRequest { url, headers }
    }

    /// For players that cannot set headers: the token in `access_token`
    /// (only for the server's own origin).
    pub fn stream_url_with_token(&self, item: &ManifestItem) -> Url {
        let mut url = self.stream_url(item);
        if let Some(a) = self.auth().filter(|a| self.may_carry_token(&url, a)) {
            let kept: Vec<(String, String)> = url
                .query_pairs()
                .filter(|(k, _)| k != "access_token")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            url.query_pairs_mut()
                .clear()
                .extend_pairs(kept)
                .append_pair("access_token", a.token.expose());
        }
        url
    }

    /// Open a chapter's audio (optionally from a byte offset), following
    /// redirects without leaking the token to another origin. No
    /// whole-request time-out: audio may take long to download. A success
    /// answer typed as JSON or HTML is no audio: it is read and judged as
    /// [`Client::stream_refusal`] judges it (a download never stores it).
    pub async fn open_stream(
        &self,
        req: &StreamRequest,
        from_byte: Option<u64>,
    ) -> Result<reqwest::Response, ApiError> {
        let resp = self.open_resource(req, from_byte, Kind::Audio).await?;
        let ct = content_type(&resp);
        if !ct.as_deref().is_some_and(answer_type) {
            return Ok(resp);
        }
        let status = resp.status().as_u16();
        let body = read_at_most(resp, 64 * 1024).await;
        Err(self.stream_refusal(status, ct.as_deref(), &body))
    }

    /// `open_stream` without looking at what the answer is (covers): not
    /// sent while the origin's back-off of `kind` waits, which its answer
    /// closes (429, 503) or opens. Asked uncompressed: a `Range` counts
    /// the bytes of the file itself.
    async fn open_resource(
        &self,
        req: &StreamRequest,
        from_byte: Option<u64>,
        kind: Kind,
    ) -> Result<reqwest::Response, ApiError> {
        let mut url = req.url.clone();
        let mut token_allowed = true;
        for _ in 0..=MAX_REDIRECTS {
            self.open_to(&url, kind, false).await?;
            let build = |http: &reqwest::Client| {
                let mut rb = http
                    .get(url.clone())
                    .header(header::ACCEPT_ENCODING, "identity");
                if token_allowed {
                    for (k, v) in &req.headers {
                        rb = rb.header(k, v);
                    }
                }
                if let Some(b) = from_byte {
                    rb = rb.header(header::RANGE, format!("bytes={b}-"));
                }
                rb
            };
            let base = self.base();
            let resp = self
                .send_on(&url, build)
                .await
                .map_err(|e| self.network_error(&base, &e))?;
            if resp.status().is_redirection() {
                let next =
                    redirect_target(&url, &resp).ok_or_else(|| self.bad_redirect(&base, &url))?;
                token_allowed &= next.origin() == url.origin();
                url = next;
                continue;
            }
            if resp.status().is_success() {
                self.note_answer(&url, kind, None);
                return Ok(resp);
            }
            let status = resp.status();
            let ct = content_type(&resp);
            let said = Said::of(&resp);
            let body = resp.bytes().await.unwrap_or_default();
            let e = self.error_from_body(&base, status, ct.as_deref(), &body);
            let e = self.refine(e, &said, false);
            self.note_answer(&url, kind, Some(&e));
            return Err(e);
        }
        Err(self.bad_redirect(&self.base(), &url))
    }

    /// A URL the server handed out (`coverUrl`, …) as a request: resolved
    /// against the base; the token only for the server's own origin.
    pub fn resource_request(&self, given: &str) -> Option<StreamRequest> {
        let url = self.base().resolve(given).ok()?;
        Some(self.request_to(self.below_in_use(url)))
    }

    /// `url` below another address of the server, moved below the one in
    /// use (a manifest or cover URL from before a switch); else as it is.
    fn below_in_use(&self, url: Url) -> Url {
        let now = self.base();
        self.addresses()
            .iter()
            .filter(|a| a.base != now)
            .find_map(|a| a.base.rebase(&url, &now))
            .unwrap_or(url)
    }

    fn may_carry_token(&self, url: &Url, auth: &crate::api::Auth) -> bool {
        let now = self.base();
        now.same_origin(url)
            && self
                .addresses()
                .iter()
                .any(|a| a.base == now && a.vouches_for(&auth.server_id))
    }

    /// A book's cover image bytes, `None` when it has none (404); see
    /// [`Client::cover_bytes`].
    pub async fn cover(&self, book: &Book) -> Result<Option<bytes::Bytes>, ApiError> {
        self.cover_bytes(&book.id, book.cover_url.as_deref(), MAX_COVER_BYTES)
            .await
    }

    /// A cover's bytes: the book's `coverUrl` (absolute, or relative to the
    /// base or its gateway prefix), else `/books/{bookId}/cover` (ours).
    /// The token goes only to the server's own origin. `None` on 404 (no
    /// cover); a body over `max` bytes is an error, never cut short. What
    /// the bytes are is the caller's to check: a gateway may answer with
    /// an HTML page.
    pub async fn cover_bytes(
        &self,
        book: &BookId,
        given: Option<&str>,
        max: usize,
    ) -> Result<Option<bytes::Bytes>, ApiError> {
        let req = given
            .filter(|u| !u.trim().is_empty())
            .and_then(|u| self.resource_request(u))
            .unwrap_or_else(|| {
                self.request_to(self.base().endpoint(["books", book.as_str(), "cover"]))
            });
        let fetch = async {
            let mut resp = match self.open_resource(&req, None, Kind::Read).await {
                Ok(r) => r,
                Err(ApiError::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(e),
            };
            let too_big = || ApiError::Network {
                address: self.base().to_string(),
                message: format!("the cover at {} is larger than {max} bytes", req.url),
            };
            if resp.content_length().is_some_and(|n| n > max as u64) {
                return Err(too_big());
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| self.network_error(&self.base(), &e))?
            {
                if body.len() + chunk.len() > max {
                    return Err(too_big());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Some(bytes::Bytes::from(body)))
        };
        tokio::time::timeout(self.inner.opts.request_timeout, fetch)
            .await
            .unwrap_or_else(|_| {
                Err(ApiError::Network {
                    address: self.base().to_string(),
                    message: format!("the cover at {} timed out", req.url),
                })
            })
    }
}

/// A type only an API answer has: JSON (a problem document too) or HTML.
fn answer_type(content_type: &str) -> bool {
    let t = content_type.to_ascii_lowercase();
    let t = t.split(';').next().unwrap_or_default().trim();
    t.ends_with("/json") || t.ends_with("+json") || t == "text/html"
}

/// The first `max` bytes of a body (what arrives within the time-out).
async fn read_at_most(mut resp: reqwest::Response, max: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < max {
        match tokio::time::timeout(std::time::Duration::from_secs(5), resp.chunk()).await {
            Ok(Ok(Some(c))) => body.extend_from_slice(&c),
            _ => break,
        }
    }
    body.truncate(max);
    body
}

/// Covers larger than this are refused (a cover is a picture, not a book).
pub const MAX_COVER_BYTES: usize = 16 << 20;
