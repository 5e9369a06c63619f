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

#[test]
fn speed_changes_apply_live_without_reload() {
    let server = TestServer::start(&fixtures());
    // Real-time clock: speed is about media time per wall time.
    let e = engine(&server, 1.0, TOKEN);
    e.load(
        manifest(&[item("ch_1", "/files/tone.flac", 3.0)]),
        "ch_1",
        0.0,
    );
    let s0 = e.wait(5.0, "playing", |s| {
        s.status == Status::Playing && s.position > 0.2
    });
    let t0 = std::time::Instant::now();
    e.handle.send(Command::SetSpeed(2.0));
    std::thread::sleep(std::time::Duration::from_millis(600));
    let s1 = e.handle.state();
    let wall = t0.elapsed().as_secs_f64();
    let media = s1.position - s0.position;
    assert_eq!(s1.playback_id, s0.playback_id);
    assert_eq!(s1.status, Status::Playing);
    assert!(s1.landed);
    assert_eq!(s1.speed, 2.0);
    // At 2x, ~1.2 s of media in 0.6 s; allow the 100 ms switch-over.
    assert!(
        media > 1.6 * wall - 0.15 && media < 2.0 * wall + 0.15,
        "{media:.3} s of media in {wall:.3} s at 2x"
    );
}
