//! A detached session answers `earmark ctl`, and the server holds its
//! place after each command, after `quit` and after SIGTERM.

use crate::common::{World, place};
use earmark::api::ProgressWrite;
use earmark::domain::now_millis;

/// The session reports its place every 300 ms of wall time, so the
/// server's place follows each command within the test's deadlines.
const REPORT_OFTEN: &[(&str, &str)] = &[("EARMARK_REPORT_INTERVAL_MS", "300")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_session_takes_status_seek_sleep_next_and_quit_and_the_server_keeps_each_place()
{
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], REPORT_OFTEN);
    assert!(session.socket.exists(), "{}", session.socket.display());
    // It returned once audio plays.
    let s = w.status();
    assert_eq!(s["state"], "playing", "{s}");
    assert_eq!(s["book"]["id"], long.as_str(), "{s}");
    assert_eq!(s["chapter"]["number"], 1, "{s}");
    assert_eq!(s["chapter"]["count"], 2, "{s}");
    assert!(
        s["chapter"]["id"].is_string() && s["chapter"]["title"].is_string(),
        "{s}"
    );
    let ch1 = s["chapter"]["id"].as_str().unwrap().to_owned();

    // seek S: a place in this chapter; the reply shows it landed.
    let (code, s) = w.ctl(&["seek", "100"]);
    assert_eq!(code, 0, "{s}");
    let (n, at) = place(&s);
    assert!(n == 1 && (100.0..102.0).contains(&at), "{s}");
    w.server_until(&long, "reached 100 s", |p| {
        p.chapter_id.as_str() == ch1 && (100.0..110.0).contains(&p.position)
    })
    .await;

    // seek +S: from here.
    let (code, s) = w.ctl(&["seek", "+30"]);
    assert_eq!(code, 0, "{s}");
    assert!((130.0..133.0).contains(&place(&s).1), "{s}");
    w.server_until(&long, "reached 130 s", |p| {
        (130.0..140.0).contains(&p.position)
    })
    .await;

    // sleep: the timer runs, the place goes on.
    let (code, s) = w.ctl(&["sleep", "25"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["sleep"]["kind"], "timed", "{s}");
    let left = s["sleep"]["leftSec"].as_f64().unwrap();
    assert!((1490.0..=1500.0).contains(&left), "{s}");
    w.server_until(&long, "went on past 131 s", |p| p.position > 131.0)
        .await;

    // next: chapter 2, and the server says so.
    let (code, s) = w.ctl(&["next"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(place(&s).0, 2, "{s}");
    let ch2 = s["chapter"]["id"].as_str().unwrap().to_owned();
    w.server_until(&long, "moved to chapter 2", |p| {
        p.chapter_id.as_str() == ch2
    })
    .await;

    // quit: the process ends, its place is the server's, and `ctl` then
    // says no session runs (exit 8).
    let last = place(&w.status()).1;
    let (code, s) = w.ctl(&["quit"]);
    assert_eq!((code, &s["quitting"]), (0, &serde_json::json!(true)), "{s}");
    session.until_gone();
    let p = w.server_place(&long).await.unwrap();
    assert_eq!(p.chapter_id.as_str(), ch2);
    assert!(p.position >= last, "{p:?} after {last}");
    assert!(!session.socket.exists(), "the socket goes with the session");
    let (code, s) = w.ctl(&["status"]);
    assert_eq!(code, 8, "{s}");
    assert_eq!(s["error"]["code"], "no_session", "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_detached_session_with_its_place_on_the_server() {
    let w = World::start().await;
    let long = w.book("Long");
    // Reported every 10 s (the default): only the quit can write the
    // place it had when the signal came.
    let session = w.detach(&long, &["--at", "300"], &[]);
    let s = w.status_until("played past 302 s", |s| place(s).1 >= 302.0);
    let before = place(&s).1;
    session.signal(libc::SIGTERM);
    session.until_gone();
    let p = w.server_place(&long).await.unwrap();
    assert!(p.position >= before, "{p:?}, the place was {before} s");
    assert!(p.position < before + 5.0, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_session_of_the_profile_is_refused_and_says_how_to_reach_the_first() {
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], &[]);
    let o = w.run(
        &["play", long.as_str(), "--audio", "null", "--for", "1"],
        &[],
    );
    let t = crate::harness::text(&o);
    assert_eq!(o.status.code(), Some(9), "{t}");
    assert!(
        t.contains("already running") && t.contains("earmark ctl status"),
        "{t}"
    );
    assert!(t.contains(&session.socket.display().to_string()), "{t}");
    // And a ctl command that is not understood exits 2 without reaching it.
    let (code, doc) = w.ctl(&["seek", "soon"]);
    assert_eq!(code, 2, "{doc}");
    assert!(session.alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_stop_stops_a_detached_session_and_its_watchers_hear_it_then_quit() {
    use std::io::BufRead;
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], REPORT_OFTEN);
    let mut watch = w.home.command(&["--json", "ctl", "watch"]).spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    let out = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&l).unwrap_or_default());
        }
    });
    let next_event = |kind: &str| loop {
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no {kind} event"));
        if e["event"] == kind {
            return e;
        }
    };
    assert_eq!(next_event("state")["state"], "playing");
    w.server
        .set_license(earmark::server::LicenseSetting::Expired)
        .unwrap();
    let stop = next_event("stop");
    assert_eq!(
        (&stop["reason"], &stop["exitCode"]),
        (&"license".into(), &4.into()),
        "{stop}"
    );
    let s = w.status_until("shows the stop", |s| s["stop"]["reason"] == "license");
    assert_ne!(s["state"], "playing", "{s}");
    assert!(session.alive(), "a stop does not end a detached session");
    let (code, _) = w.ctl(&["quit"]);
    assert_eq!(code, 0);
    next_event("quit");
    assert!(watch.wait().unwrap().success());
    session.until_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_resume_follows_the_servers_newer_place_says_so_and_keeps_this_devices_in_the_history()
 {
    let w = World::start().await;
    let long = w.book("Long");
    // This device listened to chapter 1 at 100 s and quit.
    let session = w.detach(&long, &["--at", "100"], &[]);
    let (code, s) = w.ctl(&["quit"]);
    assert_eq!(code, 0, "{s}");
    session.until_gone();
    let mine = w.server_place(&long).await.unwrap();
    assert!((100.0..110.0).contains(&mine.position), "{mine:?}");
    // Another device then listened to chapter 2 at 50 s.
    let manifest = w.direct.manifest(&long).await.unwrap();
    let ch2 = manifest.items[1].chapter_id.clone();
    let write = ProgressWrite {
        chapter_id: ch2.clone(),
        position: 50.0,
        client_updated_at: now_millis(),
        finished: false,
        device_id: Some("device-b".into()),
        reset: false,
    };
    w.direct.post_progress(&long, &write).await.unwrap();

    // With no terminal to ask, the server's newer place wins, and it says so.
    let session = w.detach(&long, &[], &[]);
    let said = session.said.to_string();
    assert!(
        said.contains("newer place") && said.contains(ch2.as_str()),
        "{said}"
    );
    let s = w.status();
    let (n, at) = place(&s);
    assert!(n == 2 && (50.0..60.0).contains(&at), "{s}");
    // This device's place went to the place history.
    let o = w.run(&["--json", "history", long.as_str()], &[]);
    let t = crate::harness::text(&o);
    assert!(o.status.success(), "{t}");
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kept = h.to_string();
    assert!(kept.contains(mine.chapter_id.as_str()), "{kept}");
    drop(session);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctl_play_of_a_book_the_server_does_not_have_is_refused_as_not_found_exit_5() {
    let w = World::start().await;
    let long = w.book("Long");
    let _session = w.detach(&long, &[], &[]);
    let (code, s) = w.ctl(&["play", "bk_nope"]);
    assert_eq!(code, 5, "{s}");
    assert_eq!(s["error"]["code"], "not_found", "{s}");
    // Asked again, it is refused again (not a silent success).
    let (code, s) = w.ctl(&["play", "bk_nope"]);
    assert_eq!(
        (code, &s["error"]["code"]),
        (5, &serde_json::json!("not_found")),
        "{s}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_session_whose_socket_was_removed_listens_again() {
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], &[]);
    // As logind does to $XDG_RUNTIME_DIR when the last SSH login ends.
    let dir = session.socket.parent().unwrap().to_owned();
    std::fs::remove_dir_all(&dir).unwrap();
    let (code, _) = w.ctl(&["status"]);
    assert_eq!(code, 8, "no socket for now");
    // Within the session's 10 s check, it answers again, still playing.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    loop {
        let (code, s) = w.ctl(&["status"]);
        if code == 0 {
            assert_eq!(s["state"], "playing", "{s}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never listened again: {s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&dir), mode(&session.socket)), (0o700, 0o600));
}
