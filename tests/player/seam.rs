//! Chapter seams: consecutive chapters continue with at most a 50 ms gap,
//! at 1× (stretcher bypassed) and at other speeds (a stretcher per chapter).

use crate::support::*;
use earmark::player::Command;

/// The longest run of near-silence strictly inside the audio (leading and
/// trailing silence excluded), in seconds, and where it starts.
fn longest_inner_gap(x: &[f32], rate: u32) -> (f64, f64) {
    const QUIET: f32 = 0.01;
    let first = x.iter().position(|s| s.abs() >= QUIET).unwrap_or(0);
    let last = x.iter().rposition(|s| s.abs() >= QUIET).unwrap_or(0);
    let (mut best, mut best_at, mut run, mut run_at) = (0usize, 0usize, 0usize, 0usize);
    for (i, s) in x.iter().enumerate().take(last + 1).skip(first) {
        if s.abs() < QUIET {
            if run == 0 {
                run_at = i;
            }
            run += 1;
            if run > best {
                best = run;
                best_at = run_at;
            }
        } else {
            run = 0;
        }
    }
    (best as f64 / rate as f64, best_at as f64 / rate as f64)
}

#[test]
fn consecutive_chapters_continue_without_a_gap() {
    let server = TestServer::start(&fixtures());
    for speed in [1.0f32, 1.5, 2.0, 3.0] {
        let m = manifest(&[
            item("ch_a", "/files/part-330.mp3", 1.0),
            item("ch_b", "/files/part-440.mp3", 1.0),
            item("ch_c", "/files/part-550.mp3", 1.0),
        ]);
        let e = engine(&server, 0.0, TOKEN);
        e.handle.send(Command::SetSpeed(speed));
        e.load(m, "ch_a", 0.0);
        e.wait_ended(20.0);
        let (rate, ch, samples) = e.captured();
        let x = mono(&samples, ch);
        let secs = x.len() as f64 / rate as f64;
        let want = 3.0 / speed as f64;
        assert!(
            (secs - want).abs() < 0.03 * want + 0.02,
            "{speed}×: {secs:.3} s of output, want {want:.3}"
        );
        let seams: Vec<f64> = e
            .capture
            .lock()
            .unwrap()
            .chapters
            .iter()
            .skip(1)
            .map(|c| c.1)
            .collect();
        assert_eq!(seams.len(), 2, "{speed}×: {seams:?}");
        let (gap, at) = longest_inner_gap(&x, rate);
        eprintln!(
            "{speed}×: longest gap {:.1} ms at {at:.3} s (seams at {seams:?})",
            gap * 1e3
        );
        assert!(
            gap <= 0.050,
            "{speed}×: a {:.1} ms gap at {at:.3} s (seams at {seams:?})",
            gap * 1e3
        );
    }
}
