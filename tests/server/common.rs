//! Shared helpers: libraries of generated WAV files, and a small HTTP
//! client that returns status + JSON without hiding anything.

use crate::harness::{TestServer, TestSession};
use reqwest::Method;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Writes a mono 16-bit 8 kHz WAV of `secs` seconds (a sine tone).
pub fn write_wav(path: &Path, secs: f64, freq: f64) {
    let rate = 8000u32;
    let n = (secs * rate as f64) as u32;
    let mut data = Vec::with_capacity(44 + n as usize * 2);
    data.extend_from_slice(b"RIFF");
    data.extend_from_slice(&(36 + n * 2).to_le_bytes());
    data.extend_from_slice(b"WAVEfmt ");
    data.extend_from_slice(&16u32.to_le_bytes());
    data.extend_from_slice(&1u16.to_le_bytes());
    data.extend_from_slice(&1u16.to_le_bytes());
    data.extend_from_slice(&rate.to_le_bytes());
    data.extend_from_slice(&(rate * 2).to_le_bytes());
    data.extend_from_slice(&2u16.to_le_bytes());
    data.extend_from_slice(&16u16.to_le_bytes());
    data.extend_from_slice(b"data");
    data.extend_from_slice(&(n * 2).to_le_bytes());
    for i in 0..n {
        let s = (i as f64 / rate as f64 * freq * std::f64::consts::TAU).sin();
        data.extend_from_slice(&((s * 8000.0) as i16).to_le_bytes());
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, data).unwrap();
}

/// A small library:
/// - `Fiction/Two Cities/` (book.toml; 1.wav 2 s, 2.wav 1 s, 10.wav 1.5 s; cover.jpg)
/// - `Science/Cosmos/` (a.wav 3 s, b.wav 2 s; no book.toml)
/// - `loose.wav` (4 s, in the root: its own book)
pub fn small_library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let two = root.join("Fiction/Two Cities");
    write_wav(&two.join("1.wav"), 2.0, 440.0);
    write_wav(&two.join("2.wav"), 1.0, 550.0);
    write_wav(&two.join("10.wav"), 1.5, 660.0);
    std::fs::write(
        two.join("book.toml"),
        "title = \"A Tale of Two Cities\"\nauthor = \"Charles Dickens\"\nnarrator = \"Tess Ter\"\ndescription = \"It was the best of times\"\n",
    )
    .unwrap();
    std::fs::write(two.join("cover.jpg"), b"\xff\xd8\xff\xe0 not really a jpeg").unwrap();
    write_wav(&root.join("Science/Cosmos/a.wav"), 3.0, 300.0);
    write_wav(&root.join("Science/Cosmos/b.wav"), 2.0, 350.0);
    write_wav(&root.join("loose.wav"), 4.0, 500.0);
    dir
}

pub fn demo_library() -> PathBuf {
    earmark::server::demo::default_library()
}

pub struct Resp {
    pub status: u16,
    pub body: Value,
}

impl Resp {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status, body: {}",
            self.body
        );
        &self.body["data"]
    }
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(
            self.status, status,
            "unexpected status, body: {}",
            self.body
        );
        assert_eq!(self.code(), code, "body: {}", self.body);
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "error without message: {}",
            self.body
        );
    }
}

/// A logged-in client.
#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub session: TestSession,
    pub header_prefix: String,
}

impl Api {
    pub async fn login(server: &TestServer) -> Api {
        Api::from_session(server, server.login().await.unwrap())
    }

    pub fn from_session(server: &TestServer, session: TestSession) -> Api {
        Api {
            http: reqwest::Client::new(),
            base: server.base_url().to_owned(),
            session,
            header_prefix: "X-Service".into(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends with the token and, when `scope`, the identity headers.
    pub async fn send(&self, method: Method, path: &str, body: Option<Value>, scope: bool) -> Resp {
        let mut req = self
            .http
            .request(method, self.url(path))
            .bearer_auth(&self.session.token);
        if scope {
            req = req
                .header(
                    format!("{}-Expected-Server-Id", self.header_prefix),
                    &self.session.server_id,
                )
                .header(
                    format!("{}-Expected-User-Id", self.header_prefix),
                    self.session.user_id.to_string(),
                );
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        into_resp(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(Method::GET, path, None, false).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(Method::POST, path, Some(body), true).await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.send(Method::DELETE, path, None, true).await
    }

    /// The first book whose title contains `needle`.
    pub async fn book_titled(&self, needle: &str) -> Value {
        let list = self.get("/books?pageSize=500").await;
        list.expect(200)["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["title"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no book titled {needle}: {}", list.body))
            .clone()
    }

    pub async fn manifest(&self, book_id: &str) -> Value {
        self.get(&format!("/books/{book_id}/download-manifest"))
            .await
            .expect(200)
            .clone()
    }

    pub async fn progress_write(&self, book_id: &str, chapter: &str, pos: f64, at: i64) -> Resp {
        self.post(
            &format!("/auth/reading-progress/{book_id}"),
            json!({"chapterId": chapter, "positionSec": pos, "clientUpdatedAt": at}),
        )
        .await
    }
}

pub async fn into_resp(res: reqwest::Response) -> Resp {
    let status = res.status().as_u16();
    let bytes = res.bytes().await.unwrap();
    // Non-JSON bodies (audio, images) become a string so callers can
    // still assert on the status; error checks then fail on `code`.
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    Resp { status, body }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
