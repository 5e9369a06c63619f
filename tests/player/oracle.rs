//! Long mp3s made with ffmpeg (once per directory), and the oracles that
//! tell which moment of them is playing. Shared by tests/player and
//! examples/mp3_seek_bench.rs (`#[path]`), so it uses nothing but std.
//!
//! The signal: a chirp `f(t) = 200 + t/2` Hz (so the pitch names the second)
//! under an amplitude envelope of two incommensurate slow sines (so the
//! waveform names the sample), with noise added from `NOISY_FROM` on, which
//! makes a VBR encode's second half ~3.5× the bitrate of its first.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const LENGTH: f64 = 1200.0;
pub const NOISY_FROM: f64 = 600.0;
pub const RATE: u32 = 22050;

/// The generated files.
pub struct Files {
    pub dir: PathBuf,
}

impl Files {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

pub fn ffmpeg(args: &[&str]) {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .output()
        .expect("ffmpeg runs (./run installs it)");
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `vbr.mp3` (LAME -q:a 6, Xing TOC), `noxing.mp3` (the same frames, no
/// Xing frame), `cbr.mp3` (32 kb/s, LAME `Info` tag), and each one's
/// reference decode by ffmpeg (`*.s16`, mono s16le).
pub fn make_files(dir: PathBuf) -> Files {
    {
        let done = dir.join("done");
        if !done.exists() {
            std::fs::create_dir_all(&dir).unwrap();
            let wav = dir.join("src.wav");
            let expr = format!(
                "(0.28+0.06*sin(2*PI*3.7*t)+0.06*sin(2*PI*1.3*t))*sin(2*PI*(200*t+t*t/4))\
                 +if(gte(t,{NOISY_FROM}),0.3*(random(0)-0.5),0)"
            );
            ffmpeg(&[
                "-f",
                "lavfi",
                "-i",
                &format!("aevalsrc='{expr}':s={RATE}:d={LENGTH}"),
                "-c:a",
                "pcm_s16le",
                wav.to_str().unwrap(),
            ]);
            let w = wav.to_str().unwrap();
            let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
            ffmpeg(&["-i", w, "-c:a", "libmp3lame", "-q:a", "6", &p("vbr.mp3")]);
            ffmpeg(&[
                "-i",
                &p("vbr.mp3"),
                "-c",
                "copy",
                "-write_xing",
                "0",
                &p("noxing.mp3"),
            ]);
            ffmpeg(&["-i", w, "-c:a", "libmp3lame", "-b:a", "32k", &p("cbr.mp3")]);
            std::fs::remove_file(&wav).unwrap();
            for f in ["vbr", "noxing", "cbr"] {
                ffmpeg(&[
                    "-i",
                    &p(&format!("{f}.mp3")),
                    "-f",
                    "s16le",
                    "-ac",
                    "1",
                    &p(&format!("{f}.s16")),
                ]);
            }
            std::fs::write(&done, "").unwrap();
        }
        Files { dir }
    }
}

/// `len` seconds of a reference decode from `at` (clamped to the file).
pub fn reference(path: &Path, at: f64, len: f64) -> Vec<f32> {
    let mut f = std::fs::File::open(path).unwrap();
    let start = (at.max(0.0) * RATE as f64) as u64;
    f.seek(SeekFrom::Start(start * 2)).unwrap();
    let mut buf = vec![0u8; (len * RATE as f64) as usize * 2];
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]).unwrap() {
            0 => break,
            k => n += k,
        }
    }
    buf[..n]
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect()
}

/// The chirp's frequency at the middle of `x` (Hann-windowed DFT peak).
fn chirp_hz(x: &[f32], rate: u32) -> f64 {
    let n = x.len();
    let w: Vec<f64> = (0..n)
        .map(|i| {
            let h = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n as f64).cos();
            x[i] as f64 * h
        })
        .collect();
    let power = |f: f64| {
        // Goertzel.
        let k = 2.0 * (2.0 * std::f64::consts::PI * f / rate as f64).cos();
        let (mut s1, mut s2) = (0.0, 0.0);
        for v in &w {
            let s0 = v + k * s1 - s2;
            s2 = s1;
            s1 = s0;
        }
        s1 * s1 + s2 * s2 - k * s1 * s2
    };
    let mut best = (0.0, f64::MIN);
    let mut f = 190.0;
    while f <= 200.0 + LENGTH / 2.0 + 10.0 {
        let p = power(f);
        if p > best.1 {
            best = (f, p);
        }
        f += 1.0;
    }
    let (mut lo, mut hi) = (best.0 - 1.0, best.0 + 1.0);
    for _ in 0..30 {
        let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if power(a) < power(b) {
            lo = a;
        } else {
            hi = b;
        }
    }
    (lo + hi) / 2.0
}

/// Which second of the signal `x` (mono, starting at its first sample)
/// plays, by the chirp's pitch: within ~0.3 s.
pub fn heard_by_pitch(x: &[f32], rate: u32) -> f64 {
    let n = (rate / 2) as usize;
    let hz = chirp_hz(&x[..n.min(x.len())], rate);
    (hz - 200.0) * 2.0 - 0.25
}

/// Where in the reference decode `x` starts, searching `around` ± `span`
/// seconds by waveform: `None` when the best match is at the search's edge
/// (the truth is further away).
pub fn heard_exactly(x: &[f32], reference_path: &Path, around: f64, span: f64) -> Option<f64> {
    let from = (around - span).max(0.0);
    let refs = reference(reference_path, from, 2.0 * span + 0.2);
    locate(x, &refs).map(|i| from + i as f64 / RATE as f64)
}

/// Where the first 0.1 s of `x` best matches in `hay` (sample index, least
/// squared error); `None` at the edges of `hay`.
pub fn locate(x: &[f32], hay: &[f32]) -> Option<usize> {
    let snippet = &x[..(RATE as f64 * 0.1) as usize];
    let offsets = hay.len().saturating_sub(snippet.len());
    let sse = |j: usize, step: usize| -> f32 {
        snippet
            .iter()
            .step_by(step)
            .zip(hay[j..].iter().step_by(step))
            .map(|(a, b)| (a - b) * (a - b))
            .sum()
    };
    let coarse = (0..offsets)
        .step_by(3)
        .min_by(|a, b| sse(*a, 3).total_cmp(&sse(*b, 3)))?;
    let lo = coarse.saturating_sub(6);
    let hi = (coarse + 6).min(offsets.saturating_sub(1));
    let best = (lo..=hi).min_by(|a, b| sse(*a, 1).total_cmp(&sse(*b, 1)))?;
    if best < 3 || best + 4 > offsets {
        return None;
    }
    Some(best)
}

/// Power of `x` at `hz` (Hann window, Goertzel).
fn power_at(x: &[f32], rate: u32, hz: f64) -> f64 {
    let n = x.len();
    let k = 2.0 * (2.0 * std::f64::consts::PI * hz / rate as f64).cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for (i, v) in x.iter().enumerate() {
        let w = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n as f64).cos();
        let s0 = *v as f64 * w + k * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    s1 * s1 + s2 * s2 - k * s1 * s2
}

/// The candidate among `hz` loudest in `x`.
fn loudest(x: &[f32], rate: u32, hz: impl Iterator<Item = f64>) -> f64 {
    hz.map(|f| (f, power_at(x, rate, f)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0.0, |b| b.0)
}

/// Where in the tone signal (`200 + 10·floor(t/60)` Hz plus
/// `1000 + 20·floor(t mod 60)` Hz) the sound in `x` starts and ends, in
/// seconds, to about 0.05 s: the minute from the first half second, the
/// second from 0.1 s windows, pinned where the second tone steps (the
/// audio is then on a whole second). Leading and trailing silence are not
/// sound. `None` without a step or without sound.
pub fn tone_place(x: &[f32], rate: u32) -> Option<(f64, f64)> {
    let loud = |s: &f32| s.abs() >= 0.02;
    let onset = x.iter().position(loud)?;
    let end = x.iter().rposition(loud)?;
    let sound = &x[onset..=end];
    let secs = |n: usize| n as f64 / rate as f64;
    // Skip the first 50 ms (a decoder's start), then half a second.
    let skip = rate as usize / 20;
    let head = sound.get(skip..skip + rate as usize / 2)?;
    let minute =
        ((loudest(head, rate, (0..=30).map(|m| 200.0 + 10.0 * m as f64)) - 200.0) / 10.0).round();
    let (win, step) = (rate as usize / 10, rate as usize / 20);
    let second_at = |i: usize| {
        let w = &sound[i..i + win];
        ((loudest(w, rate, (0..60).map(|s| 1000.0 + 20.0 * s as f64)) - 1000.0) / 20.0).round()
    };
    let starts: Vec<usize> = (skip..sound.len().saturating_sub(win))
        .step_by(step)
        .collect();
    let heard: Vec<f64> = starts.iter().map(|&i| second_at(i)).collect();
    // A step to the next second, between steady windows on both sides.
    let k = (2..heard.len().saturating_sub(1)).find(|&k| {
        heard[k] == heard[k - 1] + 1.0 && heard[k - 1] == heard[k - 2] && heard[k + 1] == heard[k]
    })?;
    // Window k-1 ends before the step and window k starts after it, at
    // best: the step lies between their centres.
    let centre = |i: usize| secs(starts[i] + win / 2);
    let stepped_at = (centre(k - 1) + centre(k)) / 2.0;
    let start = 60.0 * minute + heard[k] - stepped_at;
    Some((start, start + secs(sound.len())))
}
