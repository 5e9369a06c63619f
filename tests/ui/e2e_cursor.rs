//! The accessible mode end to end (issue 24 §3): in a real pseudo-terminal
//! against the reference server, the terminal's cursor (what screen
//! readers and braille displays follow) is shown and moves with the
//! selection in the library, the search line and the book screen; and
//! `--accessible` draws the player bar in words, without rules.

use crate::e2e::{Tui, demo_library};
use crate::harness::TestServer;
use std::time::{Duration, Instant};

/// Waits until the shown cursor satisfies `ok` (its (row, column) and
/// the text of its row).
fn wait_cursor(tui: &Tui, what: &str, ok: impl Fn((u16, u16), &str) -> bool) -> (u16, u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some((at, row)) = tui.cursor()
            && ok(at, &row)
        {
            return at;
        }
        if Instant::now() > deadline {
            panic!(
                "timed out waiting for the cursor {what}; cursor {:?}; screen:\n{}",
                tui.cursor(),
                tui.text()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Logs in through the form of a player started with `extra`.
fn logged_in(server: &TestServer, home: &std::path::Path, extra: &[&str]) -> Tui {
    let mut args = vec!["--audio", "null"];
    args.extend_from_slice(extra);
    let mut tui = Tui::start(home, server.base_url(), "alice", &args);
    tui.wait_for("Log in to your audiobook server");
    // The cursor waits in the password field (address and user are given).
    wait_cursor(&tui, "in the password field", |_, row| {
        row.contains("Password")
    });
    tui.keys(&server.password);
    tui.keys("\r");
    tui.wait_for("filter: all");
    tui.wait_for("Aesop's Fables");
    tui
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cursor_follows_the_selection_in_the_library_search_and_book() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    tokio::task::spawn_blocking(move || {
        let mut tui = logged_in(&server, home.path(), &[]);
        // Sorted by title: the first row (screen row 2) is selected.
        let first = wait_cursor(&tui, "on the first book", |_, row| {
            row.contains("Aesop's Fables")
        });
        assert_eq!(first, (2, 0));
        tui.keys("j");
        let next = wait_cursor(&tui, "on the second book", |_, row| {
            row.contains("Die Bremer Stadtmusikanten")
        });
        assert_eq!(next, (3, 0));
        tui.keys("G");
        wait_cursor(&tui, "on the last book", |(r, _), row| {
            r > 3 && row.contains("The Tell-Tale Heart")
        });

        // The search line: the cursor stands after what is typed.
        tui.keys("/");
        wait_cursor(&tui, "at the start of the search", |at, _| at == (1, 3));
        tui.keys("poe");
        wait_cursor(&tui, "after `poe`", |at, row| {
            at == (1, 6) && row.contains("/ poe")
        });
        tui.keys("\r"); // to the list: the best match is selected
        wait_cursor(&tui, "on the first match", |at, row| {
            at == (2, 0) && row.contains("Po")
        });
        tui.wait_for("found");
        let title = tui.cursor().unwrap().1;

        // The book screen: the cursor is on the selected chapter.
        tui.keys("\r");
        tui.wait_for("[Chapters]");
        let ch1 = wait_cursor(&tui, "on chapter 1", |_, row| {
            row.trim_start().starts_with('1') || row.contains("   1  ")
        });
        tui.keys("j");
        let ch2 = wait_cursor(&tui, "on chapter 2", |_, row| row.contains("   2  "));
        assert_eq!((ch2.0, ch2.1), (ch1.0 + 1, ch1.1), "one row down");
        tui.keys("k");
        wait_cursor(&tui, "back on chapter 1", |at, _| at == ch1);
        assert!(
            title.contains("Po"),
            "the book opened was the match: {title}"
        );
        tui.keys("Q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accessible_says_the_state_in_words_without_rules() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    tokio::task::spawn_blocking(move || {
        let mut tui = logged_in(&server, home.path(), &["--accessible"]);
        tui.wait_for("Nothing playing · open a book");
        wait_cursor(&tui, "on the first book", |at, row| {
            at == (2, 0) && row.contains("Aesop's Fables")
        });
        tui.keys("\r");
        tui.wait_for("[Chapters]");
        tui.keys(" ");
        tui.wait_for("Playing, chapter 1 of");
        tui.wait_for("minutes left");
        tui.wait_for("chapter 0:0");
        let screen = tui.text();
        assert!(
            !screen.contains(['─', '█', '░', '▶', '╭']),
            "no rules, bars, glyphs or cover frame:\n{screen}"
        );
        tui.keys(" ");
        tui.wait_for("Paused, chapter 1 of");
        tui.keys("Q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
}

#[test]
fn the_demo_takes_accessible_too() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(
        home.path(),
        "",
        "",
        &["demo", "--audio", "null", "--accessible"],
    );
    tui.wait_for("Aesop");
    tui.wait_for("Nothing playing · open a book");
    wait_cursor(&tui, "on the first book", |at, _| at == (2, 0));
    assert!(!tui.text().contains('─'), "no rule:\n{}", tui.text());
    tui.keys("Q");
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
}
