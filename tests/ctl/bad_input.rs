//! Bad clients of a detached session, on its real socket: each gets an
//! error or is dropped, and the session plays on with its place intact.

use crate::common::{World, place};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// A connection past its hello.
fn connect(socket: &Path) -> (UnixStream, BufReader<UnixStream>) {
    let s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let hello = line(&mut r).expect("a hello");
    assert_eq!(hello["hello"]["protocol"], 1, "{hello}");
    (s, r)
}

/// The next line as JSON; `None` at the end of the connection.
fn line(r: &mut BufReader<UnixStream>) -> Option<Value> {
    let mut l = String::new();
    match r.read_line(&mut l) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(serde_json::from_str(&l).unwrap()),
    }
}

fn error_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_lines_a_client_that_never_reads_and_100_clients_never_stop_the_session() {
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &["--at", "50"], &[]);
    let socket = session.socket.clone();
    let before = place(&w.status()).1;
    let (mut s, mut r) = connect(&socket);

    // Malformed JSON, an unknown command, a bad argument: an error each,
    // with the request's id when it had one, and the connection goes on.
    let cases: [(&str, &str, Value); 4] = [
        (
            "{\"id\": 1, \"command\": [\"seek\"",
            "bad_json",
            Value::Null,
        ),
        (
            r#"{"id": 2, "command": ["dance"]}"#,
            "unknown_command",
            2.into(),
        ),
        (
            r#"{"id": "x", "command": ["seek", "soon"]}"#,
            "bad_argument",
            "x".into(),
        ),
        (r#"["status"]"#, "bad_request", Value::Null),
    ];
    for (req, code, id) in cases {
        writeln!(s, "{req}").unwrap();
        let reply = line(&mut r).unwrap();
        assert_eq!(error_code(&reply), code, "{req}: {reply}");
        assert_eq!(reply["id"], id, "{req}: {reply}");
        assert!(!reply["error"]["message"].as_str().unwrap().is_empty());
    }
    writeln!(s, r#"{{"id": 5, "command": ["status"]}}"#).unwrap();
    assert_eq!(line(&mut r).unwrap()["result"]["state"], "playing");

    // A line over 64 KiB: refused, and that connection is closed.
    let long_line = format!(
        r#"{{"id": 6, "command": ["bookmark", "{}"]}}"#,
        "a".repeat(70_000)
    );
    let _ = writeln!(s, "{long_line}");
    let reply = line(&mut r).unwrap();
    assert_eq!(error_code(&reply), "too_long", "{reply}");
    assert!(line(&mut r).is_none(), "the connection is closed");

    // A client that asks for every snapshot and never reads: dropped once
    // its queue is full; it never held the session up.
    let quiet = UnixStream::connect(&socket).unwrap();
    quiet
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut q = quiet.try_clone().unwrap();
    writeln!(q, r#"{{"id": 1, "command": ["watch", "session"]}}"#).unwrap();
    let mut ended = None;
    for _ in 0..20_000 {
        if let Err(e) = writeln!(q, r#"{{"id": 2, "command": ["status"]}}"#) {
            ended = Some(e.kind());
            break;
        }
    }
    // Closed by the session (not our own write timing out: a session that
    // only stopped reading would look like that).
    use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
    assert!(
        matches!(ended, Some(BrokenPipe | ConnectionReset)),
        "a client that never reads is dropped: {ended:?}"
    );

    // 100 clients at once: each is served or refused with `busy`.
    let mut served = 0;
    let mut busy = 0;
    let mut all = Vec::new();
    for _ in 0..100 {
        let c = UnixStream::connect(&socket).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        all.push(c);
    }
    for c in &all {
        let mut r = BufReader::new(c.try_clone().unwrap());
        let first = line(&mut r).expect("every client hears from the session");
        if first.get("hello").is_some() {
            let mut c = c.try_clone().unwrap();
            writeln!(c, r#"{{"id": 1, "command": ["status"]}}"#).unwrap();
            assert_eq!(line(&mut r).unwrap()["result"]["state"], "playing");
            served += 1;
        } else {
            assert_eq!(error_code(&first), "busy", "{first}");
            busy += 1;
        }
    }
    assert_eq!(served + busy, 100);
    assert!(served >= 60 && busy > 0, "served {served}, busy {busy}");
    drop(all);

    // The session played on, from where it was.
    let s = w.status_until("played on", |s| place(s).1 > before + 1.0);
    assert_eq!(
        (s["state"].as_str(), place(&s).0),
        (Some("playing"), 1),
        "{s}"
    );
    let (code, _) = w.ctl(&["quit"]);
    assert_eq!(code, 0);
    session.until_gone();
    let p = w.server_place(&long).await.unwrap();
    assert!(p.position > before, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_another_uid_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIPPED: another uid's client needs root to be started (setpriv)");
        return;
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        println!("SKIPPED: setpriv is missing (util-linux)");
        return;
    };
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], &[]);
    // Open the way to the socket (its directory is 0700, the socket
    // 0600): only the session's own check of the peer's uid is left.
    use std::os::unix::fs::PermissionsExt;
    let open = |p: &Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let mut dir = session.socket.parent().unwrap();
    while dir.starts_with(w.home.dir.path()) {
        open(dir, 0o755);
        dir = dir.parent().unwrap();
    }
    open(&session.socket, 0o777);
    // A copy of the binary in a place anyone may run it from.
    let bin_dir = tempfile::tempdir().unwrap();
    open(bin_dir.path(), 0o755);
    let bin = bin_dir.path().join("earmark");
    std::fs::copy(env!("CARGO_BIN_EXE_earmark"), &bin).unwrap();
    open(&bin, 0o755);
    let o = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["--json", "ctl", "--socket"])
        .arg(&session.socket)
        .arg("status")
        .env("HOME", bin_dir.path())
        .output()
        .unwrap();
    let t = crate::harness::text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "forbidden", "{t}");
    assert!(t.contains("uid 65534"), "{t}");
    assert_eq!(w.status()["state"], "playing");
}
