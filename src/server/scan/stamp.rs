//! Stamps: what a book's files' metadata says, so that a rescan knows an
//! unchanged book without reading it (see `leaf_unchanged`).

use super::walk::Walk;
use super::{Found, rel};
use std::fs;
use std::path::{Path, PathBuf};

/// How long a file must have been left alone (by its change time, which
/// nothing can set back) before its metadata is trusted to stand for its
/// content: a write in the same clock tick as the scan's look at it could
/// otherwise leave size and times as they were.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// What identifies a file's content without reading it. A write changes
/// the times; a replacement, the inode; `chmod` also the change time
/// (harmless: the book is read again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileStat {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
}

impl FileStat {
    #[cfg(unix)]
    fn of(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Self {
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }

    /// Without a change time nothing is ever trusted (`ctime` in the future).
    #[cfg(not(unix))]
    fn of(meta: &fs::Metadata) -> Self {
        Self {
            size: meta.len(),
            mtime_ns: 0,
            ctime_ns: i64::MAX,
            ino: 0,
        }
    }

    /// One stamp line: kind, metadata, name.
    fn line(&self, kind: char, name: &str) -> String {
        let FileStat {
            size,
            mtime_ns,
            ctime_ns,
            ino,
        } = self;
        format!("{kind} {size} {mtime_ns} {ctime_ns} {ino} {name}\n")
    }
}

/// Stamps are made when the library root's path can be written in one
/// line; `settled_before` is [`SETTLE`] before the scan started (ns).
pub(super) struct Stamps {
    pub(super) header: String,
    pub(super) settled_before: i64,
}

impl Walk<'_, '_, '_> {
    /// The stamp of a book about to be read: the folder (when `leaf`, so
    /// that an unchanged folder need not be listed again), each audio file
    /// and `book.toml`. `None` when something is too fresh to trust or
    /// cannot be read or written in one line.
    pub(super) fn stamp(
        &self,
        dir: &Path,
        files: &[PathBuf],
        toml: Option<&Path>,
        leaf: bool,
    ) -> Option<String> {
        let stamps = self.stamps.as_ref()?;
        let stat = |path: &Path| {
            let stat = FileStat::of(&fs::metadata(path).ok()?);
            (stat.ctime_ns < stamps.settled_before).then_some(stat)
        };
        let mut out = stamps.header.clone();
        if leaf {
            out.push_str(&stat(dir)?.line('d', ""));
        } else {
            out.push_str("d -\n");
        }
        let named = files
            .iter()
            .map(|f| ('a', f.as_path()))
            .chain(toml.map(|t| ('t', t)));
        for (kind, path) in named {
            let name = path.file_name()?.to_str()?;
            if name.contains('\n') {
                return None;
            }
            out.push_str(&stat(path)?.line(kind, name));
        }
        Some(out)
    }

    /// Hands on a book as unchanged when its stamp is the stored one (the
    /// stored one ends with the chapter count).
    pub(super) fn unchanged(
        &mut self,
        rel_path: String,
        stamp: Option<&str>,
        files: &[PathBuf],
    ) -> bool {
        let Some(stamp) = stamp else {
            return false;
        };
        let Some(chapters) = (self.stored)(&rel_path)
            .and_then(|s| s.strip_prefix(stamp))
            .and_then(|rest| rest.strip_prefix("n "))
            .and_then(|n| n.trim_end().parse().ok())
        else {
            return false;
        };
        for f in files {
            self.cache.seen.insert(f.to_string_lossy().into_owned());
        }
        (self.found)(Found::Unchanged { rel_path, chapters });
        true
    }
}

/// A leaf book folder found unchanged by its stamp.
pub(super) struct LeafUnchanged {
    pub(super) rel_path: String,
    pub(super) chapters: usize,
    pub(super) audio: Vec<PathBuf>,
}

/// What checking a folder's stamp reads; shared by the walk's threads.
#[derive(Clone, Copy)]
pub(super) struct Look<'a, 's> {
    pub(super) root: &'a Path,
    pub(super) stamps: &'a Stamps,
    pub(super) stored: &'s (dyn Fn(&str) -> Option<&'s str> + Sync),
}

/// A leaf book folder whose stored stamp names its metadata: unchanged
/// when that and every file's metadata are (no listing, no file read).
pub(super) fn leaf_unchanged(look: &Look<'_, '_>, dir: &Path) -> Option<LeafUnchanged> {
    let rel_path = rel(look.root, dir);
    let stored = (look.stored)(&rel_path)?;
    let body = stored.strip_prefix(look.stamps.header.as_str())?;
    let mut lines = body.lines();
    let same = |path: &Path, line: &str, kind: char, name: &str| {
        fs::metadata(path)
            .is_ok_and(|m| FileStat::of(&m).line(kind, name).strip_suffix('\n') == Some(line))
    };
    if !lines
        .next()
        .is_some_and(|d| d.starts_with("d ") && same(dir, d, 'd', ""))
    {
        return None;
    }
    let mut audio = Vec::new();
    let mut chapters = None;
    for line in lines {
        let mut parts = line.splitn(6, ' ');
        match (parts.next(), parts.nth(4)) {
            (Some("n"), _) => chapters = line[2..].parse().ok(),
            (Some(kind @ ("a" | "t")), Some(name)) => {
                let path = dir.join(name);
                let kind = if kind == "a" { 'a' } else { 't' };
                if !same(&path, line, kind, name) {
                    return None;
                }
                if kind == 'a' {
                    audio.push(path);
                }
            }
            _ => return None,
        }
    }
    Some(LeafUnchanged {
        rel_path,
        chapters: chapters?,
        audio,
    })
}
