//! The player's link to the sync worker (`crate::sync`): opening a book
//! goes through the reconciler (restore, conflict prompt), engine states are
//! forwarded through the `EngineBridge`, and every progress write goes
//! through the durable outbox. One worker per login.

use super::Shared;
use crate::domain::{BookId, ChapterId, Manifest};
use crate::player::{Command, EngineHandle, PlayerState};
use crate::sync::client_remote::ClientRemote;
use crate::sync::engine_bridge::EngineBridge;
use crate::sync::reconciler::{Action, Event, Intent, PlaybackId, Side, Spot};
use crate::sync::worker::{self, Link, Notice, SyncHandle, WorkerConfig};
use crate::ui::state::{Backend as Answer, ConflictChoice, Position, StartAt, SyncView};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A book being opened or played through sync.
struct Opened {
    playback: PlaybackId,
    book: BookId,
    manifest: Manifest,
    start: StartAt,
    loaded: bool,
}

pub(crate) struct SyncLink {
    pub handle: SyncHandle,
    bridge: Mutex<EngineBridge>,
    opened: Mutex<Option<Opened>>,
    next: AtomicU64,
}

impl SyncLink {
    /// Starts the worker for the current login; `None` without one.
    pub fn start(sh: &Arc<Shared>) -> Option<Arc<SyncLink>> {
        let client = sh.client.read().ok()?.clone()?;
        let dir = {
            let p = sh.profile.read().ok()?;
            crate::sync::cli::sync_dir(&p)
        };
        let (handle, notices) =
            match worker::spawn(WorkerConfig::new(dir), Arc::new(ClientRemote::new(client))) {
                Ok(x) => x,
                Err(e) => {
                    sh.ui.send(Answer::Failed(format!(
                        "Progress sync is off: {e}. Positions are written directly."
                    )));
                    return None;
                }
            };
        let link = Arc::new(SyncLink {
            handle,
            bridge: Mutex::new(EngineBridge::new()),
            opened: Mutex::new(None),
            next: AtomicU64::new(0),
        });
        tokio::spawn(notices_task(sh.clone(), link.clone(), notices));
        tokio::spawn(status_task(sh.clone(), link.handle.watch()));
        Some(link)
    }

    /// Opens `book` for playback; the engine is loaded when the reconciler
    /// says where (`Notice::LoadAt`).
    pub fn open(&self, book: BookId, manifest: Manifest, start: StartAt) {
        let playback = PlaybackId(self.next.fetch_add(1, Ordering::SeqCst) + 1);
        if let Ok(mut o) = self.opened.lock() {
            *o = Some(Opened {
                playback,
                book: book.clone(),
                manifest: manifest.clone(),
                start: start.clone(),
                loaded: false,
            });
        }
        self.handle.event(Event::BookOpened {
            playback,
            book,
            manifest,
            local: None,
        });
        if start == StartAt::Restart {
            self.handle.event(Event::Intent {
                playback,
                intent: Intent::RestartBook,
            });
        }
    }

    pub fn playback(&self) -> Option<(PlaybackId, BookId)> {
        let o = self.opened.lock().ok()?;
        o.as_ref().map(|o| (o.playback, o.book.clone()))
    }

    pub fn engine_state(&self, s: &PlayerState) {
        let events = match self.bridge.lock() {
            Ok(mut b) => b.events(s),
            Err(_) => return,
        };
        for e in events {
            self.handle.event(e);
        }
    }

    pub fn action(&self, action: Action) {
        if let Some((playback, _)) = self.playback() {
            self.handle.event(Event::Action { playback, action });
        }
    }

    /// Mark finished/unfinished for the open book; false when another book.
    pub fn finished(&self, book: &BookId, finished: bool) -> bool {
        match self.playback() {
            Some((playback, open)) if &open == book => {
                let intent = if finished {
                    Intent::MarkFinished
                } else {
                    Intent::MarkUnfinished
                };
                self.handle.event(Event::Intent { playback, intent });
                true
            }
            _ => false,
        }
    }

    pub fn chose(&self, book: &BookId, choice: ConflictChoice) {
        if let Some((playback, open)) = self.playback()
            && &open == book
        {
            let side = match choice {
                ConflictChoice::Server => Side::Server,
                ConflictChoice::Local => Side::Local,
            };
            self.handle.event(Event::Chose { playback, side });
        }
    }

    fn load(&self, sh: &Shared, engine: &EngineHandle, playback: PlaybackId, spot: Spot) {
        let Ok(mut o) = self.opened.lock() else {
            return;
        };
        let Some(opened) = o.as_mut().filter(|o| o.playback == playback) else {
            return;
        };
        let start: (ChapterId, f64) = match &opened.start {
            StartAt::At(c, p) if !opened.loaded => {
                // The user picked the place: an explicit seek for sync.
                self.handle.event(Event::Action {
                    playback,
                    action: Action::Seek(Spot::new(c.clone(), *p)),
                });
                (c.clone(), *p)
            }
            StartAt::Restart if !opened.loaded => match opened.manifest.items.first() {
                Some(first) => (first.chapter_id.clone(), 0.0),
                None => (spot.chapter, spot.position),
            },
            _ => (spot.chapter, spot.position),
        };
        if opened.loaded {
            engine.send(Command::Seek {
                chapter: start.0,
                position: start.1,
            });
            return;
        }
        opened.loaded = true;
        let book = opened.book.clone();
        sh.load_engine(engine, opened.manifest.clone(), start, |id| {
            if let Ok(mut b) = self.bridge.lock() {
                b.loading_as(playback, crate::player::PlaybackId(id));
            }
            if let Ok(mut cur) = sh.current.lock() {
                *cur = Some(super::playback::Current {
                    book,
                    playback: id,
                    checked: true,
                    finished: false,
                });
            }
        });
    }
}

async fn notices_task(
    sh: Arc<Shared>,
    link: Arc<SyncLink>,
    mut notices: tokio::sync::mpsc::UnboundedReceiver<Notice>,
) {
    while let Some(n) = notices.recv().await {
        let engine = sh.engine.lock().ok().and_then(|e| e.clone());
        match n {
            Notice::LoadAt { playback, spot } => {
                if let Some(engine) = engine {
                    link.load(&sh, &engine, playback, spot);
                }
            }
            Notice::Choose {
                book,
                server,
                local,
            } => {
                sh.ui.send(Answer::Conflict {
                    book,
                    server: Position {
                        chapter: server.chapter,
                        position: server.position,
                    },
                    local: Position {
                        chapter: local.chapter,
                        position: local.position,
                    },
                });
            }
            Notice::ApplySettings { book, settings } => {
                let ours = link.playback().is_some_and(|(_, b)| b == book);
                if ours && let Some(engine) = engine {
                    engine.send(Command::SetSpeed(crate::player::clamp_speed(
                        settings.speed,
                    )));
                    if let Some(v) = settings.volume {
                        engine.send(Command::SetVolume(v.clamp(0.0, 1.0)));
                    }
                }
            }
            Notice::StopPlayback { message } => {
                if let Some(engine) = engine {
                    engine.send(Command::Pause);
                }
                sh.ui.send(Answer::LicenseRequired(message));
            }
            Notice::LicenseRestored => {
                sh.ui.send(Answer::Notice(
                    "The server's license is valid again.".into(),
                ));
                sh.ui.send(Answer::License(crate::domain::LicenseStatus {
                    state: crate::domain::LicenseState::Valid,
                    valid: true,
                    message: None,
                }));
            }
            Notice::LoginRequired { message } => {
                sh.ui.send(Answer::Failed(format!(
                    "{message} Press P to log in again."
                )));
            }
            Notice::Dropped { book, message } => {
                sh.ui.send(Answer::Notice(format!(
                    "A queued change for {book} was dropped: {message}"
                )));
            }
        }
    }
}

async fn status_task(sh: Arc<Shared>, mut rx: tokio::sync::watch::Receiver<worker::SyncStatus>) {
    loop {
        let s = rx.borrow_and_update().clone();
        let view = SyncView {
            offline: matches!(s.link, Link::Offline),
            syncing: false,
            queued: s.queued,
        };
        let changed = sh
            .sync_view
            .lock()
            .map(|mut v| {
                let c = *v != view;
                *v = view;
                c
            })
            .unwrap_or(false);
        if changed {
            sh.ui.send(Answer::Sync(view));
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}
