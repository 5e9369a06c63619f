//! Failures: corrupt and truncated audio, 401, 403 license_required, and a
//! server that goes away mid-stream and comes back.

use crate::positions::long_book_dir;
use crate::support::*;
use earmark::domain::ChapterId;
use earmark::player::{ErrorKind, Status};
use std::time::{Duration, Instant};

fn expect_error(path: &str, token: &str, kind: ErrorKind) {
    let server = TestServer::start(&fixtures());
    let e = engine(&server, 0.0, token);
    e.load(manifest(&[item("ch_bad", path, 3.0)]), "ch_bad", 0.0);
    let s = e.wait(20.0, "an error", |s| {
        matches!(s.status, Status::Error(_) | Status::Ended)
    });
    match s.status {
        Status::Error(err) => {
            assert_eq!(err.kind, kind, "{path}: {err}");
            assert_eq!(err.chapter, Some(ChapterId::new("ch_bad")), "{path}: {err}");
            assert!(!err.message.is_empty());
        }
        other => panic!("{path}: expected an error, got {other:?}"),
    }
}

#[test]
fn truncated_audio_is_an_error_naming_the_chapter() {
    expect_error("/files/truncated.mp3", TOKEN, ErrorKind::Decode);
}

#[test]
fn corrupt_audio_is_an_error() {
    expect_error("/files/corrupt.flac", TOKEN, ErrorKind::Decode);
    expect_error("/files/garbage.mp3", TOKEN, ErrorKind::Decode);
}

/// Plays `path` from `start` (a chapter of `duration` s) where the decoder
/// panics, then a good chapter on the same engine.
fn panics_then_plays_on(path: &str, duration: f64, start: f64, panic: &str) {
    let server = TestServer::start(&fixtures());
    let e = engine(&server, 0.0, TOKEN);
    e.load(manifest(&[item("ch_bad", path, duration)]), "ch_bad", start);
    let s = e.wait(20.0, "an error", |s| {
        matches!(s.status, Status::Error(_) | Status::Ended)
    });
    let Status::Error(err) = s.status else {
        panic!("{path}: expected an error, got {:?}", s.status);
    };
    assert_eq!(err.kind, ErrorKind::Decode, "{path}: {err}");
    assert_eq!(err.chapter, Some(ChapterId::new("ch_bad")), "{path}: {err}");
    // The panics are overflow checks, on in this (test) build.
    if cfg!(debug_assertions) {
        let said = format!("this chapter could not be decoded (the decoder failed: {panic})");
        assert!(err.message.contains(&said), "{path}: {err}");
    }
    // The same engine plays the next thing it is given.
    e.load(
        manifest(&[item("ch_ok", "/files/tone.mp3", 3.0)]),
        "ch_ok",
        0.0,
    );
    let s = e.wait(20.0, "the next chapter played to its end", |s| {
        s.chapter_id == Some(ChapterId::new("ch_ok")) && s.status == Status::Ended
    });
    assert!(s.position > 2.9, "{path}: {s:?}");
}

/// Files `cargo fuzz` found (fuzz/found/, docs/robustness.md): symphonia
/// panics on them where overflow checks are on.
#[test]
fn a_decoder_panic_on_a_hostile_file_fails_its_chapter_and_the_player_plays_on() {
    // An m4a whose stts table overflows the mp4 reader on a seek. Its
    // header claims 4294967298 frames (149 h at 8 kHz): starting half-way
    // seeks.
    panics_then_plays_on(
        "/files/fuzz-stts-overflow.m4a",
        536_870.9,
        268_435.4,
        "attempt to add with overflow",
    );
    // A wav whose fmt chunk overflows the riff reader while it is probed.
    panics_then_plays_on(
        "/files/fuzz-fmt-overflow.wav",
        0.2,
        0.0,
        "attempt to multiply with overflow",
    );
}

#[test]
fn unauthorized_and_license_errors() {
    expect_error("/files/tone.mp3", "wrong-token", ErrorKind::Unauthorized);
    expect_error("/expired/tone.mp3", TOKEN, ErrorKind::LicenseRequired);
    expect_error("/files/missing.mp3", TOKEN, ErrorKind::NotFound);
}

#[test]
fn server_gone_mid_stream_stalls_then_resumes_by_itself() {
    let dir = long_book_dir();
    let mut server = TestServer::start(dir.path());
    // A small read-ahead so the stall comes soon (8 kHz 8-bit: 8 KB/s).
    let e = engine_with(&server, 4.0, TOKEN, |c| {
        c.read_ahead = 64 * 1024;
        c.stall_after = 0.3;
    });
    e.load(
        manifest(&[item("ch_long", "/files/long.wav", 1300.0)]),
        "ch_long",
        10.0,
    );
    e.wait(5.0, "playing", |s| s.status == Status::Playing && s.landed);
    server.stop();
    let s = e.wait(20.0, "Stalled", |s| s.status == Status::Stalled);
    let stalled_at = s.position;
    // While stalled the position does not move.
    std::thread::sleep(Duration::from_millis(400));
    let s2 = e.handle.state();
    assert_eq!(s2.status, Status::Stalled);
    assert!(
        (s2.position - stalled_at).abs() < 0.05,
        "{} -> {}",
        stalled_at,
        s2.position
    );
    let restarted = Instant::now();
    server.restart();
    let s3 = e.wait(10.0, "resumed", |s| {
        s.status == Status::Playing && s.position > stalled_at + 0.5
    });
    assert_eq!(s3.playback_id, s.playback_id);
    assert!(restarted.elapsed() < Duration::from_secs(5));
}
