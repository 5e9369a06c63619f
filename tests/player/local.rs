//! Downloaded books play from `file://` URLs (issue 11): seeking and speed
//! as with a stream, and with no server at all.

use crate::support::*;
use earmark::domain::ManifestItem;
use earmark::player::output::{Capture, Captured};
use earmark::player::{AudioMode, Command, Engine, EngineConfig, Status, StreamRequest};
use std::sync::{Arc, Mutex};

/// An engine whose resolver reads the fixtures from disk (no server runs),
/// on the null output's real-time clock: untimed, the engine can finish a
/// chapter before a test reads where it landed.
fn local_engine() -> TestEngine {
    let dir = fixtures();
    let resolve = Arc::new(move |item: &ManifestItem| {
        let path = dir.join(item.url.as_deref().unwrap_or("").trim_start_matches('/'));
        StreamRequest {
            url: url::Url::from_file_path(path).unwrap().to_string(),
            headers: Vec::new(),
        }
    });
    let capture: Capture = Arc::new(Mutex::new(Captured::default()));
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = 1.0;
    config.capture = Some(capture.clone());
    let handle = Engine::spawn(config).expect("engine starts");
    TestEngine { handle, capture }
}

#[test]
fn a_local_file_seeks_and_plays_at_speed_with_its_pitch_kept() {
    let e = local_engine();
    e.handle.send(Command::SetSpeed(1.5));
    e.load(
        manifest(&[
            item("ch_1", "/tone.flac", 3.0),
            item("ch_2", "/tone.mp3", 3.0),
        ]),
        "ch_1",
        1.5,
    );
    let landed = e.wait(30.0, "landed", |s| s.landed);
    assert_eq!(landed.chapter_id.as_ref().map(|c| c.as_str()), Some("ch_1"));
    assert!(landed.position >= 1.5, "{landed:?}");
    let s = e.wait_ended(60.0);
    assert_eq!(s.status, Status::Ended, "{:?}", s.status);
    let (rate, ch, samples) = e.captured();
    let m = mono(&samples, ch);
    // 1.5 s of ch_1 and 3 s of ch_2 at 1.5×.
    let secs = m.len() as f64 / rate as f64;
    assert!(
        (secs - 3.0).abs() <= 0.1,
        "output lasted {secs:.3} s, not 3 s"
    );
    let first = &m[..(rate as usize / 2)];
    let hz = frequency(first, rate);
    assert!((hz - 440.0).abs() <= 440.0 * 0.02, "{hz:.1} Hz");
    // The amplitude ramp says where the seek landed: 0.1 + 0.8 × 1.5 / 3.
    let peak = first[..(rate as usize / 20)]
        .iter()
        .fold(0f32, |a, x| a.max(x.abs()));
    assert!(
        (0.4..=0.62).contains(&peak),
        "peak {peak:.3} after the seek"
    );
}

#[test]
fn a_missing_local_file_is_an_error_naming_it() {
    let e = local_engine();
    e.load(manifest(&[item("ch_1", "/no-such.flac", 3.0)]), "ch_1", 0.0);
    let s = e.wait_ended(30.0);
    match s.status {
        Status::Error(err) => assert!(err.message.contains("no-such.flac"), "{err}"),
        other => panic!("expected an error, got {other:?}"),
    }
}
