//! `earmark sync pending | push | discard` as a user runs them: the real
//! binary, a real login, the reference server.

use crate::support::library;
use earmark::api::BaseUrl;
use earmark::domain::{BookId, ChapterId, ServerId, UserId, now_millis};
use earmark::server::testing::TestServer;
use earmark::sync::outbox::{Op, Outbox, QueuedProgress, Scope};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Home {
    dir: tempfile::TempDir,
    server: String,
}

impl Home {
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut c = Command::new(env!("CARGO_BIN_EXE_earmark"))
            .args(["--server", &self.server, "--user", "alice"])
            .args(args)
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("EARMARK_TOKEN_STORE", "file")
            .env_remove("EARMARK_PROFILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = c.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        c.wait_with_output().unwrap()
    }

    fn outbox(&self) -> PathBuf {
        self.dir
            .path()
            .join("data/earmark/sync/default/outbox.journal")
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn queue(path: &Path, scope: &Scope, book: &BookId, chapter: &ChapterId, pos: f64) {
    let mut o = Outbox::open(path).unwrap();
    o.push(
        scope.clone(),
        book.clone(),
        Op::ProgressWrite(QueuedProgress {
            chapter_id: chapter.clone(),
            position_sec: pos,
            finished: false,
            reset: false,
            client_updated_at: now_millis(),
        }),
        now_millis(),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_discard_and_push_held_changes() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let home = Home {
        dir: tempfile::tempdir().unwrap(),
        server: server.base_url().to_owned(),
    };
    let o = home.run(&["login", "--password-stdin"], Some(&server.password));
    assert!(o.status.success(), "{}", text(&o));

    let session = server.login().await.unwrap();
    let current = Scope {
        base: BaseUrl::parse(server.base_url())
            .unwrap()
            .as_str()
            .to_owned(),
        server_id: ServerId::new(session.server_id.as_str()),
        user_id: UserId(session.user_id),
    };
    let old = Scope {
        server_id: ServerId::new("srv_rebuilt_away"),
        ..current.clone()
    };
    let direct = earmark::api::Client::new(
        BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    direct
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let books = direct.books(&Default::default()).await.unwrap();
    let id = |t: &str| books.iter().find(|b| b.title == t).unwrap().id.clone();
    let (alpha, beta) = (id("Alpha"), id("Beta"));
    let ch_a = direct.manifest(&alpha).await.unwrap().items[1]
        .chapter_id
        .clone();
    let ch_b = direct.manifest(&beta).await.unwrap().items[1]
        .chapter_id
        .clone();
    queue(&home.outbox(), &current, &alpha, &ch_a, 15.0);
    queue(&home.outbox(), &old, &beta, &ch_b, 25.0);

    let o = home.run(&["sync", "pending"], None);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("Queued for") && t.contains(alpha.as_str()),
        "{t}"
    );
    assert!(t.contains("Held") && t.contains("srv_rebuilt_away"), "{t}");
    let o = home.run(&["--json", "sync", "pending"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["queued"].as_array().unwrap().len(), 1);
    assert_eq!(v["held"].as_array().unwrap().len(), 1);

    // The journal is locked while a player runs.
    {
        let _player = Outbox::open(home.outbox()).unwrap();
        let o = home.run(&["sync", "discard"], None);
        assert!(!o.status.success());
        assert!(text(&o).contains("in use"), "{}", text(&o));
    }

    let o = home.run(&["sync", "discard"], None);
    assert!(text(&o).contains("Dropped 1"), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&home.run(&["--json", "sync", "pending"], None).stdout).unwrap();
    assert_eq!(v["held"].as_array().unwrap().len(), 0);
    assert_eq!(v["queued"].as_array().unwrap().len(), 1);
    // Nothing was sent by looking or discarding.
    assert!(direct.progress(&alpha).await.unwrap().progress.is_none());

    queue(&home.outbox(), &old, &beta, &ch_b, 25.0);
    let o = home.run(&["sync", "push"], None);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("Moved 1") && t.contains("Everything is sent"),
        "{t}"
    );
    let pa = direct.progress(&alpha).await.unwrap().progress.unwrap();
    let pb = direct.progress(&beta).await.unwrap().progress.unwrap();
    assert_eq!((pa.chapter_id, pa.position), (ch_a, 15.0));
    assert_eq!((pb.chapter_id, pb.position), (ch_b, 25.0));
    let (left, _) = Outbox::peek(&home.outbox()).unwrap();
    assert!(left.is_empty());
}
