//! The `earmark` player in a real pseudo-terminal ([`Tui`]): what the
//! end-to-end tests of the player (e2e*.rs, here) and of `earmark ctl`'s
//! attach (tests/ctl, by `#[path]`) drive.

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) struct Tui {
    pub(crate) screen: Arc<Mutex<vt100::Parser>>,
    /// Everything the player wrote, as bytes (what vt100 does not show).
    output: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    pub(crate) child: Box<dyn portable_pty::Child + Send + Sync>,
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
