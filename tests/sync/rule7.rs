//! Contract rule 7 after a pause or a reconnect (issue 25), with a
//! scripted engine: paused seeks reach the server at once (offline:
//! queued), a resume reads the server's place first and asks when another
//! device moved on, a write the server kept moves the player, and a lost
//! server is shown and its return noticed.

use crate::proxy::Mode;
use crate::support::*;
use earmark::api::{Client, ProgressWrite};
use earmark::domain::session::{Event, Said};
use earmark::domain::{BookId, ChapterId, Manifest, now_millis};
use earmark::player::Command as EngineCommand;
use earmark::sync::{Choice, Link, Records, Spot};

fn ch(m: &Manifest, i: usize) -> ChapterId {
    m.items[i].chapter_id.clone()
}

/// Another device (B) writes its place now.
async fn elsewhere(c: &Client, book: &BookId, chapter: &ChapterId, pos: f64) {
    c.post_progress(
        book,
        &ProgressWrite {
            chapter_id: chapter.clone(),
            position: pos,
            client_updated_at: now_millis(),
            finished: false,
            device_id: Some("device-b".into()),
            reset: false,
        },
    )
    .await
    .unwrap();
}

/// Waits until the server holds `at` for `book`.
async fn server_holds(env: &Env, book: &BookId, at: &Spot) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let p = env.server_progress(book).await;
        if p.as_ref()
            .is_some_and(|p| p.chapter_id == at.chapter && (p.position - at.position).abs() < 1e-6)
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server holds {p:?}, not {at:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Opens "Long" where the server has it (ch 1, 100 s), plays a second
/// and pauses there (reported).
async fn paused(env: &Env, dir: &std::path::Path) -> (Player, BookId, Manifest) {
    let (book, m) = env.book("Long").await;
    elsewhere(&env.direct().await, &book, &ch(&m, 0), 100.0).await;
    let mut p = start_worker(&env.client().await, dir);
    p.open(1, &book, &m);
    let (_, at) = p.load().await;
    assert_eq!(at, Spot::new(ch(&m, 0), 100.0));
    p.position(1, &ch(&m, 0), 100.0, true);
    p.action(1, Action::Play);
    p.position(1, &ch(&m, 0), 101.0, true);
    // Every state is seen (a watch keeps only the latest).
    p.sync.settle().await;
    p.action(1, Action::Pause);
    // The pause is seen before the caller's next state replaces it (a
    // report made while playing may already have put 101 s there).
    p.sync.settle().await;
    server_holds(env, &book, &Spot::new(ch(&m, 0), 101.0)).await;
    (p, book, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeks_while_paused_reach_the_server_at_once_and_offline_are_queued() {
    let env = Env::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (p, book, m) = paused(&env, dir.path()).await;
    // `n`: the next chapter, paused (the engine publishes its target).
    p.position(1, &ch(&m, 1), 0.0, false);
    server_holds(&env, &book, &Spot::new(ch(&m, 1), 0.0)).await;
    // `l` before it landed: its own place, not the one before.
    p.position(1, &ch(&m, 1), 30.0, false);
    server_holds(&env, &book, &Spot::new(ch(&m, 1), 30.0)).await;
    // `←` with the server away: queued on this device.
    env.proxy.set_mode(Mode::Refuse);
    p.position(1, &ch(&m, 1), 20.0, false);
    p.until("queued offline", |s| {
        s.queued == 1 && s.link == Link::Offline
    })
    .await;
    let journal = Records::new(dir.path()).pending(None).unwrap();
    let entry = journal.queued.iter().chain(&journal.held).next().unwrap();
    let doc = serde_json::to_value(entry).unwrap();
    assert_eq!(doc["op"]["positionSec"].as_f64(), Some(20.0), "{doc}");
    env.proxy.set_mode(Mode::Forward);
    server_holds(&env, &book, &Spot::new(ch(&m, 1), 20.0)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_reads_the_server_first_and_asks_when_another_device_moved_on() {
    let env = Env::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut p, book, m) = paused(&env, dir.path()).await;
    // Nobody moved: it plays on.
    p.sync.resume();
    p.command(|c| matches!(c, EngineCommand::Play)).await;
    p.action(1, Action::Play);
    p.sync.settle().await;
    p.action(1, Action::Pause);
    p.sync.settle().await;
    server_holds(&env, &book, &Spot::new(ch(&m, 0), 101.0)).await;
    // B writes chapter 2 while this device is paused.
    elsewhere(&env.direct().await, &book, &ch(&m, 1), 50.0).await;
    p.drain();
    p.sync.resume();
    let n = p.notice(|n| matches!(n, Event::Conflict { .. })).await;
    assert_eq!(
        n,
        Event::Conflict {
            book: book.clone(),
            server: Spot::new(ch(&m, 1), 50.0),
            local: Spot::new(ch(&m, 0), 101.0),
        }
    );
    p.sync.settle().await;
    assert!(
        !p.drain().iter().any(|c| matches!(c, EngineCommand::Play)),
        "played before the listener chose"
    );
    server_holds(&env, &book, &Spot::new(ch(&m, 1), 50.0)).await;
    p.sync.chose(book.clone(), Choice::Server);
    let c = p.command(|c| matches!(c, EngineCommand::Seek { .. })).await;
    assert!(
        matches!(&c, EngineCommand::Seek { chapter, position }
            if *chapter == ch(&m, 1) && *position == 50.0),
        "{c:?}"
    );
    p.command(|c| matches!(c, EngineCommand::Play)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_the_server_kept_moves_the_player_to_its_place() {
    let env = Env::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut p, book, m) = paused(&env, dir.path()).await;
    // Offline, this device moves on and pauses: queued.
    env.proxy.set_mode(Mode::Refuse);
    p.action(1, Action::Play);
    p.position(1, &ch(&m, 0), 140.0, true);
    p.sync.settle().await;
    p.action(1, Action::Pause);
    p.until("queued offline", |s| s.queued == 1).await;
    // Meanwhile B writes a newer place; then the server is back.
    elsewhere(&env.direct().await, &book, &ch(&m, 1), 50.0).await;
    p.drain();
    env.proxy.set_mode(Mode::Forward);
    let c = p.command(|c| matches!(c, EngineCommand::Seek { .. })).await;
    assert!(
        matches!(&c, EngineCommand::Seek { chapter, position }
            if *chapter == ch(&m, 1) && *position == 50.0),
        "{c:?}"
    );
    // Said as data (the player words it): where playback moved.
    let n = p
        .notice(|n| matches!(n, Event::Said(Said::MovedToServer { .. })))
        .await;
    assert!(
        matches!(&n, Event::Said(Said::MovedToServer { to, .. }) if *to == Spot::new(ch(&m, 1), 50.0)),
        "{n:?}"
    );
    p.until("sent", |s| s.queued == 0).await;
    server_holds(&env, &book, &Spot::new(ch(&m, 1), 50.0)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_server_is_shown_offline_and_its_return_noticed() {
    let env = Env::start().await;
    let dir = tempfile::tempdir().unwrap();
    let p = start_worker(&env.client().await, dir.path());
    p.until("online", |s| s.link == Link::Online).await;
    env.proxy.set_mode(Mode::Refuse);
    // The library's refresh failed (nothing of sync's was under way).
    p.sync.server_lost("connection refused".into());
    p.until("offline", |s| s.link == Link::Offline).await;
    env.proxy.set_mode(Mode::Forward);
    p.until("online again", |s| s.link == Link::Online).await;
}
