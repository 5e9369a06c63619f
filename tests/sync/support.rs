//! Set-up of the sync tests (the homes and logins are `harness`'s): a small
//! generated library, the reference server behind a proxy, logged-in clients, and sync sessions (the front door) with short
//! intervals following a scripted engine: the test publishes the engine
//! states a real engine would (and the glitches peers' engines had) and
//! sees the commands sync sends it.

use crate::harness;
use crate::harness::TestServer;
use crate::proxy::Proxy;
use earmark::api::{BookQuery, Client, ClientOptions};
use earmark::domain::session::Event;
use earmark::domain::session::PlayState;
use earmark::domain::{BookId, ChapterId, Manifest, Progress};
use earmark::player::Command as EngineCommand;
use earmark::sync::{
    EngineLink, Heard, LoadId, Notices, Spot, StartAt, SyncConfig, SyncSession, SyncStatus,
};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

pub use crate::harness::{library, wav};

pub struct Env {
    pub server: TestServer,
    pub proxy: Proxy,
    pub lib: tempfile::TempDir,
}

impl Env {
    pub async fn start() -> Env {
        let lib = library();
        let server = TestServer::start(lib.path()).await.unwrap();
        let proxy = Proxy::start(server.addr()).await;
        Env { server, proxy, lib }
    }

    /// A logged-in client that talks through the proxy.
    pub async fn client(&self) -> Client {
        let opts = ClientOptions {
            retries: 0,
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
            ..ClientOptions::default()
        };
        let (user, password) = (&self.server.username, &self.server.password);
        harness::client_logged_in(&self.proxy.base_url(), opts, user, password).await
    }

    /// A client straight to the server (to read what it holds).
    pub async fn direct(&self) -> Client {
        harness::direct(&self.server).await
    }

    pub async fn book(&self, title: &str) -> (BookId, Manifest) {
        let c = self.direct().await;
        let books = c.books(&BookQuery::default()).await.unwrap();
        let b = harness::titled(&books, title).id.clone();
        let m = c.manifest(&b).await.unwrap();
        (b, m)
    }

    pub async fn server_progress(&self, book: &BookId) -> Option<Progress> {
        self.direct().await.progress(book).await.unwrap().progress
    }
}

pub fn config(dir: &Path) -> SyncConfig {
    let mut c = SyncConfig::new(dir);
    c.report_interval = Duration::from_millis(200);
    c.tick = Duration::from_millis(50);
    c.backoff_min = Duration::from_millis(100);
    c.backoff_max = Duration::from_millis(400);
    c.license_poll = Duration::from_millis(200);
    c
}

/// What a test plays: the sync session and a scripted engine, whose
/// states reach sync as the session owner tells them.
pub struct Player {
    pub sync: SyncSession,
    pub notices: Notices,
    /// The state of each load, as the engine would publish it.
    by_load: std::sync::Mutex<std::collections::HashMap<u64, Heard>>,
    version: std::sync::atomic::AtomicU64,
    commands: mpsc::UnboundedReceiver<EngineCommand>,
    loads: u64,
}

pub fn start_worker(client: &Client, dir: &Path) -> Player {
    let (tx, commands) = mpsc::unbounded_channel();
    // What sync asks, as the commands the session owner would send.
    let engine = EngineLink::new(LoadId(0), move |ask| {
        let _ = tx.send(earmark::playback::command_for(ask));
    });
    let (sync, notices) = SyncSession::start(config(dir), Some(client.clone()), Some(engine));
    Player {
        sync,
        notices,
        by_load: Default::default(),
        version: Default::default(),
        commands,
        loads: 0,
    }
}

/// Reconciler-level actions, as a scripted engine shows them.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    Play,
    Pause,
    Stop,
}

impl Player {
    /// Opens `book` to resume. `playback` is the engine load it will get
    /// (the test's own count, checked by `load`).
    pub fn open(&self, playback: u64, book: &BookId, manifest: &Manifest) {
        let _ = playback;
        self.sync
            .open(book.clone(), manifest.clone(), StartAt::Resume);
    }

    /// Waits for sync to load (or move) the engine; returns the engine
    /// playback id and the place.
    pub async fn load(&mut self) -> (u64, Spot) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let c = tokio::time::timeout_at(deadline, self.commands.recv())
                .await
                .expect("timed out waiting for sync to load the engine")
                .expect("sync stopped");
            match c {
                EngineCommand::Load { start, .. } => {
                    self.loads += 1;
                    return (self.loads, Spot::new(start.0, start.1));
                }
                EngineCommand::Seek { chapter, position } => {
                    return (self.loads, Spot::new(chapter, position));
                }
                _ => {}
            }
        }
    }

    /// Publishes load `playback`'s state after `change`.
    fn publish(&self, playback: u64, change: impl FnOnce(&mut Heard)) {
        let mut all = self.by_load.lock().unwrap();
        let s = all.entry(playback).or_insert_with(|| Heard {
            load: LoadId(playback),
            state: PlayState::Buffering,
            ..Heard::default()
        });
        change(s);
        s.version = self
            .version
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        self.sync.heard(s.clone());
    }

    /// Waits for an engine command matching `f` (skipping others).
    pub async fn command(&mut self, f: impl Fn(&EngineCommand) -> bool) -> EngineCommand {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let c = tokio::time::timeout_at(deadline, self.commands.recv())
                .await
                .expect("timed out waiting for an engine command")
                .expect("sync stopped");
            if let EngineCommand::Load { .. } = &c {
                self.loads += 1;
            }
            if f(&c) {
                return c;
            }
        }
    }

    /// The engine commands sync asked for so far and not waited for.
    pub fn drain(&mut self) -> Vec<EngineCommand> {
        let mut out = Vec::new();
        while let Ok(c) = self.commands.try_recv() {
            out.push(c);
        }
        out
    }

    /// The engine publishes a place for its load `playback`.
    pub fn position(&self, playback: u64, chapter: &ChapterId, pos: f64, landed: bool) {
        self.publish(playback, |s| {
            s.chapter = Some(chapter.clone());
            s.position = pos;
            s.landed = landed;
        });
    }

    /// The engine's load `playback` stops with `state` (an error).
    pub fn fail(&self, playback: u64, state: PlayState) {
        self.publish(playback, |s| s.state = state);
    }

    /// The engine's status changes for its load `playback`.
    pub fn action(&self, playback: u64, action: Action) {
        self.publish(playback, |s| {
            s.state = match action {
                Action::Play => PlayState::Playing,
                Action::Pause => PlayState::Paused,
                Action::Stop => PlayState::Loading,
            };
        });
    }

    /// Waits for a notice matching `f` (skipping others).
    pub async fn notice(&mut self, f: impl Fn(&Event) -> bool) -> Event {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let n = tokio::time::timeout_at(deadline, self.notices.recv())
                .await
                .expect("timed out waiting for a notice")
                .expect("worker stopped");
            if f(&n) {
                return n;
            }
        }
    }

    /// Waits until the status satisfies `f`.
    pub async fn until(&self, what: &str, f: impl Fn(&SyncStatus) -> bool) -> SyncStatus {
        // Everything sent before is handled first, so the status is not stale.
        self.sync.settle().await;
        let mut w = self.sync.watch();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let s = w.borrow_and_update().clone();
            if f(&s) {
                return s;
            }
            if tokio::time::timeout_at(deadline, w.changed())
                .await
                .is_err()
            {
                panic!("timed out waiting for {what}; status: {s:?}");
            }
        }
    }
}

/// Positions (chapterId, positionSec) of every progress write the proxy saw.
pub fn written_positions(proxy: &Proxy) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for r in proxy.sync_requests() {
        if r.method != "POST" || !r.path.contains("reading-progress") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.body) else {
            continue;
        };
        let items: Vec<serde_json::Value> = match v.get("items") {
            Some(serde_json::Value::Array(a)) => a.clone(),
            _ => {
                let book = r.path.rsplit('/').next().unwrap_or_default().to_owned();
                let mut o = v.clone();
                o["bookId"] = serde_json::json!(book);
                vec![o]
            }
        };
        for i in items {
            out.push((
                i["bookId"].as_str().unwrap_or_default().to_owned(),
                i["chapterId"].as_str().unwrap_or_default().to_owned(),
                i["positionSec"].as_f64().unwrap_or(-1.0),
            ));
        }
    }
    out
}
