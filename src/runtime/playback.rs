//! The session's snapshot and events, handed to the player: each
//! published [`Snapshot`] becomes `Answer::Session` (at most ~5 a second
//! while only the place moves; at once when anything else changed), each
//! event `Answer::SessionEvent`. Nothing is decided or worded here.

use super::shared::Shared;
use crate::domain::session::Snapshot;
use crate::playback::Events;
use crate::ui::state::Answer;
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// Until the owner stops publishing.
pub(super) async fn snapshots(sh: Arc<Shared>, mut rx: watch::Receiver<Snapshot>) {
    let mut last: Option<Snapshot> = None;
    loop {
        let now = rx.borrow_and_update().clone();
        if now.worth_drawing(last.as_ref()) {
            sh.ui.send(Answer::Session(now.clone()));
            last = Some(now);
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Until the owner stops.
pub(super) async fn events(sh: Arc<Shared>, mut events: Events) {
    loop {
        match events.recv().await {
            Ok(e) => sh.ui.send(Answer::SessionEvent(e)),
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!("the player missed {n} events of the session")
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
