//! Downloaded books in the player: the index the engine's resolver reads
//! (a chapter plays from disk when the download is complete and the item
//! the engine got equals the snapshot's), the book screen from the
//! snapshot while the server is away, the "manifest changed" offer, and
//! the download effect with its gauge.

use super::live::{Shared, read, write};
use crate::api::ApiError;
use crate::config::{Dirs, Session};
use crate::domain::{Book, BookId, ChapterId, Manifest, ManifestItem};
use crate::offline::{self, Download, DownloadState, Scope, Store};
use crate::player::StreamRequest;
use crate::ui::state::{Answer, DownloadMark};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The complete downloads of the logged-in scope.
#[derive(Debug, Default)]
pub(crate) struct LocalIndex {
    chapters: HashMap<ChapterId, (ManifestItem, PathBuf)>,
    books: Vec<Download>,
}

impl LocalIndex {
    /// Reads the store (file I/O: call it off the UI thread).
    pub(crate) fn load(dirs: &Dirs, session: Option<&Session>) -> LocalIndex {
        let Some(session) = session else {
            return LocalIndex::default();
        };
        let books = Store::new(&dirs.data)
            .list(&Scope::of(session))
            .unwrap_or_else(|e| {
                tracing::warn!("downloads cannot be read: {e}");
                Vec::new()
            });
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

    /// The complete download of `book`, if there is one.
    pub(crate) fn complete(&self, book: &BookId) -> Option<Download> {
        self.books
            .iter()
            .find(|d| d.state == DownloadState::Complete && d.snapshot.book_id == *book)
            .cloned()
    }

    /// The local file for `item`, only when it is the snapshot's item.
    pub(crate) fn resolve(&self, item: &ManifestItem) -> Option<StreamRequest> {
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

    fn get(&self, id: &BookId) -> Option<&Download> {
        self.books.iter().find(|d| &d.snapshot.book_id == id)
    }

    fn marks(&self) -> Vec<(BookId, DownloadMark)> {
        self.books
            .iter()
            .map(|d| {
                let m = match d.state {
                    DownloadState::Complete => DownloadMark::Complete,
                    DownloadState::Partial { .. } => DownloadMark::Partial,
                };
                (d.snapshot.book_id.clone(), m)
            })
            .collect()
    }
}

/// Re-reads the downloads and tells the UI.
pub(super) async fn refresh(sh: Arc<Shared>) {
    let (dirs, session) = {
        let l = read(&sh.login);
        (sh.dirs.clone(), l.session.clone())
    };
    let index = tokio::task::spawn_blocking(move || LocalIndex::load(&dirs, session.as_ref()))
        .await
        .unwrap_or_default();
    let marks = index.marks();
    *write(&sh.downloads) = index;
    sh.ui.send(Answer::Downloads(marks));
}

/// After the book screen asked the server: with the server away, the
/// complete download stands in (answers `true`); with a manifest that
/// differs from the snapshot, the user hears so and is offered the update.
pub(super) fn book_screen(
    sh: &Shared,
    id: &BookId,
    book: &Result<Book, ApiError>,
    manifest: &Result<Manifest, ApiError>,
) -> bool {
    let index = read(&sh.downloads);
    let Some(d) = index.get(id) else {
        return false;
    };
    let server = match manifest {
        Ok(m) => Ok(m.clone()),
        Err(e) => Err(e.clone()),
    };
    match offline::choose(server, Some(d)) {
        Ok((offline::Source::Local(m), offline::Why::ServerUnreachable)) => {
            let book = match book {
                Ok(b) => b.clone(),
                Err(_) => Book {
                    id: id.clone(),
                    title: d.snapshot.title.clone().unwrap_or_else(|| id.to_string()),
                    ..Book::default()
                },
            };
            sh.ui.send(Answer::BookFromDownload { book, manifest: m });
            sh.ui.send(Answer::Notice(
                "The server cannot be reached: this book plays from its download.".into(),
            ));
            true
        }
        Ok((_, offline::Why::Outdated)) => {
            sh.ui.send(Answer::Notice(
                "The server's chapters of this book changed since it was downloaded: it streams. Press D to update the download.".into(),
            ));
            false
        }
        _ => false,
    }
}

/// `Effect::Download`: downloads the book with a gauge (a few updates a
/// second), then re-reads what is on disk.
pub(super) async fn download(sh: Arc<Shared>, book: BookId) {
    let (client, session, limit) = {
        let l = read(&sh.login);
        (
            l.client.clone(),
            l.session.clone(),
            l.profile.download_limit,
        )
    };
    let (Some(client), Some(session)) = (client, session) else {
        sh.ui
            .send(Answer::Failed("Log in to download books.".into()));
        sh.ui.send(Answer::DownloadEnded {
            book,
            complete: false,
        });
        return;
    };
    let store = Store::new(&sh.dirs.data);
    let options = offline::Options { limit, rate: None };
    let mut last = Instant::now() - Duration::from_secs(1);
    let ui = sh.ui.clone();
    let id = book.clone();
    let mut gauge = |p: offline::Progress| {
        if last.elapsed() >= Duration::from_millis(250) || p.done == p.total {
            last = Instant::now();
            ui.send(Answer::DownloadProgress {
                book: id.clone(),
                done: p.done,
                total: p.total,
            });
        }
    };
    let scope = Scope::of(&session);
    let r = offline::download(&client, &store, &scope, &book, &options, &mut gauge).await;
    let complete = match r {
        Ok(_) => true,
        Err(offline::DownloadError::Api(e)) => {
            super::api::fail(&sh, "The download stopped", &e);
            false
        }
        Err(e) => {
            sh.ui
                .send(Answer::Failed(format!("The download stopped: {e}")));
            false
        }
    };
    refresh(sh.clone()).await;
    sh.ui.send(Answer::DownloadEnded { book, complete });
}
