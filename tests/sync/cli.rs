//! `earmark sync pending | push | discard` as a user runs them: the real
//! binary, a real login, the reference server.

use crate::harness::TestServer;
use crate::harness::{Home, direct, text, titled};
use crate::support::library;
use earmark::api::BaseUrl;
use earmark::domain::{BookId, ChapterId, now_millis};
use serde_json::json;
use std::path::Path;

/// Whose change a journal entry is.
struct Scope {
    base: String,
    server_id: String,
    user_id: u64,
}

/// Appends one progress write to the journal the way earmark writes it
/// (docs/sync.md: magic, length, CRC32, JSON record), so the on-disk format
/// is pinned by a test too.
fn queue(path: &Path, scope: &Scope, book: &BookId, chapter: &ChapterId, pos: f64) {
    use std::io::Write;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + now_millis() as u64;
    let record = json!({"put": {
        "seq": seq,
        "scope": {"base": scope.base, "serverId": scope.server_id, "userId": scope.user_id},
        "book": book.as_str(),
        "op": {"op": "progressWrite", "chapterId": chapter.as_str(), "positionSec": pos,
               "finished": false, "reset": false, "clientUpdatedAt": now_millis()},
        "queuedAt": now_millis(),
    }});
    let payload = serde_json::to_vec(&record).unwrap();
    let mut bytes = b"EMOB".to_vec();
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(&bytes).unwrap();
}

/// Holds the journal's lock the way a running player does.
fn lock_like_a_player(path: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .unwrap();
    // SAFETY: flock on a valid, owned descriptor.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(rc, 0);
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_discard_and_push_held_changes() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let home = Home::at(server.base_url());
    let o = home.run(&["login", "--password-stdin"], Some(&server.password));
    assert!(o.status.success(), "{}", text(&o));

    let session = server.login().await.unwrap();
    let current = Scope {
        base: BaseUrl::parse(server.base_url())
            .unwrap()
            .as_str()
            .to_owned(),
        server_id: session.server_id.as_str().to_owned(),
        user_id: session.user_id,
    };
    let old = Scope {
        server_id: "srv_rebuilt_away".into(),
        base: current.base.clone(),
        user_id: current.user_id,
    };
    let direct = direct(&server).await;
    let books = direct.books(&Default::default()).await.unwrap();
    let id = |t: &str| titled(&books, t).id.clone();
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
        let _player = lock_like_a_player(&home.outbox());
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
    let v: serde_json::Value =
        serde_json::from_slice(&home.run(&["--json", "sync", "pending"], None).stdout).unwrap();
    assert_eq!(v["queued"].as_array().unwrap().len(), 0);
    assert_eq!(v["held"].as_array().unwrap().len(), 0);
}
