//! What the player keeps of the streams it opened, so that opening one
//! again costs no request for its head:
//! - the head (its first bytes, length and type) of the last few streams
//!   read from byte 0: a seek starts a new pipeline, whose decoder probes
//!   the head from here and whose first request goes where it lands;
//! - a stream opened ahead of its `Load` ([`open_ahead`]): start-up opens
//!   the chapter it expects while the manifest and the place are read, and
//!   the pipeline takes it over when its request is the same.
//!
//! Keyed by URL and headers (another login's token gets nothing of it).

use super::{HttpSource, RefusalJudge, StreamRequest};
use crate::domain::locks::lock;
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes kept of a stream's head: a decoder's probe and first packets
/// (a larger tag, such as a big cover, reads on from the stream).
pub(super) const HEAD_BYTES: u64 = 256 * 1024;
/// Heads kept: the chapter playing, the next, one more.
const HEADS: usize = 3;
/// A stream opened ahead and not taken over within this is dropped.
const PARKED_FOR: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub(super) struct Head {
    pub bytes: std::sync::Arc<[u8]>,
    pub total: Option<u64>,
    pub content_type: Option<String>,
}

struct Kept {
    heads: VecDeque<(String, Head)>,
    parked: Vec<(String, Instant, HttpSource)>,
}

fn kept() -> MutexGuard<'static, Kept> {
    static K: Mutex<Kept> = Mutex::new(Kept {
        heads: VecDeque::new(),
        parked: Vec::new(),
    });
    lock(&K)
}

pub(super) fn key(req: &StreamRequest) -> String {
    let mut k = req.url.clone();
    for (name, value) in &req.headers {
        k.push('\n');
        k.push_str(name);
        k.push(':');
        k.push_str(value);
    }
    k
}

/// Keeps `head` for `key` (the newest first).
pub(super) fn keep(key: String, head: Head) {
    let mut k = kept();
    k.heads.retain(|(have, _)| *have != key);
    k.heads.push_front((key, head));
    k.heads.truncate(HEADS);
}

pub(super) fn head(key: &str) -> Option<Head> {
    kept()
        .heads
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, h)| h.clone())
}

/// The stream opened ahead for `key`, if any (and still whole). It was
/// opened for the next stream the player opens: when that is another
/// (the server's place was elsewhere), it is dropped now, so it takes no
/// share of the link from the one that plays.
pub(super) fn take_parked(key: &str) -> Option<HttpSource> {
    // Taken out under the lock, looked at after it: a stream's own task
    // keeps its head (this lock) while it holds its window's.
    let (src, unused) = {
        let mut k = kept();
        let i = k
            .parked
            .iter()
            .position(|(have, at, _)| have == key && at.elapsed() < PARKED_FOR);
        let src = i.map(|i| k.parked.swap_remove(i).2);
        (src, std::mem::take(&mut k.parked))
    };
    drop(unused);
    src.filter(|s| s.monitor().fatal().is_none())
}

/// Opens `req` from byte 0 now, before anything asks for it: the next
/// pipeline whose stream is the same request takes it over (its head and
/// first chunk may have arrived by then). A stream nobody takes is dropped
/// when the player opens another, when another is opened ahead, or after
/// 30 s.
pub fn open_ahead(
    http: Option<std::sync::Arc<dyn crate::player::StreamPool>>,
    req: StreamRequest,
    stall_after: Duration,
    judge: RefusalJudge,
) {
    let key = key(&req);
    let parked =
        |(k, at, _): &(String, Instant, HttpSource)| *k == key && at.elapsed() < PARKED_FOR;
    // A load asks the server again even where a head is kept: opened
    // ahead, that request is on its way sooner. Opened already: kept.
    if kept().parked.iter().any(parked) {
        return;
    }
    let src = HttpSource::start_on(http, req, stall_after, super::READ_AHEAD_FLOOR, judge);
    let before = std::mem::replace(&mut kept().parked, vec![(key, Instant::now(), src)]);
    drop(before);
}
