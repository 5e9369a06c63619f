//! Sync's notices and status, in the player's words: each
//! [`crate::sync::Notice`] becomes one UI answer. Nothing is decided here.

use super::live::Shared;
use crate::domain::{LicenseState, LicenseStatus, Progress};
use crate::sync::{Link, Notice, Notices, Source, SyncStatus};
use crate::ui::state::{Answer, Position, SyncView};
use std::sync::Arc;
use tokio::sync::watch;

fn position(s: crate::sync::Spot) -> Position {
    Position {
        chapter: s.chapter,
        position: s.position,
    }
}

/// Until the session's notice stream ends (it is replaced on a new login).
pub(super) async fn forward(sh: Arc<Shared>, mut notices: Notices) {
    while let Some(n) = notices.recv().await {
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
            Notice::LicenseStopped { message } => Answer::LicenseRequired(message),
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
            Notice::LoginRequired { message, .. } => {
                Answer::Failed(format!("{message} Press P to log in again."))
            }
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
