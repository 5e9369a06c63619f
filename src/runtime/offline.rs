//! Downloaded books in the player: the markers, the book screen from the
//! snapshot while the server is away, the "manifest changed" offer, and
//! the download effect with its gauge. Which chapter plays from disk is
//! the playback owner's (`playback::LocalIndex`), which gets the index
//! read here.

use super::shared::{Shared, read};
use crate::api::ApiError;
use crate::domain::{Book, BookId, Manifest};
use crate::offline::{self, Download, DownloadState, Scope, Store};
use crate::playback::LocalIndex;
use crate::ui::state::{Answer, DownloadMark};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn marks(books: &[Download]) -> Vec<(BookId, DownloadMark)> {
    books
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

/// Re-reads the downloads and tells the UI.
pub(super) async fn refresh(sh: Arc<Shared>) {
    let (dirs, session) = {
        let l = read(&sh.login);
        (sh.dirs.clone(), l.session.clone())
    };
    let index = tokio::task::spawn_blocking(move || LocalIndex::load(&dirs, session.as_ref()))
        .await
        .unwrap_or_default();
    let marks = marks(index.books());
    sh.playback.set_downloads(index);
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
    let Some(d) = sh.playback.download(id) else {
        return false;
    };
    let server = match manifest {
        Ok(m) => Ok(m.clone()),
        Err(e) => Err(e.clone()),
    };
    match offline::choose(server, Some(&d)) {
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
            sh.fail("The download stopped", &e);
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
