//! Shared set-up: a small generated library, the reference server behind a
//! proxy, logged-in clients and sync workers with short intervals.

use crate::proxy::Proxy;
use earmark::api::{BaseUrl, BookQuery, Client, ClientOptions};
use earmark::domain::{BookId, ChapterId, Manifest, Progress};
use earmark::server::testing::TestServer;
use earmark::sync::client_remote::ClientRemote;
use earmark::sync::reconciler::{Event, PlaybackId, ReconcilerConfig, Spot};
use earmark::sync::worker::{self, Notice, SyncHandle, SyncStatus, WorkerConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Writes a mono 8-bit WAV of `secs` seconds of silence at 2 kHz.
fn wav(path: &Path, secs: u32) {
    let rate = 2000u32;
    let n = rate * secs;
    let mut b = Vec::with_capacity(44 + n as usize);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes()); // bytes per second
    b.extend_from_slice(&1u16.to_le_bytes()); // block align
    b.extend_from_slice(&8u16.to_le_bytes()); // bits
    b.extend_from_slice(b"data");
    b.extend_from_slice(&n.to_le_bytes());
    b.resize(44 + n as usize, 128);
    std::fs::write(path, b).unwrap();
}

/// Three books: "Long" (1300 s + 200 s), "Alpha" and "Beta" (2 × 120 s).
pub fn library() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("earmark-sync-lib-")
        .tempdir()
        .unwrap();
    for (name, lens) in [
        ("Long", [1300, 200]),
        ("Alpha", [120, 120]),
        ("Beta", [120, 120]),
    ] {
        let b = dir.path().join(name);
        std::fs::create_dir_all(&b).unwrap();
        for (i, l) in lens.iter().enumerate() {
            wav(&b.join(format!("{:02}.wav", i + 1)), *l);
        }
        std::fs::write(
            b.join("book.toml"),
            format!("title = \"{name}\"\nauthor = \"Test\"\n"),
        )
        .unwrap();
    }
    dir
}

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
        let base = BaseUrl::parse(&self.proxy.base_url()).unwrap();
        let opts = ClientOptions {
            retries: 0,
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
            ..ClientOptions::default()
        };
        let c = Client::new(base, opts).unwrap();
        c.login(&self.server.username, &self.server.password)
            .await
            .unwrap();
        c
    }

    /// A client straight to the server (to read what it holds).
    pub async fn direct(&self) -> Client {
        let c = Client::new(
            BaseUrl::parse(self.server.base_url()).unwrap(),
            ClientOptions::default(),
        )
        .unwrap();
        c.login(&self.server.username, &self.server.password)
            .await
            .unwrap();
        c
    }

    pub async fn book(&self, title: &str) -> (BookId, Manifest) {
        let c = self.direct().await;
        let books = c.books(&BookQuery::default()).await.unwrap();
        let b = books.iter().find(|b| b.title == title).unwrap().id.clone();
        let m = c.manifest(&b).await.unwrap();
        (b, m)
    }

    pub async fn server_progress(&self, book: &BookId) -> Option<Progress> {
        self.direct().await.progress(book).await.unwrap().progress
    }
}

pub fn config(dir: &Path) -> WorkerConfig {
    let mut c = WorkerConfig::new(dir);
    c.reconciler = ReconcilerConfig {
        report_interval_ms: 200,
        ..ReconcilerConfig::default()
    };
    c.tick = Duration::from_millis(50);
    c.backoff_min = Duration::from_millis(100);
    c.backoff_max = Duration::from_millis(400);
    c.license_poll = Duration::from_millis(200);
    c
}

pub struct Player {
    pub handle: SyncHandle,
    pub notices: mpsc::UnboundedReceiver<Notice>,
}

pub fn start_worker(client: &Client, dir: &Path) -> Player {
    let (handle, notices) =
        worker::spawn(config(dir), Arc::new(ClientRemote::new(client.clone()))).unwrap();
    Player { handle, notices }
}

impl Player {
    pub fn open(&self, playback: u64, book: &BookId, manifest: &Manifest) {
        self.handle.event(Event::BookOpened {
            playback: PlaybackId(playback),
            book: book.clone(),
            manifest: manifest.clone(),
            local: None,
        });
    }

    pub fn position(&self, playback: u64, chapter: &ChapterId, pos: f64, landed: bool) {
        self.handle.event(Event::EnginePosition {
            playback: PlaybackId(playback),
            spot: Spot::new(chapter.clone(), pos),
            landed,
        });
    }

    pub fn action(&self, playback: u64, action: earmark::sync::reconciler::Action) {
        self.handle.event(Event::Action {
            playback: PlaybackId(playback),
            action,
        });
    }

    /// Waits for a notice matching `f` (skipping others).
    pub async fn notice(&mut self, f: impl Fn(&Notice) -> bool) -> Notice {
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
        self.handle.settle().await;
        let mut w = self.handle.watch();
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
