//! Complete frame indexes of local mp3 files: one sequential pass that
//! parses only frame headers gives an exact point every
//! [`POINT_EVERY`](super::seek_map::POINT_EVERY) frames and the exact end,
//! so every seek in the file is exact. Indexes are cached in memory by
//! path, size and modification time (a changed file is indexed again).

use super::demux::MpaDemuxer;
use super::seek_map::SeekMap;
use super::{SeekMaps, SharedSeekMap};
use crate::domain::locks::lock;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// Files whose indexes are kept.
const KEPT: usize = 64;

type Key = (PathBuf, u64, Option<SystemTime>);

fn cache() -> &'static Mutex<Vec<(Key, SeekMap)>> {
    static C: OnceLock<Mutex<Vec<(Key, SeekMap)>>> = OnceLock::new();
    C.get_or_init(Mutex::default)
}

/// The complete index of the mp3 at `path` (blocking: call it off the
/// audio and UI threads). An error names what could not be read.
pub fn index_file(path: &Path) -> io::Result<SeekMap> {
    let meta = std::fs::metadata(path)?;
    let key: Key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    {
        let c = lock(cache());
        if let Some((_, m)) = c.iter().find(|(k, _)| *k == key) {
            return Ok(m.clone());
        }
    }
    let file = std::fs::File::open(path)?;
    let map: SharedSeekMap = Arc::new(Mutex::new(SeekMap::new(0, 0)));
    let shared = map.clone();
    let mut demux = MpaDemuxer::open(file, Some(meta.len()), move |_| shared, None, None)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    demux.index_to_end()?;
    let done = lock(&map).clone();
    let mut c = lock(cache());
    if c.len() >= KEPT {
        c.remove(0);
    }
    c.push((key, done.clone()));
    Ok(done)
}

impl SeekMaps {
    /// Index the local file `path` in the background and give its index to
    /// the stream `url` (the same bytes, `len` long): every seek in it after
    /// that is exact. The thread's result says whether it worked.
    pub fn index_local_file(
        &self,
        url: &str,
        path: PathBuf,
    ) -> io::Result<std::thread::JoinHandle<io::Result<()>>> {
        let maps = self.clone();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("earmark-mp3-index".into())
            .spawn(move || {
                let len = std::fs::metadata(&path)?.len();
                let index = index_file(&path)?;
                maps.install(&url, len, index);
                Ok(())
            })
    }
}
