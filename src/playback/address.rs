//! Playback follows the server from one address to another (a profile of
//! several addresses, `api::Address`) without a restart: the resolver
//! notes the address each stream came from; when the client answers at
//! another (a request of sync or the player moved it, or the check below
//! did), the engine reopens its stream where it is, through the address
//! in use. A load that waits for audio longer than [`PATIENCE`] has the
//! client knock at its address (without the token) and move on when no
//! answer comes. Nothing here runs for a profile of one address.

use super::CurrentClient;
use crate::api::BaseUrl;
use crate::player::{EngineHandle, PlayerState, Status};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// How long a load may wait for audio before its address is checked.
pub const PATIENCE: Duration = Duration::from_secs(3);

/// The address the last stream came from (`None`: a downloaded file, or
/// none yet).
pub(super) type StreamingFrom = super::Shared<BaseUrl>;

/// The owner's part: what it needs to follow the address in use.
pub(super) struct Follow {
    pub streaming: StreamingFrom,
    /// The current client's switches (`None`: no login, or one address).
    pub switches: Option<watch::Receiver<BaseUrl>>,
    /// A check finished: look again (sent by the checks' tasks).
    pub looked: mpsc::UnboundedSender<()>,
    pub look: mpsc::UnboundedReceiver<()>,
    checking: Arc<AtomicBool>,
}

impl Follow {
    pub fn new(streaming: StreamingFrom, client: &CurrentClient) -> Follow {
        let (looked, look) = mpsc::unbounded_channel();
        let mut f = Follow {
            streaming,
            switches: None,
            looked,
            look,
            checking: Arc::default(),
        };
        f.login(client);
        f
    }

    /// A new login: follow its client's switches.
    pub fn login(&mut self, client: &CurrentClient) {
        self.switches = client
            .get()
            .filter(|c| c.addresses().len() > 1)
            .map(|c| c.watch_base());
    }

    /// The client answers elsewhere than the playing stream came from:
    /// the engine reopens it where it is (through the resolver, which
    /// asks the client for the address in use).
    pub fn reopen_if_moved(&self, engine: &EngineHandle, client: &CurrentClient) {
        let (Some(c), Some(from)) = (client.get(), self.streaming.get()) else {
            return;
        };
        let now = c.base();
        if from == now {
            return;
        }
        let s = engine.state();
        let loaded = matches!(
            s.status,
            Status::Playing | Status::Paused | Status::Buffering | Status::Stalled
        );
        if let (true, Some(chapter)) = (loaded, s.chapter_id) {
            tracing::info!("playback moves from {from} to {now}");
            self.streaming.set(Some(now));
            engine.send(crate::player::Command::Seek {
                chapter,
                position: s.position,
            });
        }
    }

    /// The engine waits for audio (`s`): unless it gets some within
    /// [`PATIENCE`], the client checks its address (one check at a time).
    pub fn waiting(&self, engine: &EngineHandle, client: &CurrentClient, s: &PlayerState) {
        let Some(c) = client.get().filter(|c| c.addresses().len() > 1) else {
            return;
        };
        if self.checking.swap(true, Ordering::SeqCst) {
            return;
        }
        let (states, id) = (engine.subscribe(), s.playback_id);
        let (checking, looked) = (self.checking.clone(), self.looked.clone());
        tokio::spawn(async move {
            if still_waiting(states, id).await {
                c.check_address().await;
                let _ = looked.send(());
            }
            checking.store(false, Ordering::SeqCst);
        });
    }
}

/// True when load `id` is still waiting for audio after [`PATIENCE`].
async fn still_waiting(
    mut states: watch::Receiver<PlayerState>,
    id: crate::player::PlaybackId,
) -> bool {
    let got_audio = async {
        loop {
            {
                let s = states.borrow_and_update();
                if s.playback_id != id || !matches!(s.status, Status::Buffering | Status::Stalled) {
                    return;
                }
            }
            if states.changed().await.is_err() {
                return;
            }
        }
    };
    tokio::time::timeout(PATIENCE, got_audio).await.is_err()
}
