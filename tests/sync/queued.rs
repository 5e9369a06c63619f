//! Queued changes: a torn journal, playback settings, favorites and
//! bookmarks made offline (issue 5, test 8, and the outbox's other kinds).

use crate::proxy::Mode;
use crate::support::*;
use earmark::domain::session::{Event, Said};
use earmark::domain::{ChapterId, Manifest};
use earmark::player::Command as EngineCommand;
use earmark::sync::{JournalOp, Link};
use std::time::Duration;

fn ch(m: &Manifest, i: usize) -> ChapterId {
    m.items[i].chapter_id.clone()
}

/// 8. A torn outbox journal: startup recovers every whole record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s8_torn_journal_recovers_every_whole_record() {
    let env = Env::start().await;
    let (a, _) = env.book("Alpha").await;
    let (b, _) = env.book("Beta").await;
    let (l, _) = env.book("Long").await;
    let client = env.client().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outbox.journal");
    // Three changes journaled while the server is away.
    env.proxy.set_mode(Mode::Refuse);
    let p = start_worker(&client, dir.path());
    for book in [&a, &b, &l] {
        p.sync.queue_favorite(book.clone(), true);
    }
    p.until("queued", |s| s.queued == 3).await;
    assert_eq!(p.sync.quit(Duration::from_millis(200)).await.left, 3);
    let len = std::fs::metadata(&path).unwrap().len();
    // Power cut in the middle of the last record.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 17).unwrap();
    drop(f);
    env.proxy.set_mode(Mode::Forward);
    let p = start_worker(&client, dir.path());
    let s = p.until("flushed", |s| s.queued == 0).await;
    assert!(s.durable(), "the journal file was reopened");
    let favs = env.direct().await.favorites().await.unwrap();
    assert!(favs.iter().any(|x| x.id == a), "{favs:?}");
    assert!(favs.iter().any(|x| x.id == b), "{favs:?}");
    assert!(!favs.iter().any(|x| x.id == l), "{favs:?}");
}

/// Playback settings are written per book (queued like progress) and
/// applied when the book opens, on this device or another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s9_playback_settings_follow_the_book() {
    let env = Env::start().await;
    let (book, m) = env.book("Beta").await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    p.load().await;
    env.proxy.set_mode(Mode::Refuse);
    p.sync.settings_changed(Some(1.5), Some(0.75));
    let c = p.command(|c| matches!(c, EngineCommand::SetSpeed(_))).await;
    assert!(
        matches!(c, EngineCommand::SetSpeed(s) if s == 1.5),
        "the engine gets the new speed at once: {c:?}"
    );
    p.until("queued offline", |s| s.queued == 1).await;
    env.proxy.set_mode(Mode::Forward);
    p.until("sent", |s| s.queued == 0 && s.link == Link::Online)
        .await;
    let s = env
        .direct()
        .await
        .progress(&book)
        .await
        .unwrap()
        .settings
        .unwrap();
    assert_eq!((s.speed, s.volume), (1.5, Some(0.75)));
    // Another device opens the book: the settings come with it.
    let other = tempfile::tempdir().unwrap();
    let mut q = start_worker(&env.client().await, other.path());
    q.open(1, &book, &m);
    let c = q.command(|c| matches!(c, EngineCommand::SetSpeed(_))).await;
    assert!(matches!(c, EngineCommand::SetSpeed(s) if s == 1.5), "{c:?}");
    let c = q
        .command(|c| matches!(c, EngineCommand::SetVolume(_)))
        .await;
    assert!(
        matches!(c, EngineCommand::SetVolume(v) if v == 0.75),
        "{c:?}"
    );
}

/// Favorites and bookmarks made offline are queued like progress and sent
/// when the server is back; a bookmark is created once (its client id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s10_offline_favorites_and_bookmarks_are_queued() {
    let env = Env::start().await;
    let (book, m) = env.book("Alpha").await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let p = start_worker(&client, dir.path());
    env.proxy.set_mode(Mode::Refuse);
    let bookmark = || {
        p.sync.queue_bookmark(
            book.clone(),
            "device-1-bm-1".into(),
            ch(&m, 1),
            42.5,
            Some("offline note".into()),
        )
    };
    p.sync.queue_favorite(book.clone(), true);
    bookmark();
    p.until("queued", |s| s.queued == 2).await;
    env.proxy.set_mode(Mode::Forward);
    p.until("sent", |s| s.queued == 0).await;
    // A retry of the same bookmark (e.g. after a crash) is not duplicated.
    bookmark();
    p.until("sent again", |s| s.queued == 0).await;
    let direct = env.direct().await;
    let favs = direct.favorites().await.unwrap();
    assert!(favs.iter().any(|b| b.id == book));
    let marks = direct.bookmarks(&book).await.unwrap();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert_eq!(marks[0].position, 42.5);
    assert_eq!(marks[0].note.as_deref(), Some("offline note"));
}

/// Without a login nothing can be journaled: the worker says the change
/// was not saved (it never claims to keep it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_login_a_change_is_refused_out_loud() {
    let env = Env::start().await;
    let (book, _) = env.book("Alpha").await;
    let anonymous = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(&env.proxy.base_url()).unwrap(),
        earmark::api::ClientOptions::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut p = start_worker(&anonymous, dir.path());
    p.sync.queue_favorite(book.clone(), true);
    let n = p
        .notice(|n| matches!(n, Event::Said(Said::Dropped { .. })))
        .await;
    let Event::Said(Said::Dropped {
        book: b,
        why: message,
    }) = n
    else {
        unreachable!()
    };
    assert_eq!(b, book);
    assert!(message.contains("not saved"), "{message}");
    let s = p.until("refused", |s| s.last_error.is_some()).await;
    assert!(!s.last_error.unwrap().contains("kept"));
}

/// A write the server refuses waits longer each time and is set aside
/// after five refusals (never retried every second); the user's retry
/// sends it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_backs_off_then_is_set_aside_until_retried() {
    let env = Env::start().await;
    let (book, _) = env.book("Alpha").await;
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    let mut p = start_worker(&client, dir.path());
    env.proxy.set_mode(Mode::Refuse400);
    let began = std::time::Instant::now();
    p.sync.queue_favorite(book.clone(), true);
    let n = p
        .notice(|n| {
            matches!(
                n,
                Event::Said(Said::Sync(earmark::sync::SyncNews::SetAside { .. }))
            )
        })
        .await;
    assert!(format!("{n:?}").contains("injected refusal"), "{n:?}");
    let s = p
        .until("set aside", |s| s.refused == 1 && s.queued == 0)
        .await;
    assert!(s.last_error.unwrap().contains("injected refusal"));
    let attempts = || {
        env.proxy
            .requests()
            .iter()
            .filter(|r| r.path.contains("favorites"))
            .count()
    };
    assert_eq!(attempts(), 5, "{:?}", env.proxy.requests());
    // Steps of 0.2, 0.4, 0.8 and 1.6 s (backoff_min 0.1 s, doubling), of
    // which each waits at least half (jitter).
    assert!(
        began.elapsed() >= Duration::from_millis(1450),
        "{:?}",
        began.elapsed()
    );
    // Set aside: many flush rounds later, nothing more was sent.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(60)).await;
        p.sync.settle().await;
    }
    assert_eq!(attempts(), 5);
    let pending = earmark::sync::Records::new(dir.path())
        .pending(Some(&client))
        .unwrap();
    assert_eq!(pending.refused.len(), 1);
    assert_eq!(
        pending.refused[0].rejected.as_ref().unwrap().count,
        5,
        "the refusals are journaled"
    );
    env.proxy.set_mode(Mode::Forward);
    assert_eq!(p.sync.journal(JournalOp::RetryRefused).await, 1);
    p.until("sent", |s| s.queued == 0 && s.refused == 0).await;
    let favs = env.direct().await.favorites().await.unwrap();
    assert!(favs.iter().any(|b| b.id == book));
}
