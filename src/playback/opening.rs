//! A book of the session: opened (its complete, current download, else
//! the server's queue: chosen here for every client) or made ready (the
//! book this device played last, at its last place, when a session
//! starts). The download is read from disk at every open, so a book
//! another earmark downloaded meanwhile plays from its files. Reading
//! runs in the background; its answer comes back as [`Resolved`].

use super::owner::{Done, Owner};
use super::{Expect, local};
use crate::api::{ApiError, Client};
use crate::domain::session::{Said, Start};
use crate::domain::{BookId, ChapterId, Manifest, ManifestItem};
use crate::offline::{self, Download, Source, Why};
use std::sync::Arc;

/// The session's book.
#[derive(Debug, Clone)]
pub(super) struct Book {
    pub info: Arc<crate::domain::Book>,
    pub manifest: Arc<Manifest>,
    pub from_download: bool,
    /// Opened in this run (false: ready, not opened yet).
    pub opened: bool,
    /// Where a ready book stands (this device's last place).
    pub ready_at: Option<(ChapterId, f64)>,
    /// Its details are the server's (not only an id or a download's title).
    pub detailed: bool,
    /// It opened from its download because the server was away.
    pub server_away: bool,
}

/// A book read and chosen for an open.
pub(super) struct Resolved {
    /// Which open this answers (a later open wins).
    seq: u64,
    book: BookId,
    start: Start,
    chosen: Result<Chosen, ApiError>,
}

struct Chosen {
    info: crate::domain::Book,
    detailed: bool,
    manifest: Manifest,
    download: Option<Download>,
    why: Why,
}

/// The download of `book` on disk now, if any (file I/O: on the
/// runtime's blocking pool).
async fn download_of(downloads: local::Downloads, book: &BookId) -> Option<Download> {
    let book = book.clone();
    tokio::task::spawn_blocking(move || downloads.read(&book))
        .await
        .unwrap_or(None)
}

impl Chosen {
    /// The session's book: opened now, or (`ready_at`) ready to resume
    /// at this device's last place.
    fn book(self, ready_at: Option<(ChapterId, f64)>) -> Book {
        Book {
            info: Arc::new(self.info),
            manifest: Arc::new(self.manifest),
            from_download: self.download.is_some(),
            opened: ready_at.is_none(),
            ready_at,
            detailed: self.detailed,
            server_away: self.why == Why::ServerUnreachable,
        }
    }
}

/// The server's manifest (or `known`'s) against the download.
async fn choose(
    client: Option<Client>,
    book: &BookId,
    known: Option<Box<(crate::domain::Book, Manifest)>>,
    download: Option<Download>,
) -> Result<Chosen, ApiError> {
    let (info, server) = match known {
        Some(k) => (Some(k.0), Ok(k.1)),
        None => match &client {
            Some(c) => (None, c.manifest(book).await),
            None => (None, Err(ApiError::NotLoggedIn)),
        },
    };
    let (source, why) = offline::choose(server, download.as_ref())?;
    let (manifest, download) = match source {
        Source::Local(m) => (m, download),
        // The server's queue streams: a changed download plays no part.
        Source::Stream(m) => (m, None),
    };
    let detailed = info.is_some();
    let info = info.unwrap_or_else(|| crate::domain::Book {
        id: book.clone(),
        title: download
            .as_ref()
            .and_then(|d| d.snapshot.title.clone())
            .unwrap_or_else(|| book.to_string()),
        ..crate::domain::Book::default()
    });
    Ok(Chosen {
        info,
        detailed,
        manifest,
        download,
        why,
    })
}

impl Owner {
    /// Opens `book` at `start`: reads and chooses in the background, then
    /// [`Owner::opened`] goes on.
    pub(super) fn open(
        &mut self,
        book: BookId,
        start: Start,
        known: Option<Box<(crate::domain::Book, Manifest)>>,
    ) {
        if self.engine.is_none() {
            let why = self.snap.borrow().no_audio.clone().unwrap_or_default();
            return self.say(Said::NoAudio { why });
        }
        self.opens += 1;
        let seq = self.opens;
        let client = self.client.get();
        let downloads = self.downloads.clone();
        let done = self.done.clone();
        tokio::spawn(async move {
            let download = download_of(downloads, &book).await;
            let chosen = choose(client, &book, known, download).await;
            let _ = done.send(Done::Opened(Resolved {
                seq,
                book,
                start,
                chosen,
            }));
        });
    }

    /// The book of an open was read: it opens, or its stop is said.
    pub(super) fn opened(&mut self, r: Resolved) {
        if r.seq != self.opens {
            return;
        }
        // A new open: what stopped the last one is past, and its own
        // failure is said even when it is the same (the license stays
        // until it is valid again).
        self.stopped.retain(|r, _| *r == super::StopReason::License);
        let c = match r.chosen {
            Ok(c) => c,
            Err(e) if e.is_transient() => {
                // Away, and no complete download: nothing to play from.
                self.sync().server_lost(e.to_string());
                let why = e.to_string();
                return self.say(Said::NotDownloaded { book: r.book, why });
            }
            Err(e) => return self.stop(super::stop::stop_of_api(&e), false),
        };
        if c.manifest.items.is_empty() {
            return self.say(Said::NoChapters { book: r.book });
        }
        let start = match r.start {
            // `--at` alone: into the first chapter.
            Start::First(at) => Start::At(c.manifest.items[0].chapter_id.clone(), at),
            s => s,
        };
        if let Start::At(chapter, _) = &start
            && c.manifest.position_of(chapter).is_none()
        {
            let why = format!("chapter {chapter} is not in this book");
            return self.stop(super::Stop::new(super::StopReason::Rejected, why), false);
        }
        let book = r.book;
        if self.book_id().as_ref() != Some(&book) && !self.keep_sleep {
            let acts = self.sleep.forget();
            self.sleep_acts(acts);
        }
        self.keep_sleep = false;
        self.up_next.started(&book);
        match c.why {
            Why::Current => self.say(Said::FromDownload {
                book: book.clone(),
                offline: false,
            }),
            Why::ServerUnreachable => self.say(Said::FromDownload {
                book: book.clone(),
                offline: true,
            }),
            Why::Outdated => self.say(Said::DownloadOutdated { book: book.clone() }),
            Why::NotDownloaded => {}
        }
        self.sound = self.sounds.opening(self.engine.as_ref(), &book);
        if let Some(d) = &c.download {
            self.downloads.put(d.clone());
            if self.indexed.insert(book.clone()) {
                local::index_mp3s(d, &self.seek_maps);
            }
        }
        if start == Start::Resume {
            self.resume_ahead(&book, &c.manifest);
        }
        let manifest = c.manifest.clone();
        self.book = Some(c.book(None));
        self.heard = None;
        self.playing = None;
        self.up_next.work_out(self.book.as_ref().map(|b| &b.info));
        self.sync().open(book, manifest, start);
    }

    /// Resuming: the chapter this device last knew is opened ahead (its
    /// manifest item, so a download resolves to its file and opens
    /// nothing) while sync reads the server's place: one round trip for
    /// both where the place is the same.
    fn resume_ahead(&self, book: &BookId, manifest: &Manifest) {
        if self.playing.as_ref().is_some_and(|p| p.book == *book) {
            // Its stream is open already.
            return;
        }
        let (Some(e), Some(client)) = (&self.engine, self.client.get()) else {
            return;
        };
        let Some(chapter) = self.places.last_place(&client, book).map(|s| s.chapter) else {
            return;
        };
        if let Some(item) = manifest.items.iter().find(|i| i.chapter_id == chapter) {
            e.send(crate::player::Command::OpenAhead(item.clone()));
        }
    }

    /// Start-up of `earmark play`, before the manifest is in: the place is
    /// read and the expected chapter's stream opened, together.
    pub(super) fn open_ahead(&self, book: &BookId, expect: Expect) {
        let Some(client) = self.client.get() else {
            return;
        };
        client.prefetch_progress(book);
        // A download plays from its files: no stream to open ahead.
        let downloaded = self
            .downloads
            .read(book)
            .is_some_and(|d| d.state == crate::offline::DownloadState::Complete);
        let chapter = match expect {
            _ if downloaded => None,
            Expect::Chapter(c) => Some(c),
            Expect::Resume => self.places.last_place(&client, book).map(|s| s.chapter),
            Expect::Unknown => None,
        };
        if let (Some(chapter), Some(e)) = (chapter, &self.engine) {
            let item = ManifestItem {
                chapter_id: chapter,
                ..ManifestItem::whole("", "", None)
            };
            e.send(crate::player::Command::OpenAhead(item));
        }
    }

    /// A session starts holding the book this device played last, ready:
    /// Space resumes it where the server says (contract rule 7).
    pub(super) fn ready_last(&self) {
        let Some(client) = self.client.get() else {
            return;
        };
        let Some((book, spot)) = self.places.last_book(&client) else {
            return;
        };
        let downloads = self.downloads.clone();
        let done = self.done.clone();
        tokio::spawn(async move {
            let download = download_of(downloads, &book).await;
            let known = match client.book(&book).await {
                Ok(info) => match client.manifest(&book).await {
                    Ok(m) => Some(Box::new((info, m))),
                    Err(_) => None,
                },
                Err(_) => None,
            };
            let Ok(c) = choose(Some(client), &book, known, download).await else {
                return;
            };
            let _ = done.send(Done::Ready(c.book(Some((spot.chapter, spot.position)))));
        });
    }

    /// The last book was read: it is the session's, unless one opened.
    pub(super) fn made_ready(&mut self, b: Book) {
        if self.book.is_none() && self.opens == 0 {
            self.up_next.work_out(Some(&b.info));
            self.book = Some(b);
        }
    }

    /// The server's details of a book opened from an id alone (its title
    /// for MPRIS and `ctl status`), read once it plays.
    pub(super) fn want_details(&mut self) {
        let Some(b) = self.book.as_mut().filter(|b| !b.detailed) else {
            return;
        };
        b.detailed = true;
        let (Some(client), id) = (self.client.get(), b.info.id.clone()) else {
            return;
        };
        let done = self.done.clone();
        tokio::spawn(async move {
            if let Ok(info) = client.book(&id).await {
                let _ = done.send(Done::Details(info));
            }
        });
    }

    pub(super) fn details(&mut self, info: crate::domain::Book) {
        if let Some(b) = self.book.as_mut().filter(|b| b.info.id == info.id) {
            b.info = Arc::new(info);
        }
    }
}
