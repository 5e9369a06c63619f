//! The control socket (issue 30): `earmark ctl status` as a whole
//! process, one request over an open socket, a detached session playing
//! beside `earmark play` on the same book, and a paused session with 10
//! watchers connected.

use crate::measure::{Row, cpu_of, cpu_percent_over, percentile};
use crate::setup::{Book, Client};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Whole `earmark ctl status` processes timed, and requests on one socket.
const PROCESSES: usize = 200;
const REQUESTS: usize = 2000;
const WATCHERS: usize = 10;

/// A detached session of the bench's client.
struct Detached {
    pid: u32,
    socket: PathBuf,
}

impl Drop for Detached {
    fn drop(&mut self) {
        // SAFETY: SIGTERM to the session this bench started (gone: no-op).
        unsafe { libc::kill(self.pid as i32, libc::SIGTERM) };
    }
}

fn detach(client: &Client, book: &Book) -> Result<Detached, String> {
    let o = client
        .command()
        .args(["--json", "play", &book.id, "--chapter", &book.chapter])
        .args(["--at", "0", "--audio", "null", "--detach"])
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!(
            "earmark play --detach: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())?;
    Ok(Detached {
        pid: doc["pid"].as_u64().ok_or("no pid")? as u32,
        socket: PathBuf::from(doc["socket"].as_str().ok_or("no socket")?),
    })
}

fn ctl(client: &Client, args: &[&str]) -> Result<(), String> {
    let o = client.command().arg("ctl").args(args).output();
    match o {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "earmark ctl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// A connection past the session's hello.
fn connect(socket: &PathBuf) -> Result<(UnixStream, BufReader<UnixStream>), String> {
    let s = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let mut r = BufReader::new(s.try_clone().map_err(|e| e.to_string())?);
    let mut hello = String::new();
    r.read_line(&mut hello).map_err(|e| e.to_string())?;
    Ok((s, r))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// p50 / p99 of `v` (ms) as a row.
fn latency_row(measure: &str, v: &[f64], target: &str) -> Row {
    let mut row = Row::time(measure, percentile(v, 0.99), None, target);
    row.ours = format!("{:.2} / {:.2}", percentile(v, 0.5), percentile(v, 0.99));
    row
}

/// The session's peak RSS (MB).
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The rows; `secs`: how long each session plays, and the watchers idle.
pub fn rows(client: &Client, secs: f64, quick: bool) -> Result<Vec<Row>, String> {
    let book = &client.hour;
    let mut rows = Vec::new();
    // `earmark play` on the same book for as long, as the reference.
    let play = client.playing(book, 1.0, secs)?;
    let session = detach(client, book)?;

    // The detached session playing, with no client, for as long as
    // `earmark play` played.
    let cpu = cpu_percent_over(session.pid, secs)?;
    let rss = peak_rss_mb(session.pid).ok_or("the detached session is gone")?;
    rows.push(Row::time(
        &format!("detached session playing {secs:.0} s at 1×, CPU (% of a core)"),
        cpu,
        None,
        &format!("≤ `earmark play` ({:.2})", play.cpu_percent()),
    ));
    rows.push(Row::time(
        "detached session playing, max RSS (MB)",
        rss,
        None,
        &format!("≤ `earmark play` ({:.1})", play.max_rss_mb),
    ));

    let n = if quick { 20 } else { PROCESSES };
    let mut whole = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        ctl(client, &["status"])?;
        whole.push(ms(t.elapsed()));
    }
    rows.push(latency_row(
        &format!("`earmark ctl status`, whole process, p50 / p99 (ms, n = {n})"),
        &whole,
        "p99 ≤ 10",
    ));

    let n = if quick { 100 } else { REQUESTS };
    let (mut s, mut r) = connect(&session.socket)?;
    let mut one = Vec::with_capacity(n);
    let mut line = String::new();
    for id in 0..n {
        let t = Instant::now();
        writeln!(s, r#"{{"id":{id},"command":["status"]}}"#).map_err(|e| e.to_string())?;
        line.clear();
        r.read_line(&mut line).map_err(|e| e.to_string())?;
        one.push(ms(t.elapsed()));
    }
    drop((s, r));
    rows.push(latency_row(
        &format!("a `status` request over an open socket, p50 / p99 (ms, n = {n})"),
        &one,
        "p99 ≤ 1",
    ));

    ctl(client, &["pause"])?;
    // The paused session alone first: what its own looks cost (the
    // downloads directory every 5 s, its socket every 10 s), so the row
    // below shows what the watchers add.
    std::thread::sleep(Duration::from_secs(1));
    let alone_before = cpu_of(session.pid).ok_or("the detached session is gone")?;
    let alone = cpu_percent_over(session.pid, secs.min(20.0))?;
    let alone_after = cpu_of(session.pid).unwrap_or(alone_before);
    rows.push(Row::time(
        &format!(
            "paused session, no client, {:.0} s: CPU (% of a core; {:.0} ms of CPU)",
            secs.min(20.0),
            (alone_after - alone_before) * 1e3
        ),
        alone,
        None,
        "report",
    ));
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let (mut s, r) = connect(&session.socket)?;
        writeln!(s, r#"{{"id":1,"command":["watch"]}}"#).map_err(|e| e.to_string())?;
        // Each reads its lines as a status bar would.
        std::thread::spawn(move || r.lines().map_while(Result::ok).for_each(drop));
        watchers.push(s);
    }
    std::thread::sleep(Duration::from_secs(1));
    let before = cpu_of(session.pid).ok_or("the detached session is gone")?;
    let idle = cpu_percent_over(session.pid, secs.min(20.0))?;
    let after = cpu_of(session.pid).unwrap_or(before);
    rows.push(Row::time(
        &format!(
            "paused session, {WATCHERS} watchers connected, {:.0} s: CPU (% of a core; {:.0} ms of CPU)",
            secs.min(20.0),
            (after - before) * 1e3
        ),
        idle,
        None,
        "0 between events (beyond the row above)",
    ));
    ctl(client, &["quit"])?;
    drop(watchers);
    Ok(rows)
}
