//! The book screen over a slow link (issue 23): the player in a real pty,
//! the reference server behind the counting proxy. What Enter asks for
//! goes out together (counts, not times).

use crate::e2e::{Tui, demo_library};
use earmark::server::testing::TestServer;
use earmark::server::testing::proxy::Proxy;
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
