//! Requests: auth and identity headers, retries with back-off for GETs,
//! redirects followed by hand (the token never leaves the origin), paging,
//! and mapping answers to values or typed errors.

use super::{Client, ListPage, PageCursor};
use crate::api::Auth;
use crate::api::error::{ApiError, BodyKind};
use crate::api::wire::{self, NextPage};
use reqwest::{Method, StatusCode, header};
use serde_json::Value;
use url::Url;

pub(super) const MAX_REDIRECTS: usize = 5;
const MAX_PAGES: usize = 10_000;

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

    pub(super) async fn list_page<T>(
        &self,
        segs: &[&str],
        mut query: Vec<(String, String)>,
        at: &PageCursor,
        endpoint: &str,
        decode: impl FnMut(&Value, &str) -> Result<T, ApiError>,
    ) -> Result<ListPage<T>, ApiError> {
        let p = &self.inner.opts.paths;
        let size = u64::from(p.page_size.max(1));
        let page_no = match at {
            NextPage::Page(n) => {
                query.push((p.page_param.clone(), n.to_string()));
                query.push((p.page_size_param.clone(), size.to_string()));
                *n
            }
            NextPage::Offset(o) => {
                query.push((p.offset_param.clone(), o.to_string()));
                query.push((p.limit_param.clone(), size.to_string()));
                1
            }
            NextPage::Cursor(c) => {
                query.push((p.cursor_param.clone(), c.clone()));
                1
            }
        };
        let v = self.get(segs, &query).await?;
        let list = wire::find_list(&v, endpoint)?;
        let items = wire::decode_items(&list, endpoint, decode)?;
        let before = match at {
            NextPage::Offset(o) => *o,
            NextPage::Page(n) => list
                .info
                .page_size
                .unwrap_or(size)
                .saturating_mul(n.saturating_sub(1)),
            NextPage::Cursor(_) => 0,
        };
        let fetched = before.saturating_add(items.len() as u64);
        let mut next = wire::next_page(&list.info, items.len(), fetched, page_no, size);
        if next.as_ref() == Some(at) {
            next = None; // a server that repeats itself must not loop us
        }
        Ok(ListPage {
            items,
            total: list.info.total,
            next,
        })
    }

    /// Fetch pages from the first until none is left.
    pub(super) async fn collect<T, F, Fut>(&self, mut page: F) -> Result<Vec<T>, ApiError>
    where
        F: FnMut(PageCursor) -> Fut,
        Fut: std::future::Future<Output = Result<ListPage<T>, ApiError>>,
    {
        let mut all = Vec::new();
        let mut at = NextPage::Page(1);
        let mut seen_cursors = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let p = page(at).await?;
            all.extend(p.items);
            match p.next {
                Some(NextPage::Cursor(c)) if !seen_cursors.insert(c.clone()) => break,
                Some(n) => at = n,
                None => break,
            }
            if p.total.is_some_and(|t| all.len() as u64 >= t) {
                break;
            }
        }
        Ok(all)
    }

    pub(super) async fn call(
        &self,
        method: Method,
        segs: &[&str],
        query: &[(String, String)],
        body: Option<Value>,
        access: Access,
    ) -> Result<Value, ApiError> {
        let mut url = self.inner.base.endpoint(segs.iter().copied());
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let auth = match access {
            Access::Anonymous => None,
            Access::Token | Access::Write => Some(self.auth().ok_or(ApiError::NotLoggedIn)?),
        };
        let attempts = if method == Method::GET {
            self.inner.opts.retries + 1
        } else {
            1
        };
        let mut delay = self.inner.opts.backoff;
        let mut last = None;
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay = delay.saturating_mul(2);
            }
            match self.once(&method, &url, body.as_ref(), auth.as_ref()).await {
                Err(e) if e.is_retryable() && attempt + 1 < attempts => {
                    tracing::debug!("retrying {method} {url}: {e}");
                    last = Some(e);
                }
                r => return r,
            }
        }
        Err(last.unwrap_or(ApiError::NotLoggedIn))
    }

    async fn once(
        &self,
        method: &Method,
        url: &Url,
        body: Option<&Value>,
        auth: Option<&Auth>,
    ) -> Result<Value, ApiError> {
        let prefix = &self.inner.opts.identity_header_prefix;
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let same_origin = self.inner.base.same_origin(&url);
            let mut rb = self
                .inner
                .http
                .request(method.clone(), url.clone())
                .timeout(self.inner.opts.request_timeout)
                .header(header::ACCEPT, "application/json");
            if let (Some(a), true) = (auth, same_origin) {
                rb = rb.bearer_auth(a.token.expose());
                if *method != Method::GET {
                    rb = rb
                        .header(format!("{prefix}-Expected-Server-Id"), a.server_id.as_str())
                        .header(format!("{prefix}-Expected-User-Id"), a.user_id.to_string());
                }
            }
            if let Some(b) = body {
                rb = rb.json(b);
            }
            let resp = rb.send().await.map_err(|e| self.network_error(&e))?;
            let status = resp.status();
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                // Writes are never re-sent elsewhere.
                if *method != Method::GET {
                    return Err(self.bad_redirect(&url));
                }
                url = redirect_target(&url, &resp).ok_or_else(|| self.bad_redirect(&url))?;
                continue;
            }
            let ct = content_type(&resp);
            let bytes = resp.bytes().await.map_err(|e| self.network_error(&e))?;
            if !status.is_success() {
                return Err(self.error_from_body(status, ct.as_deref(), &bytes));
            }
            let v = match wire::parse_body(ct.as_deref(), &bytes) {
                Ok(v) => v,
                // Writes may answer 204 or an empty 200.
                Err(BodyKind::Empty) if *method != Method::GET => Value::Null,
                Err(kind) => {
                    return Err(ApiError::NotJson {
                        address: self.inner.base.to_string(),
                        status: status.as_u16(),
                        kind,
                    });
                }
            };
            if let Some((st, code, msg)) = wire::envelope_error(&v) {
                return Err(ApiError::from_status(
                    st,
                    code,
                    msg,
                    self.inner.base.as_str(),
                ));
            }
            return Ok(v);
        }
        Err(self.bad_redirect(&url))
    }

    pub(super) fn error_from_body(
        &self,
        status: StatusCode,
        ct: Option<&str>,
        body: &[u8],
    ) -> ApiError {
        let address = self.inner.base.as_str();
        let (code, message) = match wire::parse_body(ct, body) {
            Ok(v) => wire::error_parts(&v),
            Err(BodyKind::Empty) => (None, None),
            Err(kind) => (
                None,
                Some(format!(
                    "it answered with {kind}; check the address and gateway prefix"
                )),
            ),
        };
        ApiError::from_status(status.as_u16(), code, message, address)
    }

    pub(super) fn network_error(&self, e: &reqwest::Error) -> ApiError {
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
            address: self.inner.base.to_string(),
            message,
        }
    }

    pub(super) fn bad_redirect(&self, from: &Url) -> ApiError {
        ApiError::Redirect {
            address: self.inner.base.to_string(),
            detail: format!("{from} elsewhere more than we follow (writes are never redirected)"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Anonymous,
    Token,
    /// Token plus identity headers.
    Write,
}

pub(super) fn content_type(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(super) fn redirect_target(from: &Url, resp: &reqwest::Response) -> Option<Url> {
    let loc = resp.headers().get(header::LOCATION)?.to_str().ok()?;
    from.join(loc).ok()
}
