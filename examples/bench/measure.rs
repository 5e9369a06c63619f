//! Whole-process measurements (wall, CPU, max RSS) and the table.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one finished process cost.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub wall: f64,
    pub cpu: f64,
    pub max_rss_mb: f64,
}

impl Cost {
    pub fn cpu_percent(&self) -> f64 {
        100.0 * self.cpu / self.wall.max(1e-9)
    }
}

/// Runs `cmd` to the end; returns its stdout and what it cost (wait4's
/// rusage of that child alone).
pub fn run(cmd: &mut Command) -> Result<(String, Cost), String> {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let mut out = String::new();
    let mut err = String::new();
    use std::io::Read;
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let errs = std::thread::spawn(move || {
        let _ = se.read_to_string(&mut err);
        err
    });
    let _ = so.read_to_string(&mut out);
    let err = errs.join().unwrap_or_default();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, zeroed is a valid value; wait4 reaps
    // the child we spawned (std's Child is then not waited on again).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t.elapsed().as_secs_f64();
    if r != pid {
        return Err(format!("wait4 failed for {cmd:?}"));
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok {
        return Err(format!(
            "{cmd:?} failed (status {status}): {}",
            err.lines().last().unwrap_or("")
        ));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((
        out,
        Cost {
            wall,
            cpu: secs(ru.ru_utime) + secs(ru.ru_stime),
            max_rss_mb: ru.ru_maxrss as f64 / 1024.0,
        },
    ))
}

/// Now on CLOCK_MONOTONIC, ms (what `earmark play --json` reports its
/// first audio on).
pub fn monotonic_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// CPU seconds used so far by a running process.
pub fn cpu_of(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields count from after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

/// % of a core `pid` uses over `secs` of wall time.
pub fn cpu_percent_over(pid: u32, secs: f64) -> Result<f64, String> {
    let a = cpu_of(pid).ok_or("process gone")?;
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let b = cpu_of(pid).ok_or("process gone")?;
    Ok(100.0 * (b - a) / t.elapsed().as_secs_f64())
}

/// Drops `files` from the page cache. A file the linker or `cp` has just
/// written sits there in large folios, and fault-around then maps about
/// 3 MB more of an executable's code than after a read from the disk.
pub fn uncache(files: &[&Path]) {
    use std::os::fd::AsRawFd;
    for f in files {
        if let Ok(file) = std::fs::File::open(f) {
            // SAFETY: advice on an open descriptor; no memory is touched.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
}

/// Where `name` is on $PATH (itself when it is nowhere).
pub fn on_path(name: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| name.into())
}

pub fn rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn mpv() -> Command {
    let mut c = Command::new("mpv");
    c.args([
        "--no-config",
        "--really-quiet",
        "--no-video",
        "--vo=null",
        "--ao=null",
    ]);
    c
}

/// mpv from start to 1 s of media played at `at`: wall − 1 s.
pub fn mpv_startup(url: &str, at: f64) -> Result<f64, String> {
    let (_, cost) = run(mpv().args([format!("--start={at}"), "--length=1".into(), url.into()]))?;
    Ok(cost.wall - 1.0)
}

/// mpv playing `secs` of wall time at `speed`.
pub fn mpv_playing(url: &str, speed: f64, secs: f64) -> Result<Cost, String> {
    run(mpv().args([
        format!("--speed={speed}"),
        format!("--length={}", secs * speed),
        url.into(),
    ]))
    .map(|(_, c)| c)
}

/// mpv's CPU while looping a chapter paused-free ("playing") and paused,
/// in the same order as the player's states: idle (none), playing, paused.
pub fn mpv_states(url: &str, secs: f64) -> Result<[Option<f64>; 3], String> {
    let mut out = [None, None, None];
    for (slot, extra) in [(1, None), (2, Some("--pause"))] {
        let mut cmd = mpv();
        cmd.arg("--loop-file=inf");
        if let Some(x) = extra {
            cmd.arg(x);
        }
        let mut child = cmd
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start mpv: {e}"))?;
        // Let it start streaming before sampling (mpv has no ready signal).
        std::thread::sleep(Duration::from_secs(3));
        let v = cpu_percent_over(child.id(), secs);
        let _ = child.kill();
        let _ = child.wait();
        out[slot] = Some(v?);
    }
    Ok(out)
}

/// Decode + stretch `file` at `speed` as fast as one core allows:
/// seconds of media per CPU second (player_bench's figure).
pub fn throughput(player_bench: &Path, file: &Path, speed: f64) -> Result<f64, String> {
    let (out, _) = run(Command::new(player_bench)
        .arg("throughput")
        .arg(file)
        .arg(speed.to_string()))?;
    // "... : 402x real time per core (...)"
    out.split(": ")
        .last()
        .and_then(|s| s.split('x').next())
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| format!("player_bench printed {out:?}"))
}

/// ffmpeg decoding `file` (and `atempo` unless 1×) on one thread.
pub fn ffmpeg_throughput(file: &Path, speed: f64) -> Result<f64, String> {
    let media = probe_duration(file)?;
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-v", "error", "-threads", "1", "-i"]).arg(file);
    if speed != 1.0 {
        cmd.args(["-af", &format!("atempo={speed}")]);
    }
    let (_, cost) = run(cmd.args(["-f", "null", "-"]))?;
    Ok(media / cost.cpu)
}

pub fn probe_duration(file: &Path) -> Result<f64, String> {
    let (out, _) = run(Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "format=duration",
            "-of",
            "csv=p=0",
        ])
        .arg(file))?;
    out.trim()
        .parse()
        .map_err(|_| format!("ffprobe printed {out:?} for {}", file.display()))
}

pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// earmark ÷ peer, written so that > 1 means earmark is better.
pub fn ratio(ours: f64, peer: f64, higher_is_better: bool) -> String {
    if !(ours.is_finite() && peer.is_finite()) || ours <= 0.0 || peer <= 0.0 {
        return "—".into();
    }
    let r = if higher_is_better {
        ours / peer
    } else {
        peer / ours
    };
    format!("{r:.2}")
}

pub struct Row {
    pub measure: String,
    pub ours: String,
    pub peer: String,
    pub ratio: String,
    pub target: String,
}

impl Row {
    fn new(measure: &str, ours: f64, peer: Option<f64>, target: &str, higher: bool) -> Row {
        let fmt = |v: f64| {
            if v.abs() >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        };
        Row {
            measure: measure.into(),
            ours: fmt(ours),
            peer: peer.map(fmt).unwrap_or_else(|| "—".into()),
            ratio: peer.map(|p| ratio(ours, p, higher)).unwrap_or("—".into()),
            target: target.into(),
        }
    }

    /// A cost: lower is better.
    pub fn time(measure: &str, ours: f64, peer: Option<f64>, target: &str) -> Row {
        Row::new(measure, ours, peer, target, false)
    }

    /// A rate: higher is better.
    pub fn speed(measure: &str, ours: f64, peer: Option<f64>, target: &str) -> Row {
        Row::new(measure, ours, peer, target, true)
    }
}

pub struct Table {
    peer_name: String,
    rows: Vec<Row>,
}

impl Table {
    pub fn new(peer_name: String) -> Table {
        Table {
            peer_name,
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Row) {
        eprintln!(
            "bench:   {} — earmark {}, peer {}",
            row.measure, row.ours, row.peer
        );
        self.rows.push(row);
    }

    pub fn pop_last(&mut self) -> Row {
        self.rows.pop().expect("a row")
    }

    pub fn render(&self, load: &str) -> String {
        let mut s = format!(
            "| measure | earmark | {} | ratio (> 1: earmark better) | target |\n|---|---|---|---|---|\n",
            self.peer_name
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r.measure, r.ours, r.peer, r.ratio, r.target
            ));
        }
        s.push_str(&format!("\n{load}\n"));
        s
    }
}
