//! MPEG audio (mp3) demuxing with seeks that land where they say: frame
//! headers and VBR tags ([`frame`]), the byte ↔ frame map of a stream
//! ([`seek_map`]), the demuxer that records and uses it ([`demux`]), and
//! how it reads bytes ([`bytes`]: a read cache, bounded range reads),
//! counting frames beside playback ([`count`]) and complete indexes of
//! local files ([`index`]).
//! Decoding stays with symphonia's mp3 decoder.

pub mod bytes;
pub mod count;
pub mod demux;
pub use crate::domain::mpeg_audio as frame;
pub mod index;
pub mod seek_map;

pub use bytes::RangeReader;
pub use demux::{MpaDemuxer, SharedSeekMap};

use crate::domain::locks::lock;
use std::sync::{Arc, Mutex};

/// Streams whose seek maps are kept.
const KEPT_MAPS: usize = 32;

/// The seek maps of the streams played, by URL and byte length, so a later
/// seek in the same stream knows what earlier playback learned.
#[derive(Clone, Default)]
pub struct SeekMaps(Arc<Mutex<Vec<(String, u64, SharedSeekMap)>>>);

impl SeekMaps {
    /// The map of `url` (of `len` bytes), created empty on first use.
    pub fn get(&self, url: &str, len: u64, first: u64) -> SharedSeekMap {
        let mut maps = lock(&self.0);
        if let Some(i) = maps.iter().position(|m| m.0 == url && m.1 == len) {
            let m = maps.remove(i);
            let map = m.2.clone();
            maps.push(m);
            return map;
        }
        if maps.len() >= KEPT_MAPS {
            maps.remove(0);
        }
        let map = Arc::new(Mutex::new(seek_map::SeekMap::new(first, 0)));
        maps.push((url.to_string(), len, map.clone()));
        map
    }

    /// Replace what is known of `url` (of `len` bytes) by `map`, a
    /// complete index of the same bytes (see [`index`]).
    pub fn install(&self, url: &str, len: u64, map: seek_map::SeekMap) {
        let shared = self.get(url, len, map.first_byte());
        *lock(&shared) = map;
    }
}
