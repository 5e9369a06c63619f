//! The walk over the library's folders, in order. Before it visits a run of
//! sub-folders, the other cores look ahead: each sub-folder's stamp, or
//! its listing and its own sub-folders' stamps (an unchanged rescan is
//! mostly `statx` of book folders and files). What is handed on, and in
//! which order, is the same as a walk on one core.

use super::stamp::{self, LeafUnchanged, Look, Stamps};
use super::{
    Found, ProbeCache, ScannedBook, file_name, inside, media, natural_cmp, rel, scan_book,
};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A folder with at least this many sub-folders has them looked at ahead,
/// on all cores.
const AHEAD_FROM: usize = 16;
/// Sub-folders looked at ahead per round (bounds what is held).
const ROUND: usize = 512;

/// The state of one walk.
pub(super) struct Walk<'a, 's, 'c> {
    pub(super) root: &'a Path,
    pub(super) cache: &'a mut ProbeCache<'c>,
    pub(super) stored: &'s (dyn Fn(&str) -> Option<&'s str> + Sync),
    pub(super) found: &'a mut dyn FnMut(Found),
    /// Folders visited (symlink loops).
    pub(super) seen: HashSet<PathBuf>,
    pub(super) stamps: Option<Stamps>,
    /// What a look ahead learnt of folders not visited yet.
    pub(super) ahead: HashMap<PathBuf, Ahead>,
    /// Threads a look ahead uses (1: none).
    pub(super) threads: usize,
}

/// What a look ahead learnt of a folder.
pub(super) enum Ahead {
    /// A leaf book folder, unchanged by its stamp.
    Unchanged(LeafUnchanged),
    /// Not unchanged by its stamp: its listing (`None`: unreadable, said).
    Listed(Option<Listing>),
    /// Not unchanged by its stamp; not listed yet.
    Changed,
}

/// A folder's entries as the walk sorts them.
pub(super) struct Listing {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    /// Other files (lower-case name → canonical path inside the library):
    /// cover, `book.toml`.
    others: HashMap<String, PathBuf>,
    /// A symlink can change where it leads without the folder changing.
    has_links: bool,
}

/// Lists `dir` (canonical, inside `root`); `None`, with a warning, when it
/// can't be read.
fn list(root: &Path, dir: &Path) -> Option<Listing> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(err) => {
            tracing::warn!("skipping unreadable folder {}: {err}", dir.display());
            return None;
        }
    };
    let mut l = Listing {
        files: Vec::new(),
        dirs: Vec::new(),
        others: HashMap::new(),
        has_links: false,
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_name().to_str().is_none() {
            tracing::warn!("skipping {}: its name is not valid UTF-8", path.display());
            continue;
        }
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // `dir` is canonical, so only a symlink can lead elsewhere: resolve
        // it, and skip anything that leaves the library.
        let (real, is_dir, is_file) = if kind.is_symlink() {
            l.has_links = true;
            let Some(real) = inside(root, &path) else {
                continue;
            };
            let (d, f) = (real.is_dir(), real.is_file());
            (real, d, f)
        } else {
            (path.clone(), kind.is_dir(), kind.is_file())
        };
        if is_dir {
            l.dirs.push(real);
        } else if is_file && media::mime_for(&path).is_some() {
            l.files.push(path);
        } else if is_file {
            // Canonical: a plain entry of the canonical `dir`, or a checked link.
            l.others.insert(file_name(&path).to_lowercase(), real);
        }
    }
    l.files
        .sort_by(|a, b| natural_cmp(&file_name(a), &file_name(b)));
    l.dirs
        .sort_by(|a, b| natural_cmp(&file_name(a), &file_name(b)));
    Some(l)
}

/// One thread's share of a look ahead.
fn look_ahead_at(look: &Look<'_, '_>, dirs: &[&PathBuf]) -> Vec<(PathBuf, Ahead)> {
    let mut out = Vec::with_capacity(dirs.len());
    for &dir in dirs {
        if let Some(u) = stamp::leaf_unchanged(look, dir) {
            out.push((dir.clone(), Ahead::Unchanged(u)));
            continue;
        }
        let listing = list(look.root, dir);
        for sub in listing.iter().flat_map(|l| &l.dirs) {
            let ahead = stamp::leaf_unchanged(look, sub).map_or(Ahead::Changed, Ahead::Unchanged);
            out.push((sub.clone(), ahead));
        }
        out.push((dir.clone(), Ahead::Listed(listing)));
    }
    out
}

impl Walk<'_, '_, '_> {
    pub(super) fn visit(&mut self, dir: &Path) {
        if !self.seen.insert(dir.to_owned()) {
            return; // a symlink loop inside the library
        }
        let at_root = dir == self.root;
        let listing = match self.ahead.remove(dir) {
            Some(Ahead::Unchanged(u)) => return self.hand_on_unchanged(u),
            Some(Ahead::Listed(listing)) => listing,
            Some(Ahead::Changed) => list(self.root, dir),
            None => {
                if !at_root && let Some(u) = self.leaf_unchanged(dir) {
                    return self.hand_on_unchanged(u);
                }
                list(self.root, dir)
            }
        };
        let Some(Listing {
            files,
            dirs,
            others,
            has_links,
        }) = listing
        else {
            return;
        };

        let all_m4b = files.len() > 1
            && files
                .iter()
                .all(|f| f.extension().is_some_and(|e| e.eq_ignore_ascii_case("m4b")));
        if at_root || all_m4b {
            for file in &files {
                let rel_path = rel(self.root, file);
                let stamp = self.stamp(dir, std::slice::from_ref(file), None, false);
                if !self.unchanged(rel_path, stamp.as_deref(), std::slice::from_ref(file))
                    && let Some(book) =
                        scan_book(self.root, dir, std::slice::from_ref(file), None, self.cache)
                {
                    self.hand_on(book, stamp);
                }
            }
        } else if !files.is_empty() {
            // Only a leaf folder's listing can be known from its metadata.
            let leaf = dirs.is_empty() && !has_links;
            let toml = others.get("book.toml").map(PathBuf::as_path);
            let stamp = self.stamp(dir, &files, toml, leaf);
            if !self.unchanged(rel(self.root, dir), stamp.as_deref(), &files)
                && let Some(book) = scan_book(self.root, dir, &files, Some(&others), self.cache)
            {
                self.hand_on(book, stamp);
            }
        }
        for round in dirs.chunks(ROUND) {
            if dirs.len() >= AHEAD_FROM {
                self.look_ahead(round);
            }
            for sub in round {
                self.visit(sub);
            }
        }
    }

    fn leaf_unchanged(&self, dir: &Path) -> Option<LeafUnchanged> {
        let look = Look {
            root: self.root,
            stamps: self.stamps.as_ref()?,
            stored: self.stored,
        };
        stamp::leaf_unchanged(&look, dir)
    }

    /// Looks at `dirs` ahead of the walk, on `threads` threads.
    fn look_ahead(&mut self, dirs: &[PathBuf]) {
        let Some(stamps) = &self.stamps else {
            return; // nothing to compare with: nothing to gain
        };
        if self.threads < 2 {
            return;
        }
        let look = Look {
            root: self.root,
            stamps,
            stored: self.stored,
        };
        let todo: Vec<&PathBuf> = dirs
            .iter()
            .filter(|d| !self.ahead.contains_key(d.as_path()))
            .collect();
        let share = todo.len().div_ceil(self.threads).max(1);
        let found = std::thread::scope(|s| {
            let others: Vec<_> = todo
                .chunks(share)
                .skip(1)
                .map(|part| s.spawn(move || look_ahead_at(&look, part)))
                .collect();
            let mut found = look_ahead_at(&look, &todo[..share.min(todo.len())]);
            for t in others {
                found.extend(t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            found
        });
        self.ahead.extend(found);
    }

    fn hand_on_unchanged(&mut self, u: LeafUnchanged) {
        for f in u.audio {
            self.cache.seen.insert(f.to_string_lossy().into_owned());
        }
        (self.found)(Found::Unchanged {
            rel_path: u.rel_path,
            chapters: u.chapters,
        });
    }

    fn hand_on(&mut self, mut book: ScannedBook, stamp: Option<String>) {
        book.stamp = stamp.map(|s| format!("{s}n {}\n", book.chapters.len()));
        (self.found)(Found::Book(Box::new(book)));
    }
}
