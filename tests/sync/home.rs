//! A home for the `earmark` binary logged in to a reference server, and
//! the small generated library: shared by tests/sync (through `support`)
//! and tests/ctl (by `#[path]`).

use earmark::api::{BaseUrl, Client};
use earmark::server::testing::TestServer;
use std::path::Path;

/// Writes a mono 8-bit WAV of `secs` seconds of silence at 2 kHz.
pub fn wav(path: &Path, secs: u32) {
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

/// An isolated home for the `earmark` binary (its own XDG dirs, the file
/// token store) pointed at one server as user "alice".
pub struct Home {
    pub dir: tempfile::TempDir,
    pub server: String,
}

impl Home {
    /// A home logged in to `server` with `earmark login`, a client of the
    /// same user straight to the server, and the server's books.
    pub async fn logged_in(server: &TestServer) -> (Home, Client, Vec<earmark::domain::Book>) {
        let url = server.base_url().to_owned();
        let home = Home::new(&url);
        let o = home.run(&["login", "--password-stdin"], Some(&server.password));
        assert!(o.status.success(), "{}", text(&o));
        let direct = Client::new(BaseUrl::parse(&url).unwrap(), Default::default()).unwrap();
        direct
            .login(&server.username, &server.password)
            .await
            .unwrap();
        let books = direct.books(&Default::default()).await.unwrap();
        (home, direct, books)
    }

    pub fn new(server: &str) -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
            server: server.to_owned(),
        }
    }

    /// The command, ready to spawn (stdin, stdout and stderr piped).
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        use std::process::Stdio;
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_earmark"));
        c.args(["--server", &self.server, "--user", "alice"])
            .args(args)
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("EARMARK_TOKEN_STORE", "file")
            .env_remove("EARMARK_PROFILE")
            // The session's socket under the home's data directory, as the
            // pty player's (tests/ui/pty.rs): one per home.
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `earmark ARGS` to the end, with `stdin` as its input.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        use std::io::Write;
        let mut c = self.command(args).spawn().unwrap();
        let mut input = c.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        c.wait_with_output().unwrap()
    }

    pub fn outbox(&self) -> std::path::PathBuf {
        self.dir
            .path()
            .join("data/earmark/sync/default/outbox.journal")
    }
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
