//! The worker's side of playback: opening a book, asking the playback
//! owner to load the engine where the reconciler says ([`EngineAsk`]),
//! following the engine's states (a license refusal on a stream stops all
//! sync; a 403 without the code is checked against the license status),
//! per-book speed and volume, and marking a book (playing or not) finished.

use super::{Opened, Told, Worker};
use crate::api::ProgressRead;
use crate::domain::PlaybackSettings;
use crate::domain::session::NotMarked;
use crate::domain::{BookId, ChapterId, Manifest, Progress, now_millis};
use crate::sync::engine_bridge::Heard;
use crate::sync::outbox::QueuedSettings;
use crate::sync::outbox::{Op, QueuedProgress, Scope};
use crate::sync::reconciler::{Action, Event, Intent, PlaybackId, Spot};
use crate::sync::remote::Failure;
use crate::sync::session::{EngineAsk, Playing, StartAt, SyncNews};

/// How long a resume (or a paused seek) waits for the server's place
/// before playback goes on from this device's, marked unconfirmed.
const GATE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl Worker {
    pub(super) fn open(&mut self, book: BookId, manifest: Manifest, start: StartAt) {
        // The owner opens only what plays (an engine, chapters).
        if self.engine.is_none() || manifest.items.is_empty() {
            return;
        }
        self.next_playback += 1;
        let playback = PlaybackId(self.next_playback);
        self.asked = (None, None);
        let restart = start == StartAt::Restart;
        let before = self.place_before_opening(&book);
        let saved_at = self
            .scope
            .as_ref()
            .and_then(|scope| self.cache.progress(scope, &book))
            .map(|l| l.updated_at);
        self.opened = Some(Opened {
            playback,
            book: book.clone(),
            manifest: manifest.clone(),
            start,
            loaded: false,
            before,
            saved_at,
        });
        self.event(Event::BookOpened {
            playback,
            book,
            manifest,
            local: None,
        });
        if restart {
            self.event(Event::Intent {
                playback,
                intent: Intent::RestartBook,
            });
        }
    }

    /// The listener asked to play on after a pause: the reconciler reads
    /// the server's place first (or plays on at once).
    pub(super) fn resume(&mut self) {
        let ours = self
            .opened
            .as_ref()
            .map(|o| o.playback)
            .filter(|p| self.rec.current_playback().is_some_and(|(c, _)| c == *p));
        match ours {
            Some(playback) => {
                if self.link == crate::sync::Link::Online && !self.rec.is_online() {
                    // Online again since a read failed: read it again.
                    self.event(Event::Online);
                }
                self.event(Event::ResumeAsked { playback })
            }
            // Nothing of sync's plays: the engine plays on.
            None => {
                if let Some(e) = &self.engine {
                    e.ask(EngineAsk::Play);
                }
            }
        }
    }

    /// Asks the engine, when `playback` is the opened book's.
    pub(super) fn ask_if_ours(&self, playback: PlaybackId, ask: EngineAsk) {
        if self.opened.as_ref().is_some_and(|o| o.playback == playback)
            && let Some(e) = &self.engine
        {
            e.ask(ask);
        }
    }

    /// The reconciler's "load (or move) the engine here".
    pub(super) fn load_at(&mut self, playback: PlaybackId, spot: Spot) {
        let Some(engine) = self.engine.clone() else {
            return;
        };
        let Some(opened) = self.opened.as_mut().filter(|o| o.playback == playback) else {
            return;
        };
        let first_load = !opened.loaded;
        let first = opened.manifest.items.first().map(|i| i.chapter_id.clone());
        let (start, picked): ((ChapterId, f64), bool) = match (&opened.start, first) {
            (StartAt::At(c, p), _) if first_load => ((c.clone(), *p), true),
            (StartAt::First(p), Some(first)) if first_load => ((first, *p), true),
            (StartAt::Restart, Some(first)) if first_load => ((first, 0.0), false),
            _ => ((spot.chapter, spot.position), false),
        };
        let user_seek = picked.then(|| Spot::new(start.0.clone(), start.1));
        if !first_load {
            // A conflict choice (or a restore after an offline open) moves
            // the place under the listener: where they were goes to history.
            self.mark_moved(&start, crate::domain::JumpCause::Restore);
            engine.ask(EngineAsk::Seek {
                chapter: start.0,
                position: start.1,
            });
            return;
        }
        opened.loaded = true;
        let cause = match &opened.start {
            StartAt::At(..) | StartAt::First(_) => crate::domain::JumpCause::Chapter,
            StartAt::Restart => crate::domain::JumpCause::Restart,
            StartAt::Resume => crate::domain::JumpCause::Restore,
        };
        let book = opened.book.clone();
        let manifest = opened.manifest.clone();
        let before = opened.before.take();
        let resumes = matches!(opened.start, StartAt::Resume);
        let saved_before = opened.saved_at.take();
        self.record_move(book.clone(), before, &start, cause);
        if let Some(spot) = user_seek {
            // The user picked the place: an explicit seek for sync.
            self.event(Event::Action {
                playback,
                action: Action::Seek(spot),
            });
        }
        // Resuming: when the place was last saved (before this open, or by
        // the server's answer since), for smart rewind after a break.
        let saved_at = match (resumes, &self.scope) {
            (true, Some(scope)) => self
                .cache
                .progress(scope, &book)
                .map(|l| l.updated_at)
                .max(saved_before),
            _ => None,
        };
        let saved = self
            .scope
            .as_ref()
            .and_then(|scope| self.cache.settings(scope, &book));
        if saved.is_none() && self.asked.0.is_none() {
            // Nothing saved for it: the default speed, not the last book's.
            self.asked.0 = Some(1.0);
            engine.ask(EngineAsk::Speed(1.0));
        }
        let bridge = &mut self.bridge;
        let id = engine.load(manifest, start, |id| bridge.loading_as(playback, id));
        self.playing = Some(Playing {
            book,
            engine: id,
            saved_at,
        });
        // Whoever draws labels the engine's states with this book: now,
        // not after the network calls of this round.
        self.publish();
    }

    /// One engine state the owner heard: reconciler events, and the time
    /// listened.
    pub(super) fn engine_state(&mut self, s: Heard) {
        for e in self.bridge.events(&s) {
            self.event(e);
        }
        self.count_listening(&s);
        self.engine_now = Some(s);
    }

    /// Speed or volume changed by the user: asked of the engine now, and
    /// saved for the opened book (the value not given is the engine's).
    pub(super) fn settings(&mut self, speed: Option<f32>, volume: Option<f32>) {
        if let Some(engine) = &self.engine {
            if let Some(s) = speed {
                engine.ask(EngineAsk::Speed(s));
            }
            if let Some(v) = volume {
                engine.ask(EngineAsk::Volume(v));
            }
        }
        let Some(book) = self.opened.as_ref().map(|o| o.book.clone()) else {
            return;
        };
        // The other value: what was last asked of the engine for this book
        // (it may not have published it yet), else what it plays at.
        let now = self.engine_now.clone();
        let speed = speed
            .or(self.asked.0)
            .or(now.as_ref().map(|s| s.speed))
            .unwrap_or(1.0);
        let volume = volume.or(self.asked.1).or(now.as_ref().map(|s| s.volume));
        self.asked = (Some(speed), volume);
        let q = queued_settings(speed, volume);
        if let Some(scope) = &self.scope {
            let settings = crate::domain::PlaybackSettings {
                speed: q.speed,
                volume: q.volume,
                client_updated_at: Some(q.client_updated_at),
            };
            self.cache.set_settings(scope, &book, &settings);
        }
        self.queue(book, Op::SettingsWrite(q));
    }

    /// Marks a book finished or unfinished. The open book goes through the
    /// reconciler's intent (at the landed place); another book is marked at
    /// the server's place (offline: the place this device last knew), and
    /// the write is journaled like any other.
    pub(super) async fn mark_finished(&mut self, book: BookId, finished: bool) {
        self.listening
            .finished(book.clone(), finished, now_millis());
        if let Some(o) = self.opened.as_ref().filter(|o| o.book == book) {
            let playback = o.playback;
            let intent = if finished {
                Intent::MarkFinished
            } else {
                Intent::MarkUnfinished
            };
            self.event(Event::Intent { playback, intent });
            return;
        }
        self.requests += 2;
        let (progress, manifest) =
            tokio::join!(self.remote.fetch(&book, None), self.remote.manifest(&book));
        let offline = matches!(&progress, Err(Failure::Retry(_)));
        if let Err(Failure::License(m)) = &progress {
            self.license_blocked(m.clone());
            return;
        }
        if let Ok(crate::api::ProgressRead::Unreadable { .. }) = &progress {
            self.news(SyncNews::NotMarked(NotMarked::PlaceUnreadable));
            return;
        }
        let mut place = match (progress, manifest) {
            (Ok(read), _) if read.progress().is_some() => {
                read.progress().map(|p| (p.chapter_id.clone(), p.position))
            }
            // Only a server that answered "no progress" means the start.
            (Ok(_), Ok(m)) => m.items.first().map(|i| (i.chapter_id.clone(), 0.0)),
            _ => None,
        };
        if place.is_none()
            && offline
            && let Some(scope) = &self.scope
        {
            place = self
                .cache
                .progress(scope, &book)
                .map(|l| (l.spot.chapter, l.spot.position));
        }
        let Some((chapter, position)) = place else {
            self.news(SyncNews::NotMarked(match offline {
                true => NotMarked::OfflineUnknown,
                false => NotMarked::NoChapters,
            }));
            return;
        };
        let at = now_millis();
        if let Some(scope) = self.scope.clone() {
            let spot = Spot::new(chapter.clone(), position);
            self.cache.set_progress(&scope, &book, &spot, finished, at);
        }
        self.queue(
            book.clone(),
            Op::ProgressWrite(QueuedProgress {
                chapter_id: chapter.clone(),
                position_sec: position,
                finished,
                reset: !finished,
                client_updated_at: at,
            }),
        );
        self.notify(Told::ProgressChanged {
            book,
            progress: Progress {
                chapter_id: chapter,
                position,
                book_position: None,
                finished,
                client_updated_at: Some(at),
                server_updated_at: None,
            },
        });
        if offline {
            self.news(SyncNews::KeptOffline);
        }
    }

    pub(super) async fn fetch(&mut self, playback: PlaybackId, book: BookId) {
        let result = if self.blocked() {
            Err(Failure::Retry("sync is paused".into()))
        } else {
            self.requests += 1;
            let opened = self.opened.as_ref().filter(|o| o.book == book);
            let waiting = self.rec.waiting_on_server();
            if waiting {
                // A resume reads the server now, not an answer read ahead.
                self.remote.forget_prefetched(&book);
            }
            let read = self.remote.fetch(&book, opened.map(|o| &o.manifest));
            if waiting {
                // A resume waits on it: not for long.
                match tokio::time::timeout(GATE_WAIT, read).await {
                    Ok(r) => r,
                    Err(_) => Err(Failure::Retry(format!(
                        "the server did not answer within {} s",
                        GATE_WAIT.as_secs()
                    ))),
                }
            } else {
                read.await
            }
        };
        let now = now_millis();
        match result {
            Ok(ProgressRead::Unreadable { shape }) => {
                self.reachable();
                tracing::warn!(%book, "sync: the server's place could not be read: {shape}");
                self.news(SyncNews::PlaceUnreadable { book: book.clone() });
                let ds = self.rec.handle(Event::ServerUnreadable { playback }, now);
                self.decide(ds);
            }
            Ok(read) => {
                let was_offline = self.link == crate::sync::Link::Offline;
                self.reachable();
                if was_offline && !self.outbox.is_empty() {
                    // Asked while offline, answered once back: the queued
                    // changes go first, then the place is read again.
                    return;
                }
                let (progress, settings) = (read.progress().cloned(), read.settings().cloned());
                if let Some(scope) = self.scope.clone() {
                    if let Some(p) = &progress {
                        let spot = Spot::new(p.chapter_id.clone(), p.position);
                        let at = p.client_updated_at.unwrap_or(now);
                        self.cache
                            .set_progress(&scope, &book, &spot, p.finished, at);
                    }
                    if let Some(s) = &settings
                        && !self.settings_queued(&scope, &book)
                    {
                        self.cache.set_settings(&scope, &book, s);
                    }
                }
                let ds = self
                    .rec
                    .handle(Event::ServerProgress { playback, progress }, now);
                self.decide(ds);
            }
            Err(f) => {
                if !self.blocked() {
                    self.request_failed(f);
                }
                let ds = self.rec.handle(Event::ServerFetchFailed { playback }, now);
                self.decide(ds);
            }
        }
        if let Some(scope) = &self.scope
            && let Some(settings) = self.cache.settings(scope, &book)
        {
            self.apply_settings(&book, settings);
        }
    }

    fn settings_queued(&self, scope: &Scope, book: &BookId) -> bool {
        self.outbox
            .in_scope(scope)
            .iter()
            .any(|e| &e.book == book && matches!(e.op, Op::SettingsWrite(_)))
    }

    /// The book's saved speed and volume, asked of the engine when the
    /// book is the opened one.
    fn apply_settings(&mut self, book: &BookId, settings: PlaybackSettings) {
        let ours = self.opened.as_ref().is_some_and(|o| &o.book == book);
        if ours {
            self.asked = (Some(settings.speed), settings.volume.or(self.asked.1));
        }
        if let (true, Some(engine)) = (ours, &self.engine) {
            engine.ask(EngineAsk::Speed(settings.speed));
            if let Some(v) = settings.volume {
                engine.ask(EngineAsk::Volume(v));
            }
        }
    }
}

/// Settings writes get strictly increasing stamps: the server keeps the
/// stored record on equal timestamps, and several key presses drained in
/// one frame land in the same millisecond.
fn settings_stamp() -> i64 {
    use std::sync::atomic::Ordering::SeqCst;
    static LAST: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
    let now = crate::domain::now_millis();
    let prev = LAST
        .fetch_update(SeqCst, SeqCst, |l| Some(now.max(l + 1)))
        .unwrap_or(now);
    now.max(prev + 1)
}

fn queued_settings(speed: f32, volume: Option<f32>) -> QueuedSettings {
    QueuedSettings {
        speed,
        volume,
        client_updated_at: settings_stamp(),
    }
}
