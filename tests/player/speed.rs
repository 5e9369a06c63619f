//! Pitch-preserving speed: the tone stays at 440 Hz, the output lasts
//! input / speed, and speed changes apply live without a reload.

use crate::support::*;
use earmark::player::{Command, Status};

#[test]
fn pitch_is_kept_and_duration_scales() {
    let server = TestServer::start(&fixtures());
    for speed in [0.5f32, 1.5, 2.0, 3.0] {
        let e = engine(&server, 0.0, TOKEN);
        e.handle.send(Command::SetSpeed(speed));
        e.load(
            manifest(&[item("ch_1", "/files/tone.wav", 3.0)]),
            "ch_1",
            0.0,
        );
        let s = e.wait_ended(30.0);
        assert_eq!(s.status, Status::Ended, "{speed}x: {:?}", s.status);
        let (rate, ch, samples) = e.captured();
        let m = mono(&samples, ch);
        let secs = m.len() as f64 / rate as f64;
        let want = 3.0 / speed as f64;
        assert!(
            (secs - want).abs() <= want * 0.01,
            "{speed}x: output lasted {secs:.4} s, expected {want:.4} s ± 1%"
        );
        // Dominant frequency over the middle half.
        let hz = frequency(&m[m.len() / 4..m.len() * 3 / 4], rate);
        assert!(
            (hz - 440.0).abs() <= 440.0 * 0.02,
            "{speed}x: dominant frequency {hz:.1} Hz"
        );
    }
}

/// Output seconds the null output has rendered so far.
fn output_secs(e: &TestEngine) -> f64 {
    e.capture.lock().unwrap().seconds
}

#[test]
fn speed_changes_apply_live_without_reload() {
    let server = TestServer::start(&fixtures());
    // Real-time clock: the change must reach a stream that is playing.
    let e = engine(&server, 1.0, TOKEN);
    e.load(
        manifest(&[item("ch_1", "/files/tone.flac", 3.0)]),
        "ch_1",
        0.0,
    );
    let s0 = e.wait(5.0, "playing", |s| {
        s.status == Status::Playing && s.position > 0.2
    });
    e.handle.send(Command::SetSpeed(2.0));
    // The engine took the change (an event, not a timer)...
    let s1 = e.wait(5.0, "speed 2.0 published", |s| s.speed == 2.0);
    let (pos1, out1) = (s1.position, output_secs(&e));
    // ...and media now advances twice as fast as output, measured against
    // the output's own clock (rendered seconds), not the wall clock.
    let s2 = e.wait(5.0, "1.5 s of media later", |s| {
        s.position >= pos1 + 1.5 || s.status != Status::Playing
    });
    let out2 = output_secs(&e);
    assert_eq!(s2.status, Status::Playing, "{s2:?}");
    // Live: the same playback, never re-buffered, one chapter start.
    assert_eq!(s2.playback_id, s0.playback_id);
    assert!(s2.landed);
    assert_eq!(e.capture.lock().unwrap().chapters.len(), 1);
    let ratio = (s2.position - pos1) / (out2 - out1);
    // One 50 ms publish tick of slack on each end.
    assert!(
        (1.75..=2.3).contains(&ratio),
        "{:.3} s of media in {:.3} s of output at 2x",
        s2.position - pos1,
        out2 - out1
    );
}
