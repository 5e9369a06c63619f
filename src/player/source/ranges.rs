//! Bounded `Range: bytes=a-b` reads of a stream beside its download (the
//! mp3 bitrate probes, far from where playback goes), sent together.

use super::answer::content_type;
use super::{CHUNK_TIMEOUT, STALLED_RECHECK, Shared, StreamRequest, request, runtime};
use crate::domain::locks::lock;
use crate::player::http_error;
use crate::player::mpa::RangeReader;
use std::io;
use std::sync::{Arc, Mutex};

/// Bounded `Range: bytes=a-b` reads of a stream, beside its download (for
/// the mp3 bitrate probes, far from where playback goes).
pub struct HttpRanges {
    pub(super) shared: Arc<Shared>,
    pub(super) req: StreamRequest,
}

type RangeResults = Vec<io::Result<Vec<u8>>>;

impl RangeReader for HttpRanges {
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> RangeResults {
        let done: Arc<Mutex<Option<RangeResults>>> = Arc::default();
        let (slot, shared, req, list) = (
            done.clone(),
            self.shared.clone(),
            self.req.clone(),
            ranges.to_vec(),
        );
        self.shared.lock().hold = true;
        let task = runtime().spawn(async move {
            let http = shared.http.clone();
            let reads = list
                .iter()
                .map(|(at, len)| read_range(&*http, &req, *at, *len));
            let all = futures_util::future::join_all(reads).await;
            *lock(&slot) = Some(all);
            // Under the window's lock, so the waiter cannot miss it.
            let _w = shared.lock();
            shared.data_ready.notify_all();
        });
        let mut w = self.shared.lock();
        loop {
            if let Some(all) = lock(&done).take() {
                return all;
            }
            if w.cancel || w.fatal.is_some() {
                task.abort();
                return ranges
                    .iter()
                    .map(|_| Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled")))
                    .collect();
            }
            // Cancel and the result both notify; this is a safety net.
            w = self
                .shared
                .data_ready
                .wait_timeout(w, STALLED_RECHECK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// `len` bytes at `at` with one bounded Range request (fewer at the end).
/// Anything but a 206 for exactly that start is an error: the caller reads
/// the bytes through the stream instead.
async fn read_range(
    http: &dyn crate::player::StreamPool,
    req: &StreamRequest,
    at: u64,
    len: usize,
) -> io::Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    // The audio back-off of the origin (see `fetch`): closed, the stream
    // reads it instead, once its wait is over.
    use crate::domain::backoff::Kind;
    let origin = request::origin(&req.url);
    let throttles = http.throttles();
    let now = std::time::Instant::now();
    if throttles.closed(&origin, Kind::Audio, now).is_some() {
        return Err(io::Error::other("range read: the server asked to wait"));
    }
    let last = at + len as u64 - 1;
    let range = format!("bytes={at}-{last}");
    let timed_out = || io::Error::new(io::ErrorKind::TimedOut, "range read timed out");
    let resp = tokio::time::timeout(CHUNK_TIMEOUT, request::get(http, req, &range))
        .await
        .map_err(|_| timed_out())?
        .map_err(io::Error::other)?;
    match resp.status().as_u16() {
        206 => {}
        416 => return Ok(Vec::new()),
        s @ (429 | 503) => {
            request::slow_down(&throttles, &origin, &resp);
            return Err(io::Error::other(format!("range read: HTTP {s}")));
        }
        s => return Err(io::Error::other(format!("range read: HTTP {s}"))),
    }
    if content_type(&resp).is_some_and(|t| http_error::not_audio_type(&t)) {
        return Err(io::Error::other("range read: the answer is not audio"));
    }
    let starts_at = resp
        .headers()
        .get("content-range")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().strip_prefix("bytes "))
        .and_then(|v| v.split('-').next())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if starts_at != Some(at) {
        return Err(io::Error::other("range read: the answer is another range"));
    }
    let body = tokio::time::timeout(CHUNK_TIMEOUT, resp.bytes())
        .await
        .map_err(|_| timed_out())?
        .map_err(io::Error::other)?;
    let mut body = body.to_vec();
    body.truncate(len);
    Ok(body)
}
