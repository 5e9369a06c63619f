//! Every supported format decodes to its duration and seeks accurately.

use crate::support::*;

const FORMATS: &[&str] = &[
    "tone.mp3",
    "tone.m4a",
    "tone.m4b",
    "tone.flac",
    "tone.ogg",
    "tone.wav",
    "tone-alac.m4a",
];

/// The formats this build decodes: Opus needs the `opus` feature (libopus).
fn formats() -> Vec<&'static str> {
    let mut all = FORMATS.to_vec();
    if cfg!(feature = "opus") {
        all.push("tone.opus");
    }
    all
}

#[test]
fn each_format_decodes_to_its_duration() {
    let server = TestServer::start(&fixtures());
    for f in formats() {
        let e = engine(&server, 0.0, TOKEN);
        let path = format!("/files/{f}");
        e.load(manifest(&[item("ch_1", &path, 3.0)]), "ch_1", 0.0);
        let s = e.wait_ended(20.0);
        assert_eq!(
            s.status,
            earmark::player::Status::Ended,
            "{f}: {:?}",
            s.status
        );
        let (rate, ch, samples) = e.captured();
        let secs = samples.len() as f64 / ch as f64 / rate as f64;
        assert!(
            (secs - 3.0).abs() <= 0.03,
            "{f}: decoded {secs:.4} s, expected 3.0 s ± 1%"
        );
        let m = mono(&samples, ch);
        let mid = &m[m.len() / 2..m.len() / 2 + rate as usize / 4];
        let hz = frequency(mid, rate);
        assert!((hz - 440.0).abs() < 4.0, "{f}: {hz:.1} Hz");
    }
}

/// Play `path` from `at` to the end, untimed; the first channel.
fn play_from(server: &TestServer, path: &str, at: f64) -> (u32, Vec<f32>) {
    let e = engine(server, 0.0, TOKEN);
    e.load(manifest(&[item("ch_1", path, 3.0)]), "ch_1", at);
    let s = e.wait_ended(20.0);
    assert_eq!(
        s.status,
        earmark::player::Status::Ended,
        "{path}: {:?}",
        s.status
    );
    let (rate, ch, samples) = e.captured();
    (rate, mono(&samples, ch))
}

#[test]
fn seeks_land_within_50_ms() {
    let server = TestServer::start(&fixtures());
    for f in formats() {
        let path = format!("/files/{f}");
        let (rate, full) = play_from(&server, &path, 0.0);
        let r = rate as f64;
        for target in [0.6, 1.7, 2.4] {
            let (_, m) = play_from(&server, &path, target);
            // What is left after the seek tells where it landed...
            let landed = 3.0 - m.len() as f64 / r;
            assert!(
                (landed - target).abs() <= 0.05,
                "{f}: seek to {target} landed at {landed:.3} (by length)"
            );
            // ...and so does the content: find the first 10 ms of it in a
            // straight decode (the amplitude ramp makes the match unique).
            let w = &m[..(rate as usize / 100)];
            let lo = ((target - 0.3) * r) as usize;
            let hi = (((target + 0.3) * r) as usize).min(full.len() - w.len());
            let (mut best, mut at) = (f32::MAX, 0);
            for j in lo..hi {
                let e: f32 = w
                    .iter()
                    .zip(&full[j..])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                if e < best {
                    (best, at) = (e, j);
                }
            }
            let by_content = at as f64 / r;
            assert!(
                (by_content - target).abs() <= 0.05,
                "{f}: seek to {target} plays the audio at {by_content:.3}"
            );
        }
    }
}

#[test]
fn servers_without_range_fall_back_to_progressive_download() {
    let server = TestServer::start(&fixtures());
    // moov at the end: the reader must reach the tail without Range.
    let (rate, m) = play_from(&server, "/norange/tone.m4b", 0.0);
    let secs = m.len() as f64 / rate as f64;
    assert!((secs - 3.0).abs() <= 0.03, "played {secs:.3} s");
    let (rate, m) = play_from(&server, "/norange/tone.mp3", 1.7);
    let landed = 3.0 - m.len() as f64 / rate as f64;
    assert!((landed - 1.7).abs() <= 0.05, "landed at {landed:.3}");
}
