//! Walks the library folder and groups audio files into books (see
//! "Library scanning" in docs/contract.md). Pure file-system work plus
//! `media::probe`; ids are assigned later by `catalog`.
//!
//! Rules: loose files in the library root are one book each. In a
//! sub-folder, the audio files directly inside it form one book (one file:
//! its embedded chapters; several: one chapter per file, natural order),
//! except a folder holding only several `.m4b` files, where each is a book.
//!
//! A rescan recognises an unchanged book by its stamp (the metadata of its
//! folder and files, see [`Stamp`]) without reading it; a leaf book folder
//! whose own metadata is unchanged is not even listed.

mod book;
mod stamp;
mod walk;

use book::scan_book;

pub use stamp::SETTLE;

use super::media::{self, Probed};
use crate::domain::SeriesRef;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, serde::Serialize)]
pub struct ScannedChapter {
    /// Stable identity within the book: content fingerprint, plus the start
    /// time for embedded chapters.
    pub key: String,
    /// Where it sits: the file's path in the library, plus the start time
    /// for embedded chapters. The fallback identity for a re-tagged file.
    pub place: String,
    pub title: String,
    pub file: PathBuf,
    pub mime: &'static str,
    pub size: u64,
    pub duration_sec: f64,
    /// Start inside the file (embedded chapters), else 0.
    pub start_sec: f64,
    /// End inside the file for embedded chapters; `None` = end of file.
    pub end_sec: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ScannedBook {
    /// Relative path of the book folder or file, '/'-separated.
    pub rel_path: String,
    pub fingerprint: String,
    pub title: String,
    pub author: String,
    pub narrator: Option<String>,
    pub description: Option<String>,
    pub categories: Vec<String>,
    pub series: Vec<SeriesRef>,
    /// Cover image file beside the audio.
    pub cover_file: Option<PathBuf>,
    /// Else an audio file with embedded art, and its fingerprint.
    pub cover_embedded: Option<(PathBuf, String)>,
    pub chapters: Vec<ScannedChapter>,
    /// The metadata the book was read from (`None`: too fresh to trust).
    /// Not part of the signature: a touched file changes the stamp only.
    #[serde(skip)]
    pub stamp: Option<String>,
}

/// What the walk hands on: a book it read, or one whose stamp says it is
/// as stored (not read).
#[derive(Debug)]
pub enum Found {
    Book(Box<ScannedBook>),
    Unchanged { rel_path: String, chapters: usize },
}

/// Bumped whenever what a scan makes of the same files changes (it is in
/// every signature and stamp, so every book is read and compared again).
pub const SCAN_VERSION: &str = "v2";

/// Scans the library, handing each book to `found` as soon as it is read
/// (a rescan keeps only the books that changed, not 100k of them).
/// Problems with single files or folders are logged and skipped; only an
/// unreadable library root is an error.
///
/// `stored` gives the stamp stored for a book path, if any: a book whose
/// stamp is unchanged is handed on as [`Found::Unchanged`].
pub fn scan_library<'s>(
    root: &Path,
    cache: &mut ProbeCache<'_>,
    stored: &'s (dyn Fn(&str) -> Option<&'s str> + Sync),
    found: &mut dyn FnMut(Found),
) -> anyhow::Result<()> {
    let root = fs::canonicalize(root)
        .map_err(|e| anyhow::anyhow!("cannot open library {}: {e}", root.display()))?;
    if !root.is_dir() {
        anyhow::bail!("library {} is not a folder", root.display());
    }
    let header = root
        .to_str()
        .filter(|r| !r.contains('\n'))
        .map(|r| format!("{SCAN_VERSION} {r}\n"));
    let settled_before = std::time::SystemTime::now()
        .checked_sub(SETTLE)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(i64::MIN, |d| d.as_nanos() as i64);
    let mut walk = walk::Walk {
        root: &root,
        cache,
        stored,
        found,
        seen: HashSet::new(),
        stamps: header.map(|header| stamp::Stamps {
            header,
            settled_before,
        }),
        ahead: HashMap::new(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
    };
    walk.visit(&root);
    Ok(())
}

/// What a probe reads; raise it when `Probed` gains something a file must
/// be read again for (1: series tags, name and part from one source; 2:
/// every mp3's frames counted by earmark, not symphonia). Entries of
/// another layout are stale.
pub const PROBE_LAYOUT: u32 = 2;

/// One cached probe: valid while the file keeps its size and mtime and
/// the probe its layout.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct CacheEntry {
    /// 0 in entries written before layouts were recorded.
    #[serde(default)]
    pub layout: u32,
    pub size: u64,
    pub mtime_ns: i64,
    pub with_chapters: bool,
    pub fingerprint: String,
    pub probe: Probed,
}

/// Probe results by absolute path, so a restart does not re-read every
/// file of a large library (an mp3 without a Xing frame count is read
/// whole to count its frames). Loaded when the first file is looked up: a
/// rescan that finds every book unchanged by its stamp never needs it.
#[derive(Default)]
pub struct ProbeCache<'c> {
    pub entries: HashMap<String, CacheEntry>,
    /// Paths probed afresh in this scan (to store).
    pub fresh: HashSet<String>,
    /// Paths seen in this scan (the rest can be dropped).
    pub seen: HashSet<String>,
    load: Option<EntriesLoader<'c>>,
    /// Why loading failed: the scan's results must not be stored.
    pub failed: Option<anyhow::Error>,
}

type EntriesLoader<'c> = Box<dyn FnOnce() -> anyhow::Result<HashMap<String, CacheEntry>> + 'c>;

impl<'c> ProbeCache<'c> {
    /// A cache whose entries `load` reads when first needed.
    pub fn lazy(load: impl FnOnce() -> anyhow::Result<HashMap<String, CacheEntry>> + 'c) -> Self {
        Self {
            load: Some(Box::new(load)),
            ..Self::default()
        }
    }

    /// Whether `entries` holds the stored entries (else nothing was
    /// looked up).
    pub fn loaded(&self) -> bool {
        self.load.is_none()
    }

    /// (probe, fingerprint, size) of a file, from the cache when its size
    /// and mtime are unchanged.
    fn get(&mut self, file: &Path, with_chapters: bool) -> anyhow::Result<(&Probed, String, u64)> {
        if let Some(load) = self.load.take() {
            match load() {
                Ok(entries) => self.entries = entries,
                Err(err) => self.failed = Some(err),
            }
        }
        let meta = fs::metadata(file)?;
        let size = meta.len();
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let key = file.to_string_lossy().into_owned();
        self.seen.insert(key.clone());
        let hit = self.entries.get(&key).is_some_and(|e| {
            e.layout == PROBE_LAYOUT
                && e.size == size
                && e.mtime_ns == mtime_ns
                && e.with_chapters == with_chapters
        });
        if !hit {
            let probe = media::probe(file, with_chapters)?;
            let fingerprint = fingerprint(file, size)?;
            self.fresh.insert(key.clone());
            self.entries.insert(
                key.clone(),
                CacheEntry {
                    layout: PROBE_LAYOUT,
                    size,
                    mtime_ns,
                    with_chapters,
                    fingerprint,
                    probe,
                },
            );
        }
        let entry = &self.entries[&key];
        Ok((&entry.probe, entry.fingerprint.clone(), size))
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn rel(root: &Path, p: &Path) -> String {
    let r = p.strip_prefix(root).unwrap_or(p);
    if std::path::MAIN_SEPARATOR == '/' {
        // Already '/'-separated (the walk's paths are joined names).
        return r.to_string_lossy().into_owned();
    }
    r.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The canonical path of `path` when it resolves inside `root` (which is
/// canonical); else `None`, with a warning naming the file when it leads
/// out of the library. Every symlink the walk meets goes through here;
/// the walk hands on only canonical paths inside the library (cover and
/// `book.toml` are read by those).
pub fn inside(root: &Path, path: &Path) -> Option<PathBuf> {
    match fs::canonicalize(path) {
        Ok(real) if real.starts_with(root) => Some(real),
        Ok(_) => {
            tracing::warn!("skipping {}: it points outside the library", path.display());
            None
        }
        Err(err) => {
            tracing::warn!("skipping {}: {err}", path.display());
            None
        }
    }
}

/// sha256 of the size and the first and last 64 KiB: cheap, and survives
/// renames and moves.
pub fn fingerprint(path: &Path, size: u64) -> std::io::Result<String> {
    const CHUNK: u64 = 64 * 1024;
    let mut f = File::open(path)?;
    let mut hasher = Sha256::new();
    hasher.update(size.to_le_bytes());
    hasher.update(media::read_at(&mut f, 0, CHUNK as usize)?);
    if size > CHUNK {
        let tail = size.saturating_sub(CHUNK).max(CHUNK);
        hasher.update(media::read_at(&mut f, tail, CHUNK as usize)?);
    }
    Ok(hex::encode(&hasher.finalize()[..16]))
}

/// Natural order: digit runs compare by value, the rest case-insensitively.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut a, mut b) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let take = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut s = String::new();
                    while let Some(c) = it.peek().copied().filter(char::is_ascii_digit) {
                        s.push(c);
                        it.next();
                    }
                    s
                };
                let (na, nb) = (take(&mut a), take(&mut b));
                let (ta, tb) = (na.trim_start_matches('0'), nb.trim_start_matches('0'));
                let ord = ta
                    .len()
                    .cmp(&tb.len())
                    .then_with(|| ta.cmp(tb))
                    .then(na.len().cmp(&nb.len()));
                if ord != Ordering::Equal {
                    return ord;
                }
            }
            (Some(x), Some(y)) => {
                let ord = x.to_lowercase().cmp(y.to_lowercase());
                if ord != Ordering::Equal {
                    return ord;
                }
                a.next();
                b.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering;

    #[test]
    fn natural_order_compares_numbers_by_value() {
        assert_eq!(natural_cmp("2.mp3", "10.mp3"), Ordering::Less);
        assert_eq!(natural_cmp("Chapter 9", "chapter 10"), Ordering::Less);
        assert_eq!(natural_cmp("a", "B"), Ordering::Less);
        assert_eq!(natural_cmp("01", "1"), Ordering::Greater);
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
    }
}
