//! The DSP as pure functions: loudness against an EBU R128 meter, true
//! peak against its 4× oversampled measurement, clicks sample by sample.

use super::*;

/// Low enough to keep the unoptimised test build quick.
const RATE: u32 = 24_000;

fn tone(hz: f64, amp: f32, phase: f64, secs: f64) -> Vec<f32> {
    let n = (secs * RATE as f64) as usize;
    (0..n)
        .flat_map(|i| {
            let v = amp
                * (2.0 * std::f64::consts::PI * hz * i as f64 / RATE as f64 + phase).sin() as f32;
            [v, v]
        })
        .collect()
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

/// Runs `x` through `l` in 50 ms chunks, as the output asks for it.
fn run(l: &mut Loudness, x: &[f32]) -> Vec<f32> {
    let mut y = x.to_vec();
    for c in y.chunks_mut(RATE as usize / 20 * 2) {
        l.process(c);
    }
    y
}

#[test]
fn a_tone_at_minus_30_lufs_comes_out_within_1_lu_of_the_target() {
    let probe = loudness(&tone(1000.0, 0.1, 0.0, 3.0));
    let amp = 0.1 * 10f32.powf((-30.0 - probe as f32) / 20.0);
    let x = tone(1000.0, amp, 0.0, 20.0);
    assert!((loudness(&x) + 30.0).abs() < 0.1);
    let settings = SoundSettings {
        normalize: true,
        ..SoundSettings::default()
    };
    let mut l = Loudness::new(RATE, 2, -18.0, settings);
    let y = run(&mut l, &x);
    // The gain adapts slowly (1.5 dB/s); the last 8 s are at the target.
    let tail = &y[y.len() - 8 * RATE as usize * 2..];
    let out = loudness(tail);
    assert!((out + 18.0).abs() <= 1.0, "came out at {out:.2} LUFS");
    assert!((l.norm_gain_db().unwrap() - 12.0).abs() <= 1.0);
}

#[test]
fn normalisation_holds_its_gain_through_silence() {
    let settings = SoundSettings {
        normalize: true,
        ..SoundSettings::default()
    };
    let mut l = Loudness::new(RATE, 2, -18.0, settings);
    run(&mut l, &tone(1000.0, 0.05, 0.0, 10.0));
    let before = l.norm_gain_db().unwrap();
    run(&mut l, &vec![0.0; 4 * RATE as usize * 2]);
    let after = l.norm_gain_db().unwrap();
    assert!((after - before).abs() < 0.1, "{before} -> {after}");
}

#[test]
fn a_full_scale_tone_boosted_12_db_never_exceeds_0_dbfs_true_peak() {
    let settings = SoundSettings {
        boost_db: 12.0,
        normalize: true,
        ..SoundSettings::default()
    };
    // A plain tone, and one at a quarter of the rate sampled 45° off its
    // peaks: its samples read −3 dBFS while its true peak is 0 dBFS.
    for (hz, phase) in [(997.0, 0.0), (6_000.0, std::f64::consts::FRAC_PI_4)] {
        let x = tone(hz, 1.0, phase, 2.0);
        let mut l = Loudness::new(RATE, 2, -18.0, settings);
        let y = run(&mut l, &x);
        let tp = true_peak(&y);
        assert!(
            tp <= 1.0,
            "{hz} Hz: true peak {:.2} dBTP",
            20.0 * tp.log10()
        );
        let level = true_peak(&y[y.len() / 2..]);
        assert!(level > 0.7, "{hz} Hz: limited to {level}");
    }
}

#[test]
fn a_boost_change_applies_within_100_ms_without_a_click() {
    let amp = 0.1f32;
    let mut l = Loudness::new(RATE, 2, -18.0, SoundSettings::default());
    // Neutral: passed through untouched.
    let x = tone(440.0, amp, 0.0, 1.0);
    assert_eq!(run(&mut l, &x), x);
    l.set(SoundSettings {
        boost_db: 6.0,
        ..SoundSettings::default()
    });
    // The tone continues where it was.
    let n = RATE as usize;
    let x2: Vec<f32> = tone(440.0, amp, 0.0, 2.0).split_off(n * 2);
    let y = run(&mut l, &x2);
    let left: Vec<f32> = y.iter().step_by(2).copied().collect();
    let want = amp * 10f32.powf(6.0 / 20.0);
    // From 100 ms on, the tone is at its new level.
    let after = &left[RATE as usize / 10..];
    let peak = after.iter().fold(0f32, |m, v| m.max(v.abs()));
    let lowest_peak = after
        .chunks(RATE as usize / 440 + 1)
        .map(|c| c.iter().fold(0f32, |m, v| m.max(v.abs())))
        .fold(f32::MAX, f32::min);
    assert!(
        (peak - want).abs() <= want * 0.02,
        "peak {peak}, want {want}"
    );
    assert!((lowest_peak - want).abs() <= want * 0.02, "{lowest_peak}");
    // No jump between samples beyond the tone's own at the new level.
    let own = want * (2.0 * std::f32::consts::PI * 440.0 / RATE as f32);
    let mut prev = x[x.len() - 2];
    for (i, v) in left.iter().enumerate() {
        assert!(
            (v - prev).abs() <= own * 1.01,
            "jump of {} at frame {i}",
            (v - prev).abs()
        );
        prev = *v;
    }
}

#[test]
fn turning_the_boost_off_returns_to_the_untouched_signal_without_a_click() {
    let amp = 0.1f32;
    let boosted = SoundSettings {
        boost_db: 6.0,
        ..SoundSettings::default()
    };
    let mut l = Loudness::new(RATE, 2, -18.0, boosted);
    let x = tone(440.0, amp, 0.0, 3.0);
    let n = RATE as usize * 2;
    let mut y = run(&mut l, &x[..n]);
    l.set(SoundSettings::default());
    y.extend(run(&mut l, &x[n..]));
    // Untouched again from 100 ms after the change.
    let from = n + RATE as usize / 10 * 2;
    assert_eq!(&y[from..], &x[from..]);
    let own = 2.0 * amp * (2.0 * std::f32::consts::PI * 440.0 / RATE as f32);
    let start = l_first_loud(&y);
    for (i, w) in y[start..]
        .chunks(2)
        .collect::<Vec<_>>()
        .windows(2)
        .enumerate()
    {
        let jump = (w[1][0] - w[0][0]).abs();
        assert!(jump <= own * 1.01, "jump of {jump} at frame {i}");
    }
}

/// The first sample past the limiter's silent start.
fn l_first_loud(y: &[f32]) -> usize {
    y.iter().position(|v| v.abs() > 0.01).unwrap_or(0) & !1
}

#[test]
fn neutral_settings_leave_the_audio_untouched() {
    let mut l = Loudness::new(RATE, 2, -18.0, SoundSettings::default());
    let x = tone(1000.0, 1.0, 0.3, 1.0);
    assert_eq!(run(&mut l, &x), x);
    assert_eq!(l.norm_gain_db(), None);
}
