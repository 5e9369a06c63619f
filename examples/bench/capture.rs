//! Hearing a whole process's sound without a sound card, paced as a sound
//! card is (docs/benchmarks.md, "Slow link"): ALSA's `file` plugin, named
//! by the process's own `$HOME/.asoundrc`, writes what it plays into a
//! FIFO that is read here at the sample rate, in real time. What is not
//! there when it is due is an underrun, heard as silence; so a gap at a
//! chapter seam is the same figure whether the player wrote silence or
//! wrote nothing.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What was heard: mono samples at `rate`.
pub struct Heard {
    pub rate: u32,
    pub mono: Vec<f32>,
}

pub struct Capture {
    asoundrc: PathBuf,
    stop: Arc<AtomicBool>,
    reader: JoinHandle<Result<Heard, String>>,
}

/// How long the first sound may take to come.
const FIRST_SOUND: Duration = Duration::from_secs(60);

impl Capture {
    /// Points ALSA's default device of `home` at a FIFO in `dir` and starts
    /// listening to it.
    pub fn start(home: &Path, dir: &Path) -> Result<Capture, String> {
        let fifo = dir.join("capture.fifo");
        let _ = std::fs::remove_file(&fifo);
        let c_path =
            std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: a valid NUL-terminated path; mkfifo only creates it.
        if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
            return Err(format!("mkfifo {}", fifo.display()));
        }
        let asoundrc = home.join(".asoundrc");
        std::fs::write(
            &asoundrc,
            format!(
                "pcm.!default {{ type file  slave.pcm \"null\"  file \"{}\"  format \"wav\" }}\n",
                fifo.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        let stop = Arc::new(AtomicBool::new(false));
        let done = stop.clone();
        let reader = std::thread::spawn(move || listen(&fifo, &done));
        Ok(Capture {
            asoundrc,
            stop,
            reader,
        })
    }

    /// After the player exited: what it played.
    pub fn finish(self) -> Result<Heard, String> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::fs::remove_file(&self.asoundrc);
        self.reader
            .join()
            .map_err(|_| "the capture thread panicked".to_string())?
    }
}

/// Reads the FIFO at the rate its WAV header names, 2 ms at a time.
fn listen(fifo: &Path, stop: &AtomicBool) -> Result<Heard, String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .map_err(|e| format!("{}: {e}", fifo.display()))?;
    // The header: 44 bytes; channels at 22, rate at 24, bits at 34. The
    // plugin calls float samples 32-bit integers: 32 bits are read as f32.
    let began = Instant::now();
    let mut head = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while head.len() < 44 {
        match f.read(&mut buf[..44 - head.len()]) {
            Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
            _ => {
                if stop.load(Ordering::SeqCst) || began.elapsed() > FIRST_SOUND {
                    return Err("the player never opened its sound device".into());
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    if &head[..4] != b"RIFF" {
        return Err(format!("not a WAV stream: {:?}", &head[..4]));
    }
    let channels = u16::from_le_bytes([head[22], head[23]]).max(1) as usize;
    let rate = u32::from_le_bytes([head[24], head[25], head[26], head[27]]);
    let bits = u16::from_le_bytes([head[34], head[35]]);
    if bits != 32 || rate == 0 {
        return Err(format!(
            "want 32-bit float samples, the header says {bits} bits at {rate} Hz"
        ));
    }
    let frame = 4 * channels;
    let started = Instant::now();
    let (mut mono, mut carry) = (Vec::<f32>::new(), Vec::<u8>::new());
    let mut frames_due_done = 0u64;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(2));
        let due = (started.elapsed().as_secs_f64() * rate as f64) as u64;
        let want = (due - frames_due_done) as usize;
        frames_due_done = due;
        // Take what is there, up to what is due; the rest is an underrun.
        let mut got = 0;
        while got < want {
            let need = ((want - got) * frame - carry.len()).min(buf.len());
            match f.read(&mut buf[..need]) {
                Ok(n) if n > 0 => {
                    carry.extend_from_slice(&buf[..n]);
                    let whole = carry.len() / frame;
                    for fr in carry.chunks_exact(frame) {
                        let sum: f32 = fr
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            .sum();
                        mono.push(sum / channels as f32);
                    }
                    carry.drain(..whole * frame);
                    got += whole;
                }
                _ => break,
            }
        }
        mono.resize(mono.len() + (want - got), 0.0);
    }
    Ok(Heard { rate, mono })
}

/// The longest run of near-silence strictly inside the sound (leading and
/// trailing silence excluded), in seconds, and where it starts.
pub fn longest_inner_gap(x: &[f32], rate: u32) -> (f64, f64) {
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

/// Seconds of sound (samples louder than near-silence, first to last).
pub fn heard_secs(x: &[f32], rate: u32) -> f64 {
    let first = x.iter().position(|s| s.abs() >= 0.01);
    let last = x.iter().rposition(|s| s.abs() >= 0.01);
    match (first, last) {
        (Some(a), Some(b)) => (b - a) as f64 / rate as f64,
        _ => 0.0,
    }
}
