//! Requests: auth and identity headers, retries with back-off for GETs,
//! the next address when one does not answer (`addresses`), redirects
//! followed by hand (the token never leaves the origin), and mapping
//! answers to values or typed errors. What an answer says of the server's
//! load, and what a request waits for before it goes, is `limits`.

use super::Client;
use super::addresses::Miss;
use crate::api::error::{ApiError, BodyKind};
use crate::api::wire;
use crate::api::{Auth, BaseUrl};
use crate::domain::backoff::{self, Backoff, Kind};
use reqwest::{Method, StatusCode, header};
use serde_json::Value;
use url::Url;

pub(super) const MAX_REDIRECTS: usize = 5;

impl Client {
    // ------------------------------------------------------------ plumbing

    pub(super) async fn get(
        &self,
        segs: &[&str],
        query: &[(String, String)],
    ) -> Result<Value, ApiError> {
        self.call(Method::GET, segs, query, None, Access::Token)
            .await
    }

    /// A write with the login's token (no query).
    pub(super) async fn write(
        &self,
        method: Method,
        segs: &[&str],
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        self.call(method, segs, &[], body, Access::Write).await
    }

    pub(super) async fn call(
        &self,
        method: Method,
        segs: &[&str],
        query: &[(String, String)],
        body: Option<Value>,
        access: Access,
    ) -> Result<Value, ApiError> {
        let base = self.base();
        let mut url = base.endpoint(segs.iter().copied());
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let kind = match segs {
            _ if method == Method::GET => Kind::Read,
            ["auth", "reading-progress", ..] => Kind::ProgressWrite,
            _ => Kind::Write,
        };
        self.call_url(method, kind, &base, url, body, access).await
    }

    /// A request to `url` below `base` (built from it, or a `next` link
    /// the caller checked), at the address in use or, when that one does
    /// not answer, at the next (`addresses`: the same place below it).
    /// A read already in flight is joined, not sent again beside itself;
    /// a write waits for the one in flight (`limits`).
    pub(super) async fn call_url(
        &self,
        method: Method,
        kind: Kind,
        base: &BaseUrl,
        url: Url,
        body: Option<Value>,
        access: Access,
    ) -> Result<Value, ApiError> {
        let auth = match access {
            Access::Anonymous => None,
            Access::Token | Access::Write => Some(self.auth().ok_or(ApiError::NotLoggedIn)?),
        };
        if method != Method::GET {
            let _one = self.inner.limits.writing.lock().await;
            self.inner.limits.wrote();
            self.open_to(base.as_url(), kind, false).await?;
            let req = Req {
                method: &method,
                kind,
                url: &url,
                body: body.as_ref(),
                auth: auth.as_ref(),
                access,
            };
            return self.anywhere(&req, base).await;
        }
        let (c, b, u) = (self.clone(), base.clone(), url.clone());
        self.join_read(&url, access, async move {
            c.read_attempts(&b, u, auth, access).await
        })
        .await
    }

    /// A GET, asked again (idempotent) after network trouble or a 5xx,
    /// or once its address's wait is over when that is short.
    async fn read_attempts(
        &self,
        base: &BaseUrl,
        url: Url,
        auth: Option<Auth>,
        access: Access,
    ) -> Result<Value, ApiError> {
        let attempts = self.inner.opts.retries + 1;
        let mut unanswered = Backoff::default();
        let mut last = None;
        for attempt in 0..attempts {
            if let Some(until) = unanswered.until() {
                tokio::time::sleep_until(until.into()).await;
            }
            self.open_to(base.as_url(), Kind::Read, true).await?;
            let req = Req {
                method: &Method::GET,
                kind: Kind::Read,
                url: &url,
                body: None,
                auth: auth.as_ref(),
                access,
            };
            match self.anywhere(&req, base).await {
                Err(e) if attempt + 1 < attempts && (e.is_retryable() || e.is_throttle()) => {
                    tracing::debug!("asking again GET {url}: {e}");
                    if !e.slows_down() {
                        // The address's own state waits after a 429 or 503.
                        unanswered.failed(self.ladder(), None, std::time::Instant::now());
                    }
                    last = Some(e);
                }
                r => return r,
            }
        }
        Err(last.unwrap_or(ApiError::NotLoggedIn))
    }

    /// One try at each address that may take the request, the one in use
    /// first, until one answers (see `addresses`). What the answer says of
    /// the server's load is kept for the address and kind.
    async fn anywhere(&self, req: &Req<'_>, base: &BaseUrl) -> Result<Value, ApiError> {
        let candidates = self.candidates(req.access);
        if candidates.is_empty() {
            // No address vouches for this login's server.
            return Err(ApiError::NotLoggedIn);
        }
        let method = req.method;
        let mut missed: Vec<(BaseUrl, ApiError)> = Vec::new();
        for (i, at) in candidates {
            let there = if at == *base {
                req.url.clone()
            } else {
                match base.rebase(req.url, &at) {
                    Some(u) => u,
                    None => continue,
                }
            };
            let identity = *method != Method::GET;
            let sent = self
                .once(&at, method, &there, req.body, req.auth, identity)
                .await;
            self.note_load(&at, req.kind, &sent);
            match sent {
                Ok(v) => {
                    self.answered_at(i);
                    return Ok(v);
                }
                Err(Miss::Answered(e)) => {
                    self.answered_at(i);
                    return Err(e);
                }
                Err(Miss::Unanswered(e)) if *method != Method::GET => return Err(e),
                Err(Miss::Unconnected(e) | Miss::Unanswered(e)) => missed.push((at, e)),
            }
        }
        Err(unreachable(missed))
    }

    /// One request at address `base` (redirects within its origin
    /// followed by hand). `identity`: with the identity headers.
    pub(super) async fn once(
        &self,
        base: &BaseUrl,
        method: &Method,
        url: &Url,
        body: Option<&Value>,
        auth: Option<&Auth>,
        identity: bool,
    ) -> Result<Value, Miss> {
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let same_origin = base.same_origin(&url);
            let identity_sent = auth.is_some() && same_origin && identity;
            let token = auth.filter(|_| same_origin);
            let build = |http: &_| self.request(http, method, &url, token, identity_sent, body);
            let resp = self.send_on(&url, build).await.map_err(|e| {
                let error = self.network_error(base, &e);
                if e.is_connect() {
                    Miss::Unconnected(error)
                } else {
                    Miss::Unanswered(error)
                }
            })?;
            let status = resp.status();
            self.learn_later(base, &resp);
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                // Writes are never re-sent elsewhere.
                if *method != Method::GET {
                    return Err(Miss::Answered(self.bad_redirect(base, &url)));
                }
                url = redirect_target(&url, &resp)
                    .ok_or_else(|| Miss::Answered(self.bad_redirect(base, &url)))?;
                continue;
            }
            let ct = content_type(&resp);
            let said = Said::of(&resp);
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| Miss::Unanswered(self.network_error(base, &e)))?;
            if !status.is_success() {
                let e = self.error_from_body(base, status, ct.as_deref(), &bytes);
                let e = self.refine(e, &said, identity_sent);
                return Err(match status.as_u16() {
                    502..=504 => Miss::Unanswered(e),
                    _ => Miss::Answered(e),
                });
            }
            let v = match wire::parse_body(ct.as_deref(), &bytes) {
                Ok(v) => v,
                // 204 is "nothing to say"; writes may also answer an empty 200.
                Err(BodyKind::Empty)
                    if status == StatusCode::NO_CONTENT || *method != Method::GET =>
                {
                    Value::Null
                }
                Err(kind) => {
                    return Err(Miss::Answered(ApiError::NotJson {
                        address: base.to_string(),
                        status: status.as_u16(),
                        kind,
                    }));
                }
            };
            if let Some((st, code, msg)) = wire::envelope_error(&v) {
                let e = ApiError::from_status(st, code, msg, base.as_str());
                return Err(Miss::Answered(self.refine(e, &said, identity_sent)));
            }
            if ct.as_deref().is_some_and(is_problem) {
                // RFC 7807 says what it is, whatever the status.
                let b = wire::error_body(&v);
                let st = b
                    .status
                    .filter(|s| *s >= 400)
                    .or_else(|| b.code.as_deref().and_then(wire::status_of_code))
                    .unwrap_or(400);
                let e = ApiError::from_status(st, b.code, b.message, base.as_str());
                return Err(Miss::Answered(self.refine(e, &said, identity_sent)));
            }
            return Ok(v);
        }
        Err(Miss::Answered(self.bad_redirect(base, &url)))
    }

    /// A request for JSON: with the token of `auth`, if given, and with
    /// the identity headers too when `identity`.
    fn request(
        &self,
        http: &reqwest::Client,
        method: &Method,
        url: &Url,
        auth: Option<&Auth>,
        identity: bool,
        body: Option<&Value>,
    ) -> reqwest::RequestBuilder {
        let prefix = &self.inner.opts.identity_header_prefix;
        let mut rb = http
            .request(method.clone(), url.clone())
            .timeout(self.inner.opts.request_timeout)
            .header(header::ACCEPT, "application/json");
        if let Some(a) = auth {
            rb = rb.bearer_auth(a.token.expose());
            if identity {
                rb = rb
                    .header(format!("{prefix}-Expected-Server-Id"), a.server_id.as_str())
                    .header(format!("{prefix}-Expected-User-Id"), a.user_id.to_string());
            }
        }
        if let Some(b) = body {
            rb = rb.json(b);
        }
        rb
    }

    pub(super) fn error_from_body(
        &self,
        base: &BaseUrl,
        status: StatusCode,
        ct: Option<&str>,
        body: &[u8],
    ) -> ApiError {
        let address = base.as_str();
        let (code, message) = match wire::parse_body(ct, body) {
            Ok(v) => wire::error_parts(&v),
            Err(BodyKind::Empty) => (None, None),
            // A page is no error body, but a contract code in it still counts.
            Err(kind) => (
                wire::contract_code_in_text(&String::from_utf8_lossy(body)).map(str::to_owned),
                Some(format!(
                    "it answered with {kind}; check the address and gateway prefix"
                )),
            ),
        };
        ApiError::from_status(status.as_u16(), code, message, address)
    }

    /// What only the request knows: `Retry-After` of a 429 or 503 (a 503
    /// that says when to come back is the server asking to wait, not a
    /// failure), and whether a 428 came although both identity headers
    /// were sent.
    pub(super) fn refine(&self, e: ApiError, said: &Said, identity_sent: bool) -> ApiError {
        match e {
            ApiError::RateLimited {
                status, message, ..
            } => ApiError::RateLimited {
                status,
                retry_after: said.retry_after(),
                message,
            },
            ApiError::Server {
                status: 503,
                message,
                ..
            } if said.retry_after().is_some() => ApiError::RateLimited {
                status: 503,
                retry_after: said.retry_after(),
                message,
            },
            ApiError::ScopeRequired { message } if identity_sent => {
                ApiError::IdentityHeadersIgnored {
                    prefix: self.inner.opts.identity_header_prefix.clone(),
                    message,
                }
            }
            other => other,
        }
    }

    pub(super) fn network_error(&self, base: &BaseUrl, e: &reqwest::Error) -> ApiError {
        let mut message = if e.is_timeout() {
            "the request timed out".to_owned()
        } else if e.is_connect() {
            "the connection failed".to_owned()
        } else {
            e.to_string()
        };
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            let t = s.to_string();
            if !message.contains(&t) {
                message.push_str(": ");
                message.push_str(&t);
            }
            src = s.source();
        }
        ApiError::Network {
            address: base.to_string(),
            message,
        }
    }

    pub(super) fn bad_redirect(&self, base: &BaseUrl, from: &Url) -> ApiError {
        ApiError::Redirect {
            address: base.to_string(),
            detail: format!("{from} elsewhere more than we follow (writes are never redirected)"),
        }
    }
}

/// Every address missed: one error naming each (the last one's reason).
fn unreachable(missed: Vec<(BaseUrl, ApiError)>) -> ApiError {
    let names: Vec<String> = missed.iter().map(|(b, _)| b.to_string()).collect();
    match missed.into_iter().last() {
        Some((_, ApiError::Network { message, .. })) if names.len() > 1 => ApiError::Network {
            address: names.join(" or "),
            message,
        },
        Some((_, last)) => last,
        None => ApiError::NotLoggedIn,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Anonymous,
    Token,
    /// Token plus identity headers.
    Write,
}

/// `application/problem+json` (RFC 7807): an error answer by its type.
pub(super) fn is_problem(content_type: &str) -> bool {
    content_type
        .to_ascii_lowercase()
        .contains("application/problem+")
}

pub(super) fn content_type(resp: &reqwest::Response) -> Option<String> {
    header_text(resp, header::CONTENT_TYPE)
}

fn header_text(resp: &reqwest::Response, name: header::HeaderName) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// What an answer said of when to come back: `Retry-After`, read against
/// the answer's own `Date`.
#[derive(Debug, Clone, Default)]
pub(super) struct Said {
    retry_after: Option<String>,
    date: Option<String>,
}

impl Said {
    pub(super) fn of(resp: &reqwest::Response) -> Said {
        Said {
            retry_after: header_text(resp, header::RETRY_AFTER),
            date: header_text(resp, header::DATE),
        }
    }

    pub(super) fn retry_after(&self) -> Option<std::time::Duration> {
        let v = self.retry_after.as_deref()?;
        backoff::retry_after(v, self.date.as_deref(), std::time::SystemTime::now())
    }
}

/// One request as `anywhere` sends it.
pub(super) struct Req<'a> {
    pub method: &'a Method,
    pub kind: Kind,
    pub url: &'a Url,
    pub body: Option<&'a Value>,
    pub auth: Option<&'a Auth>,
    pub access: Access,
}

pub(super) fn redirect_target(from: &Url, resp: &reqwest::Response) -> Option<Url> {
    let loc = resp.headers().get(header::LOCATION)?.to_str().ok()?;
    from.join(loc).ok()
}

/// An answer as it came, for `earmark doctor`: status and body, not mapped
/// to a value or an error.
#[derive(Debug, Clone, PartialEq)]
pub struct RawAnswer {
    pub status: u16,
    pub body: Result<Value, BodyKind>,
    pub retry_after: Option<String>,
}

impl Client {
    /// One request that NEVER carries the identity headers, is not retried,
    /// follows no redirect and is not mapped to an error (only a network
    /// failure is an `Err`). For read-only diagnosis: a POST through here
    /// without identity headers must be refused by a contract server.
    pub async fn probe(
        &self,
        method: Method,
        segs: &[&str],
        query: &[(String, String)],
        body: Option<Value>,
        with_token: bool,
    ) -> Result<RawAnswer, ApiError> {
        let base = self.base();
        let mut url = base.endpoint(segs.iter().copied());
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let auth = self.auth().filter(|_| with_token);
        let build =
            |http: &_| self.request(http, &method, &url, auth.as_ref(), false, body.as_ref());
        let resp = self
            .send_on(&url, build)
            .await
            .map_err(|e| self.network_error(&base, &e))?;
        let status = resp.status().as_u16();
        let ct = content_type(&resp);
        let retry_after = header_text(&resp, header::RETRY_AFTER);
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| self.network_error(&base, &e))?;
        Ok(RawAnswer {
            status,
            body: wire::parse_body(ct.as_deref(), &bytes),
            retry_after,
        })
    }
}
