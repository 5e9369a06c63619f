//! The socket server: one listener, one task per client. Each client has a
//! bounded queue of lines to write; a client that does not read is dropped
//! once its queue is full, one beyond [`MAX_CLIENTS`] is refused with
//! `busy`, a peer of another uid with `forbidden`. The session is only
//! read (its snapshot, its events) and sent commands: no client ever
//! makes it wait.

use super::host::Host;
use super::place::{Claim, Place};
use super::protocol::{self, Ask, Code, Refusal, Watch};
use super::status::{Watched, event, status_now};
use crate::domain::session::Snapshot;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::JoinHandle;

/// Clients served at once (docs/ctl.md).
pub const MAX_CLIENTS: usize = 64;
/// Lines waiting for a client that reads slowly; more and it is dropped.
pub const QUEUE: usize = 256;

/// A session being served: its socket is there while this lives (its
/// [`Claim`] is held beside it, and outlives it).
pub struct Serving {
    socket: PathBuf,
    accept: JoinHandle<()>,
    quit: watch::Receiver<bool>,
    /// Set when the session ends: each watcher is told `quit`.
    closing: watch::Sender<bool>,
    clients: Arc<AtomicUsize>,
}

impl Serving {
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Resolves once a client asked the session to quit.
    pub async fn quit_asked(&mut self) {
        let _ = self.quit.wait_for(|q| *q).await;
    }

    /// The session ends: each watcher gets its `quit` event and each
    /// client what was queued for it (for at most half a second), then
    /// the socket goes.
    pub async fn close(self) {
        self.accept.abort();
        self.closing.send_replace(true);
        let flushed = async {
            while self.clients.load(Ordering::Acquire) > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), flushed).await;
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Why the socket could not be served.
#[derive(Debug)]
pub struct NotServed(pub String);

/// Binds the claim's socket and serves `host` on the current runtime.
pub fn serve(host: Host, claim: &Claim) -> Result<Serving, NotServed> {
    let socket = claim.place.socket.clone();
    let listener = bind(&claim.place).map_err(NotServed)?;
    let quit = host.quit_watch();
    let closing = watch::channel(false).0;
    let clients = Arc::new(AtomicUsize::new(0));
    let shared = Shared {
        host,
        closing: closing.subscribe(),
        clients: clients.clone(),
    };
    let accept = tokio::spawn(accept(listener, claim.place.clone(), Arc::new(shared)));
    Ok(Serving {
        socket,
        accept,
        quit,
        closing,
        clients,
    })
}

/// A stale socket (nobody answers) is replaced; a live one is another
/// earmark's (of another data directory), never taken over.
fn bind(place: &Place) -> Result<UnixListener, String> {
    let path = &place.socket;
    place
        .socket_dir()
        .map_err(|e| format!("cannot make the socket's directory: {e}"))?;
    if std::fs::symlink_metadata(path).is_ok() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!(
                "another earmark session answers at {} (of another data directory)",
                path.display()
            ));
        }
        std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let listener = UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(listener)
}

/// What every connection shares.
struct Shared {
    host: Host,
    closing: watch::Receiver<bool>,
    clients: Arc<AtomicUsize>,
}

/// Counts a client while it lives.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How often the session looks whether its socket is still there.
const SOCKET_CHECK: std::time::Duration = std::time::Duration::from_secs(10);

/// The socket was removed under the session (logind removes
/// `$XDG_RUNTIME_DIR` when the last SSH login ends): it listens again.
fn relisten(listener: &mut UnixListener, place: &Place) {
    let gone = std::fs::symlink_metadata(&place.socket)
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if !gone {
        return;
    }
    match bind(place) {
        Ok(l) => {
            *listener = l;
            // Not on stderr: in the player's own session that is the screen.
            tracing::warn!(
                "the control socket was removed; listening again at {}",
                place.socket.display()
            );
        }
        Err(e) => tracing::warn!("the control socket was removed and cannot be made again: {e}"),
    }
}

async fn accept(mut listener: UnixListener, place: Place, shared: Arc<Shared>) {
    let clients = shared.clients.clone();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut check = tokio::time::interval(SOCKET_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = check.tick() => {
                relisten(&mut listener, &place);
                continue;
            }
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of descriptors, say: try again shortly.
                tracing::warn!("the control socket cannot accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let uid = stream.peer_cred().map(|c| c.uid()).ok();
        if uid != Some(me) {
            let who = uid.map_or("an unknown user".to_owned(), |u| format!("uid {u}"));
            let m = format!("this session is uid {me}'s; {who} may not control it");
            refuse(&stream, Code::Forbidden, &m);
            continue;
        }
        if clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
            clients.fetch_sub(1, Ordering::AcqRel);
            let m = format!("the session serves {MAX_CLIENTS} clients at once; try again later");
            refuse(&stream, Code::Busy, &m);
            continue;
        }
        let slot = Slot(clients.clone());
        tokio::spawn(connection(stream, shared.clone(), slot));
    }
}

/// One error line, if the socket takes it now, and the client is closed.
fn refuse(stream: &UnixStream, code: Code, message: &str) {
    let line = protocol::error(&Value::Null, &Refusal::new(code, message));
    let _ = stream.try_write(line.as_bytes());
}

/// The lines to write to one client.
#[derive(Clone)]
struct Out {
    tx: mpsc::Sender<String>,
    gone: Arc<Notify>,
    /// The client asked for `watch`.
    watching: Arc<std::sync::atomic::AtomicBool>,
}

impl Out {
    /// False when the client is dropped (its queue was full) or gone.
    fn send(&self, line: String) -> bool {
        match self.tx.try_send(line) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!("a control client does not read: dropped");
                self.gone.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    fn value(&self, v: Value) -> bool {
        let mut line = v.to_string();
        line.push('\n');
        self.send(line)
    }
}

async fn connection(stream: UnixStream, shared: Arc<Shared>, _slot: Slot) {
    let (rd, wr) = stream.into_split();
    let (tx, rx) = mpsc::channel(QUEUE);
    let gone = Arc::new(Notify::new());
    let out = Out {
        tx,
        gone: gone.clone(),
        watching: Default::default(),
    };
    let host = &shared.host;
    out.send(protocol::hello(&host.place.profile, &host.place.data));
    let mut writer = tokio::spawn(write_lines(wr, rx));
    let mut reader = tokio::spawn(read_requests(rd, out.clone(), shared.clone()));
    let mut closing = shared.closing.clone();
    let flush = std::time::Duration::from_secs(2);
    tokio::select! {
        _ = &mut writer => {}
        _ = gone.notified() => {}
        // The client is done asking: what is queued for it goes out.
        _ = &mut reader => {
            drop(out);
            let _ = tokio::time::timeout(flush, &mut writer).await;
        }
        _ = async { closing.wait_for(|c| *c).await.is_ok() } => {
            // The session ends: a watcher hears it, then the queue drains.
            reader.abort();
            if out.watching.load(Ordering::Acquire) {
                out.value(json!({"event": "quit"}));
            }
            drop(out);
            let _ = tokio::time::timeout(flush, &mut writer).await;
        }
    }
    writer.abort();
    reader.abort();
}

async fn write_lines(mut wr: OwnedWriteHalf, mut rx: mpsc::Receiver<String>) {
    while let Some(line) = rx.recv().await {
        if wr.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// What reading one line found.
enum Line {
    Read,
    Eof,
    TooLong,
}

/// Reads one line into `buf` (without its newline), at most
/// [`protocol::MAX_LINE`] bytes.
async fn read_line(rd: &mut BufReader<OwnedReadHalf>, buf: &mut Vec<u8>) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let chunk = rd.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() {
                Line::Eof
            } else {
                Line::Read
            });
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > protocol::MAX_LINE {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&chunk[..take]);
        rd.consume(take + usize::from(done));
        if done {
            return Ok(Line::Read);
        }
    }
}

/// Aborts a watcher when its connection's reader ends.
struct Watching(JoinHandle<()>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn read_requests(rd: OwnedReadHalf, out: Out, shared: Arc<Shared>) {
    let host = &shared.host;
    let mut rd = BufReader::new(rd);
    let mut buf = Vec::new();
    let mut _watching: Option<Watching> = None;
    loop {
        match read_line(&mut rd, &mut buf).await {
            Ok(Line::Read) => {}
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong) => {
                let m = format!(
                    "a request line is at most {} bytes; the connection is closed",
                    protocol::MAX_LINE
                );
                out.send(protocol::error(
                    &Value::Null,
                    &Refusal::new(Code::TooLong, m),
                ));
                return;
            }
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = match protocol::decode(&buf) {
            Err((id, refusal)) => protocol::error(&id, &refusal),
            Ok(r) => match r.ask {
                Ask::Watch(w) => {
                    let now =
                        serde_json::to_value(status_now(&host.snapshot(), &host.place.profile));
                    let result =
                        json!({"watching": watch_name(w), "status": now.unwrap_or_default()});
                    if !out.send(protocol::result(&r.id, result)) {
                        return;
                    }
                    out.watching.store(true, Ordering::Release);
                    let task = tokio::spawn(watch(out.clone(), shared.clone(), w));
                    _watching = Some(Watching(task));
                    continue;
                }
                ask => match host.answer(ask).await {
                    Ok(v) => protocol::result(&r.id, v),
                    Err(refusal) => protocol::error(&r.id, &refusal),
                },
            },
        };
        if !out.send(line) {
            return;
        }
    }
}

fn watch_name(w: Watch) -> &'static str {
    match w {
        Watch::Events => "events",
        Watch::Session => "session",
    }
}

/// docs/ctl.md's events (`events`), or every snapshot (thinned as
/// [`Snapshot::worth_drawing`] says) and event for a player (`session`),
/// until the session ends.
async fn watch(out: Out, shared: Arc<Shared>, w: Watch) {
    let host = &shared.host;
    let mut snap = host.playback.snapshot();
    let mut events = host.playback.events();
    let mut watched = Watched::default();
    let mut last: Option<Snapshot> = None;
    loop {
        let now = snap.borrow_and_update().clone();
        let lines = match w {
            Watch::Events => watched.changes(&status_now(&now, &host.place.profile)),
            Watch::Session if now.worth_drawing(last.as_ref()) => {
                let line = snapshot_line(&now, last.as_ref());
                last = Some(now);
                vec![line]
            }
            Watch::Session => Vec::new(),
        };
        if !lines.into_iter().all(|l| out.value(l)) {
            return;
        }
        tokio::select! {
            c = snap.changed() => if c.is_err() { break },
            e = events.recv() => match e {
                Ok(e) => {
                    let line = match w {
                        Watch::Events => event(&e),
                        Watch::Session => Some(json!({"session": serde_json::to_value(&e).unwrap_or_default()})),
                    };
                    if let Some(v) = line && !out.value(v) { return }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => if w == Watch::Session {
                    tracing::warn!("an attached player missed {n} events of the session");
                },
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    out.value(json!({"event": "quit"}));
}

/// The snapshot as a line; the book and manifest only when they are not
/// the ones sent last (`null`: as before).
fn snapshot_line(now: &Snapshot, last: Option<&Snapshot>) -> Value {
    let mut v = serde_json::to_value(now).unwrap_or_default();
    let before = last.and_then(|l| l.listening.as_ref());
    if let (Some(a), Some(b)) = (now.listening.as_ref(), before) {
        if a.manifest == b.manifest {
            v["listening"]["manifest"] = Value::Null;
        }
        if a.book == b.book {
            v["listening"]["book"] = Value::Null;
        }
    }
    json!({"snapshot": v})
}
