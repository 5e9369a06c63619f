//! Reported positions after a restore or a seek: the target, never 0, never
//! a stale value, tagged with the playback id.

use crate::support::*;
use earmark::domain::ChapterId;
use earmark::player::{Command, PlaybackId, Status};

/// A mono 8 kHz 8-bit WAV of `secs` seconds (a slow 200 Hz tone).
pub fn write_long_wav(path: &std::path::Path, secs: u32) {
    let rate = 8000u32;
    let n = rate * secs;
    let mut d = Vec::with_capacity(44 + n as usize);
    d.extend_from_slice(b"RIFF");
    d.extend_from_slice(&(36 + n).to_le_bytes());
    d.extend_from_slice(b"WAVEfmt ");
    d.extend_from_slice(&16u32.to_le_bytes());
    d.extend_from_slice(&1u16.to_le_bytes());
    d.extend_from_slice(&1u16.to_le_bytes());
    d.extend_from_slice(&rate.to_le_bytes());
    d.extend_from_slice(&rate.to_le_bytes());
    d.extend_from_slice(&1u16.to_le_bytes());
    d.extend_from_slice(&8u16.to_le_bytes());
    d.extend_from_slice(b"data");
    d.extend_from_slice(&n.to_le_bytes());
    for i in 0..n {
        let t = i as f64 / rate as f64;
        d.push((128.0 + 60.0 * (2.0 * std::f64::consts::PI * 200.0 * t).sin()) as u8);
    }
    std::fs::write(path, d).unwrap();
}

pub fn long_book_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_long_wav(&dir.path().join("long.wav"), 1300);
    dir
}

#[test]
fn restore_to_1234_5_never_reports_zero() {
    let dir = long_book_dir();
    let server = TestServer::start(dir.path());
    let e = engine(&server, 1.0, TOKEN);
    let m = manifest(&[item("ch_long", "/files/long.wav", 1300.0)]);
    let mut rx = e.handle.subscribe();
    e.load(m, "ch_long", 1234.5);
    let mut states = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let s = rx.borrow_and_update().clone();
        if s.playback_id == PlaybackId(1) {
            states.push(s.clone());
        }
        if (s.landed && s.status == Status::Playing) || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(!states.is_empty());
    let first = &states[0];
    assert_eq!(first.chapter_id, Some(ChapterId::new("ch_long")));
    assert!(
        (first.position - 1234.5).abs() <= 0.1,
        "first position {}",
        first.position
    );
    for s in &states {
        assert!(
            (s.position - 1234.5).abs() <= 0.1,
            "a published position strayed from the target: {s:?}"
        );
    }
    let last = states.last().unwrap();
    assert!(last.landed, "never landed: {last:?}");
    assert!((last.book_position.unwrap() - 1234.5).abs() <= 0.1);
}

#[test]
fn a_seek_never_shows_the_previous_position() {
    let dir = long_book_dir();
    let server = TestServer::start(dir.path());
    let e = engine(&server, 1.0, TOKEN);
    let m = manifest(&[
        item("ch_long", "/files/long.wav", 1300.0),
        item("ch_two", "/files/long.wav", 1300.0),
    ]);
    e.load(m.clone(), "ch_long", 100.0);
    e.wait(5.0, "landed", |s| s.landed && s.status == Status::Playing);
    let mut rx = e.handle.subscribe();
    rx.borrow_and_update();
    e.handle.send(Command::Seek {
        chapter: ChapterId::new("ch_two"),
        position: 700.0,
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut seen_target = false;
    while std::time::Instant::now() < deadline {
        let s = rx.borrow_and_update().clone();
        if s.chapter_id == Some(ChapterId::new("ch_two")) {
            seen_target = true;
        }
        if seen_target {
            assert_eq!(s.chapter_id, Some(ChapterId::new("ch_two")), "{s:?}");
            assert!((s.position - 700.0).abs() < 1.0, "{s:?}");
            if s.landed && s.status == Status::Playing {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(seen_target);
    // A new Load gets a new playback id, and starts at its own target.
    e.load(m, "ch_long", 5.0);
    let s = e.wait(5.0, "second load", |s| s.playback_id == PlaybackId(2));
    assert!((s.position - 5.0).abs() < 0.1, "{s:?}");
}

/// A finished book restores to the very end of its last chapter: that is
/// `Ended`, in every format, never a decode error.
#[test]
fn a_start_at_the_very_end_is_ended_not_an_error() {
    let server = TestServer::start(&fixtures());
    for file in ["tone.flac", "tone.mp3", "tone.ogg", "tone.m4a", "tone.wav"] {
        let m = manifest(&[
            item("ch_a", "/files/part-330.mp3", 1.0),
            item("ch_end", &format!("/files/{file}"), 3.0),
        ]);
        let e = engine(&server, 0.0, TOKEN);
        e.load(m, "ch_end", 3.0);
        let s = e.wait_ended(10.0);
        assert_eq!(s.status, Status::Ended, "{file}: {:?}", s.status);
        assert_eq!(s.chapter_id.as_ref().map(|c| c.as_str()), Some("ch_end"));
    }
}

/// A manifest whose lengths are in another unit (milliseconds read as
/// seconds): once the decoder has opened a chapter, the engine publishes
/// its length as the audio says, book positions add up the measured
/// lengths, and the end of a chapter is not taken for a truncated file.
#[test]
fn lengths_the_audio_gives_replace_the_manifests_once_known() {
    let server = TestServer::start(&fixtures());
    let e = engine(&server, 20.0, TOKEN);
    let m = manifest(&[
        item("ch_1", "/files/tone.flac", 3000.0),
        item("ch_2", "/files/tone.wav", 3000.0),
    ]);
    e.load(m, "ch_1", 0.0);
    let first = e.wait(30.0, "playing", |s| s.landed);
    assert!(
        (first.duration.unwrap() - 3.0).abs() < 0.01,
        "the flac's own length once open: {first:?}"
    );
    let second = e.wait(30.0, "the second chapter", |s| {
        s.chapter_id == Some(ChapterId::new("ch_2")) && s.landed && s.position > 0.5
    });
    assert!((second.duration.unwrap() - 3.0).abs() < 0.01, "{second:?}");
    let book = second.book_position.unwrap();
    assert!(
        (book - (3.0 + second.position)).abs() < 0.01,
        "the first chapter counted at its measured 3 s: {second:?}"
    );
    let end = e.wait_ended(30.0);
    assert_eq!(end.status, Status::Ended, "{end:?}");
}
