//! End to end in a real pseudo-terminal against the reference server:
//! the `earmark` binary, our tty reader and renderer, the API client.

use crate::harness::TestServer;
pub(crate) use crate::pty::{Tui, demo_library};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_search_play_bookmark_quit_then_the_server_holds_it() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    let screen = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("filter: all");
        tui.wait_for("Aesop");
        tui.keys("/aesop");
        tui.wait_for("found");
        tui.keys("\r"); // asks the server too, focus to the list
        tui.keys("\r"); // opens the book
        tui.wait_for("Chapters");
        tui.wait_for("The Fox and the Grapes");
        tui.keys(" "); // play (resume: no progress yet, so chapter 1)
        tui.wait_for("▶ Playing");
        tui.wait_for("0:02 /"); // real-time null output got going
        tui.keys("\x1b[C"); // → skip 10 s
        tui.keys("]"); // speed 1.05
        tui.wait_for("1.05×");
        tui.keys("b");
        tui.wait_for("Bookmark at");
        tui.keys("the grapes are sour\r");
        tui.wait_for("Bookmark added");
        tui.keys(" "); // pause: reports the position
        tui.wait_for("Paused");
        tui.keys("U"); // the place history: the skip left chapter 1 near 0:02
        tui.wait_for("[History (1)]");
        tui.wait_for("skip");
        tui.keys("S"); // listening statistics of this device
        tui.wait_for("listening statistics");
        tui.wait_for("Today");
        tui.keys("q"); // back to the book
        tui.wait_for("[History (1)]");
        tui.keys("q"); // back to the library
        tui.keys("\x1b");
        tui.keys("q"); // quit
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
        // The reader thread may still be applying the last bytes.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let screen = {
                let parser = tui.screen.lock().unwrap();
                (
                    parser.screen().alternate_screen(),
                    parser.screen().hide_cursor(),
                )
            };
            if screen == (false, false) || std::time::Instant::now() > deadline {
                break screen;
            }
            std::thread::yield_now();
        }
    })
    .await
    .unwrap();
    assert_eq!(
        screen,
        (false, false),
        "alternate screen left and cursor shown"
    );
    // The server holds what the listener did: the place past the skip,
    // the bookmark with its note, and the speed.
    let c = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    c.login(&server.username, &server.password).await.unwrap();
    let books = c.books(&Default::default()).await.unwrap();
    let aesop = books
        .iter()
        .find(|b| b.title.contains("Aesop"))
        .unwrap()
        .id
        .clone();
    let m = c.manifest(&aesop).await.unwrap();
    let state = c.progress(&aesop).await.unwrap();
    let p = state.progress.expect("the place reached the server");
    assert_eq!(p.chapter_id, m.items[0].chapter_id, "{p:?}");
    assert!(
        p.position >= 12.0,
        "the skip and the pause are in it: {p:?}"
    );
    let s = state.settings.expect("the speed reached the server");
    assert!((s.speed - 1.05).abs() < 1e-3, "{s:?}");
    let marks = c.bookmarks(&aesop).await.unwrap();
    assert!(
        marks
            .iter()
            .any(|b| b.note.as_deref() == Some("the grapes are sour")),
        "{marks:?}"
    );
}

#[test]
fn demo_lands_in_a_playing_ready_library() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("filter: all");
    tui.wait_for("Aesop");
    tui.wait_for("demo@");
    tui.keys("Q");
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// `cargo test --release --test ui bench_demo -- --ignored --nocapture`:
/// CPU while idle/paused and while playing (null output), RSS, and text
/// captures of the library and the player for the README.
#[test]
#[ignore]
fn bench_demo_cpu_rss_and_capture() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("Aesop");
    let pid = tui.child.process_id().unwrap();
    let threads = || -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let dir = e.path();
            let name = std::fs::read_to_string(dir.join("comm"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            let tid: u32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
            let stat =
                std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).unwrap_or_default();
            let after = stat.rsplit(')').next().unwrap_or("");
            let f: Vec<&str> = after.split_whitespace().collect();
            let t = f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
                + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
            v.push((format!("{name}/{tid}"), t));
        }
        v
    };
    let measure = |secs: u64| {
        let t0 = cpu_ticks(pid);
        let before = threads();
        std::thread::sleep(Duration::from_secs(secs));
        let ticks = cpu_ticks(pid) - t0;
        let after = threads();
        let busy: Vec<String> = after
            .iter()
            .filter_map(|(n, t)| {
                let b = before.iter().find(|(m, _)| m == n).map_or(0, |(_, t)| *t);
                (t > &b).then(|| format!("{n}: {} ticks", t - b))
            })
            .collect();
        println!("  threads that used CPU in {secs} s: {busy:?}");
        // USER_HZ is 100 on Linux.
        ticks as f64 / 100.0 / secs as f64 * 100.0
    };
    std::thread::sleep(Duration::from_secs(2));
    let idle = measure(20);
    println!("--- library, 80x24 ---\n{}", tui.text());
    tui.keys("/aesop\r\r");
    tui.wait_for("Chapters");
    tui.keys(" ");
    tui.wait_for("▶ Playing");
    std::thread::sleep(Duration::from_secs(2));
    let playing = measure(20);
    tui.keys("\x1b");
    tui.keys("\x1b");
    std::thread::sleep(Duration::from_millis(600));
    println!("--- library while playing, 80x24 ---\n{}", tui.text());
    tui.keys(".");
    std::thread::sleep(Duration::from_millis(600));
    println!("--- book + player, 80x24 ---\n{}", tui.text());
    tui.keys(" ");
    tui.wait_for("Paused");
    std::thread::sleep(Duration::from_secs(1));
    let paused = measure(20);
    println!(
        "CPU idle in the library: {idle:.2}% of a core; playing (null output, 1.0x): {playing:.2}%; paused: {paused:.2}%; RSS {} MB",
        rss_kb(pid) / 1024
    );
    tui.keys("Q");
    tui.wait_exit();
}

#[test]
fn sigterm_saves_and_restores_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::start(home.path(), "", "", &["demo", "--audio", "null"]);
    tui.wait_for("Aesop");
    let pid = tui.child.process_id().unwrap() as i32;
    // SAFETY: sends a signal to the child we started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
    std::thread::sleep(Duration::from_millis(100));
    let parser = tui.screen.lock().unwrap();
    assert!(!parser.screen().alternate_screen());
    assert!(!parser.screen().hide_cursor());
}

/// The demo series end to end: tags and book.toml on the server, the wire,
/// and the narrowed and grouped library in a real terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_series_opens_in_its_order_and_groups() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let password = server.password.clone();
    let home_path = home.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut tui = Tui::start(&home_path, &base, "alice", &["--audio", "null"]);
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("filter: all");
        tui.wait_for("Aesop's Fables");
        tui.keys("g"); // the first row by title: Aesop's Fables
        tui.keys("e"); // its series
        tui.wait_for("series: Aesop's Fables (3)");
        tui.wait_for("#1.5 The Oak and the Reeds");
        tui.keys("\r"); // the cursor stayed on Aesop's Fables (#1)
        tui.wait_for("Aesop's Fables #1 · more: a author  w narrator"); // beside the cover
        tui.keys("q"); // back to the narrowed library
        tui.wait_gone("more: a author");
        tui.wait_for("series: Aesop's Fables (3)");
        tui.keys("\x1b"); // and to the whole library
        tui.wait_gone("series: Aesop's Fables");
        tui.keys("vvv"); // grouped by series
        tui.wait_for("by series (2)");
        tui.wait_for("(not in a series)");
        tui.keys("Q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
}
