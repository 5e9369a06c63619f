//! Up next end to end: the `earmark` binary in a real pseudo-terminal
//! against the reference server, on a generated two-book series.

use crate::e2e::Tui;
use crate::harness::TestServer;
use crate::up_next_live::{place, saga_library};

fn config(home: &std::path::Path, text: &str) {
    let dir = home.join("config/earmark");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn log_in(tui: &mut Tui, password: &str) {
    tui.wait_for("Log in to your audiobook server");
    tui.keys(password);
    tui.keys("\r");
    tui.wait_for("Saga Two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_countdown_shows_a_key_cancels_it_and_then_the_next_book_resumes_at_its_place() {
    let lib = saga_library(3);
    let server = TestServer::start(lib.path()).await.unwrap();
    let c = crate::harness::direct(&server).await;
    let books = c.books(&Default::default()).await.unwrap();
    let two = crate::harness::titled(&books, "Saga Two");
    place(&c, &two.id, 12.0).await;
    let home = tempfile::tempdir().unwrap();
    config(
        home.path(),
        "[player]\nup_next_countdown = 5\nsmart_rewind = false\n",
    );
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        log_in(&mut tui, &password);
        // By title: Beta, Saga One, Saga Two.
        tui.keys("j");
        tui.keys("\r");
        tui.wait_for("Saga One 1");
        tui.keys("\r"); // chapter 1 from 0
        tui.wait_for("▶ Playing");
        tui.wait_for("next: Saga Two");
        tui.wait_for("Up next");
        tui.wait_for("“Saga Two” starts in");
        tui.wait_for("any key cancels");
        tui.keys("x");
        tui.wait_for("Up next cancelled");
        tui.wait_gone("any key cancels");
        assert!(tui.text().contains("■ Finished"), "{}", tui.text());
        // Again from chapter 2: this time the countdown runs out.
        tui.keys("j");
        tui.keys("\r");
        tui.wait_for("▶ Playing");
        tui.wait_for("“Saga Two” starts in");
        tui.wait_for("Saga Two · 02 - Saga Two 2");
        tui.wait_for("▶ Playing");
        let text = tui.text();
        let bar = text
            .lines()
            .find(|l| l.trim_start().starts_with("chapter"))
            .unwrap_or_else(|| panic!("no chapter bar:\n{text}"));
        let at = bar
            .split_whitespace()
            .find(|w| w.contains(':'))
            .and_then(|t| t.split_once(':'))
            .map(|(m, s)| m.parse::<u32>().unwrap() * 60 + s.parse::<u32>().unwrap())
            .unwrap_or_else(|| panic!("no time in {bar:?}"));
        assert!(at >= 12, "the synced place of Saga Two, never 0: {bar:?}");
        tui.keys(" ");
        tui.keys("Q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
    let one = crate::harness::titled(&books, "Saga One");
    let p = c.progress(&one.id).await.unwrap().progress.unwrap();
    assert!(p.finished, "Saga One is finished on the server: {p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_up_next_list_is_built_with_its_key_and_still_there_after_a_restart() {
    let lib = saga_library(3);
    let server = TestServer::start(lib.path()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        log_in(&mut tui, &password);
        tui.keys("G"); // Saga Two
        tui.keys("A");
        tui.wait_for("“Saga Two” plays next");
        tui.keys("g"); // Beta
        tui.keys("A");
        tui.wait_for("“Beta” is number 2 up next");
        tui.keys(">");
        tui.wait_for("up next · 2");
        tui.wait_for("1. Saga Two");
        tui.wait_for("2. Beta");
        tui.keys("J"); // Saga Two after Beta
        tui.wait_for("1. Beta");
        tui.keys("Q");
        assert!(tui.wait_exit().success());

        // The stored session opens the library; the list is read back.
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Saga Two");
        tui.keys(">");
        tui.wait_for("1. Beta");
        tui.wait_for("2. Saga Two");
        let cursor = tui.cursor().expect("the cursor is shown");
        assert!(
            cursor.1.contains("1. Beta"),
            "on the selected row: {cursor:?}"
        );
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
}
