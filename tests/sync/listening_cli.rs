//! `earmark history` and `earmark stats` as a user runs them, after
//! `earmark play` (the real binary, the engine on the null output, the
//! reference server) recorded a jump and some listening on this device.

use crate::harness::TestServer;
use crate::harness::{logged_in, text, titled};
use crate::support::library;

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_records_the_jump_and_the_time_listened_and_the_commands_show_them() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let alpha = titled(&books, "Alpha").id.clone();
    let m = direct.manifest(&alpha).await.unwrap();
    let (ch1, ch2) = (m.items[0].chapter_id.clone(), m.items[1].chapter_id.clone());

    let o = home.run(
        &["play", alpha.as_str(), "--audio", "null", "--for", "2"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    // A place picked on the command line is a jump from where this device was.
    let o = home.run(
        &[
            "play",
            alpha.as_str(),
            "--chapter",
            ch2.as_str(),
            "--at",
            "1",
            "--for",
            "1",
            "--audio",
            "null",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));

    let h = json(&home.run(&["--json", "history", alpha.as_str()], None));
    assert_eq!(h["bookId"], alpha.as_str());
    let marks = h["marks"].as_array().unwrap();
    assert_eq!(marks.len(), 1, "{h}");
    assert_eq!(marks[0]["cause"], "chapter");
    assert_eq!(marks[0]["chapterId"], ch1.as_str());
    assert!(marks[0]["position"].as_f64().unwrap() >= 1.0, "{h}");
    let o = home.run(&["history", alpha.as_str()], None);
    assert!(text(&o).contains("chapter"), "{}", text(&o));
    let o = home.run(&["history", "no-such-book"], None);
    assert!(text(&o).contains("No place history"), "{}", text(&o));

    let s = json(&home.run(&["--json", "stats"], None));
    assert_eq!(s["last30Days"].as_array().unwrap().len(), 30);
    let wall = s["totalWallSecs"].as_f64().unwrap();
    assert!((2.0..10.0).contains(&wall), "{s}");
    assert_eq!(s["books"][0]["bookId"], alpha.as_str());
    assert!(
        s["last30Days"][29]["wallSecs"].as_f64().unwrap() > 0.0,
        "today: {s}"
    );
    let o = home.run(&["stats"], None);
    assert!(text(&o).contains("Listened on this device"), "{}", text(&o));
}
