//! A session of another process, as an attached player sees it: its
//! snapshot and events arrive through `watch session` and are published
//! here as the owner's own would be (a `watch` and a `broadcast`); its
//! commands and the player's other asks go out as `player` requests.

use super::protocol::{self, Ask, Incoming, PlayerAsk, Refusal, Watch};
use crate::domain::locks::lock;
use crate::domain::session::{Event, Said, Snapshot};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, Refusal>>>>>;

/// The handle: cheap to clone, never blocks.
#[derive(Clone)]
pub struct Remote {
    lines: mpsc::UnboundedSender<String>,
    snapshot: watch::Receiver<Snapshot>,
    events: broadcast::Sender<Event>,
    waiting: Waiting,
    next: Arc<AtomicU64>,
    /// The session's pid (its hello).
    pub pid: Option<u64>,
}

/// Why attaching failed, in one sentence.
#[derive(Debug)]
pub struct NotAttached(pub String);

impl Remote {
    /// Connects to the session at `socket` (of `data`'s profile), asks
    /// for its stream and waits for its first snapshot.
    pub async fn attach(socket: &Path, data: &Path) -> Result<Remote, NotAttached> {
        let fail = |m: String| NotAttached(format!("{}: {m}", socket.display()));
        let stream = UnixStream::connect(socket)
            .await
            .map_err(|e| fail(e.to_string()))?;
        let (rd, mut wr) = stream.into_split();
        let mut rd = BufReader::new(rd);
        let mut line = String::new();
        let within = Duration::from_secs(3);
        let said = tokio::time::timeout(within, rd.read_line(&mut line)).await;
        let hello = match (said, protocol::incoming(&line)) {
            (Ok(Ok(n)), Some(Incoming::Hello(h))) if n > 0 => h,
            (_, Some(Incoming::Reply { answer: Err(r), .. })) => return Err(fail(r.message)),
            _ => return Err(fail("the session did not say hello".into())),
        };
        if hello["data"].as_str() != Some(&data.display().to_string()) {
            return Err(fail(
                "the session there keeps its data elsewhere (another earmark home)".into(),
            ));
        }
        let ask = protocol::encode(0, &Ask::Watch(Watch::Session));
        wr.write_all(ask.as_bytes())
            .await
            .map_err(|e| fail(e.to_string()))?;
        let first = tokio::time::timeout(within, first_snapshot(&mut rd, &mut line))
            .await
            .map_err(|_| fail("no snapshot within 3 s".into()))?
            .map_err(fail)?;
        let (snap_tx, snapshot) = watch::channel(first);
        let (events, _) = broadcast::channel(256);
        let (lines, out) = mpsc::unbounded_channel();
        let waiting = Waiting::default();
        tokio::spawn(write(wr, out));
        tokio::spawn(read(rd, snap_tx, events.clone(), waiting.clone()));
        Ok(Remote {
            lines,
            snapshot,
            events,
            waiting,
            next: Arc::new(AtomicU64::new(1)),
            pid: hello["pid"].as_u64(),
        })
    }

    pub fn snapshot(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.clone()
    }

    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Sends a player's ask; its reply is dropped.
    pub fn tell(&self, p: PlayerAsk) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.line(protocol::encode(id, &Ask::Player(Box::new(p))));
    }

    /// A request line, unless it is longer than the session takes (it
    /// would close the connection): then it is dropped, and logged.
    fn line(&self, line: String) {
        if line.len() > protocol::MAX_LINE {
            tracing::warn!(
                "a request of {} bytes was not sent to the session",
                line.len()
            );
            return;
        }
        let _ = self.lines.send(line);
    }

    /// Sends a player's ask and waits for its reply.
    pub async fn ask(&self, p: PlayerAsk) -> Result<Value, Refusal> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        self.line(protocol::encode(id, &Ask::Player(Box::new(p))));
        let gone = || Refusal::new(protocol::Code::Internal, "the session is gone");
        match tokio::time::timeout(Duration::from_secs(10), rx).await {
            Ok(Ok(answer)) => answer,
            _ => {
                lock(&self.waiting).remove(&id);
                Err(gone())
            }
        }
    }
}

/// The reply to `watch session` comes first, then its first snapshot.
async fn first_snapshot(
    rd: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    line: &mut String,
) -> Result<Snapshot, String> {
    let mut seen = Seen::default();
    loop {
        line.clear();
        if rd.read_line(line).await.map_err(|e| e.to_string())? == 0 {
            return Err("the session closed the connection".into());
        }
        match protocol::incoming(line) {
            Some(Incoming::Reply { answer: Err(r), .. }) => return Err(r.message),
            Some(Incoming::Event(mut v)) => {
                if let Some(s) = v.get_mut("snapshot").map(Value::take) {
                    return seen
                        .snapshot(s)
                        .map_err(|e| format!("an unreadable snapshot: {e}"));
                }
            }
            _ => {}
        }
    }
}

/// The book and manifest last received: a snapshot sends `null` for them
/// while they stay the same.
#[derive(Default)]
struct Seen {
    book: Value,
    manifest: Value,
}

impl Seen {
    fn snapshot(&mut self, mut v: Value) -> Result<Snapshot, serde_json::Error> {
        if let Some(l) = v.get_mut("listening").filter(|l| l.is_object()) {
            for (key, kept) in [("book", &mut self.book), ("manifest", &mut self.manifest)] {
                match l.get_mut(key) {
                    Some(x) if x.is_null() => *x = kept.clone(),
                    Some(x) => *kept = x.clone(),
                    None => {}
                }
            }
        }
        serde_json::from_value(v)
    }
}

async fn write(
    mut wr: tokio::net::unix::OwnedWriteHalf,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(l) = lines.recv().await {
        if wr.write_all(l.as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn read(
    mut rd: BufReader<tokio::net::unix::OwnedReadHalf>,
    snap: watch::Sender<Snapshot>,
    events: broadcast::Sender<Event>,
    waiting: Waiting,
) {
    let mut line = String::new();
    let mut seen = Seen::default();
    if let Some(l) = &snap.borrow().listening {
        seen.book = serde_json::to_value(&*l.book).unwrap_or_default();
        seen.manifest = serde_json::to_value(&*l.manifest).unwrap_or_default();
    }
    loop {
        line.clear();
        match rd.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        match protocol::incoming(&line) {
            Some(Incoming::Reply { id, answer }) => {
                let slot = id.as_u64().and_then(|id| lock(&waiting).remove(&id));
                if let Some(tx) = slot {
                    let _ = tx.send(answer);
                } else if let Err(r) = answer {
                    tracing::warn!("the session refused a request: {}", r.message);
                }
            }
            Some(Incoming::Event(mut v)) => {
                if let Some(s) = v.get_mut("snapshot").map(Value::take) {
                    match seen.snapshot(s) {
                        Ok(s) => {
                            snap.send_replace(s);
                        }
                        Err(e) => tracing::warn!("an unreadable snapshot of the session: {e}"),
                    }
                } else if let Some(e) = v.get_mut("session").map(Value::take) {
                    match serde_json::from_value::<Event>(e) {
                        Ok(e) => {
                            let _ = events.send(e);
                        }
                        Err(e) => tracing::warn!("an unreadable event of the session: {e}"),
                    }
                }
            }
            _ => {}
        }
    }
    // The session ended (quit elsewhere, or its process is gone).
    lock(&waiting).clear();
    let _ = events.send(Event::Said(Said::Failed(
        "The session this player was attached to has ended.".into(),
    )));
    snap.send_replace(Snapshot::default());
}
