//! A whole `earmark play` over HTTP/2 where the server offers it: `earmark
//! login` learns what the address speaks, the session keeps it, and the
//! next session's manifest, progress, stream chunks, writes and quit all
//! go out on one connection. Against an HTTP/1.1 server the counts stay as
//! they were; a server that dropped h2 still plays and the flag is cleared.
//! Through the loopback proxy: counts, not times.

use crate::harness::TestServer;
use crate::harness::proxy::Proxy;
use crate::harness::{Home, log_in_and_find, text};
use crate::support::library;
use std::time::Duration;

/// What the session store says each address speaks.
fn speaks(home: &Home) -> Vec<Option<String>> {
    let path = home.dir.path().join("data/earmark/sessions/default.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    // A record of one address says it beside `server`.
    match v["addresses"].as_array() {
        Some(list) => list
            .iter()
            .map(|a| a["speaks"].as_str().map(str::to_owned))
            .collect(),
        None => vec![v["speaks"].as_str().map(str::to_owned)],
    }
}

fn play(home: &Home, book: &str) -> std::process::Output {
    // `--at 30` seeks inside the chapter; 4 s of playback ask for chunks
    // and write progress and settings; the quit writes the place.
    let args = ["play", book, "--audio", "null", "--at", "30", "--for", "4"];
    let o = home.run(&args, None);
    assert!(o.status.success(), "{}", text(&o));
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_h2c_learned_at_login_a_whole_earmark_play_opens_one_connection() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    proxy.pass_h2(true);
    proxy.set_delay(Duration::from_millis(5));
    let (home, book) = log_in_and_find(&server, &proxy.base_url(), "Alpha").await;
    assert_eq!(speaks(&home), vec![Some("h2c".to_owned())]);

    proxy.clear();
    let o = play(&home, book.as_str());
    let seen = proxy.requests();
    assert_eq!(proxy.connections(), 1, "{seen:?} {}", text(&o));
    assert!(seen.iter().all(|r| r.http2), "{seen:?}");
    // Manifest, progress, stream, a progress write, the quit's writes.
    assert!(seen.len() >= 5, "{seen:?}");
    assert_eq!(speaks(&home), vec![Some("h2c".to_owned())], "kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_an_http1_only_server_earmark_play_opens_at_most_the_three_of_its_start_up() {
    let lib = library();
    let server = TestServer::start_with(lib.path(), |c| c.http1_only = true)
        .await
        .unwrap();
    let proxy = Proxy::start(server.addr()).await;
    proxy.pass_h2(true);
    let (home, book) = log_in_and_find(&server, &proxy.base_url(), "Alpha").await;
    assert_eq!(speaks(&home), vec![Some("http1".to_owned())]);

    proxy.clear();
    let o = play(&home, book.as_str());
    let seen = proxy.requests();
    assert!(proxy.connections() <= 3, "{seen:?} {}", text(&o));
    assert!(
        seen.iter().all(|r| !r.http2),
        "no probe once known: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dropped_h2_after_login_still_plays_and_the_flag_is_cleared() {
    let lib = library();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    proxy.pass_h2(true);
    let (home, book) = log_in_and_find(&server, &proxy.base_url(), "Alpha").await;
    assert_eq!(speaks(&home), vec![Some("h2c".to_owned())]);

    server.restart_with(|c| c.http1_only = true).await.unwrap();
    proxy.clear();
    let o = play(&home, book.as_str());
    let seen = proxy.requests();
    assert!(
        seen.iter().any(|r| !r.http2 && r.path.contains("/play")),
        "{seen:?} {}",
        text(&o)
    );
    assert_ne!(speaks(&home), vec![Some("h2c".to_owned())], "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_does_not_know_what_its_address_speaks_learns_it_after_its_start_up() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    proxy.pass_h2(true);
    let (home, book) = log_in_and_find(&server, &proxy.base_url(), "Alpha").await;
    // A session stored before protocols were learned.
    let path = home.dir.path().join("data/earmark/sessions/default.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("speaks");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(speaks(&home), vec![None]);

    let args = ["play", book.as_str(), "--audio", "null", "--for", "6"];
    let o = home.run(&args, None);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(speaks(&home), vec![Some("h2c".to_owned())], "{}", text(&o));
}
