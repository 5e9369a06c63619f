//! Where a chapter's audio comes from, in one stream resolver for every
//! client: a complete download's file when the item the engine got is the
//! download snapshot's own item, else the current login's stream. The
//! downloads on disk ([`Downloads`]) are looked at again every few
//! seconds, at every open and when the server goes away, so a download
//! another earmark finished counts at once. Downloaded mp3s are indexed
//! here while they play, so every seek in them is exact.

use super::CurrentClient;
use super::owner::{Done, Owner};
use crate::config::{Dirs, Session};
use crate::domain::session::Downloaded;
use crate::domain::{BookId, ChapterId, EpochMillis, ManifestItem, now_millis};
use crate::offline::{Download, DownloadState, Scope, Store};
use crate::player::mpa::SeekMaps;
use crate::player::{StreamRequest, StreamResolver};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

/// How often the downloads on disk are looked at again.
const LOOK_EVERY_MS: EpochMillis = 5_000;

/// The login's downloads on disk, as the owner knows them.
#[derive(Clone)]
pub(super) struct Downloads {
    store: Store,
    scope: Option<Scope>,
    index: Arc<RwLock<LocalIndex>>,
    marks: Arc<BTreeMap<BookId, Downloaded>>,
    next_look: EpochMillis,
}

impl Downloads {
    pub fn new(dirs: &Dirs, session: Option<&Session>) -> Downloads {
        Downloads {
            store: Store::new(&dirs.data),
            scope: session.map(Session::account),
            index: Arc::default(),
            marks: Arc::default(),
            next_look: now_millis(),
        }
    }

    /// What the stream resolver plays from.
    pub fn index(&self) -> Arc<RwLock<LocalIndex>> {
        self.index.clone()
    }

    pub fn marks(&self) -> Arc<BTreeMap<BookId, Downloaded>> {
        self.marks.clone()
    }

    pub fn log_in(&mut self, session: Option<&Session>) {
        self.scope = session.map(Session::account);
        self.set(Vec::new());
    }

    /// The download of `book` on disk now (file I/O: off the owner's task).
    pub fn read(&self, book: &BookId) -> Option<Download> {
        let scope = self.scope.as_ref()?;
        self.store.get(scope, book).unwrap_or_else(|e| {
            tracing::warn!("the download of {book} cannot be used: {e}");
            None
        })
    }

    /// Every download on disk now (file I/O: off the owner's task).
    fn list(&self) -> Vec<Download> {
        let Some(scope) = &self.scope else {
            return Vec::new();
        };
        self.store.list(scope).unwrap_or_else(|e| {
            tracing::warn!("downloads cannot be read: {e}");
            Vec::new()
        })
    }

    /// One download as read at an open.
    pub fn put(&mut self, d: Download) {
        let mut all = super::read(&self.index).books.clone();
        all.retain(|x| x.snapshot.book_id != d.snapshot.book_id);
        all.push(d);
        self.set(all);
    }

    /// The downloads on disk; the books newly complete.
    fn set(&mut self, books: Vec<Download>) -> Vec<BookId> {
        let marks: BTreeMap<BookId, Downloaded> = books
            .iter()
            .map(|d| {
                let m = match d.state {
                    DownloadState::Complete => Downloaded::Complete,
                    DownloadState::Partial { .. } => Downloaded::Partial,
                };
                (d.snapshot.book_id.clone(), m)
            })
            .collect();
        let appeared = marks
            .iter()
            .filter(|(b, m)| **m == Downloaded::Complete && self.marks.get(*b) != Some(m))
            .map(|(b, _)| b.clone())
            .collect();
        if marks != *self.marks {
            self.marks = Arc::new(marks);
        }
        *super::write(&self.index) = LocalIndex::of(books);
        appeared
    }

    pub fn next_look(&self) -> EpochMillis {
        self.next_look
    }

    pub fn look_due(&self) -> bool {
        now_millis() >= self.next_look
    }
}

impl Owner {
    /// Reads the downloads on disk again, in the background.
    pub(super) fn look_at_downloads(&mut self) {
        self.downloads.next_look = now_millis() + LOOK_EVERY_MS;
        let (downloads, done) = (self.downloads.clone(), self.done.clone());
        tokio::task::spawn_blocking(move || {
            let _ = done.send(Done::Downloads(downloads.list()));
        });
    }

    pub(super) fn downloads_read(&mut self, books: Vec<Download>) {
        let first = self.downloads.marks.is_empty();
        for book in self.downloads.set(books) {
            if !first {
                self.say(crate::domain::session::Said::DownloadAppeared { book });
            }
        }
    }
}

/// The complete downloads the resolver plays from (the logged-in scope's
/// in the player, the one book's in `earmark play`).
#[derive(Debug, Default)]
pub(super) struct LocalIndex {
    chapters: HashMap<ChapterId, (ManifestItem, PathBuf)>,
    books: Vec<Download>,
}

impl LocalIndex {
    /// An index of these downloads (only complete ones are played).
    fn of(books: Vec<Download>) -> LocalIndex {
        let mut chapters = HashMap::new();
        for d in books.iter().filter(|d| d.state == DownloadState::Complete) {
            for item in &d.snapshot.manifest.items {
                if let Some(path) = d.local_file(&item.chapter_id) {
                    chapters.insert(item.chapter_id.clone(), (item.clone(), path));
                }
            }
        }
        LocalIndex { chapters, books }
    }

    /// The local file for `item`, only when it is the snapshot's item.
    fn resolve(&self, item: &ManifestItem) -> Option<StreamRequest> {
        let (snap, path) = self.chapters.get(&item.chapter_id)?;
        if snap != item {
            return None;
        }
        let url = url::Url::from_file_path(path).ok()?.to_string();
        Some(StreamRequest {
            url,
            headers: Vec::new(),
        })
    }
}

/// The engine reads the current client for every stream, so a new login
/// applies to the next chapter without a restart, and so does the address
/// in use (noted in `from`). A chapter of a complete download plays from
/// disk.
pub(super) fn resolver(
    downloads: Arc<RwLock<LocalIndex>>,
    client: CurrentClient,
    from: super::address::StreamingFrom,
) -> StreamResolver {
    Arc::new(move |item| {
        if let Some(local) = super::read(&downloads).resolve(item) {
            from.set(None);
            return local;
        }
        match client.get() {
            Some(c) => {
                from.set(Some(c.base()));
                let r = c.stream_request(item);
                StreamRequest {
                    url: r.url.to_string(),
                    headers: r.headers,
                }
            }
            None => StreamRequest {
                url: item.url.clone().unwrap_or_default(),
                headers: Vec::new(),
            },
        }
    })
}

/// Indexes the download's mp3 files in the background, one after the
/// other, and gives each index to `maps` under the URL the resolver plays:
/// every seek in a downloaded mp3 is then exact, TOC or not (issue 14).
/// A file that cannot be indexed keeps the streaming seeks.
pub(super) fn index_mp3s(download: &Download, maps: &SeekMaps) {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for item in &download.snapshot.manifest.items {
        let Some(path) = download.local_file(&item.chapter_id) else {
            continue;
        };
        let mp3 = item.mime_type.as_deref() == Some("audio/mpeg")
            || path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("mp3"));
        let Ok(url) = url::Url::from_file_path(&path) else {
            continue;
        };
        // Embedded chapters share one file: index it once.
        if mp3 && !files.iter().any(|(_, p)| *p == path) {
            files.push((url.to_string(), path));
        }
    }
    if files.is_empty() {
        return;
    }
    let maps = maps.clone();
    // A short-lived thread (not a task): indexing is blocking file I/O.
    let spawned = std::thread::Builder::new()
        .name("earmark-mp3-index".into())
        .spawn(move || {
            for (url, path) in files {
                let indexed = std::fs::metadata(&path).and_then(|meta| {
                    crate::player::mpa::index::index_file(&path).map(|map| (meta.len(), map))
                });
                match indexed {
                    Ok((len, map)) => maps.install(&url, len, map),
                    Err(e) => tracing::warn!("cannot index {}: {e}", path.display()),
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start indexing the download: {e}");
    }
}
