//! Issue 29's items through the real binary in a pty, against the
//! reference server: each rule holds on the path that was not tested
//! before, because the session's one owner keeps it for every path.

use crate::e2e::{Tui, demo_library};
use crate::e2e_rule7::earmark;
use crate::harness::TestServer;
use earmark::api::{Client, ProgressWrite};
use earmark::domain::{BookId, Manifest, now_millis};
use std::path::Path;
use std::time::Duration;

/// The demo server, alice logged in at `home`, and Aesop's Fables.
async fn logged_in(home: &Path) -> (TestServer, Client, BookId, Manifest) {
    let server = TestServer::start(demo_library()).await.unwrap();
    let direct = crate::harness::direct(&server).await;
    let books = direct.books(&Default::default()).await.unwrap();
    let book = crate::harness::titled(&books, "Aesop's Fables").id.clone();
    let manifest = direct.manifest(&book).await.unwrap();
    let login = ["login", "--password-stdin"];
    let (h, base, pw) = (
        home.to_owned(),
        server.base_url().to_owned(),
        server.password.clone(),
    );
    tokio::task::spawn_blocking(move || earmark(&h, &base, &login, Some(&pw)))
        .await
        .unwrap();
    (server, direct, book, manifest)
}

/// Opens Aesop's Fables from the library (search, Enter, Enter).
fn open_aesop(tui: &mut Tui) {
    tui.wait_for("filter: all");
    tui.keys("/aesop's");
    tui.wait_for("found");
    tui.keys("\r");
    tui.keys("\r");
    tui.wait_for("The Fox and the Grapes");
}

/// `HH:MM-HH:MM` from a minute ago to two hours on, local time.
fn hours_around_now() -> String {
    let now = now_millis();
    let minute =
        earmark::domain::sleep::minute_of_day(now, earmark::domain::utc_offset_secs(now / 1000));
    let hm = |m: u32| format!("{:02}:{:02}", (m / 60) % 24, m % 60);
    format!(
        "{}-{}",
        hm((minute + 1439) % 1440),
        hm((minute + 120) % 1440)
    )
}

/// Item 1: with `[sleep] auto` covering now, the very first Space after
/// the player starts sets the automatic timer (it used to take a pause and
/// a resume).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_sleep_hours_set_the_timer_on_the_first_play() {
    let home = tempfile::tempdir().unwrap();
    let (server, _direct, _book, _m) = logged_in(home.path()).await;
    let config = home.path().join("config/earmark");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[sleep]\nauto = \"{}\"\nauto_timer = 30\n",
            hours_around_now()
        ),
    )
    .unwrap();
    let (h, base) = (home.path().to_owned(), server.base_url().to_owned());
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&h, &base, "alice", &["--audio", "null"]);
        open_aesop(&mut tui);
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        tui.wait_for("sleep 29:");
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
}

/// Item 2: a book downloaded by `earmark download` while the player is
/// open plays from its files when the server is gone (it counted as not
/// downloaded until the player restarted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_book_another_earmark_downloaded_plays_offline_in_the_open_player() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, _direct, book, _m) = logged_in(home.path()).await;
    let (h, base) = (home.path().to_owned(), server.base_url().to_owned());
    let mut tui = tokio::task::spawn_blocking(move || {
        let tui = Tui::start(&h, &base, "alice", &["--audio", "null"]);
        tui.wait_for("filter: all");
        tui.wait_for("Aesop's Fables");
        tui
    })
    .await
    .unwrap();
    let (h, base, b) = (
        home.path().to_owned(),
        server.base_url().to_owned(),
        book.to_string(),
    );
    tokio::task::spawn_blocking(move || earmark(&h, &base, &["download", &b], None))
        .await
        .unwrap();
    server.stop().await;
    tokio::task::spawn_blocking(move || {
        // `r` finds the server away; the row is the download's, not
        // "unavailable", and Space plays it from its files.
        tui.keys("r");
        tui.wait_for_within("offline", Duration::from_secs(40));
        tui.keys("/aesop's");
        tui.wait_for("found");
        tui.keys("\r");
        tui.wait_for_within("↓", Duration::from_secs(15));
        tui.keys("\r");
        tui.wait_for("The Fox and the Grapes");
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        assert!(!tui.text().contains("not downloaded"), "{}", tui.text());
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
}

/// Item 6: another device's place written a moment after this device
/// read the server (a seek while paused reads it) is never played over:
/// Space reads the server again and asks. It used to skip the read for
/// 3 s and play on, writing its own place over the other device's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_right_after_a_read_asks_when_another_device_wrote_since() {
    let home = tempfile::tempdir().unwrap();
    let (server, direct, book, m) = logged_in(home.path()).await;
    let (h, base) = (home.path().to_owned(), server.base_url().to_owned());
    let tui = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&h, &base, "alice", &["--audio", "null"]);
        open_aesop(&mut tui);
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        tui.wait_for("0:03 /");
        tui.keys(" ");
        tui.wait_for("Paused");
        // A short skip while paused: the server's place is read, and this
        // device's new place goes out.
        tui.keys("\x1b[C");
        tui
    })
    .await
    .unwrap();
    // The seek's read is done once its place is the server's.
    let first = m.items[0].chapter_id.clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let p = direct.progress(&book).await.unwrap().progress;
        if p.is_some_and(|p| p.chapter_id == first && p.position >= 10.0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the paused seek never reached the server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Device B, at once: chapter 6.
    let ch6 = m.items[5].chapter_id.clone();
    direct
        .post_progress(
            &book,
            &ProgressWrite {
                chapter_id: ch6,
                position: 30.0,
                client_updated_at: now_millis(),
                finished: false,
                device_id: Some("device-b".into()),
                reset: false,
            },
        )
        .await
        .unwrap();
    tokio::task::spawn_blocking(move || {
        let mut tui = tui;
        tui.keys(" ");
        tui.wait_for("this device:");
        // Nothing is written while the prompt waits; keep the server's.
        tui.keys("\r");
        tui.wait_gone("this device:");
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
    let held = direct.progress(&book).await.unwrap().progress.unwrap();
    assert_eq!(
        held.chapter_id, m.items[5].chapter_id,
        "the other device's place is still the server's: {held:?}"
    );
}
