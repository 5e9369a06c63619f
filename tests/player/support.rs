//! Test support: a real HTTP server on 127.0.0.1 serving audio files with
//! Range support and a Bearer check, engines on the null output, and signal
//! analysis (duration, dominant frequency, amplitude).

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use earmark::domain::{BookId, ChapterId, Manifest, ManifestItem};
use earmark::player::output::{Capture, Captured};
use earmark::player::{
    AudioMode, Command, Engine, EngineConfig, EngineHandle, PlayerState, Status, StreamRequest,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower_http::services::ServeDir;

pub const TOKEN: &str = "test-token";

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// An HTTP file server: `/files/*` from a directory (Bearer required),
/// `/expired/*` answers 403 license_required, `/norange/*` ignores Range. Stoppable and restartable on
/// the same port.
pub struct TestServer {
    pub addr: SocketAddr,
    dir: PathBuf,
    rt: Option<tokio::runtime::Runtime>,
}

async fn auth(req: Request, next: Next) -> Response {
    let ok = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Bearer {TOKEN}"));
    if !ok {
        return (
            StatusCode::UNAUTHORIZED,
            [("content-type", "application/json")],
            r#"{"code":"unauthorized","message":"Log in again."}"#,
        )
            .into_response();
    }
    next.run(req).await
}

/// A server that ignores Range: always 200 with the whole body.
async fn no_range(
    axum::extract::State(dir): axum::extract::State<PathBuf>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    match std::fs::read(dir.join(&file)) {
        Ok(body) => (StatusCode::OK, body).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn expired() -> Response {
    (
        StatusCode::FORBIDDEN,
        [("content-type", "application/json")],
        r#"{"code":"license_required","message":"The server's license has expired."}"#,
    )
        .into_response()
}

impl TestServer {
    pub fn start(dir: &Path) -> Self {
        Self::start_on(dir, "127.0.0.1:0".parse().unwrap())
    }

    fn start_on(dir: &Path, addr: SocketAddr) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt.block_on(async {
            let mut tries = 0;
            loop {
                match tokio::net::TcpListener::bind(addr).await {
                    Ok(l) => break l,
                    Err(e) if tries < 50 => {
                        tries += 1;
                        let _ = e;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(e) => panic!("bind {addr}: {e}"),
                }
            }
        });
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .nest_service("/files", ServeDir::new(dir))
            .route("/expired/{*rest}", axum::routing::get(expired))
            .route(
                "/norange/{*file}",
                axum::routing::get(no_range).with_state(dir.to_path_buf()),
            )
            .layer(middleware::from_fn(auth));
        rt.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer {
            addr,
            dir: dir.to_path_buf(),
            rt: Some(rt),
        }
    }

    /// Kill the server and every open connection.
    pub fn stop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }

    /// Start again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let mut again = Self::start_on(&self.dir, self.addr);
        self.rt = again.rt.take();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

pub struct Item<'a> {
    pub id: &'a str,
    pub path: &'a str,
    pub duration: Option<f64>,
    pub start: f64,
    pub end: Option<f64>,
}

pub fn item<'a>(id: &'a str, path: &'a str, duration: f64) -> Item<'a> {
    Item {
        id,
        path,
        duration: Some(duration),
        start: 0.0,
        end: None,
    }
}

pub fn manifest(items: &[Item<'_>]) -> Manifest {
    Manifest {
        book_id: BookId::new("bk_test"),
        items: items
            .iter()
            .map(|i| ManifestItem {
                chapter_id: ChapterId::new(i.id),
                title: format!("Chapter {}", i.id),
                duration: i.duration,
                duration_source: Default::default(),
                url: Some(i.path.to_string()),
                mime_type: None,
                size_bytes: None,
                start: i.start,
                end: i.end,
            })
            .collect(),
    }
}

pub struct TestEngine {
    pub handle: EngineHandle,
    pub capture: Capture,
}

/// An engine on the null output. `clock`: 1.0 real time, 0.0 untimed.
pub fn engine(server: &TestServer, clock: f64, token: &str) -> TestEngine {
    engine_with(server, clock, token, |_| {})
}

pub fn engine_with(
    server: &TestServer,
    clock: f64,
    token: &str,
    tweak: impl FnOnce(&mut EngineConfig),
) -> TestEngine {
    let base = format!("http://{}", server.addr);
    let auth = format!("Bearer {token}");
    let resolve = Arc::new(move |item: &ManifestItem| StreamRequest {
        url: format!("{base}{}", item.url.as_deref().unwrap_or("")),
        headers: vec![("Authorization".to_string(), auth.clone())],
    });
    let capture: Capture = Arc::new(Mutex::new(Captured::default()));
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = clock;
    config.capture = Some(capture.clone());
    tweak(&mut config);
    let handle = Engine::spawn(config).expect("engine starts");
    TestEngine { handle, capture }
}

impl TestEngine {
    pub fn load(&self, m: Manifest, chapter: &str, pos: f64) {
        self.handle.send(Command::Load {
            manifest: m,
            start: (ChapterId::new(chapter), pos),
            autoplay: true,
        });
    }

    pub fn wait(
        &self,
        secs: f64,
        what: &str,
        pred: impl FnMut(&PlayerState) -> bool,
    ) -> PlayerState {
        match self.handle.wait_for(Duration::from_secs_f64(secs), pred) {
            Some(s) => s,
            None => panic!(
                "timed out waiting for {what}; state: {:?}",
                self.handle.state()
            ),
        }
    }

    pub fn wait_ended(&self, secs: f64) -> PlayerState {
        self.wait(secs, "Ended", |s| {
            matches!(s.status, Status::Ended | Status::Error(_))
        })
    }

    pub fn captured(&self) -> (u32, usize, Vec<f32>) {
        let c = self.capture.lock().unwrap();
        (c.rate, c.channels, c.samples.clone())
    }
}

impl Drop for TestEngine {
    fn drop(&mut self) {
        self.handle.send(Command::Shutdown);
    }
}

/// First channel of interleaved samples.
pub fn mono(samples: &[f32], channels: usize) -> Vec<f32> {
    samples.iter().step_by(channels.max(1)).copied().collect()
}

/// Dominant frequency by counting rising zero crossings (with hysteresis).
pub fn frequency(x: &[f32], rate: u32) -> f64 {
    let mut crossings = Vec::new();
    let mut armed = false;
    for (i, w) in x.windows(2).enumerate() {
        if w[0] < -0.02 {
            armed = true;
        }
        if armed && w[0] <= 0.0 && w[1] > 0.0 {
            // Linear interpolation of the crossing instant.
            let frac = -w[0] / (w[1] - w[0]);
            crossings.push(i as f64 + frac as f64);
            armed = false;
        }
    }
    if crossings.len() < 3 {
        return 0.0;
    }
    let periods = (crossings.len() - 1) as f64;
    let span = crossings[crossings.len() - 1] - crossings[0];
    periods * rate as f64 / span
}
