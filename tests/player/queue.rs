//! The queue: the whole manifest, in server order, keyed by chapter id.

use crate::support::*;
use earmark::domain::ChapterId;
use earmark::player::{Command, Status};

/// Chapter ids seen in published states, in order, without repeats.
fn chapters_seen(e: &TestEngine, secs: f64) -> Vec<String> {
    let mut rx = e.handle.subscribe();
    let mut seen: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    loop {
        let s = rx.borrow_and_update().clone();
        if let Some(c) = &s.chapter_id
            && s.landed
            && seen.last().map(|l| l.as_str()) != Some(c.as_str())
        {
            seen.push(c.to_string());
        }
        if matches!(s.status, Status::Ended | Status::Error(_))
            || std::time::Instant::now() > deadline
        {
            return seen;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn plays_the_whole_manifest_in_server_order() {
    let server = TestServer::start(&fixtures());
    // Server order c, a, b: neither id order nor file-name order.
    let m = manifest(&[
        item("ch_c", "/files/part-550.mp3", 1.0),
        item("ch_a", "/files/part-330.mp3", 1.0),
        item("ch_b", "/files/part-440.mp3", 1.0),
    ]);
    // A clock fast enough to be quick, slow enough to observe every chapter.
    let e = engine(&server, 8.0, TOKEN);
    e.load(m, "ch_c", 0.0);
    let seen = chapters_seen(&e, 10.0);
    assert_eq!(seen, ["ch_c", "ch_a", "ch_b"]);
    assert_eq!(e.handle.state().status, Status::Ended);
    let (rate, ch, samples) = e.captured();
    let x = mono(&samples, ch);
    let secs = x.len() as f64 / rate as f64;
    // Three 1 s chapters back to back: no chapter dropped, gaps under 50 ms each.
    assert!((secs - 3.0).abs() < 0.1, "played {secs:.3} s");
    let r = rate as usize;
    let f: Vec<f64> = (0..3)
        .map(|k| frequency(&x[k * r + r / 4..k * r + 3 * r / 4], rate))
        .collect();
    assert!((f[0] - 550.0).abs() < 8.0, "{f:?}");
    assert!((f[1] - 330.0).abs() < 8.0, "{f:?}");
    assert!((f[2] - 440.0).abs() < 8.0, "{f:?}");
}

#[test]
fn embedded_chapters_share_one_stream() {
    let server = TestServer::start(&fixtures());
    let m = manifest(&[
        Item {
            id: "ch_x",
            path: "/files/tone.m4b",
            duration: Some(1.25),
            start: 0.0,
            end: Some(1.25),
        },
        Item {
            id: "ch_y",
            path: "/files/tone.m4b",
            duration: Some(1.75),
            start: 1.25,
            end: None,
        },
    ]);
    let e = engine(&server, 2.0, TOKEN);
    // Start inside the second chapter: positions are relative to its start.
    e.load(m.clone(), "ch_y", 0.5);
    let s = e.wait(5.0, "landed", |s| s.landed);
    assert_eq!(s.chapter_id, Some(ChapterId::new("ch_y")));
    assert!((s.position - 0.5).abs() < 0.1, "position {}", s.position);
    assert!((s.book_position.unwrap() - 1.75).abs() < 0.1);
    e.wait_ended(10.0);
    let (rate, ch, samples) = e.captured();
    let secs = samples.len() as f64 / ch as f64 / rate as f64;
    assert!((secs - 1.25).abs() < 0.05, "played {secs:.3} s");

    // From the start, both chapters play, continuing the same stream.
    let e = engine(&server, 8.0, TOKEN);
    e.load(m, "ch_x", 0.0);
    let seen = chapters_seen(&e, 10.0);
    assert_eq!(seen, ["ch_x", "ch_y"]);
    let (rate, ch, samples) = e.captured();
    let secs = samples.len() as f64 / ch as f64 / rate as f64;
    assert!((secs - 3.0).abs() < 0.05, "played {secs:.3} s");
}

#[test]
fn next_previous_and_skips_follow_the_manifest() {
    let server = TestServer::start(&fixtures());
    let m = manifest(&[
        item("ch_c", "/files/part-550.mp3", 1.0),
        item("ch_a", "/files/part-330.mp3", 1.0),
        item("ch_b", "/files/part-440.mp3", 1.0),
    ]);
    let e = engine(&server, 0.2, TOKEN);
    e.load(m, "ch_c", 0.2);
    e.wait(5.0, "landed", |s| s.landed);
    e.handle.send(Command::NextChapter);
    let s = e.wait(5.0, "ch_a", |s| {
        s.chapter_id == Some(ChapterId::new("ch_a")) && s.landed
    });
    assert!(s.position < 0.2);
    e.handle.send(Command::SkipBy(1.5));
    let s = e.wait(5.0, "ch_b 0.5", |s| {
        s.chapter_id == Some(ChapterId::new("ch_b")) && s.landed
    });
    assert!((s.position - 0.5).abs() < 0.1, "{}", s.position);
    e.handle.send(Command::SkipBy(-1.0));
    let s = e.wait(5.0, "ch_a 0.5", |s| {
        s.chapter_id == Some(ChapterId::new("ch_a")) && s.landed
    });
    assert!((s.position - 0.5).abs() < 0.1, "{}", s.position);
    // Under 3 s in: previous goes to the previous chapter.
    e.handle.send(Command::PrevChapter);
    let s = e.wait(5.0, "ch_c 0", |s| {
        s.chapter_id == Some(ChapterId::new("ch_c")) && s.landed
    });
    assert!(s.position < 0.2);
    e.handle.send(Command::Pause);
    e.wait(2.0, "paused", |s| s.status == Status::Paused);
}
