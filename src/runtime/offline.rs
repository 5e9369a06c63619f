//! Downloaded books in the player: the book screen from the download's
//! snapshot while the server is away, the "manifest changed" offer, and
//! the download effect with its gauge. Which books are downloaded, and
//! which chapter plays from disk, is the session owner's (its snapshot
//! says; it looks at the disk again after a download here).

use super::shared::Shared;
use crate::api::ApiError;
use crate::domain::locks::read;
use crate::domain::session::{Event, Said};
use crate::domain::{Book, BookId, Manifest};
use crate::offline::{self, Store};
use crate::ui::state::Answer;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After the book screen asked the server: with the server away, the
/// complete download stands in (answers `true`); with a manifest that
/// differs from the snapshot, the user hears so and is offered the update.
pub(super) fn book_screen(
    sh: &Shared,
    id: &BookId,
    book: &Result<Book, ApiError>,
    manifest: &Result<Manifest, ApiError>,
) -> bool {
    let store = Store::new(&sh.dirs.data);
    let Some(d) = sh
        .scope()
        .and_then(|scope| store.get(&scope, id).ok().flatten())
    else {
        return false;
    };
    let said = match offline::choose(manifest.clone(), Some(&d)) {
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
            Said::FromDownload {
                book: id.clone(),
                offline: true,
            }
        }
        Ok((_, offline::Why::Outdated)) => Said::DownloadOutdated { book: id.clone() },
        _ => return false,
    };
    // Worded by the player as the session's own news.
    let local = matches!(said, Said::FromDownload { .. });
    sh.ui.send(Answer::SessionEvent(Event::Said(said)));
    local
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
    let scope = session.account();
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
    sh.playback
        .tell(crate::ctl::protocol::PlayerAsk::DownloadsChanged);
    sh.ui.send(Answer::DownloadEnded { book, complete });
}
