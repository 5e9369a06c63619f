//! What the harnesses share: a server's answer read as the client's
//! transport reads it, and a chapter decoded as the player's pipeline
//! decodes it (docs/robustness.md). Every entry point is earmark's public
//! API; nothing here re-implements what it exercises.

use earmark::api::wire;
use earmark::player::decode::{StreamDecoder, StreamHints};
use earmark::player::mpa::{RangeReader, SeekMaps};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io;
use std::sync::Arc;

/// One allocation larger than this aborts the run as a crash (libFuzzer
/// keeps the input): the sanitizer-free build has no `-malloc_limit_mb`.
/// `EARMARK_FUZZ_MAX_ALLOC_MB` changes it (default 64).
struct CappedAlloc;

fn cap() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CAP: AtomicUsize = AtomicUsize::new(0);
    match CAP.load(Ordering::Relaxed) {
        0 => {
            // Reading the environment allocates: the cap is set first.
            CAP.store(usize::MAX, Ordering::Relaxed);
            let mb = std::env::var("EARMARK_FUZZ_MAX_ALLOC_MB")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(64);
            CAP.store(mb << 20, Ordering::Relaxed);
            mb << 20
        }
        c => c,
    }
}

unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > cap() {
            too_big(layout.size());
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > cap() {
            too_big(layout.size());
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > cap() {
            too_big(new_size);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn too_big(size: usize) -> ! {
    // No allocation here: write(2) and abort.
    let msg = b"earmark-fuzz: one allocation over the cap (EARMARK_FUZZ_MAX_ALLOC_MB)\n";
    unsafe { libc_write(2, msg.as_ptr(), msg.len()) };
    let _ = size;
    std::process::abort()
}

unsafe extern "C" {
    #[link_name = "write"]
    fn libc_write(fd: i32, buf: *const u8, n: usize) -> isize;
}

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

/// A 200's body as the transport reads it: JSON, or refused as an HTML
/// page, empty or garbage; an error envelope inside a 200 is read too.
pub fn answer(data: &[u8]) -> Option<Value> {
    let v = wire::parse_body(Some("application/json"), data).ok()?;
    let _ = wire::envelope_error(&v);
    Some(v)
}

/// Bounded range reads over the same bytes (the pipeline's `HttpSource`
/// gives the mp3 demuxer these for its bitrate probes).
struct Ranges(Arc<Vec<u8>>);

impl RangeReader for Ranges {
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Vec<io::Result<Vec<u8>>> {
        ranges
            .iter()
            .map(|&(start, len)| {
                let start = usize::try_from(start)
                    .unwrap_or(usize::MAX)
                    .min(self.0.len());
                let end = start.saturating_add(len).min(self.0.len());
                Ok(self.0[start..end].to_vec())
            })
            .collect()
    }
}

/// Decoded blocks read at most per open (a hostile header may claim
/// hours; a real chapter's blocks come from real bytes).
const MAX_BLOCKS: usize = 4096;

/// Opens `data` as a chapter stream the way the pipeline does (mime hint,
/// the stream's seek map, range reads), decodes it to the end, then seeks
/// to its middle and decodes a little from there.
pub fn decode_chapter(data: &[u8], mime: &str) {
    let bytes = Arc::new(data.to_vec());
    let maps = SeekMaps::default();
    let len = data.len() as u64;
    let open = || {
        let maps = maps.clone();
        let hints = StreamHints {
            mime: Some(mime),
            duration: None,
            seek_map: Some(Box::new(move |first| maps.get("fuzz", len, first))),
            ranges: Some(Box::new(Ranges(bytes.clone()))),
        };
        StreamDecoder::open(Box::new(io::Cursor::new(bytes.to_vec())), hints)
    };
    let Ok(mut dec) = open() else { return };
    for _ in 0..MAX_BLOCKS {
        match dec.next_block() {
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    // A second open of the same stream reuses what the first learned.
    let Ok(mut dec) = open() else { return };
    if let Some(d) = dec.duration().filter(|d| d.is_finite() && *d > 0.0) {
        if dec.seek(d / 2.0).is_ok() {
            for _ in 0..16 {
                match dec.next_block() {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
        }
    }
}
