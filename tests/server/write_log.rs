//! `earmark serve --log-writes`: every progress write the server decided,
//! single or in a batch, in the order decided, with its outcome; a server
//! without the flag keeps no log.

use crate::common::*;
use crate::harness::TestServer;
use earmark::server::merge::Outcome;
use earmark::server::write_log;
use serde_json::json;

#[tokio::test]
async fn the_write_log_keeps_every_decided_write_in_order_with_its_outcome() {
    let lib = small_library();
    let server = TestServer::start_with(lib.path(), |c| c.log_writes = true)
        .await
        .unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let book = b["id"].as_str().unwrap().to_owned();
    let m = api.manifest(&book).await;
    let ch = |i: usize| m["items"][i]["chapterId"].as_str().unwrap().to_owned();
    let t = now_ms() - 60_000;

    api.progress_write(&book, &ch(1), 0.7, t).await.expect(200);
    // The same write again (a retry), an older one, and a 0 over a place.
    api.progress_write(&book, &ch(1), 0.7, t).await.expect(200);
    api.progress_write(&book, &ch(2), 0.5, t - 5)
        .await
        .expect(200);
    api.progress_write(&book, &ch(0), 0.0, t + 1)
        .await
        .expect(200);
    let items = json!({"items": [{"bookId": book, "chapterId": ch(2), "positionSec": 0.25, "clientUpdatedAt": t + 2}]});
    api.post("/auth/reading-progress/batch", items)
        .await
        .expect(200);

    let log = write_log::read(server.data_path()).unwrap();
    let seen: Vec<_> = log
        .iter()
        .map(|w| {
            (
                w.chapter_id.clone(),
                w.position_sec,
                w.client_updated_at,
                w.outcome,
                w.revision,
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (ch(1), 0.7, t, Outcome::Applied, 1),
            (ch(1), 0.7, t, Outcome::Stale, 1),
            (ch(2), 0.5, t - 5, Outcome::Stale, 1),
            (ch(0), 0.0, t + 1, Outcome::ZeroGuarded, 1),
            (ch(2), 0.25, t + 2, Outcome::Applied, 2),
        ]
    );
    assert!(log.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(
        log.iter()
            .all(|w| w.book_id == book && w.user_id == server.user_id)
    );
    assert_eq!(
        log.iter()
            .map(|w| &w.boot)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        1,
        "one run of the server"
    );
}

#[tokio::test]
async fn a_server_without_the_flag_keeps_no_write_log() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let book = b["id"].as_str().unwrap().to_owned();
    let m = api.manifest(&book).await;
    let ch = m["items"][1]["chapterId"].as_str().unwrap().to_owned();
    api.progress_write(&book, &ch, 0.7, now_ms() - 1000)
        .await
        .expect(200);
    let e = write_log::read(server.data_path()).unwrap_err();
    assert!(format!("{e:#}").contains("progress_log"), "{e:#}");
}
