//! The playback owner's events and sync's status, in the player's words:
//! each stop becomes `Answer::Stopped` (the reducer shows it by its
//! reason), each of sync's notices one answer. Nothing is decided here.

use super::shared::Shared;
use crate::domain::{LicenseState, LicenseStatus, Progress};
use crate::playback::{Event, Events};
use crate::sync::{Link, Notice, Source, SyncStatus};
use crate::ui::state::{Answer, Position, SyncView};
use std::sync::Arc;
use tokio::sync::watch;

fn position(s: crate::sync::Spot) -> Position {
    Position {
        chapter: s.chapter,
        position: s.position,
    }
}

/// The address in use of `client`, when it has several: said now and at
/// every switch, until the client is gone; a client of one says none.
pub(super) async fn addresses(sh: Arc<Shared>, client: crate::api::Client) {
    if client.addresses().len() < 2 {
        sh.ui.send(Answer::Via(None));
        return;
    }
    let mut switches = client.watch_base();
    drop(client);
    loop {
        let label = switches.borrow_and_update().label();
        sh.ui.send(Answer::Via(Some(label)));
        if switches.changed().await.is_err() {
            return;
        }
    }
}

/// Until the owner stops.
pub(super) async fn forward(sh: Arc<Shared>, mut events: Events) {
    while let Some(e) = events.recv().await {
        let n = match e {
            Event::Stopped(stop) => {
                sh.ui.send(Answer::Stopped(stop));
                continue;
            }
            Event::Notice(n) => n,
        };
        let answer = match n {
            Notice::Choose {
                book,
                server,
                local,
            } => Answer::Conflict {
                book,
                server: position(server),
                local: position(local),
            },
            Notice::LicenseRestored => {
                sh.ui.send(Answer::Notice(
                    "The server's license is valid again.".into(),
                ));
                Answer::License(LicenseStatus {
                    state: LicenseState::Valid,
                    valid: true,
                    message: None,
                })
            }
            // The owner turns these into stops; they never come here.
            Notice::LicenseStopped { message }
            | Notice::LoginRequired { message, .. }
            | Notice::ScopeRefused { message, .. } => Answer::Failed(message),
            Notice::Dropped { book, message } => {
                Answer::Notice(format!("A queued change for {book} was dropped: {message}"))
            }
            Notice::ProgressChanged { book, progress } => {
                Answer::ProgressChanged { book, progress }
            }
            Notice::PlaceMarked { book, mark } => Answer::PlaceMarked { book, mark },
            Notice::Info(m) => Answer::Notice(m),
            Notice::Failed(m) => Answer::Failed(m),
        };
        sh.ui.send(answer);
    }
}

/// The sync line of the player bar, and the place sync says to show
/// (rule 7: after a reconnect, the server's), sent when they change.
pub(super) async fn status(sh: Arc<Shared>, mut rx: watch::Receiver<SyncStatus>) {
    let mut last: Option<SyncView> = None;
    let mut last_shown = None;
    loop {
        let s = rx.borrow_and_update().clone();
        let view = SyncView {
            offline: matches!(s.link, Link::Offline),
            syncing: false,
            queued: s.queued,
            refused: s.refused,
            unconfirmed: s
                .shown
                .as_ref()
                .is_some_and(|x| x.source == Source::LocalUnconfirmed),
            throttled: match &s.link {
                Link::Throttled(t) => Some(t.slowdown()),
                _ => None,
            },
        };
        if last != Some(view) {
            sh.ui.send(Answer::Sync(view));
            last = Some(view);
        }
        if s.shown != last_shown {
            if let Some(x) = &s.shown {
                sh.ui.send(Answer::ProgressChanged {
                    book: x.book.clone(),
                    progress: Progress {
                        chapter_id: x.spot.chapter.clone(),
                        position: x.spot.position,
                        book_position: None,
                        finished: x.finished,
                        client_updated_at: None,
                        server_updated_at: None,
                    },
                });
            }
            last_shown = s.shown;
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}
