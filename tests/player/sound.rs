//! Boost, loudness normalisation and skip silence, heard at the null
//! output (what the engine really played) on audio made with ffmpeg.

use crate::oracle::ffmpeg;
use crate::support::*;
use earmark::domain::SoundSettings;
use earmark::player::{Command, Status};
use ebur128::{EbuR128, Mode};

const RATE: u32 = 24_000;

/// `name.wav` (stereo, 24 kHz) from an ffmpeg `aevalsrc` expression.
fn make(dir: &std::path::Path, name: &str, expr: &str, secs: f64) {
    let out = dir.join(format!("{name}.wav"));
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        &format!("aevalsrc='{expr}|{expr}':s={RATE}:d={secs}"),
        "-c:a",
        "pcm_f32le",
        out.to_str().unwrap(),
    ]);
}

fn sound(f: impl FnOnce(&mut SoundSettings)) -> SoundSettings {
    let mut s = SoundSettings::default();
    f(&mut s);
    s
}

/// Plays `file` to its end, untimed, with `settings`; returns the
/// capture (interleaved stereo) and the final state.
fn play(
    server: &TestServer,
    file: &str,
    secs: f64,
    speed: f32,
    settings: SoundSettings,
) -> (Vec<f32>, earmark::player::PlayerState) {
    let e = engine(server, 0.0, TOKEN);
    e.handle.send(Command::SetSound(settings));
    e.handle.send(Command::SetSpeed(speed));
    e.load(
        manifest(&[item("ch_1", &format!("/files/{file}.wav"), secs)]),
        "ch_1",
        0.0,
    );
    let s = e.wait_ended(60.0);
    assert_eq!(s.status, Status::Ended, "{s:?}");
    let (rate, ch, samples) = e.captured();
    assert_eq!((rate, ch), (RATE, 2));
    (samples, s)
}

fn loudness(samples: &[f32]) -> f64 {
    let mut m = EbuR128::new(2, RATE, Mode::I).unwrap();
    m.add_frames_f32(samples).unwrap();
    m.loudness_global().unwrap()
}

fn true_peak(samples: &[f32]) -> f64 {
    let mut m = EbuR128::new(2, RATE, Mode::TRUE_PEAK).unwrap();
    m.add_frames_f32(samples).unwrap();
    m.true_peak(0).unwrap().max(m.true_peak(1).unwrap())
}

/// Lengths (seconds) of the runs of output quieter than −45 dBFS in
/// 10 ms windows, ignoring the mixer's leading silence.
fn silent_runs(samples: &[f32]) -> Vec<f64> {
    let win = RATE as usize / 100 * 2;
    let quiet: Vec<bool> = samples
        .chunks(win)
        .map(|w| w.iter().map(|s| s * s).sum::<f32>() / (w.len() as f32) < 10f32.powf(-4.5))
        .collect();
    let first = quiet.iter().position(|q| !q).unwrap_or(0);
    let mut runs = Vec::new();
    let mut n = 0;
    for &q in &quiet[first..] {
        if q {
            n += 1;
        } else if n > 0 {
            runs.push(n as f64 / 100.0);
            n = 0;
        }
    }
    runs
}

#[test]
fn skip_silence_shortens_a_long_silence_to_the_gap_in_media_time_at_1x_and_2x() {
    let dir = tempfile::tempdir().unwrap();
    // 1 s tone, 2 s silence, 1 s tone.
    make(
        dir.path(),
        "gap",
        "if(between(t,1,3),0,0.3*sin(2*PI*440*t))",
        4.0,
    );
    let server = TestServer::start(dir.path());
    // Off by default: all 4 s play.
    let (out, s) = play(&server, "gap", 4.0, 1.0, SoundSettings::default());
    assert!((out.len() as f64 / 2.0 / RATE as f64 - 4.0).abs() < 0.05);
    assert_eq!(s.silence_skipped, 0.0);
    let on = sound(|s| s.skip_silence = true);
    for speed in [1.0f32, 2.0] {
        let (out, s) = play(&server, "gap", 4.0, speed, on);
        let secs = out.len() as f64 / 2.0 / RATE as f64;
        let want = 2.25 / speed as f64;
        assert!(
            (secs - want).abs() < 0.06,
            "{speed}x: played {secs:.3} s, want {want:.3} s"
        );
        // The position stayed in media time: the chapter ended at 4 s.
        assert!((s.position - 4.0).abs() < 0.05, "{speed}x: {s:?}");
        assert!(
            (s.silence_skipped - 1.75).abs() < 0.03,
            "{speed}x: skipped {}",
            s.silence_skipped
        );
        let runs = silent_runs(&out);
        assert_eq!(runs.len(), 1, "{speed}x: {runs:?}");
        let gap = 0.25 / speed as f64;
        assert!((runs[0] - gap).abs() < 0.03, "{speed}x: gap {runs:?}");
    }
}

#[test]
fn normalisation_brings_a_minus_30_lufs_book_within_1_lu_of_minus_18() {
    let dir = tempfile::tempdir().unwrap();
    // 0.0316 × sine at 1 kHz on both channels: about −30 LUFS (checked below).
    make(dir.path(), "quiet", "0.0316*sin(2*PI*1000*t)", 20.0);
    let server = TestServer::start(dir.path());
    let (plain, _) = play(&server, "quiet", 20.0, 1.0, SoundSettings::default());
    let before = loudness(&plain);
    assert!(
        (before + 30.0).abs() < 0.5,
        "the source is at {before:.2} LUFS"
    );
    let (out, s) = play(&server, "quiet", 20.0, 1.0, sound(|s| s.normalize = true));
    // The gain adapts slowly; the last 8 s are at the target.
    let after = loudness(&out[out.len() - 8 * RATE as usize * 2..]);
    assert!((after + 18.0).abs() <= 1.0, "came out at {after:.2} LUFS");
    assert!(
        s.norm_gain_db.is_some_and(|g| (g - 12.0).abs() < 1.0),
        "{s:?}"
    );
}

#[test]
fn a_full_scale_tone_boosted_12_db_never_exceeds_0_dbfs() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "loud", "sin(2*PI*997*t)", 2.0);
    let server = TestServer::start(dir.path());
    let boost = sound(|s| s.boost_db = 12.0);
    let (out, _) = play(&server, "loud", 2.0, 1.0, boost);
    let tp = true_peak(&out);
    assert!(tp <= 1.0, "true peak {:.2} dBTP", 20.0 * tp.log10());
    assert!(out.iter().all(|s| s.abs() <= 1.0));
    // Limited, not silenced.
    assert!(true_peak(&out[out.len() / 2..]) > 0.8);
}

#[test]
fn a_boost_change_while_playing_applies_within_100_ms_without_a_click() {
    let dir = tempfile::tempdir().unwrap();
    let amp = 0.1f32;
    make(dir.path(), "steady", &format!("{amp}*sin(2*PI*440*t)"), 6.0);
    let server = TestServer::start(dir.path());
    let e = engine(&server, 1.0, TOKEN);
    e.load(
        manifest(&[item("ch_1", "/files/steady.wav", 6.0)]),
        "ch_1",
        0.0,
    );
    e.wait(10.0, "playing", |s| {
        s.status == Status::Playing && s.position > 1.0
    });
    e.handle
        .send(Command::SetSound(sound(|s| s.boost_db = 6.0)));
    let s = e.wait(10.0, "the boost published", |s| s.sound.boost_db == 6.0);
    let p = s.position;
    e.wait(10.0, "a second more", |s| {
        s.position > p + 1.0 || s.status != Status::Playing
    });
    let (_, _, samples) = e.captured();
    let left = mono(&samples, 2);
    let want = amp * 10f32.powf(6.0 / 20.0);
    // Where the level first rises, and 100 ms later.
    let start = left
        .iter()
        .position(|v| v.abs() > amp * 1.05)
        .expect("the boost was heard");
    let settled = start + RATE as usize / 10;
    let period = RATE as usize / 440 + 1;
    assert!(
        settled + 4 * period < left.len(),
        "not enough audio captured"
    );
    for c in left[settled..].chunks(period) {
        let peak = c.iter().fold(0f32, |m, v| m.max(v.abs()));
        if c.len() == period {
            assert!(
                (peak - want).abs() <= want * 0.02,
                "peak {peak}, want {want}"
            );
        }
    }
    let own = want * (2.0 * std::f32::consts::PI * 440.0 / RATE as f32);
    let lead = left.iter().position(|v| v.abs() > 0.01).unwrap_or(0);
    for (i, w) in left[lead..].windows(2).enumerate() {
        let jump = (w[1] - w[0]).abs();
        assert!(jump <= own * 1.01, "jump of {jump} at frame {}", lead + i);
    }
}
