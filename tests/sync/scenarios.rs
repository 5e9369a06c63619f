use crate::proxy::Mode;
use crate::support::*;
use earmark::api::{Auth, Client, ProgressWrite};
use earmark::domain::session::{Event, Said};
use earmark::domain::{BookId, ChapterId, Manifest, now_millis};
use earmark::domain::{Stop, StopReason};
use earmark::server::LicenseSetting;
use earmark::sync::{JournalOp, Link, Source, Spot};
use std::time::Duration;

fn ch(m: &Manifest, i: usize) -> ChapterId {
    m.items[i].chapter_id.clone()
}

async fn seed(c: &Client, book: &BookId, chapter: &ChapterId, pos: f64) {
    c.post_progress(
        book,
        &ProgressWrite {
            chapter_id: chapter.clone(),
            position: pos,
            client_updated_at: now_millis() - 60_000,
            finished: false,
            device_id: Some("seed".into()),
            reset: false,
        },
    )
    .await
    .unwrap();
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Plays from `from` for `steps` × 50 ms at 1× (media time follows wall time).
async fn play(p: &Player, playback: u64, chapter: &ChapterId, from: f64, steps: u32) -> f64 {
    let mut pos = from;
    for _ in 0..steps {
        sleep_ms(50).await;
        pos += 0.05;
        p.position(playback, chapter, pos, true);
    }
    pos
}

/// 1. Restore to 1234 s while the engine briefly reads 0: the server
/// never receives 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_restore_never_writes_the_transient_zero() {
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    seed(&env.direct().await, &book, &ch(&m, 0), 1234.0).await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    env.proxy.clear();
    p.open(1, &book, &m);
    let load = p.load().await;
    assert_eq!(load, (1, Spot::new(ch(&m, 0), 1234.0)));
    p.action(1, Action::Play);
    // The engine reads 0 while it loads, then even claims to have landed.
    for landed in [false, false, true, true] {
        p.position(1, &ch(&m, 0), 0.0, landed);
        sleep_ms(120).await;
    }
    p.action(1, Action::Pause);
    p.action(1, Action::Play);
    p.position(1, &ch(&m, 0), 1234.0, true);
    let end = play(&p, 1, &ch(&m, 0), 1234.0, 10).await;
    p.action(1, Action::Pause);
    p.until("queue empty", |s| s.queued == 0).await;
    let writes = written_positions(&env.proxy);
    assert!(!writes.is_empty(), "reports were sent");
    for (_, _, pos) in &writes {
        assert!(*pos >= 1234.0, "the server received {pos}: {writes:?}");
    }
    let sp = env.server_progress(&book).await.unwrap();
    assert_eq!(sp.chapter_id, ch(&m, 0));
    assert!((sp.position - end).abs() < 1e-6, "{} vs {end}", sp.position);
}

/// 2. The server is down (connection refused, then 500s) during playback:
/// no 0 is written, the queue flushes afterwards, and the displayed state
/// equals the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s2_outage_queues_then_flushes_and_shows_the_server_state() {
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    seed(&env.direct().await, &book, &ch(&m, 0), 600.0).await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    p.load().await;
    p.position(1, &ch(&m, 0), 600.0, true);
    p.action(1, Action::Play);
    let pos = play(&p, 1, &ch(&m, 0), 600.0, 6).await;

    env.proxy.set_mode(Mode::Refuse);
    // The engine glitches to 0 while the server is away, long enough for
    // a periodic report.
    p.position(1, &ch(&m, 0), 0.0, false);
    p.position(1, &ch(&m, 0), 0.0, true);
    // Past a report interval, and every state seen, before the journal is read.
    sleep_ms(250).await;
    p.sync.settle().await;
    let journal = earmark::sync::Records::new(dir.path())
        .pending(None)
        .unwrap();
    for e in journal.queued.iter().chain(&journal.held) {
        let doc = serde_json::to_value(e).unwrap();
        if let Some(pos) = doc["op"]["positionSec"].as_f64() {
            assert!(pos >= 600.0, "0 was queued: {doc}");
        }
    }
    let pos = play(&p, 1, &ch(&m, 0), pos, 8).await;
    p.until("offline", |s| s.link == Link::Offline && s.queued >= 1)
        .await;
    env.proxy.set_mode(Mode::Error500);
    let pos = play(&p, 1, &ch(&m, 0), pos, 8).await;
    p.action(1, Action::Pause);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !env.proxy.requests().iter().any(|r| !r.forwarded) {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker retried while the server answered 500"
        );
        sleep_ms(20).await;
    }
    assert_eq!(p.sync.status().link, Link::Offline);
    assert!(p.sync.status().queued >= 1);

    env.proxy.set_mode(Mode::Forward);
    let s = p
        .until("flushed and online", |s| {
            s.queued == 0
                && s.link == Link::Online
                && s.shown.as_ref().is_some_and(|x| x.source == Source::Server)
        })
        .await;
    let sp = env.server_progress(&book).await.unwrap();
    assert!(
        (sp.position - pos).abs() < 1e-6,
        "server {} vs {pos}",
        sp.position
    );
    let shown = s.shown.unwrap();
    assert_eq!(shown.spot, Spot::new(sp.chapter_id.clone(), sp.position));
    for (_, _, x) in written_positions(&env.proxy) {
        assert!(x >= 600.0, "wrote {x}");
    }
}

/// 3 (child half). Runs only when the parent test starts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for s3"]
async fn child_process_client() {
    let Ok(dir) = std::env::var("EARMARK_SYNC_CHILD_DIR") else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap();
    let client = Client::with_auth(
        earmark::api::BaseUrl::parse(&var("EARMARK_SYNC_CHILD_URL")).unwrap(),
        earmark::api::ClientOptions {
            retries: 0,
            connect_timeout: Duration::from_secs(1),
            request_timeout: Duration::from_secs(2),
            ..Default::default()
        },
        Auth {
            token: earmark::api::Token::new(var("EARMARK_SYNC_CHILD_TOKEN")),
            server_id: earmark::domain::ServerId::new(var("EARMARK_SYNC_CHILD_SERVER")),
            user_id: earmark::domain::UserId::parse(&var("EARMARK_SYNC_CHILD_USER")).unwrap(),
        },
    )
    .unwrap();
    let book = BookId::new(var("EARMARK_SYNC_CHILD_BOOK"));
    let m = client.manifest(&book).await.unwrap();
    let mut p = start_worker(&client, std::path::Path::new(&dir));
    p.open(1, &book, &m);
    let (_, spot) = p.load().await;
    p.position(1, &spot.chapter, spot.position, true);
    p.action(1, Action::Play);
    let start = std::time::Instant::now();
    loop {
        sleep_ms(20).await;
        let pos = spot.position + start.elapsed().as_secs_f64();
        p.position(1, &spot.chapter, pos, true);
        println!("POS {pos}");
    }
}

/// 3. The client is killed with SIGKILL during playback (while the server
/// is unreachable), then restarted: the queued write reaches the server,
/// and at most one report interval of listening is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_sigkill_then_restart_delivers_the_queued_write() {
    use std::io::BufRead;
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    seed(&env.direct().await, &book, &ch(&m, 0), 100.0).await;
    let dir = tempfile::tempdir().unwrap();
    let auth = env.client().await.auth().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "scenarios::child_process_client",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("EARMARK_SYNC_CHILD_DIR", dir.path())
        .env("EARMARK_SYNC_CHILD_URL", env.proxy.base_url())
        .env("EARMARK_SYNC_CHILD_TOKEN", auth.token.expose())
        .env("EARMARK_SYNC_CHILD_SERVER", auth.server_id.as_str())
        .env("EARMARK_SYNC_CHILD_USER", auth.user_id.to_string())
        .env("EARMARK_SYNC_CHILD_BOOK", book.as_str())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<f64>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(x) = line.strip_prefix("POS ") {
                let _ = tx.send(x.trim().parse().unwrap());
            }
        }
    });
    // Let it play and report for a while, then take the server away.
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("child plays");
    assert!(first >= 100.0);
    sleep_ms(700).await;
    env.proxy.set_mode(Mode::Refuse);
    sleep_ms(900).await;
    let mut last = first;
    while let Ok(x) = rx.try_recv() {
        last = x;
    }
    // SIGKILL: no chance to flush or clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    while let Ok(x) = rx.try_recv() {
        last = x;
    }
    let before = env.server_progress(&book).await.unwrap().position;
    assert!(
        before < last - 0.5,
        "the outage kept the last writes queued"
    );
    env.proxy.set_mode(Mode::Forward);
    env.proxy.wait_listening().await;
    let client = env.client().await;
    let p = start_worker(&client, dir.path());
    p.until("queue flushed", |s| s.queued == 0).await;
    let after = env.server_progress(&book).await.unwrap().position;
    // Report interval 0.2 s, plus a tick (50 ms), an engine update (20 ms)
    // and scheduling slack on a loaded machine.
    assert!(
        after >= last - 0.45,
        "lost more than one report interval: server {after}, played {last}"
    );
    assert!(after <= last + 0.05);
}

/// 4. The server is rebuilt (new data dir, new serverId) while writes are
/// queued: nothing is written to the new instance without the user's push;
/// the 409 path is exercised.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s4_rebuilt_server_holds_old_writes_until_pushed() {
    let env = Env::start().await;
    let (book, m) = env.book("Alpha").await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let old = client.auth().unwrap();
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    p.load().await;
    p.position(1, &ch(&m, 0), 0.0, true);
    p.action(1, Action::Play);
    env.proxy.set_mode(Mode::Refuse);
    // The listener moves to the next chapter.
    p.position(1, &ch(&m, 1), 30.0, true);
    p.position(1, &ch(&m, 1), 31.0, true);
    p.action(1, Action::Pause);
    p.until("queued offline", |s| s.queued >= 1).await;

    // Rebuild: a new instance with a new data dir behind the same address.
    let rebuilt = crate::harness::TestServer::start(env.lib.path())
        .await
        .unwrap();
    env.proxy.set_upstream(rebuilt.addr());
    env.proxy.clear();
    env.proxy.set_mode(Mode::Forward);
    p.sync.flush();
    // The old token is unknown there: 401, sync pauses, login is asked for.
    p.notice(|n| {
        matches!(
            n,
            Event::Stopped(Stop {
                reason: StopReason::Login,
                ..
            })
        )
    })
    .await;
    // A server that kept the token but changed instance answers 409.
    let relog = rebuilt.login().await.unwrap();
    client.set_auth(Some(Auth {
        token: earmark::api::Token::new(relog.token.clone()),
        server_id: old.server_id.clone(),
        user_id: old.user_id,
    }));
    p.sync.session_changed(Some(client.clone()));
    let n = p
        .notice(|n| {
            matches!(
                n,
                Event::Stopped(Stop {
                    reason: StopReason::Scope,
                    ..
                })
            )
        })
        .await;
    assert!(
        format!("{n:?}").contains("listening_scope_mismatch")
            || format!("{n:?}").contains("instance"),
        "{n:?}"
    );
    assert!(
        env.proxy
            .requests()
            .iter()
            .any(|r| r.path.contains("reading-progress/batch")),
        "the 409 came from a real write attempt"
    );
    // Log in properly: the old writes are held, not sent.
    env.proxy.clear();
    client
        .login(&rebuilt.username, &rebuilt.password)
        .await
        .unwrap();
    assert_ne!(client.auth().unwrap().server_id, old.server_id);
    p.sync.session_changed(Some(client.clone()));
    let s = p.until("held", |s| s.held >= 1 && s.queued == 0).await;
    assert!(matches!(s.link, Link::Online));
    // Several flush rounds (ticks) with nothing to send to this scope.
    for _ in 0..4 {
        sleep_ms(60).await;
        p.sync.settle().await;
    }
    assert!(
        env.proxy.sync_requests().is_empty(),
        "{:?}",
        env.proxy.sync_requests()
    );
    // `earmark sync push`: the user sends them to the new instance. The
    // rebuilt library has new book ids, so the server answers 404 and the
    // entry is dropped with a notice.
    assert_eq!(p.sync.journal(JournalOp::PushHeld).await, 1);
    let n = p
        .notice(|n| matches!(n, Event::Said(Said::Dropped { .. })))
        .await;
    assert!(matches!(n, Event::Said(Said::Dropped { book: b, .. }) if b == book));
    p.until("nothing left", |s| s.held == 0 && s.queued == 0)
        .await;
    assert_eq!(env.proxy.sync_requests().len(), 1);
}

/// 5. The license is revoked mid-play: playback stops, no further sync
/// requests are made, the message shows; restoring it resumes sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_license_revoked_stops_playback_and_all_sync() {
    let env = Env::start().await;
    let (book, m) = env.book("Alpha").await;
    seed(&env.direct().await, &book, &ch(&m, 0), 10.0).await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    p.load().await;
    p.position(1, &ch(&m, 0), 10.0, true);
    p.action(1, Action::Play);
    let pos = play(&p, 1, &ch(&m, 0), 10.0, 6).await;
    env.server.set_license(LicenseSetting::Expired).unwrap();
    let pos = play(&p, 1, &ch(&m, 0), pos, 6).await;
    let n = p
        .notice(|n| {
            matches!(
                n,
                Event::Stopped(Stop {
                    reason: StopReason::License,
                    ..
                })
            )
        })
        .await;
    let Event::Stopped(Stop {
        reason: StopReason::License,
        message,
    }) = n
    else {
        unreachable!()
    };
    assert!(message.to_lowercase().contains("license"), "{message}");
    // The player stops; its final report is queued, not sent.
    p.action(1, Action::Stop);
    let s = p
        .until("blocked", |s| matches!(s.link, Link::LicenseBlocked { .. }))
        .await;
    assert!(s.queued >= 1);
    let count = env.proxy.sync_requests().len();
    p.sync.flush();
    let _ = play(&p, 1, &ch(&m, 0), pos, 10).await;
    assert_eq!(
        env.proxy.sync_requests().len(),
        count,
        "no sync while blocked"
    );
    env.server.set_license(LicenseSetting::Valid).unwrap();
    p.notice(|n| *n == Event::Said(Said::LicenseRestored)).await;
    p.until("resumed", |s| s.link == Link::Online && s.queued == 0)
        .await;
    assert!(env.proxy.sync_requests().len() > count);
    let sp = env.server_progress(&book).await.unwrap();
    assert!(sp.position >= pos - 0.2 - 1e-6, "{} vs {pos}", sp.position);
}

/// 6. Rapid switching A → B → A within a second: each book's server
/// progress is only ever its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s6_rapid_switching_never_crosses_books() {
    let env = Env::start().await;
    let (a, ma) = env.book("Alpha").await;
    let (b, mb) = env.book("Beta").await;
    let direct = env.direct().await;
    seed(&direct, &a, &ch(&ma, 0), 50.0).await;
    seed(&direct, &b, &ch(&mb, 1), 70.0).await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    env.proxy.clear();
    let t0 = std::time::Instant::now();
    p.open(1, &a, &ma);
    p.load().await;
    p.position(1, &ch(&ma, 0), 50.0, true);
    p.action(1, Action::Play);
    p.position(1, &ch(&ma, 0), 50.5, true);
    p.action(1, Action::Stop);
    // Sync has seen the stop before the next book opens (the engine would
    // not publish the old load's state again; this test does, below).
    p.sync.settle().await;
    p.open(2, &b, &mb);
    // The old playback's loop still runs and reads the new engine state.
    p.position(1, &ch(&mb, 0), 0.0, true);
    p.position(1, &ch(&mb, 0), 0.2, true);
    p.action(1, Action::Pause);
    p.load().await;
    p.position(2, &ch(&mb, 1), 70.0, true);
    p.action(2, Action::Play);
    p.position(2, &ch(&mb, 1), 70.4, true);
    // Playback 1 is still talking, now with B's chapter and a tiny value.
    p.position(1, &ch(&mb, 1), 3.0, true);
    p.action(1, Action::Pause);
    p.action(2, Action::Stop);
    p.sync.settle().await;
    p.open(3, &a, &ma);
    // The previous load's engine state still arrives late.
    p.position(2, &ch(&ma, 0), 0.0, true);
    let load = p.load().await;
    assert_eq!(load, (3, Spot::new(ch(&ma, 0), 50.5)));
    p.position(3, &ch(&ma, 0), 50.5, true);
    p.action(3, Action::Play);
    p.position(3, &ch(&ma, 0), 50.9, true);
    p.action(3, Action::Pause);
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    p.until("flushed", |s| s.queued == 0).await;
    let writes = written_positions(&env.proxy);
    assert!(writes.len() >= 3, "{writes:?}");
    for (bk, chap, pos) in &writes {
        let m = if bk == a.as_str() { &ma } else { &mb };
        assert!(bk == a.as_str() || bk == b.as_str());
        assert!(
            m.position_of(&ChapterId::new(chap.as_str())).is_some(),
            "{bk} got {chap}"
        );
        let floor = if bk == a.as_str() { 50.0 } else { 70.0 };
        assert!(*pos >= floor, "{bk} got {pos}");
    }
    let pa = env.server_progress(&a).await.unwrap();
    let pb = env.server_progress(&b).await.unwrap();
    assert_eq!((pa.chapter_id, pa.position), (ch(&ma, 0), 50.9));
    assert_eq!((pb.chapter_id, pb.position), (ch(&mb, 1), 70.4));
}

/// 7. Two clients on one account: the server decides, and each client
/// shows the server's answer after sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s7_two_clients_show_what_the_server_decided() {
    let env = Env::start().await;
    let (book, m) = env.book("Alpha").await;
    seed(&env.direct().await, &book, &ch(&m, 0), 10.0).await;
    // Client A has its own way to the server, which will go down.
    let proxy_a = crate::proxy::Proxy::start(env.server.addr()).await;
    let base_a = earmark::api::BaseUrl::parse(&proxy_a.base_url()).unwrap();
    let client_a = Client::new(
        base_a,
        earmark::api::ClientOptions {
            retries: 0,
            ..Default::default()
        },
    )
    .unwrap();
    client_a
        .login(&env.server.username, &env.server.password)
        .await
        .unwrap();
    let client_b = env.client().await;
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = start_worker(&client_a, dir_a.path());
    let mut b = start_worker(&client_b, dir_b.path());
    a.open(1, &book, &m);
    b.open(1, &book, &m);
    a.load().await;
    b.load().await;
    // A listens offline up to 100 s (earlier in time) …
    proxy_a.set_mode(Mode::Refuse);
    a.position(1, &ch(&m, 0), 10.0, true);
    a.action(1, Action::Play);
    a.position(1, &ch(&m, 0), 100.0, true);
    a.action(1, Action::Pause);
    a.until("A queued", |s| s.queued == 1).await;
    sleep_ms(20).await;
    // … B listens online up to 40 s, later.
    b.position(1, &ch(&m, 0), 10.0, true);
    b.action(1, Action::Play);
    b.position(1, &ch(&m, 0), 40.0, true);
    b.action(1, Action::Pause);
    let sb = b
        .until("B synced", |s| {
            s.queued == 0 && s.shown.as_ref().is_some_and(|x| x.spot.position == 40.0)
        })
        .await;
    assert_eq!(sb.shown.unwrap().source, Source::Server);
    // A comes back: its older write loses; it shows the server's record.
    proxy_a.set_mode(Mode::Forward);
    let sa = a
        .until("A synced", |s| {
            s.queued == 0
                && s.link == Link::Online
                && s.shown.as_ref().is_some_and(|x| x.source == Source::Server)
        })
        .await;
    let server = env.server_progress(&book).await.unwrap();
    assert_eq!(server.position, 40.0, "newer clientUpdatedAt wins");
    assert_eq!(sa.shown.unwrap().spot, Spot::new(ch(&m, 0), 40.0));
}

/// A stream's 403 without the license code is "no permission for this
/// chapter", not a license stop: the license status (valid here) decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_403_without_the_license_code_is_no_permission_not_a_license_stop() {
    use earmark::domain::session::PlayState;
    let env = Env::start().await;
    let (book, m) = env.book("Alpha").await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    let (load, _) = p.load().await;
    // The session owner tells sync of the engine's 403 without the code.
    p.fail(load, PlayState::Error("not in your plan".into()));
    p.sync.stream_refused(false, "not in your plan".into());
    let n = p
        .notice(|n| {
            matches!(
                n,
                Event::Stopped(Stop {
                    reason: StopReason::Forbidden,
                    ..
                }) | Event::Stopped(Stop {
                    reason: StopReason::License,
                    ..
                })
            )
        })
        .await;
    let Event::Stopped(Stop {
        reason: StopReason::Forbidden,
        message,
    }) = n
    else {
        panic!("a license stop: {n:?}")
    };
    assert!(message.contains("not in your plan"), "{message}");
    let s = p.until("still online", |s| s.link == Link::Online).await;
    assert_eq!(s.link, Link::Online);
}
