//! The book screen over a slow link (issue 23): the player in a real pty,
//! the reference server behind the counting proxy. What Enter asks for
//! goes out together (counts, not times).

use crate::e2e::{Tui, demo_library};
use crate::e2e_rule7::earmark;
use crate::harness::TestServer;
use crate::harness::proxy::Proxy;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_book_screens_requests_go_out_together_so_it_completes_in_one_round_trip() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    let home = tempfile::tempdir().unwrap();
    let (base, password) = (proxy.base_url(), server.password.clone());
    let home_path = home.path().to_owned();
    let proxy = std::sync::Arc::new(proxy);
    let p = proxy.clone();
    let seen = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("filter: all");
        tui.wait_for("Aesop");
        // The start-up's own work (the cache, the license) first.
        settle(&p);
        p.set_delay(Duration::from_millis(40));
        p.clear();
        tui.keys("\r");
        tui.wait_for("[Chapters]");
        tui.wait_gone("Loading chapters");
        let seen = p.requests();
        let in_flight = p.max_in_flight();
        tui.keys("\x1b");
        tui.keys("q");
        tui.wait_exit();
        (seen, in_flight)
    })
    .await
    .unwrap();
    let (seen, in_flight) = seen;
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    assert!(
        paths.iter().any(|p| p.contains("manifest")),
        "the chapters were asked for: {paths:?}"
    );
    assert!(seen.len() >= 3, "{paths:?}");
    assert!(
        in_flight >= seen.len() as u64,
        "every request of the book screen in flight at once ({in_flight} of {}): {paths:?}",
        seen.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_on_a_book_screen_asks_for_the_place_and_the_last_played_chapter_together() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    let direct = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    direct
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let books = direct.books(&Default::default()).await.unwrap();
    let book = books.iter().find(|b| b.title.contains("Aesop")).unwrap();
    let manifest = direct.manifest(&book.id).await.unwrap();
    let third = manifest.items[2].chapter_id.to_string();
    let home = tempfile::tempdir().unwrap();
    let base = proxy.base_url();
    earmark(
        home.path(),
        &base,
        &["login", "--password-stdin"],
        Some(&server.password),
    );
    // This device played the third chapter last.
    let args = [
        "play",
        book.id.as_str(),
        "--chapter",
        &third,
        "--at",
        "2",
        "--for",
        "1",
        "--audio",
        "null",
    ];
    earmark(home.path(), &base, &args, None);
    let home_path = home.path().to_owned();
    let proxy = std::sync::Arc::new(proxy);
    let p = proxy.clone();
    let seen = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("filter: all");
        tui.wait_for("Aesop");
        tui.keys("/aesop");
        tui.wait_for("found");
        tui.keys("\r");
        tui.keys("\r");
        tui.wait_for("The Fox and the Grapes");
        tui.wait_gone("Loading chapters");
        // The book screen's own requests first.
        settle(&p);
        p.set_delay(Duration::from_millis(40));
        p.clear();
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        let seen = p.requests();
        let in_flight = p.max_in_flight();
        tui.keys("Q");
        tui.wait_exit();
        (seen, in_flight)
    })
    .await
    .unwrap();
    let (seen, in_flight) = seen;
    let all: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    // Only the place and the streams: a late request of the screen's own
    // (a cover, a license check) may pass the proxy on a busy machine.
    let paths: Vec<&str> = all
        .iter()
        .copied()
        .filter(|p| p.contains("/reading-progress/") || p.contains("/play"))
        .collect();
    let progress = paths.iter().position(|p| p.contains("/reading-progress/"));
    let stream = paths.iter().position(|p| p.contains("/play"));
    assert!(
        progress.is_some_and(|i| i < 2),
        "the place read first: {paths:?} (all: {all:?})"
    );
    assert!(
        stream.is_some_and(|i| i < 2),
        "beside it, a stream before any other: {paths:?} (all: {all:?})"
    );
    assert!(
        paths[stream.unwrap()].contains(&third),
        "the chapter this device played last: {paths:?}"
    );
    assert!(
        in_flight >= 2,
        "the place and the stream in flight together: {paths:?}"
    );
}

/// Waits until the proxy saw no new request for half a second (at most
/// 20 s): what the player asked for on its own has gone out.
fn settle(p: &Proxy) {
    let quiet = Instant::now() + Duration::from_secs(20);
    let mut last = p.requests().len();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = p.requests().len();
        if now == last || Instant::now() > quiet {
            break;
        }
        last = now;
    }
}
