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

#[test]
fn each_format_decodes_to_its_duration() {
    let server = TestServer::start(&fixtures());
    for f in FORMATS {
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

#[test]
fn seeks_land_within_50_ms() {
    let server = TestServer::start(&fixtures());
    for f in FORMATS {
        for target in [0.6, 1.7, 2.4] {
            let e = engine(&server, 0.0, TOKEN);
            let path = format!("/files/{f}");
            e.load(manifest(&[item("ch_1", &path, 3.0)]), "ch_1", target);
            let s = e.wait_ended(20.0);
            assert_eq!(
                s.status,
                earmark::player::Status::Ended,
                "{f}: {:?}",
                s.status
            );
            let (rate, ch, samples) = e.captured();
            let m = mono(&samples, ch);
            // What is left after the seek tells where it landed.
            let left = m.len() as f64 / rate as f64;
            let landed = 3.0 - left;
            assert!(
                (landed - target).abs() <= 0.05,
                "{f}: seek to {target} landed at {landed:.3} (by length)"
            );
            // The amplitude ramp tells it from the content itself.
            let win = &m[..(rate as usize / 200).min(m.len())];
            let by_amp = time_from_amplitude(peak(win));
            assert!(
                (by_amp - target).abs() <= 0.05,
                "{f}: seek to {target} landed at {by_amp:.3} (by amplitude)"
            );
        }
    }
}
