//! The fetch task: one per stream, on the network runtime. It downloads
//! from where the reader wants into the window, with back-pressure,
//! restarts at a seek, retries a broken connection from the same byte
//! (after a step of [`RECONNECT`]), and reads a downloaded file from disk
//! the same way. A 429 or 503 closes the audio back-off of the stream's
//! origin (`domain::backoff`, shared through its pool) for `Retry-After`
//! or a step of its ladder; no request goes there until it opens.

use super::answer::{content_type, look_before_decoding, refused};
use super::{
    CHUNK_TIMEOUT, DROP_BEHIND_STEP, KEEP_BEHIND, Shared, SourceError, StreamRequest, heads,
    request,
};
use crate::domain::backoff::{Backoff, Kind, Ladder};
use std::io::SeekFrom;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits before a broken connection is asked again from the same byte.
const RECONNECT: Ladder = Ladder::new(Duration::from_millis(200), Duration::from_secs(2));

/// The smallest chunk asked for at once.
const MIN_CHUNK: u64 = 64 * 1024;
/// A stream started from a kept head fetches on once the reader is this
/// close to the head's end.
const LAZY_MARGIN: u64 = 64 * 1024;

pub(super) enum Outcome {
    /// Far enough ahead of the reader; resume when it catches up.
    Ahead,
    /// The reader moved elsewhere; start a new request at `want`.
    Restart,
    /// The connection failed; retry from the downloaded end after a pause.
    Retry,
    /// The server asked to wait (429, 503): nothing is sent until then.
    Wait(Instant),
    Done,
    Fatal(SourceError),
    Cancelled,
}

pub(super) async fn fetch_task(shared: Arc<Shared>, req: StreamRequest) {
    let mut broken = Backoff::default();
    loop {
        if !wait_while_lazy(&shared).await {
            return;
        }
        let (offset, generation) = {
            let mut w = shared.lock();
            if w.cancel {
                return;
            }
            if w.restart {
                w.restart = false;
                w.generation += 1;
                w.start = w.want;
                w.data.clear();
            }
            (w.end(), w.generation)
        };
        let done_already = {
            let w = shared.lock();
            w.total.is_some_and(|t| offset >= t) && w.headers_seen
        };
        let outcome = if done_already {
            Outcome::Done
        } else {
            fetch_once(&shared, &req, offset, generation).await
        };
        match outcome {
            Outcome::Restart => {
                broken.succeeded();
                continue;
            }
            Outcome::Retry => {
                let until = broken.failed(RECONNECT, None, Instant::now());
                tokio::select! {
                    _ = tokio::time::sleep_until(until.into()) => {}
                    _ = shared.wake_task.notified() => {}
                }
            }
            Outcome::Wait(until) => {
                shared.lock().stalled = true;
                // A seek wakes it (and waits again), as does a cancel.
                tokio::select! {
                    _ = tokio::time::sleep_until(until.into()) => {}
                    _ = shared.wake_task.notified() => {}
                }
            }
            Outcome::Fatal(e) => {
                let mut w = shared.lock();
                w.fatal = Some(e);
                shared.data_ready.notify_all();
                return;
            }
            Outcome::Cancelled => return,
            Outcome::Ahead => loop {
                {
                    let w = shared.lock();
                    if w.cancel {
                        return;
                    }
                    if w.restart || (!w.hold && w.end() < w.want + shared.read_ahead() / 2) {
                        break;
                    }
                }
                shared.wake_task.notified().await;
            },
            Outcome::Done => {
                {
                    let mut w = shared.lock();
                    w.eof = true;
                    shared.data_ready.notify_all();
                }
                // Idle until the reader seeks elsewhere or goes away.
                loop {
                    shared.wake_task.notified().await;
                    let w = shared.lock();
                    if w.cancel {
                        return;
                    }
                    if w.restart {
                        break;
                    }
                }
            }
        }
    }
}

/// Started from a kept head: waits until the reader nears its end, seeks
/// past it, or the head is the whole stream. False when cancelled.
async fn wait_while_lazy(shared: &Shared) -> bool {
    loop {
        {
            let mut w = shared.lock();
            if w.cancel {
                return false;
            }
            if !w.lazy {
                return true;
            }
            if w.restart || w.want + LAZY_MARGIN >= w.end() || w.total.is_some_and(|t| w.end() >= t)
            {
                w.lazy = false;
                return true;
            }
        }
        shared.wake_task.notified().await;
    }
}

/// The head of a stream answered from byte 0 with Range support, once
/// it has come, for `heads` (taken under the window's lock, kept after it).
fn head_to_keep(w: &mut super::Window, until: Option<u64>) -> Option<heads::Head> {
    if w.head_kept || w.start != 0 || until.is_none_or(|u| u == u64::MAX) {
        return None;
    }
    let len = heads::HEAD_BYTES.min(w.total.unwrap_or(u64::MAX));
    if (w.data.len() as u64) < len {
        return None;
    }
    w.head_kept = true;
    Some(heads::Head {
        bytes: w.data[..len as usize].into(),
        total: w.total,
        content_type: w.accepted_type.clone(),
    })
}

fn parse_content_range_total(v: &str) -> Option<u64> {
    // "bytes 100-199/1234" or "bytes */1234"
    v.rsplit('/').next()?.trim().parse().ok()
}

/// Where a fetch reads its bytes from.
enum Body {
    /// An answer, and its first bytes when they were read to look at them.
    Http(reqwest::Response, Option<bytes::Bytes>),
    File(tokio::fs::File),
}

impl Body {
    async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, String> {
        match self {
            Body::Http(r, head) => match head.take().filter(|h| !h.is_empty()) {
                Some(h) => Ok(Some(h)),
                None => r.chunk().await.map_err(|e| e.to_string()),
            },
            Body::File(f) => {
                use tokio::io::AsyncReadExt;
                let mut buf = vec![0u8; 64 * 1024];
                let n = f.read(&mut buf).await.map_err(|e| e.to_string())?;
                buf.truncate(n);
                Ok((n > 0).then(|| buf.into()))
            }
        }
    }
}

/// Opens a downloaded file at `offset`: its length is the total.
async fn open_file(shared: &Shared, url: &str, offset: u64) -> Result<Body, Outcome> {
    use tokio::io::AsyncSeekExt;
    let path = url::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| Outcome::Fatal(SourceError::Http(format!("not a file path: {url}"))))?;
    let fatal = |e: std::io::Error| {
        Outcome::Fatal(SourceError::Http(format!(
            "cannot read the downloaded file {}: {e}",
            path.display()
        )))
    };
    let mut f = tokio::fs::File::open(&path).await.map_err(fatal)?;
    let total = f.metadata().await.map_err(fatal)?.len();
    f.seek(SeekFrom::Start(offset.min(total)))
        .await
        .map_err(fatal)?;
    headers_came(shared, Some(total), true);
    Ok(Body::File(f))
}

/// The stream's length (when known) and whether it answers ranges.
fn headers_came(shared: &Shared, total: Option<u64>, ranges: bool) {
    let mut w = shared.lock();
    if total.is_some() {
        w.total = total;
    }
    w.ranges = ranges;
    w.headers_seen = true;
    shared.data_ready.notify_all();
}

async fn fetch_once(shared: &Shared, req: &StreamRequest, offset: u64, generation: u64) -> Outcome {
    if req.url.starts_with("file:") {
        return match open_file(shared, &req.url, offset).await {
            Ok(body) => pump(shared, body, 0, Some(u64::MAX), generation).await,
            Err(o) => o,
        };
    }
    let origin = request::origin(&req.url);
    let throttles = shared.http.throttles();
    if let Some(t) = throttles.closed(&origin, Kind::Audio, Instant::now()) {
        return Outcome::Wait(t.until);
    }
    let last = chunk_end(shared, offset);
    let range = format!("bytes={offset}-{last}");
    let resp =
        match tokio::time::timeout(CHUNK_TIMEOUT, request::get(&*shared.http, req, &range)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                tracing::debug!("stream request failed: {e}");
                return Outcome::Retry;
            }
            Err(_) => return Outcome::Retry,
        };
    let status = resp.status().as_u16();
    if matches!(status, 429 | 503) {
        let (asked, until) = request::slow_down(&throttles, &origin, &resp);
        tracing::info!(
            "the stream's server answered {status}: no request before {asked:?} (or ours)"
        );
        return Outcome::Wait(until);
    }
    throttles.passed(&origin, Kind::Audio);
    let mut skip: u64 = 0;
    // Before any of the body is read (the hint shrinks as it is).
    let length = resp.content_length();
    let (resp, head) = if matches!(status, 200 | 206) {
        match look_before_decoding(shared, resp, status == 200 || offset == 0).await {
            Ok(answer) => answer,
            Err(o) => return o,
        }
    } else {
        (resp, None)
    };
    let range_total = || {
        resp.headers()
            .get("content-range")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_content_range_total)
    };
    match status {
        206 => headers_came(shared, range_total(), true),
        200 => {
            // Range ignored: the body starts at byte 0.
            headers_came(shared, length, false);
            skip = offset;
        }
        416 => {
            let mut w = shared.lock();
            w.total = range_total().or(Some(offset));
            w.headers_seen = true;
            shared.data_ready.notify_all();
            return Outcome::Done;
        }
        500..=599 => return Outcome::Retry,
        _ => {
            let ct = content_type(&resp);
            return Outcome::Fatal(refused(shared, status, ct, Vec::new(), resp).await);
        }
    }
    let body = Body::Http(resp, head);
    // A 206 ends at `last` (a server that sends more is read on, as far as
    // the window wants it).
    let bounded = (status == 206).then_some(last + 1);
    pump(shared, body, skip, bounded, generation).await
}

/// The last byte of a request at `offset`: as far as the reader wants
/// (its read-ahead), at least `MIN_CHUNK`, never past a known end. A
/// bounded answer ends by itself, so its kept-alive connection goes back
/// to the pool for the next chunk, a seek or an API call, instead of
/// being hung up when far enough ahead.
fn chunk_end(shared: &Shared, offset: u64) -> u64 {
    let w = shared.lock();
    let end = (w.want + shared.read_ahead()).max(offset + MIN_CHUNK);
    match w.total {
        Some(t) if t > offset => end.min(t),
        _ => end,
    }
    .saturating_sub(1)
}

/// Copies `body` into the window (skipping `skip` bytes first), with
/// back-pressure. `until`: the source can restart at any offset, and this
/// answer ends at that byte (`u64::MAX`: a file, read as far as wanted).
async fn pump(
    shared: &Shared,
    mut body: Body,
    mut skip: u64,
    until: Option<u64>,
    generation: u64,
) -> Outcome {
    loop {
        // Back-pressure: wait while far enough ahead of the reader.
        loop {
            let verdict = {
                let w = shared.lock();
                if w.cancel {
                    Some(Outcome::Cancelled)
                } else if w.restart || w.generation != generation {
                    Some(Outcome::Restart)
                } else if skip > 0
                    || until.is_some_and(|u| u != u64::MAX && w.end() < u)
                    || (!w.hold && w.end() < w.want + shared.read_ahead())
                {
                    // A bounded answer is read to its end: the connection
                    // is kept (hanging up would close it).
                    None
                } else {
                    Some(Outcome::Done)
                }
            };
            match verdict {
                // Far enough ahead. With Range support, ask again later
                // (a file, or a server that sent more than asked: hang up).
                Some(Outcome::Done) if until.is_some() => return Outcome::Ahead,
                Some(Outcome::Done) => shared.wake_task.notified().await,
                Some(o) => return o,
                None => break,
            }
        }
        let chunk = match tokio::time::timeout(CHUNK_TIMEOUT, body.chunk()).await {
            Ok(Ok(Some(c))) => c,
            Ok(Ok(None)) => {
                let w = shared.lock();
                return match (w.total, until) {
                    (Some(t), _) if w.end() >= t => Outcome::Done,
                    // The chunk asked for came whole: the next when wanted.
                    (_, Some(u)) if u != u64::MAX && w.end() >= u => Outcome::Ahead,
                    (Some(_), _) => Outcome::Retry,
                    (None, _) => Outcome::Done,
                };
            }
            Ok(Err(e)) => {
                tracing::debug!("stream interrupted: {e}");
                return Outcome::Retry;
            }
            Err(_) => return Outcome::Retry,
        };
        let mut bytes: &[u8] = &chunk;
        if skip > 0 {
            let n = (skip as usize).min(bytes.len());
            bytes = &bytes[n..];
            skip -= n as u64;
            if bytes.is_empty() {
                continue;
            }
        }
        let mut w = shared.lock();
        if w.restart || w.generation != generation {
            return Outcome::Restart;
        }
        w.data.extend_from_slice(bytes);
        w.stalled = false;
        if let Some(head) = head_to_keep(&mut w, until) {
            drop(w);
            heads::keep(shared.key.clone(), head);
            w = shared.lock();
        }
        if w.want > w.start + KEEP_BEHIND {
            let cut = ((w.want - w.start - KEEP_BEHIND) as usize).min(w.data.len());
            if cut > DROP_BEHIND_STEP {
                w.data.drain(..cut);
                w.start += cut as u64;
            }
        }
        shared.data_ready.notify_all();
    }
}
