//! One GET of a stream with its `Range`, on the pool the layer above gives
//! for its URL (the API's, so the session keeps one kept-alive connection;
//! sent again at once on the one it names when an h2c guess failed). That pool
//! follows no redirect, so they are followed here, as the API's are: up to
//! five, and a hop to another origin drops the request's headers (the
//! token never leaves the server's origin).

use super::StreamRequest;
use crate::domain::backoff::{self, Kind, Throttles};
use crate::player::StreamPool;
use reqwest::header::LOCATION;
use std::time::{Duration, Instant, SystemTime};

/// Redirects followed before the stream is given up as broken.
const MAX_REDIRECTS: usize = 5;

/// The pool every stream uses unless given one: it follows no redirect
/// either (one code path for both).
pub(super) fn default_pool() -> std::sync::Arc<dyn StreamPool> {
    std::sync::Arc::new(default_client())
}

fn default_client() -> reqwest::Client {
    static C: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_else(|_| reqwest::Client::new())
    })
    .clone()
}

/// The origin whose audio back-off a stream's requests wait for.
pub(super) fn origin(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

/// A 429 or 503 from `origin`: closes its audio back-off for the answer's
/// `Retry-After` (returned) or a step of its ladder; until when.
pub(super) fn slow_down(
    throttles: &Throttles,
    origin: &str,
    resp: &reqwest::Response,
) -> (Option<Duration>, Instant) {
    let header = |n: &str| resp.headers().get(n).and_then(|v| v.to_str().ok());
    let asked = header("retry-after")
        .and_then(|v| backoff::retry_after(v, header("date"), SystemTime::now()));
    let t = throttles.refused(origin, Kind::Audio, asked, Instant::now());
    (asked, t.until)
}

/// Sends `GET req` with `Range: range`, following redirects by hand.
pub(super) async fn get(
    pools: &dyn StreamPool,
    req: &StreamRequest,
    range: &str,
) -> Result<reqwest::Response, String> {
    let origin = url::Url::parse(&req.url).ok().map(|u| u.origin());
    let mut url = req.url.clone();
    for _ in 0..=MAX_REDIRECTS {
        let same_origin = url::Url::parse(&url).ok().map(|u| u.origin()) == origin;
        let build = |http: reqwest::Client| {
            // Uncompressed: the Range counts the file's own bytes.
            let mut rb = http
                .get(&url)
                .header("Range", range)
                .header("Accept-Encoding", "identity");
            if same_origin {
                for (k, v) in &req.headers {
                    rb = rb.header(k, v);
                }
            }
            rb
        };
        let resp = match build(pools.pool(&url)).send().await {
            Err(e) => match pools.retry_pool(&url, &e) {
                Some(http) => build(http).send().await,
                None => Err(e),
            },
            ok => ok,
        }
        .map_err(|e| e.to_string())?;
        let status = resp.status();
        if !status.is_redirection() || status == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(resp);
        }
        let next = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| resp.url().join(l).ok())
            .ok_or_else(|| format!("a redirect without a usable location from {url}"))?;
        url = next.to_string();
    }
    Err(format!(
        "more than {MAX_REDIRECTS} redirects from {}",
        req.url
    ))
}
