//! The player as a client of the listening session, end to end: the
//! `earmark` binary in a real pseudo-terminal against the reference
//! server. A reopened player holds the last book ready and Space resumes
//! it where the server says; Enter on a chapter while paused plays there;
//! with nothing open, the player's keys say so and change nothing.

use crate::e2e::{Tui, demo_library};
use crate::harness::TestServer;
use earmark::api::ProgressWrite;
use earmark::domain::now_millis;

/// The player logged in (`password` typed) on Aesop's Fables' screen.
fn on_aesop(tui: &mut Tui, password: Option<&str>) {
    if let Some(p) = password {
        tui.wait_for("Log in to your audiobook server");
        tui.keys(p);
        tui.keys("\r");
    }
    tui.wait_for("Aesop");
    tui.keys("/aesop");
    tui.wait_for("found");
    tui.keys("\r"); // asks the server too, focus to the list
    tui.keys("\r"); // opens the book
    tui.wait_for("The Crow and the Pitcher");
}

/// Seconds into the chapter, as the bar's chapter line says.
fn chapter_at(text: &str) -> u32 {
    let bar = text
        .lines()
        .find(|l| l.trim_start().starts_with("chapter"))
        .unwrap_or_else(|| panic!("no chapter bar:\n{text}"));
    bar.split_whitespace()
        .find(|w| w.contains(':'))
        .and_then(|t| t.split_once(':'))
        .map(|(m, s)| m.parse::<u32>().unwrap() * 60 + s.parse::<u32>().unwrap())
        .unwrap_or_else(|| panic!("no time in {bar:?}"))
}

fn quit(tui: &mut Tui) {
    tui.keys("Q");
    assert!(tui.wait_exit().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_player_holds_the_last_book_ready_and_space_resumes_it_where_the_server_says() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (base, password) = (server.base_url().to_owned(), server.password.clone());
    let home_path = home.path().to_owned();
    let b = base.clone();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &b, "alice", &["--audio", "null"]);
        on_aesop(&mut tui, Some(&password));
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        tui.wait_for("0:02 /");
        tui.keys(" ");
        tui.wait_for("⏸ Paused");
        quit(&mut tui);
    })
    .await
    .unwrap();
    // Meanwhile another device listened on, in the same chapter.
    let c = crate::harness::direct(&server).await;
    let books = c.books(&Default::default()).await.unwrap();
    let aesop = books.iter().find(|b| b.title.contains("Aesop")).unwrap();
    let m = c.manifest(&aesop.id).await.unwrap();
    let write = ProgressWrite {
        chapter_id: m.items[0].chapter_id.clone(),
        position: 15.0,
        client_updated_at: now_millis(),
        finished: false,
        device_id: Some("other".into()),
        reset: false,
    };
    c.post_progress(&aesop.id, &write).await.unwrap();
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("⏵ Ready · Space resumes");
        tui.wait_for("Aesop's Fables · The Fox and the Grapes");
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        let at = chapter_at(&tui.text());
        assert!(at >= 15, "the server's place, not this device's: {at}");
        quit(&mut tui);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_on_a_chapter_while_paused_moves_there_and_plays() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (base, password) = (server.base_url().to_owned(), server.password.clone());
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        on_aesop(&mut tui, Some(&password));
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        tui.keys(" ");
        tui.wait_for("⏸ Paused");
        tui.keys("jj"); // from chapter 1 (the current one) to chapter 3
        tui.keys("\r");
        tui.wait_for("Aesop's Fables · The Crow and the Pitcher");
        tui.wait_for("▶ Playing");
        quit(&mut tui);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_nothing_open_the_players_keys_say_so_and_change_nothing() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (base, password) = (server.base_url().to_owned(), server.password.clone());
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("Aesop");
        tui.wait_for("Nothing playing");
        // Space, `.`, `]` and `z`, each said (`T`'s words in between, so
        // each key's own words are seen).
        for k in [" ", ".", "]", "z"] {
            tui.keys(k);
            tui.wait_for("Nothing is playing");
            tui.keys("T");
            tui.wait_for("Times left");
        }
        // No speed and no sleep timer carried over to the next book.
        on_aesop(&mut tui, None);
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        let text = tui.text();
        assert!(text.contains("1.00×"), "{text}");
        assert!(!text.contains("sleep"), "{text}");
        quit(&mut tui);
    })
    .await
    .unwrap();
}
