//! Where downloads live, and what state each one is in.
//!
//! ```text
//! $XDG_DATA_HOME/earmark/offline/
//!   <scope key>/            one per (serverId, user id): every address of
//!                           the server shares it
//!     scope.json            the scope in clear
//!     <book key>/           one per book
//!       snapshot.json       the manifest snapshot and the files it maps to
//!       <file key>.audio    a complete file (its length is in the snapshot)
//!       <file key>.part     a file still being downloaded: never played
//! ```
//! Keys are hashes, so server-chosen ids never become path names. The
//! snapshot and scope files are written atomically and fsynced
//! (`durable::write_atomic`), so a power cut never leaves a torn snapshot;
//! a write that fails says why ([`StoreError::Disk`]: the disk is full,
//! read-only, no permission).
//!
//! A scope directory from before addresses (keyed by address too) is
//! moved under its server's and account's key the first time that scope
//! is used; a book already there stays, and its older copy too.

use crate::domain::{BookId, ChapterId, EpochMillis, Manifest};
use crate::durable::{DiskError, write_atomic};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Whose download this is: files of one server instance and account are
/// never played for another. (The `scope.json` of a directory from before
/// addresses also names the address as `server`.)
pub use crate::domain::Account as Scope;

/// A scope's directory name.
fn key(scope: &Scope) -> String {
    short_hash(&format!("{}\n{}", scope.server_id.as_str(), scope.user_id))
}

fn short_hash(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..10])
}

/// One audio file of a download: the stream it came from and the chapters
/// that play from it (several when chapters are embedded in one file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// The stream URL without any token.
    pub source: String,
    pub chapters: Vec<ChapterId>,
    /// The length the server announced; `None` until it was asked.
    pub length: Option<u64>,
}

impl FileEntry {
    /// The file's name in the book directory (complete).
    pub fn name(&self) -> String {
        format!("{}.audio", short_hash(&self.source))
    }

    pub fn part_name(&self) -> String {
        format!("{}.part", short_hash(&self.source))
    }
}

/// What is stored with the files: the manifest they were downloaded for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub book_id: BookId,
    pub title: Option<String>,
    pub manifest: Manifest,
    pub files: Vec<FileEntry>,
    pub saved_at: EpochMillis,
}

impl Snapshot {
    /// The file a chapter plays from.
    pub fn file_of(&self, chapter: &ChapterId) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.chapters.contains(chapter))
    }
}

/// How far a download got. Only `Complete` is ever played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadState {
    /// Every file is there with the length the server announced.
    Complete,
    /// Some bytes are missing (`have` of `want`, when known).
    Partial { have: u64, want: Option<u64> },
}

impl DownloadState {
    pub fn name(&self) -> &'static str {
        match self {
            DownloadState::Complete => "complete",
            DownloadState::Partial { .. } => "partial",
        }
    }
}

/// One downloaded (or partly downloaded) book.
#[derive(Debug, Clone, PartialEq)]
pub struct Download {
    pub dir: PathBuf,
    pub snapshot: Snapshot,
    pub state: DownloadState,
    /// Bytes on disk (complete and partial files).
    pub bytes: u64,
}

impl Download {
    /// Where a chapter's complete file is; `None` unless the whole book is
    /// complete (a partial download is never played).
    pub fn local_file(&self, chapter: &ChapterId) -> Option<PathBuf> {
        if self.state != DownloadState::Complete {
            return None;
        }
        self.snapshot
            .file_of(chapter)
            .map(|f| self.dir.join(f.name()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot use {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} cannot be read ({message}); remove the download and download it again")]
    Corrupt { path: PathBuf, message: String },
    /// A file of the download cannot be written.
    #[error("{0}")]
    Disk(#[from] DiskError),
    /// The disk filled up while a file was downloaded: its unfinished
    /// part was removed to give the space back.
    #[error(
        "{0}; the unfinished file was removed to free its space: free some space, then download the book again"
    )]
    Full(DiskError),
    /// Checked before the first audio byte.
    #[error("the disk is full: this book needs {} more but {} has only {} free; free some space or remove a download (`earmark downloads remove BOOK_ID`)", crate::offline::human_bytes(*.need), .dir.display(), crate::offline::human_bytes(*.free))]
    NoRoom { dir: PathBuf, need: u64, free: u64 },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The downloads of one data directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// `data_dir` is earmark's data directory; downloads go to `offline/`.
    pub fn new(data_dir: &Path) -> Store {
        Store {
            root: data_dir.join("offline"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn book_dir(&self, scope: &Scope, book: &BookId) -> PathBuf {
        self.root.join(key(scope)).join(short_hash(book.as_str()))
    }

    /// Moves the books of `scope`'s directories from before addresses
    /// (another key, the same serverId and account in their scope file)
    /// under its key. Best effort: what cannot move stays where it was.
    fn adopt_older(&self, scope: &Scope) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        let key = key(scope);
        for old in entries.flatten().map(|e| e.path()) {
            if old.file_name().is_some_and(|n| n == key.as_str()) || !old.is_dir() {
                continue;
            }
            let said: Option<Scope> = std::fs::read(old.join("scope.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            if said.as_ref() != Some(scope) {
                continue;
            }
            if let Err(e) = self.move_books(&old, scope) {
                tracing::warn!("cannot move the downloads of {}: {e}", old.display());
            }
        }
    }

    fn move_books(&self, old: &Path, scope: &Scope) -> Result<(), StoreError> {
        let new = self.root.join(key(scope));
        self.prepare_scope(scope)?;
        for book in std::fs::read_dir(old).map_err(io(old))?.flatten() {
            let to = new.join(book.file_name());
            if book.path().is_dir() && !to.exists() {
                std::fs::rename(book.path(), &to).map_err(io(&to))?;
            }
        }
        let left = std::fs::read_dir(old)
            .map_err(io(old))?
            .flatten()
            .any(|e| e.path().is_dir());
        if !left {
            std::fs::remove_dir_all(old).map_err(io(old))?;
        }
        Ok(())
    }

    /// The scope's directory and its scope file.
    fn prepare_scope(&self, scope: &Scope) -> Result<(), StoreError> {
        let dir = self.root.join(key(scope));
        std::fs::create_dir_all(&dir).map_err(|e| DiskError::new(&dir, e))?;
        let scope_file = dir.join("scope.json");
        if !scope_file.exists() {
            let text = serde_json::to_vec_pretty(scope).expect("a scope serializes");
            write_atomic(&scope_file, &text)?;
        }
        Ok(())
    }

    /// Creates the book's directory (and writes the scope file).
    pub fn prepare(&self, scope: &Scope, book: &BookId) -> Result<PathBuf, StoreError> {
        self.adopt_older(scope);
        let dir = self.book_dir(scope, book);
        std::fs::create_dir_all(&dir).map_err(|e| DiskError::new(&dir, e))?;
        self.prepare_scope(scope)?;
        Ok(dir)
    }

    /// Writes the snapshot next to the files (atomically).
    pub fn save_snapshot(&self, dir: &Path, snapshot: &Snapshot) -> Result<(), StoreError> {
        let text = serde_json::to_vec_pretty(snapshot).expect("a snapshot serializes");
        Ok(write_atomic(&dir.join("snapshot.json"), &text)?)
    }

    /// Fails with [`StoreError::NoRoom`] unless the file system of `dir`
    /// has `need` bytes free for this user. A file system that cannot
    /// tell is taken at its word: the writes themselves say so.
    pub fn check_room(&self, dir: &Path, need: u64) -> Result<(), StoreError> {
        match free_bytes(dir) {
            Some(free) if free < need => Err(StoreError::NoRoom {
                dir: dir.to_owned(),
                need,
                free,
            }),
            _ => Ok(()),
        }
    }

    /// The download of `book` in `scope`, if there is one.
    pub fn get(&self, scope: &Scope, book: &BookId) -> Result<Option<Download>, StoreError> {
        self.adopt_older(scope);
        read_download(&self.book_dir(scope, book))
    }

    /// Every download of `scope`, by title.
    pub fn list(&self, scope: &Scope) -> Result<Vec<Download>, StoreError> {
        self.adopt_older(scope);
        let dir = self.root.join(key(scope));
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&dir)(e)),
        };
        let mut out = Vec::new();
        for e in entries {
            let path = e.map_err(io(&dir))?.path();
            if path.is_dir()
                && let Some(d) = read_download(&path)?
            {
                out.push(d);
            }
        }
        out.sort_by(|a, b| {
            (a.snapshot.title.as_deref(), a.snapshot.book_id.as_str())
                .cmp(&(b.snapshot.title.as_deref(), b.snapshot.book_id.as_str()))
        });
        Ok(out)
    }

    /// Removes a book's files; returns the bytes freed (`None`: none there).
    pub fn remove(&self, scope: &Scope, book: &BookId) -> Result<Option<u64>, StoreError> {
        self.adopt_older(scope);
        let dir = self.book_dir(scope, book);
        if !dir.exists() {
            return Ok(None);
        }
        let bytes = dir_bytes(&dir)?;
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        Ok(Some(bytes))
    }

    /// Bytes all downloads take (every scope).
    pub fn used_bytes(&self) -> Result<u64, StoreError> {
        let mut total = 0;
        let scopes = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(io(&self.root)(e)),
        };
        for s in scopes {
            let path = s.map_err(io(&self.root))?.path();
            if path.is_dir() {
                for b in std::fs::read_dir(&path).map_err(io(&path))? {
                    let b = b.map_err(io(&path))?.path();
                    if b.is_dir() {
                        total += dir_bytes(&b)?;
                    }
                }
            }
        }
        Ok(total)
    }
}

fn dir_bytes(dir: &Path) -> Result<u64, StoreError> {
    let mut total = 0;
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let m = e.map_err(io(dir))?.metadata().map_err(io(dir))?;
        if m.is_file() {
            total += m.len();
        }
    }
    Ok(total)
}

fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// Reads a book directory and works out its state from the files on disk.
fn read_download(dir: &Path) -> Result<Option<Download>, StoreError> {
    let path = dir.join("snapshot.json");
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path)(e)),
    };
    let snapshot: Snapshot = serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let lengths: Vec<(Option<u64>, Option<u64>, Option<u64>)> = snapshot
        .files
        .iter()
        .map(|f| {
            (
                f.length,
                file_len(&dir.join(f.name())),
                file_len(&dir.join(f.part_name())),
            )
        })
        .collect();
    let state = state_of(&lengths);
    Ok(Some(Download {
        dir: dir.to_owned(),
        snapshot,
        state,
        bytes: dir_bytes(dir)?,
    }))
}

/// The state from (announced length, complete file's length, partial
/// file's length) of each file. Pure, so the rule is tested on its own:
/// complete only when every file is complete with the announced length.
pub fn state_of(files: &[(Option<u64>, Option<u64>, Option<u64>)]) -> DownloadState {
    let mut complete = !files.is_empty();
    let mut have = 0u64;
    let mut want = Some(0u64);
    for &(announced, done, part) in files {
        match (announced, done) {
            (Some(a), Some(d)) if a == d => have += d,
            _ => {
                complete = false;
                have += part.unwrap_or(0);
            }
        }
        want = want.zip(announced).map(|(w, a)| w + a);
    }
    if complete {
        DownloadState::Complete
    } else {
        DownloadState::Partial { have, want }
    }
}

/// Bytes an unprivileged user may still write on `dir`'s file system.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs reads the NUL-terminated path and writes only into
    // the struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downloads_kept_per_address_move_under_the_server_and_account() {
        let data = tempfile::tempdir().unwrap();
        let store = Store::new(data.path());
        let scope = crate::offline::fixture::account("s", 1);
        // Two directories from before addresses (home and away), and one of
        // another server.
        let older = |name: &str, server: &str, id: &str, books: &[&str]| {
            let dir = store.root().join(name);
            for b in books {
                std::fs::create_dir_all(dir.join(short_hash(b))).unwrap();
                std::fs::write(dir.join(short_hash(b)).join("snapshot.json"), *b).unwrap();
            }
            let said = serde_json::json!({"server": server, "serverId": id, "userId": 1});
            std::fs::write(dir.join("scope.json"), said.to_string()).unwrap();
        };
        older("home", "http://nas:8686/api/v1", "s", &["b1", "b2"]);
        older("away", "https://vpn/nas/api/v1", "s", &["b2", "b3"]);
        older("other", "http://other:8686/api/v1", "s2", &["b4"]);
        store.adopt_older(&scope);
        let here = |b: &str| {
            store
                .book_dir(&scope, &BookId::new(b))
                .join("snapshot.json")
        };
        for b in ["b1", "b2", "b3"] {
            assert!(here(b).exists(), "{b}");
        }
        assert!(!store.book_dir(&scope, &BookId::new("b4")).exists());
        let left: Vec<String> = std::fs::read_dir(store.root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        // One copy of b2 moved; the other stays where it was (never lost).
        assert_eq!(left.len(), 3, "{left:?}");
        assert!(left.contains(&"other".to_owned()) && left.contains(&key(&scope)));
    }

    #[test]
    fn only_every_file_at_its_announced_length_is_complete() {
        use DownloadState::*;
        let partial = |have, want| Partial { have, want };
        assert_eq!(state_of(&[(Some(10), Some(10), None)]), Complete);
        assert_eq!(
            state_of(&[(Some(10), Some(10), None), (Some(5), None, Some(3))]),
            partial(13, Some(15))
        );
        // A complete file of the wrong length is not complete.
        assert_eq!(state_of(&[(Some(10), Some(9), None)]), partial(0, Some(10)));
        // Never asked: the length is unknown, so it cannot be complete.
        assert_eq!(state_of(&[(None, Some(9), None)]), partial(0, None));
        assert_eq!(state_of(&[]), partial(0, Some(0)));
    }
}
