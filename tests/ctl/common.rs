//! A detached session of a logged-in home, and `earmark ctl` run against
//! it. Every wait has a deadline; a session is killed when its test ends,
//! whatever happened.

use crate::harness::TestServer;
use crate::harness::{Home, library, logged_in, text, titled};
use earmark::api::Client;
use earmark::domain::{Book, BookId, Progress};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

/// A server of the small library (Long: 1300 s + 200 s), a home logged in
/// to it, and a client straight to the server.
pub struct World {
    pub server: TestServer,
    pub home: Home,
    pub direct: Client,
    pub books: Vec<Book>,
    _lib: tempfile::TempDir,
}

impl World {
    pub async fn start() -> World {
        let lib = library();
        let server = TestServer::start(lib.path()).await.unwrap();
        let (home, direct, books) = logged_in(&server).await;
        World {
            server,
            home,
            direct,
            books,
            _lib: lib,
        }
    }

    pub fn book(&self, title: &str) -> BookId {
        titled(&self.books, title).id.clone()
    }

    /// `earmark ARGS` to its end, with `env` set.
    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = self.home.command(args);
        c.stdin(std::process::Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// `earmark --json ctl ARGS`: its exit code and its document.
    pub fn ctl(&self, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["--json", "ctl"];
        all.extend_from_slice(args);
        let o = self.run(&all, &[]);
        let doc = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (o.status.code().unwrap_or(-1), doc)
    }

    /// `ctl status`, which must answer.
    pub fn status(&self) -> Value {
        let (code, doc) = self.ctl(&["status"]);
        assert_eq!(code, 0, "ctl status: {doc}");
        doc
    }

    /// `earmark play BOOK --detach --audio null ARGS`, which must start.
    pub fn detach(&self, book: &BookId, more: &[&str], env: &[(&str, &str)]) -> Detached {
        let mut args = vec![
            "--json",
            "play",
            book.as_str(),
            "--detach",
            "--audio",
            "null",
        ];
        args.extend_from_slice(more);
        let began = Instant::now();
        let o = self.run(&args, env);
        assert!(o.status.success(), "play --detach: {}", text(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        let d = Detached {
            pid: doc["pid"].as_u64().unwrap() as i32,
            socket: PathBuf::from(doc["socket"].as_str().unwrap()),
            said: doc["said"].clone(),
        };
        assert!(began.elapsed() < Duration::from_secs(20));
        d
    }

    /// The server's place of `book`.
    pub async fn server_place(&self, book: &BookId) -> Option<Progress> {
        self.direct.progress(book).await.unwrap().progress
    }

    /// Waits until the server's place of `book` satisfies `ok`.
    pub async fn server_until(
        &self,
        book: &BookId,
        what: &str,
        ok: impl Fn(&Progress) -> bool,
    ) -> Progress {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let p = self.server_place(book).await;
            if let Some(p) = p.as_ref().filter(|p| ok(p)) {
                return p.clone();
            }
            assert!(
                Instant::now() < deadline,
                "the server's place never {what}: {p:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until `ctl status` answers and satisfies `ok` (a session
    /// busy with clients that just left answers again shortly).
    pub fn status_until(&self, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (code, s) = self.ctl(&["status"]);
            if code == 0 && ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "the session never {what}: {s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A detached session: killed (SIGKILL) when the test ends, if still there.
pub struct Detached {
    pub pid: i32,
    pub socket: PathBuf,
    /// What the session said before it played (`--json`'s `said`).
    pub said: Value,
}

impl Detached {
    /// Running (an ended session re-parented to an init that does not
    /// reap is a zombie: ended too).
    pub fn alive(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid));
        let state = stat.ok().and_then(|s| {
            let after = s.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(after)
        });
        matches!(state, Some(c) if c != 'Z' && c != 'X')
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: a signal to the session this test started.
        unsafe { libc::kill(self.pid, sig) };
    }

    /// Waits until the process has ended.
    pub fn until_gone(&self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "the session {} never ended",
                self.pid
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Detached {
    fn drop(&mut self) {
        if self.alive() {
            self.signal(libc::SIGKILL);
        }
    }
}

/// The chapter's place (seconds) and number of a status document.
pub fn place(s: &Value) -> (u64, f64) {
    (
        s["chapter"]["number"].as_u64().unwrap_or(0),
        s["chapter"]["position"].as_f64().unwrap_or(-1.0),
    )
}
