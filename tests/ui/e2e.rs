//! End to end in a real pseudo-terminal against the reference server:
//! the `earmark` binary, our tty reader and renderer, the API client.

use earmark::server::testing::TestServer;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    /// Everything the player wrote, as bytes (what vt100 does not show).
    output: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Tui {
    pub(crate) fn start(home: &std::path::Path, server: &str, user: &str, extra: &[&str]) -> Tui {
        Tui::start_on_bus(home, server, user, extra, None)
    }

    /// `start`, on the D-Bus session bus at `bus` (none: no bus at all).
    pub(crate) fn start_on_bus(
        home: &std::path::Path,
        server: &str,
        user: &str,
        extra: &[&str],
        bus: Option<&str>,
    ) -> Tui {
        Tui::start_with(home, server, user, extra, bus, &[])
    }

    /// `start`, with more variables in the environment.
    pub(crate) fn start_with(
        home: &std::path::Path,
        server: &str,
        user: &str,
        extra: &[&str],
        bus: Option<&str>,
        env: &[(&str, &str)],
    ) -> Tui {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_earmark"));
        cmd.args(extra);
        cmd.env("HOME", home);
        cmd.env("XDG_CONFIG_HOME", home.join("config"));
        cmd.env("XDG_DATA_HOME", home.join("data"));
        cmd.env("XDG_CACHE_HOME", home.join("cache"));
        if !server.is_empty() {
            cmd.env("EARMARK_SERVER", server);
            cmd.env("EARMARK_USER", user);
        } else {
            for k in [
                "EARMARK_SERVER",
                "EARMARK_USER",
                "EARMARK_PROFILE",
                "EARMARK_AUDIO",
            ] {
                cmd.env_remove(k);
            }
        }
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.env_remove("DBUS_SESSION_BUS_ADDRESS");
        cmd.env_remove("XDG_RUNTIME_DIR");
        if let Some(bus) = bus {
            cmd.env("DBUS_SESSION_BUS_ADDRESS", bus);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(24).unwrap(),
            std::num::NonZeroU16::new(80).unwrap(),
            0,
        )));
        let s2 = screen.clone();
        let output: Arc<Mutex<Vec<u8>>> = Default::default();
        let o2 = output.clone();
        std::thread::spawn(move || {
            let _master = pair.master; // keep the pty open while reading
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                s2.lock().unwrap().process(&buf[..n]);
                o2.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Tui {
            screen,
            output,
            writer,
            child,
        }
    }

    pub(crate) fn text(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// The terminal cursor (row, column) and the text of its row, while
    /// it is shown.
    pub(crate) fn cursor(&self) -> Option<((u16, u16), String)> {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        if screen.hide_cursor() {
            return None;
        }
        let (row, col) = screen.cursor_position();
        let text = screen.rows(0, 80).nth(usize::from(row)).unwrap_or_default();
        Some(((row, col), text))
    }

    /// Waits until the player has written `bytes` (an escape sequence).
    pub(crate) fn wait_for_output(&self, bytes: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self
                .output
                .lock()
                .unwrap()
                .windows(bytes.len())
                .any(|w| w == bytes)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out waiting for {bytes:?} in the output");
    }

    pub(crate) fn wait_for(&self, what: &str) {
        self.wait_for_within(what, Duration::from_secs(20));
    }

    /// `wait_for` with a deadline of its own (a back-off to wait out).
    pub(crate) fn wait_for_within(&self, what: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.text().contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("timed out waiting for {what:?}; screen:\n{}", self.text());
    }

    /// Waits until `what` has left the screen (a key was handled), so the
    /// next keys never share a read with an Esc (ESC+v would be Alt+v).
    pub(crate) fn wait_gone(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if !self.text().contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "timed out waiting for {what:?} to go; screen:\n{}",
            self.text()
        );
    }

    pub(crate) fn keys(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
        std::thread::sleep(Duration::from_millis(60));
    }

    pub(crate) fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("earmark did not exit; screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

pub(crate) fn demo_library() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("demo")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_search_play_bookmark_quit_then_the_server_holds_it() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    let screen = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("filter: all");
        tui.wait_for("Aesop");
        tui.keys("/aesop");
        tui.wait_for("found");
        tui.keys("\r"); // asks the server too, focus to the list
        tui.keys("\r"); // opens the book
        tui.wait_for("Chapters");
        tui.wait_for("The Fox and the Grapes");
        tui.keys(" "); // play (resume: no progress yet, so chapter 1)
        tui.wait_for("▶ Playing");
        tui.wait_for("0:02 /"); // real-time null output got going
        tui.keys("\x1b[C"); // → skip 10 s
        tui.keys("]"); // speed 1.05
        tui.wait_for("1.05×");
        tui.keys("b");
        tui.wait_for("Bookmark at");
        tui.keys("the grapes are sour\r");
        tui.wait_for("Bookmark added");
        tui.keys(" "); // pause: reports the position
        tui.wait_for("Paused");
        tui.keys("U"); // the place history: the skip left chapter 1 near 0:02
        tui.wait_for("[History (1)]");
        tui.wait_for("skip");
        tui.keys("S"); // listening statistics of this device
        tui.wait_for("listening statistics");
        tui.wait_for("Today");
        tui.keys("q"); // back to the book
        tui.wait_for("[History (1)]");
        tui.keys("q"); // back to the library
        tui.keys("\x1b");
        tui.keys("q"); // quit
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
        // The reader thread may still be applying the last bytes.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let screen = {
                let parser = tui.screen.lock().unwrap();
                (
                    parser.screen().alternate_screen(),
                    parser.screen().hide_cursor(),
                )
            };
            if screen == (false, false) || std::time::Instant::now() > deadline {
                break screen;
            }
            std::thread::yield_now();
        }
    })
    .await
    .unwrap();
    assert_eq!(
        screen,
        (false, false),
        "alternate screen left and cursor shown"
    );
    // The server holds what the listener did: the place past the skip,
    // the bookmark with its note, and the speed.
    let c = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    c.login(&server.username, &server.password).await.unwrap();
    let books = c.books(&Default::default()).await.unwrap();
    let aesop = books
        .iter()
        .find(|b| b.title.contains("Aesop"))
        .unwrap()
        .id
        .clone();
    let m = c.manifest(&aesop).await.unwrap();
    let state = c.progress(&aesop).await.unwrap();
    let p = state.progress.expect("the place reached the server");
    assert_eq!(p.chapter_id, m.items[0].chapter_id, "{p:?}");
    assert!(
        p.position >= 12.0,
        "the skip and the pause are in it: {p:?}"
    );
    let s = state.settings.expect("the speed reached the server");
    assert!((s.speed - 1.05).abs() < 1e-3, "{s:?}");
    let marks = c.bookmarks(&aesop).await.unwrap();
    assert!(
        marks
            .iter()
            .any(|b| b.note.as_deref() == Some("the grapes are sour")),
        "{marks:?}"
    );
}

#[test]
fn demo_lands_in_a_playing_ready_library() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("filter: all");
    tui.wait_for("Aesop");
    tui.wait_for("demo@");
    tui.keys("Q");
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// `cargo test --release --test ui bench_demo -- --ignored --nocapture`:
/// CPU while idle/paused and while playing (null output), RSS, and text
/// captures of the library and the player for the README.
#[test]
#[ignore]
fn bench_demo_cpu_rss_and_capture() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("Aesop");
    let pid = tui.child.process_id().unwrap();
    let threads = || -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let dir = e.path();
            let name = std::fs::read_to_string(dir.join("comm"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            let tid: u32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
            let stat =
                std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).unwrap_or_default();
            let after = stat.rsplit(')').next().unwrap_or("");
            let f: Vec<&str> = after.split_whitespace().collect();
            let t = f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
                + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
            v.push((format!("{name}/{tid}"), t));
        }
        v
    };
    let measure = |secs: u64| {
        let t0 = cpu_ticks(pid);
        let before = threads();
        std::thread::sleep(Duration::from_secs(secs));
        let ticks = cpu_ticks(pid) - t0;
        let after = threads();
        let busy: Vec<String> = after
            .iter()
            .filter_map(|(n, t)| {
                let b = before.iter().find(|(m, _)| m == n).map_or(0, |(_, t)| *t);
                (t > &b).then(|| format!("{n}: {} ticks", t - b))
            })
            .collect();
        println!("  threads that used CPU in {secs} s: {busy:?}");
        // USER_HZ is 100 on Linux.
        ticks as f64 / 100.0 / secs as f64 * 100.0
    };
    std::thread::sleep(Duration::from_secs(2));
    let idle = measure(20);
    println!("--- library, 80x24 ---\n{}", tui.text());
    tui.keys("/aesop\r\r");
    tui.wait_for("Chapters");
    tui.keys(" ");
    tui.wait_for("▶ Playing");
    std::thread::sleep(Duration::from_secs(2));
    let playing = measure(20);
    tui.keys("\x1b");
    tui.keys("\x1b");
    std::thread::sleep(Duration::from_millis(600));
    println!("--- library while playing, 80x24 ---\n{}", tui.text());
    tui.keys(".");
    std::thread::sleep(Duration::from_millis(600));
    println!("--- book + player, 80x24 ---\n{}", tui.text());
    tui.keys(" ");
    tui.wait_for("Paused");
    std::thread::sleep(Duration::from_secs(1));
    let paused = measure(20);
    println!(
        "CPU idle in the library: {idle:.2}% of a core; playing (null output, 1.0x): {playing:.2}%; paused: {paused:.2}%; RSS {} MB",
        rss_kb(pid) / 1024
    );
    tui.keys("Q");
    tui.wait_exit();
}

#[test]
fn sigterm_saves_and_restores_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("Aesop");
    let pid = tui.child.process_id().unwrap() as i32;
    // SAFETY: sends a signal to the child we started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
    std::thread::sleep(Duration::from_millis(100));
    let parser = tui.screen.lock().unwrap();
    assert!(!parser.screen().alternate_screen());
    assert!(!parser.screen().hide_cursor());
}

/// The demo series end to end: tags and book.toml on the server, the wire,
/// and the narrowed and grouped library in a real terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_series_opens_in_its_order_and_groups() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("filter: all");
        tui.wait_for("Aesop's Fables");
        tui.keys("g"); // the first row by title: Aesop's Fables
        tui.keys("e"); // its series
        tui.wait_for("series: Aesop's Fables (3)");
        tui.wait_for("#1.5 The Oak and the Reeds");
        tui.keys("\r"); // the cursor stayed on Aesop's Fables (#1)
        tui.wait_for("Aesop's Fables #1 · more: a author  w narrator"); // beside the cover
        tui.keys("q"); // back to the narrowed library
        tui.wait_gone("more: a author");
        tui.wait_for("series: Aesop's Fables (3)");
        tui.keys("\x1b"); // and to the whole library
        tui.wait_gone("series: Aesop's Fables");
        tui.keys("vvv"); // grouped by series
        tui.wait_for("by series (2)");
        tui.wait_for("(not in a series)");
        tui.keys("Q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
}
