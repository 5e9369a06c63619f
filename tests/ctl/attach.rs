//! The player attaches to a running session of its profile in a real
//! pseudo-terminal: the same book and place, its keys act on it, and
//! losing its terminal (SIGHUP) or `q` leaves the session playing. A
//! player's own session is left playing with `x`. A session that does
//! not answer is said so, never shown as an answer of zeros.

use crate::common::{World, place};
use crate::pty::Tui;

fn player(w: &World) -> Tui {
    let server = w.server.base_url().to_owned();
    let tui = Tui::start(w.home.dir.path(), &server, "alice", &["--audio", "null"]);
    tui.wait_for("library");
    tui
}

/// Waits until the session's place is past `after` (it plays on).
fn advances(w: &World, after: f64) {
    let s = w.status_until("played on", |s| place(s).1 > after + 1.0);
    assert_eq!(s["state"], "playing", "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_player_attaches_to_a_detached_session_and_losing_its_terminal_leaves_it_playing() {
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &["--at", "600"], &[]);
    let w = std::sync::Arc::new(w);
    let w2 = w.clone();
    tokio::task::spawn_blocking(move || {
        let w = w2;
        let mut tui = player(&w);
        // The same book at the same place (10:00 into chapter 1).
        tui.wait_for("Long");
        tui.wait_for("▶ Playing");
        tui.wait_for("10:0");
        // A key of the player moves the session: the next chapter.
        tui.keys("n");
        let s = w.status_until("went to chapter 2", |s| place(s).0 == 2);
        let at = place(&s).1;
        // The terminal goes away: the player ends, the session plays on.
        // SAFETY: a signal to the player this test started.
        unsafe { libc::kill(tui.child.process_id().unwrap() as i32, libc::SIGHUP) };
        tui.wait_exit();
        advances(&w, at);

        // `q` in a player attached to it leaves it playing too.
        let mut tui = player(&w);
        tui.wait_for("▶ Playing");
        tui.keys("q");
        tui.wait_exit();
        let at = place(&w.status()).1;
        advances(&w, at);
    })
    .await
    .unwrap();
    assert!(session.alive());
    let (code, _) = w.ctl(&["quit"]);
    assert_eq!(code, 0);
    session.until_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_in_a_player_of_its_own_session_leaves_the_book_playing_detached_at_its_place() {
    let w = World::start().await;
    let w = std::sync::Arc::new(w);
    let w2 = w.clone();
    let place_left = tokio::task::spawn_blocking(move || {
        let w = w2;
        let mut tui = player(&w);
        // No session runs: the player's own plays the first book.
        let (code, _) = w.ctl(&["status"]);
        assert_eq!(code, 0, "the player's own session answers ctl too");
        tui.keys("\r");
        tui.wait_for("Chapters");
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        let s = w.status_until("played 1 s", |s| place(s).1 >= 1.0);
        let (code, doc) = w.ctl(&["quit"]);
        assert_eq!(code, 1, "a player's session is quit in its terminal: {doc}");
        tui.keys("x");
        tui.wait_exit();
        s
    })
    .await
    .unwrap();
    // A detached session took over where the player was.
    let s = w.status_until("plays detached", |s| s["state"] == "playing");
    assert_eq!(s["book"]["id"], place_left["book"]["id"], "{s}");
    assert_eq!(place(&s).0, place(&place_left).0, "{s}");
    assert!(
        place(&s).1 >= place(&place_left).1,
        "{s} after {place_left}"
    );
    let session = crate::common::Detached {
        pid: s["pid"].as_i64().unwrap() as i32,
        socket: Default::default(),
        said: Default::default(),
    };
    let (code, _) = w.ctl(&["quit"]);
    assert_eq!(code, 0);
    session.until_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_asked_of_a_session_that_does_not_answer_are_said_to_be_unanswered_not_shown_as_zero()
 {
    let w = World::start().await;
    let long = w.book("Long");
    let session = w.detach(&long, &[], &[]);
    let pid = session.pid;
    let w = std::sync::Arc::new(w);
    let w2 = w.clone();
    tokio::task::spawn_blocking(move || {
        let mut tui = player(&w2);
        tui.wait_for("▶ Playing");
        // The session hangs: it holds its socket and answers nothing.
        // SAFETY: signals to the session this test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        tui.keys("S");
        tui.wait_for_within("did not answer", std::time::Duration::from_secs(40));
        unsafe { libc::kill(pid, libc::SIGCONT) };
        // Esc closes the statistics, `q` leaves the session playing.
        tui.keys("\x1b");
        tui.keys("q");
        tui.wait_exit();
    })
    .await
    .unwrap();
    let (code, _) = w.ctl(&["quit"]);
    assert_eq!(code, 0);
    session.until_gone();
}
