//! The `earmark` player in a real pseudo-terminal: its CPU when idle,
//! playing and paused, and its first frame, RSS and keystroke latency over
//! a cached library of 100k books.

use crate::measure::{cpu_percent_over, percentile, rss_mb};
use crate::setup::Client;
use earmark::domain::{Book, BookId, ServerId, UserId};
use earmark::runtime::cache;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Screen {
    parser: vt100::Parser,
    /// When the last bytes from the terminal arrived.
    last_output: Option<Instant>,
}

struct Pty {
    screen: Arc<Mutex<Screen>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    started: Instant,
}

/// Answers what a plain xterm answers of the player's start-up graphics
/// query (device attributes without sixel, and the status report that ends
/// it), as every real terminal does at once; the vt100 parser answers
/// nothing, and the player would wait out its deadline for a silent one.
fn answer_queries(out: &[u8], to: &Mutex<Box<dyn Write + Send>>) {
    let has = |q: &[u8]| out.windows(q.len()).any(|w| w == q);
    let mut reply = Vec::new();
    if has(b"\x1b[c") {
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    if has(b"\x1b[5n") {
        reply.extend_from_slice(b"\x1b[0n");
    }
    if !reply.is_empty() {
        let mut w = to.lock().unwrap();
        let _ = w.write_all(&reply).and_then(|_| w.flush());
    }
}

impl Pty {
    fn start(client: &Client) -> Result<Pty, String> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| e.to_string())?;
        let mut cmd = CommandBuilder::new(&client.earmark);
        cmd.args(["--audio", "null"]);
        for (k, v) in client.command().get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            }
        }
        cmd.env("TERM", "xterm-256color");
        let started = Instant::now();
        let child = pair.slave.spawn_command(cmd).map_err(|e| e.to_string())?;
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().map_err(|e| e.to_string())?;
        let writer = Arc::new(Mutex::new(
            pair.master.take_writer().map_err(|e| e.to_string())?,
        ));
        let answers = writer.clone();
        let screen = Arc::new(Mutex::new(Screen {
            parser: vt100::Parser::new(
                std::num::NonZeroU16::new(24).unwrap(),
                std::num::NonZeroU16::new(80).unwrap(),
                0,
            ),
            last_output: None,
        }));
        let s2 = screen.clone();
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 16384];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = s2.lock().unwrap();
                s.last_output = Some(Instant::now());
                s.parser.process(&buf[..n]);
                drop(s);
                answer_queries(&buf[..n], &answers);
            }
        });
        Ok(Pty {
            screen,
            writer,
            child,
            started,
        })
    }

    fn pid(&self) -> u32 {
        self.child.process_id().unwrap_or(0)
    }

    fn text(&self) -> String {
        self.screen.lock().unwrap().parser.screen().contents()
    }

    /// Waits (at most 60 s) until the screen shows `what`; returns when.
    fn wait_for(&self, what: &str) -> Result<Instant, String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let s = self.screen.lock().unwrap();
            if s.parser.screen().contents().contains(what) {
                return Ok(s.last_output.unwrap_or_else(Instant::now));
            }
            drop(s);
            std::thread::sleep(Duration::from_millis(2));
        }
        Err(format!(
            "the player never showed {what:?}; screen:\n{}",
            self.text()
        ))
    }

    /// Waits (at most 60 s) until the screen's text passes `done`;
    /// returns when the bytes that made it so arrived.
    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> Result<Instant, String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let s = self.screen.lock().unwrap();
            if done(&s.parser.screen().contents()) {
                return Ok(s.last_output.unwrap_or_else(Instant::now));
            }
            drop(s);
            std::thread::sleep(Duration::from_millis(1));
        }
        Err(format!(
            "the player never showed {what}; screen:\n{}",
            self.text()
        ))
    }

    /// Writes `bytes`; returns when it started writing (a fast frame can
    /// be read back before the write call returns).
    fn keys(&mut self, bytes: &str) -> Result<Instant, String> {
        let sent = Instant::now();
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes())
            .and_then(|_| w.flush())
            .map_err(|e| e.to_string())?;
        Ok(sent)
    }

    /// The first output after `sent`, within 5 s.
    fn output_after(&self, sent: Instant) -> Option<Duration> {
        let deadline = sent + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(t) = self.screen.lock().unwrap().last_output
                && t > sent
            {
                return Some(t - sent);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        None
    }

    fn quit(mut self) {
        let _ = self.keys("\x1b");
        let _ = self.keys("Q");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
    }
}

/// The player's CPU (% of a core, whole process): idle in the library,
/// playing the small book at 1×, paused.
pub fn states(
    _earmark: &std::path::Path,
    client: &Client,
    secs: f64,
) -> Result<Vec<(&'static str, f64)>, String> {
    let mut tui = Pty::start(client)?;
    tui.wait_for("Bench Small")?;
    // Let the start-up work (cache write, license check) settle.
    std::thread::sleep(Duration::from_secs(2));
    let idle = cpu_percent_over(tui.pid(), secs)?;
    tui.keys("/bench small")?;
    tui.wait_for("found")?;
    tui.keys("\r")?;
    std::thread::sleep(Duration::from_millis(300));
    tui.keys("\r")?;
    tui.wait_for("Space resumes")?;
    std::thread::sleep(Duration::from_millis(500));
    tui.keys(" ")?;
    tui.wait_for("▶ Playing")?;
    tui.wait_for("0:02 /")?;
    let playing = cpu_percent_over(tui.pid(), secs)?;
    tui.keys(" ")?;
    tui.wait_for("Paused")?;
    std::thread::sleep(Duration::from_secs(1));
    let paused = cpu_percent_over(tui.pid(), secs)?;
    tui.quit();
    Ok(vec![
        ("idle", idle),
        ("playing", playing),
        ("paused", paused),
    ])
}

/// The book screen opened `runs` times from the library, the first two
/// rows in turn (so each open loads a book not on screen): when Enter was
/// written, and when the screen was complete (its chapter list in place of
/// "Loading chapters…").
pub fn book_screens(client: &Client, runs: usize) -> Result<Vec<(Instant, Instant)>, String> {
    let mut tui = Pty::start(client)?;
    tui.wait_for("Bench Small")?;
    // Let the start-up work (cache write, license check) settle.
    std::thread::sleep(Duration::from_secs(2));
    let mut opens = Vec::new();
    for i in 0..runs {
        if i > 0 {
            tui.keys(if i % 2 == 1 { "j" } else { "k" })?;
            std::thread::sleep(Duration::from_millis(300));
        }
        let enter = tui.keys("\r")?;
        let done = tui.wait_until("a complete book screen", |s| {
            s.contains("[Chapters]") && !s.contains("Loading chapters")
        })?;
        opens.push((enter, done));
        std::thread::sleep(Duration::from_millis(300));
        tui.keys("\x1b")?;
        tui.wait_until("the library again", |s| !s.contains("[Chapters]"))?;
        std::thread::sleep(Duration::from_millis(300));
    }
    tui.quit();
    Ok(opens)
}

pub struct Big {
    pub first_frame_ms: f64,
    pub rss_mb: f64,
    pub key_p50_ms: f64,
    pub key_p99_ms: f64,
    pub keys: usize,
}

const WORDS: &[&str] = &[
    "whale", "river", "night", "garden", "iron", "silent", "empire", "winter", "glass", "shadow",
    "crown", "harbor", "storm", "letters", "mountain", "secret", "journey", "island", "stone",
    "fire",
];

/// With the server stopped: a 100k-book cache for this client's scope,
/// then the player started on it.
pub fn big_library(_earmark: &std::path::Path, client: &Client, n: usize) -> Result<Big, String> {
    let session = client.home.join("data/earmark/sessions/default.json");
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&session).map_err(|e| format!("{}: {e}", session.display()))?,
    )
    .map_err(|e| e.to_string())?;
    let scope = cache::Scope {
        server_id: ServerId::new(s["serverId"].as_str().unwrap_or_default()),
        // The server's digits, as the session file keeps them.
        user_id: UserId::parse(&match &s["userId"] {
            serde_json::Value::String(d) => d.clone(),
            other => other.to_string(),
        })
        .ok_or("the session file has no user id")?,
    };
    let books: Vec<Book> = (0..n)
        .map(|i| {
            let w = |k: u32| WORDS[(i / WORDS.len().pow(k)) % WORDS.len()];
            Book {
                id: BookId::new(format!("b{i}")),
                title: format!("The {} of the {} {} {i}", w(0), w(1), w(2)),
                authors: vec![w(3).into()],
                duration: Some(3600.0 + i as f64),
                chapter_count: Some(3),
                ..Book::default()
            }
        })
        .collect();
    let dir = client.home.join("cache/earmark");
    cache::save(&dir, &scope, &books).map_err(|e| format!("writing the cache: {e}"))?;
    drop(books);

    let mut tui = Pty::start(client)?;
    let first = tui.wait_for(" of the ")?;
    let first_frame_ms = (first - tui.started).as_secs_f64() * 1000.0;
    // The whole cache is read in the background after the first frame:
    // wait until RSS stops growing (at most 30 s).
    let mut rss = 0.0;
    for _ in 0..60 {
        std::thread::sleep(Duration::from_millis(500));
        let now = rss_mb(tui.pid()).unwrap_or(0.0);
        if now > 0.0 && (now - rss).abs() < 0.5 {
            break;
        }
        rss = now;
    }
    let mut lat = Vec::new();
    tui.keys("/")?;
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..10 {
        for c in "whale storm".chars() {
            let sent = tui.keys(&c.to_string())?;
            if let Some(d) = tui.output_after(sent) {
                if d > Duration::from_millis(100) {
                    eprintln!("bench: slow frame after {c:?}: {d:?}");
                }
                lat.push(d.as_secs_f64() * 1000.0);
            }
            // One key at a time, as typed: the next after the frame settles.
            std::thread::sleep(Duration::from_millis(60));
        }
        for _ in 0.."whale storm".len() {
            let sent = tui.keys("\x7f")?;
            if let Some(d) = tui.output_after(sent) {
                if d > Duration::from_millis(100) {
                    eprintln!("bench: slow frame after Backspace: {d:?}");
                }
                lat.push(d.as_secs_f64() * 1000.0);
            }
            std::thread::sleep(Duration::from_millis(60));
        }
    }
    let rss_mb = rss_mb(tui.pid()).unwrap_or(rss).max(rss);
    tui.quit();
    Ok(Big {
        first_frame_ms,
        rss_mb,
        key_p50_ms: percentile(&lat, 0.5),
        key_p99_ms: percentile(&lat, 0.99),
        keys: lat.len(),
    })
}
