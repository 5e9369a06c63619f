//! Running the `earmark` binary with an isolated HOME against a dialect
//! server, and the invariants every write must keep.

use crate::server::{self, DialectServer, Write};
use std::path::PathBuf;
use std::process::{Output, Stdio};

pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    /// A home whose config.toml points the default profile at `address`
    /// with identity header prefix `prefix` and the extra profile `toml`.
    pub fn new(address: &str, prefix: &str, extra: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config/earmark");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(
            cfg.join("config.toml"),
            format!(
                "default_profile = \"d\"\n[profiles.d]\nserver = \"{address}\"\nuser = \"{}\"\nidentity_header_prefix = \"{prefix}\"\n{extra}",
                server::USER
            ),
        )
        .unwrap();
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.run_with(args, stdin, &[]).await
    }

    /// [`Home::run`] with more variables in the environment.
    pub async fn run_with(
        &self,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_earmark"));
        cmd.args(args)
            .env_clear()
            .envs(env.iter().copied())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("EARMARK_TOKEN_STORE", "file")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        {
            use tokio::io::AsyncWriteExt;
            let mut input = child.stdin.take().unwrap();
            if let Some(s) = stdin {
                input.write_all(s.as_bytes()).await.unwrap();
            }
        }
        tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("earmark finished within 60 s")
            .unwrap()
    }

    pub async fn login(&self) -> Output {
        self.run(&["login", "--password-stdin"], Some(server::PASSWORD))
            .await
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every write carries both identity headers under `prefix`, naming the
/// logged-in server and `user` with exactly the server's digits (no write
/// crosses scope).
pub fn assert_writes_in_scope(writes: &[Write], prefix: &str, user: &str) {
    let p = prefix.to_ascii_lowercase();
    for w in writes {
        let sid = w.headers.get(&format!("{p}-expected-server-id"));
        let uid = w.headers.get(&format!("{p}-expected-user-id"));
        assert_eq!(
            (sid.map(String::as_str), uid.map(String::as_str)),
            (Some(server::SERVER_ID), Some(user)),
            "a write without both identity headers or out of scope: {w:?}"
        );
    }
}

/// No progress write moves a stored place back (to the start, to 0, or
/// before the stored place) unless it says `reset`.
pub fn assert_no_regress(s: &DialectServer, before: &[(String, (String, f64))], writes: &[Write]) {
    let d = &s.dialect;
    let order = |book: &str, ch: &str| -> usize {
        (1..=server::BOOKS)
            .find(|i| server::book_id(d, *i) == book)
            .and_then(|i| (1..=2).find(|c| server::chapter_id(d, i, *c) == ch))
            .unwrap_or(0)
    };
    for w in writes.iter().filter(|w| w.method == "POST") {
        let items: Vec<(String, serde_json::Value)> = if w.path.ends_with("/batch") {
            w.body["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|i| (plain(&i["bookId"]), i))
                .collect()
        } else if w.path.starts_with("/auth/reading-progress/") {
            let book = w
                .path
                .trim_start_matches("/auth/reading-progress/")
                .to_owned();
            vec![(book, w.body.clone())]
        } else {
            continue;
        };
        for (book, b) in items {
            if b["reset"] == true {
                continue;
            }
            let Some((_, (sch, spos))) = before.iter().find(|(k, _)| *k == book) else {
                continue;
            };
            let (ch, pos) = (
                plain(&b["chapterId"]),
                b["positionSec"].as_f64().unwrap_or(0.0),
            );
            let back = (order(&book, &ch), pos) < (order(&book, sch), spos - 1.0);
            assert!(
                !back,
                "a write moved {book} back from {sch}@{spos} to {ch}@{pos}: {w:?}"
            );
        }
    }
}

pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// No path at the throttled place was asked again sooner than the wait
/// its last refusal told, or without one the least first step of
/// earmark's back-off (within `window`, the run of one process: the
/// back-off is a process's own). Returns the refusals counted.
pub fn assert_waits_kept(s: &DialectServer, window: std::ops::Range<std::time::Instant>) -> usize {
    // The clocks of a request's arrival: a little early is the loopback's.
    let slack = std::time::Duration::from_millis(30);
    let knocks: Vec<server::Knock> = s
        .knocks()
        .into_iter()
        .filter(|k| window.contains(&k.at))
        .collect();
    for (i, k) in knocks.iter().enumerate() {
        if !k.refused {
            continue;
        }
        // Without `Retry-After`, the first step of earmark's own back-off
        // (1 s, of which at least half).
        let told = k.told.unwrap_or(std::time::Duration::from_millis(500));
        if let Some(next) = knocks[i + 1..].iter().find(|n| n.path == k.path) {
            let gap = next.at - k.at;
            assert!(
                gap + slack >= told,
                "{} asked again {gap:?} after it was told to wait {told:?}: {:?} {knocks:#?}",
                k.path,
                s.dialect.throttle
            );
        }
    }
    knocks.iter().filter(|k| k.refused).count()
}
