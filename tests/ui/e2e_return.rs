//! Issue 29, item 3, end to end: the player in a real pty plays Aesop's
//! Fables (the null output eight times faster than real time, so its
//! stream runs dry and stalls while the server is away), the reference
//! server is stopped for long enough that a growing back-off would reach
//! a minute, then started again on the same port and data. The bar says
//! "offline" while it is away, with the count `earmark sync pending`
//! gives, and no longer a few seconds after it is back.

use crate::e2e::{Tui, demo_library};
use crate::e2e_rule7::earmark;
use crate::harness::TestServer;
use std::time::{Duration, Instant};

/// The number before " queued" on the screen, 0 when there is none.
fn queued_on(screen: &str) -> usize {
    screen
        .find(" queued")
        .and_then(|at| {
            let digits: String = screen[..at]
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_stall_the_player_says_online_within_seconds_of_the_servers_return() {
    let mut server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let login = ["login", "--password-stdin"];
    earmark(home.path(), &base, &login, Some(&server.password));
    let (h, b) = (home.path().to_owned(), base.clone());
    let tui = tokio::task::spawn_blocking(move || {
        let rate = [("EARMARK_NULL_CLOCK_RATE", "8")];
        let mut t = Tui::start_with(&h, &b, "alice", &["--audio", "null"], None, &rate);
        t.wait_for("filter: all");
        t.wait_for("Aesop");
        t.keys("/aesop");
        t.wait_for("found");
        t.keys("\r");
        t.keys("\r");
        t.wait_for("The Fox and the Grapes");
        t.keys(" ");
        t.wait_for("▶ Playing");
        t
    })
    .await
    .unwrap();
    server.stop().await;
    let away = Instant::now();
    let tui = tokio::task::spawn_blocking(move || {
        tui.wait_for_within("offline", Duration::from_secs(30));
        tui
    })
    .await
    .unwrap();
    // Away long enough for the read-ahead to run dry (280 s of media) and
    // for a back-off that doubles without a cap of seconds to pass 30 s.
    tokio::time::sleep(Duration::from_secs(35).saturating_sub(away.elapsed())).await;
    // The bar's count is the journal's.
    let pending = earmark(home.path(), &base, &["--json", "sync", "pending"], None);
    let doc: serde_json::Value = serde_json::from_str(&pending).unwrap();
    let journal = doc["queued"].as_array().map_or(0, Vec::len);
    let screen = tui.text();
    assert_eq!(queued_on(&screen), journal, "{pending}\n{screen}");
    server.restart().await.unwrap();
    let back = Instant::now();
    let mut tui = tokio::task::spawn_blocking(move || {
        tui.wait_gone("offline");
        tui
    })
    .await
    .unwrap();
    let noticed = back.elapsed();
    eprintln!("the server's return noticed after {noticed:?}");
    assert!(
        noticed < Duration::from_secs(8),
        "the player said offline {noticed:?} after the server was back:\n{}",
        tui.text()
    );
    tokio::task::spawn_blocking(move || {
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
}
