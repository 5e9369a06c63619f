//! A book opened while the server is unreachable, with no place cached on
//! this device: the engine plays from a guess (the start), and that guess
//! must not overwrite newer progress another device saved on the server.

use crate::proxy::Mode;
use crate::support::*;
use earmark::api::ProgressWrite;
use earmark::domain::now_millis;
use earmark::domain::session::Event;
use earmark::sync::{Link, Spot};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_open_without_cache_asks_on_reconnect_instead_of_overwriting() {
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    let far = m.items[1].chapter_id.clone();
    // Another device saved ch 2 at 150 s.
    env.direct()
        .await
        .post_progress(
            &book,
            &ProgressWrite {
                chapter_id: far.clone(),
                position: 150.0,
                client_updated_at: now_millis() - 60_000,
                finished: false,
                device_id: Some("other".into()),
                reset: false,
            },
        )
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = env.client().await;
    env.proxy.set_mode(Mode::Refuse);
    let mut p = start_worker(&client, dir.path());
    p.open(1, &book, &m);
    let first = m.items[0].chapter_id.clone();
    assert_eq!(p.load().await, (1, Spot::new(first.clone(), 0.0)));
    p.position(1, &first, 0.0, true);
    p.action(1, Action::Play);
    // Several report intervals of listening from the guess, then a pause.
    for i in 1..=12 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        p.position(1, &first, 5.0 * i as f64, true);
    }
    p.action(1, Action::Pause);
    p.until("offline", |s| s.link == Link::Offline).await;
    assert_eq!(p.sync.status().queued, 0, "the guess was queued");

    env.proxy.set_mode(Mode::Forward);
    let n = p.notice(|n| matches!(n, Event::Conflict { .. })).await;
    assert_eq!(
        n,
        Event::Conflict {
            book: book.clone(),
            server: Spot::new(far.clone(), 150.0),
            local: Spot::new(first.clone(), 60.0),
        }
    );
    p.sync.settle().await;
    let sp = env.server_progress(&book).await.unwrap();
    assert_eq!((sp.chapter_id, sp.position), (far, 150.0));
    assert!(
        written_positions(&env.proxy).is_empty(),
        "the guess was sent: {:?}",
        written_positions(&env.proxy)
    );
}
