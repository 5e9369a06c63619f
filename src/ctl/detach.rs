//! A session with no terminal: `earmark play BOOK --detach` starts
//! `earmark play BOOK --session-fd N` as a child in its own session
//! (`setsid`: no controlling terminal), SIGHUP ignored, stdin from
//! /dev/null, stdout and stderr to the log. The child says on the pipe N
//! when audio plays (`ready PID SOCKET`) or why it could not
//! (`failed CODE MESSAGE`); the parent prints that and returns.
//!
//! The child then plays until `earmark ctl quit`, SIGTERM or SIGINT:
//! stops, the book's end and a lost server do not end it (each is in its
//! status and on `watch`); the place is written when it ends.

use super::server::Serving;
use crate::domain::BookId;
use crate::domain::session::{Command, Event, PlayState, Said, Snapshot};
use crate::domain::wait::or_never;
use crate::playback::{Playback, StopReason};
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long the parent waits for the first audio.
pub const READY_WITHIN: Duration = Duration::from_secs(30);

/// The detached session, playing.
#[derive(Debug)]
pub struct Started {
    pub pid: u32,
    pub socket: PathBuf,
    /// What the session said before it played (the server's newer place won).
    pub notes: Vec<String>,
}

/// Why it did not start: `earmark play`'s exit code and its sentence.
#[derive(Debug)]
pub struct Failed {
    pub code: u8,
    pub message: String,
}

fn failed(code: u8, message: impl Into<String>) -> Failed {
    Failed {
        code,
        message: message.into(),
    }
}

/// Starts `earmark ARGS` (an `earmark play` without `--detach`) detached,
/// writing to `log`, and waits until it plays.
pub fn start(args: &[OsString], log: &Path) -> Result<Started, Failed> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let local = |m: String| failed(StopReason::Local.exit_code(), m);
    let exe =
        std::env::current_exe().map_err(|e| local(format!("cannot find earmark itself: {e}")))?;
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(log)
        .map_err(|e| local(format!("cannot open the log {}: {e}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(|e| local(format!("the log: {e}")))?;
    let (read_end, write_end) = pipe().map_err(|e| local(format!("cannot make a pipe: {e}")))?;
    let w: RawFd = write_end.as_raw_fd();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args)
        .arg("--session-fd")
        .arg(w.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: between fork and exec only async-signal-safe calls: setsid,
    // signal and fcntl, on the child's own descriptor table.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            // The pipe's end stays open across exec (it was made CLOEXEC).
            if libc::fcntl(w, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| local(format!("cannot start the session: {e}")))?;
    drop(write_end);
    let said = read_said(File::from(read_end), READY_WITHIN);
    match said {
        Some((notes, line)) => parse_said(&line, log).map(|s| Started { notes, ..s }),
        None if matches!(child.try_wait(), Ok(None)) => {
            // SAFETY: kill on our own child's pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            Err(failed(
                StopReason::Network.exit_code(),
                format!(
                    "no audio within {} s; the session was stopped (its log: {})",
                    READY_WITHIN.as_secs(),
                    log.display()
                ),
            ))
        }
        None => {
            let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
            Err(failed(
                u8::try_from(code).unwrap_or(1).max(1),
                format!(
                    "the session ended before it played (its log: {})",
                    log.display()
                ),
            ))
        }
    }
}

/// `earmark play … --detach`: `args` is the same `earmark play` without
/// `--detach`. Prints the session's pid and socket once it plays.
pub fn run(select: &crate::config::ProfileSelector, json: bool, args: &[OsString]) -> ExitCode {
    let profile = match crate::config::Profile::resolve(select) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("earmark play: {e}");
            return ExitCode::from(2);
        }
    };
    let log = super::Place::of(&profile).log;
    match start(args, &log) {
        Ok(s) => {
            if json {
                let doc = serde_json::json!({
                    "pid": s.pid, "socket": s.socket.display().to_string(),
                    "log": log.display().to_string(), "said": s.notes,
                });
                println!("{doc}");
            } else {
                for n in &s.notes {
                    println!("{n}");
                }
                println!(
                    "Playing in the background (pid {}); `earmark ctl status` reaches it.",
                    s.pid
                );
                println!("Socket: {}", s.socket.display());
            }
            ExitCode::SUCCESS
        }
        Err(f) => {
            if json {
                let doc = serde_json::json!({"error": {"exitCode": f.code, "message": f.message}});
                println!("{doc}");
            }
            eprintln!("earmark play: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array we pass.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors we own from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The child's notes and its last line (`ready …` or `failed …`), or
/// `None` when the pipe closed or `within` ran out.
fn read_said(mut pipe: File, within: Duration) -> Option<(Vec<String>, String)> {
    let mut notes = Vec::new();
    let end = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll on one descriptor we own.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n == 0 {
            return None;
        }
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
        while let Some(i) = got.iter().position(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(&got[..i]).into_owned();
            got.drain(..=i);
            match line.strip_prefix("note ") {
                Some(n) => notes.push(n.to_owned()),
                None => return Some((notes, line)),
            }
        }
    }
}

fn parse_said(line: &str, log: &Path) -> Result<Started, Failed> {
    let mut words = line.splitn(3, ' ');
    match (words.next(), words.next(), words.next()) {
        (Some("ready"), Some(pid), Some(socket)) => Ok(Started {
            pid: pid.parse().unwrap_or(0),
            socket: PathBuf::from(socket),
            notes: Vec::new(),
        }),
        (Some("failed"), Some(code), message) => Err(failed(
            code.parse().unwrap_or(1),
            message.unwrap_or("the session could not start").to_owned(),
        )),
        _ => Err(failed(
            1,
            format!("the session said {line:?} (its log: {})", log.display()),
        )),
    }
}

/// The child's end of the pipe: it says once whether it plays.
pub struct Ready(Option<File>);

impl Ready {
    /// The descriptor `--session-fd` names (it is closed on exec from now on).
    pub fn from_fd(fd: i32) -> Ready {
        // SAFETY: fcntl on a number only asks whether it is open.
        if fd < 3 || unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Ready(None);
        }
        // SAFETY: the parent handed this descriptor to us alone.
        Ready(Some(unsafe { File::from_raw_fd(fd) }))
    }

    fn say(&mut self, line: &str) {
        self.note_line(line);
        self.0 = None;
    }

    fn note_line(&mut self, line: &str) {
        if let Some(f) = self.0.as_mut() {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }

    /// A sentence the parent prints before it says the session plays.
    pub fn note(&mut self, sentence: &str) {
        self.note_line(&format!("note {}", sentence.replace('\n', " ")));
    }

    pub fn ok(&mut self, socket: &Path) {
        self.say(&format!(
            "ready {} {}",
            std::process::id(),
            socket.display()
        ));
    }

    pub fn failed(&mut self, code: u8, message: &str) {
        let one_line = message.replace('\n', " ");
        self.say(&format!("failed {code} {one_line}"));
    }
}

/// The detached child's stderr is the log file: what it says goes there,
/// as `earmark play` says it on a terminal. With `EARMARK_LOG` set, so
/// does tracing at that level (without, none is kept: as `earmark play`,
/// and ~0.3 MB less).
pub fn log_to_stderr() {
    let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("EARMARK_LOG") else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}

/// What the detached session was asked on its command line.
pub struct Asked {
    pub book: BookId,
    pub speed: Option<f32>,
    pub for_secs: Option<f64>,
}

/// The detached child, once its book was sent: says when it plays (or why
/// not), plays until asked to quit, SIGTERM/SIGINT or `--for`, then
/// writes its place and ends (its watchers are told).
pub async fn session(
    playback: &Playback,
    events: crate::playback::Events,
    mut serving: Serving,
    ready: Ready,
    asked: Asked,
) -> ExitCode {
    let code = follow(playback, events, &mut serving, ready, asked).await;
    super::end_play(playback, Some(serving)).await;
    code
}

async fn follow(
    playback: &Playback,
    mut events: crate::playback::Events,
    serving: &mut Serving,
    mut ready: Ready,
    asked: Asked,
) -> ExitCode {
    let mut ends = super::Ends::listen();
    let mut snap = playback.snapshot();
    let began = tokio::time::Instant::now();
    // Sooner than the parent gives up, so the parent hears why.
    let within = READY_WITHIN - Duration::from_secs(5);
    let first = tokio::time::timeout(within, first_audio(&mut snap, &mut events, &asked));
    match first.await {
        Ok(Ok(notes)) => {
            for n in &notes {
                eprintln!("earmark: {n}");
                ready.note(n);
            }
            ready.ok(serving.socket())
        }
        Ok(Err(f)) => {
            ready.failed(f.code, &f.message);
            return ExitCode::from(f.code);
        }
        Err(_) => {
            let code = StopReason::Network.exit_code();
            let m = format!("no audio within {} s", within.as_secs());
            ready.failed(code, &m);
            return ExitCode::from(code);
        }
    }
    if let Some(s) = asked.speed {
        playback.send(Command::Speed(s));
    }
    let until = asked
        .for_secs
        .map(|s| began + Duration::from_secs_f64(s.max(0.0)));
    loop {
        tokio::select! {
            code = ends.next(Some(&mut *serving)) => return code,
            _ = or_never(until.map(tokio::time::sleep_until)) => {
                playback.send(Command::Pause);
                let paused = |s: &Snapshot| s.listening.as_ref().is_some_and(|l| !l.state.is_playing());
                let _ = tokio::time::timeout(Duration::from_secs(1), snap.wait_for(paused)).await;
                return ExitCode::SUCCESS;
            }
            e = events.recv() => match e {
                Ok(Event::Stopped(s)) => eprintln!("earmark: stopped ({}): {}", s.reason, s.message),
                Ok(Event::Said(Said::MovedToServer { book, to })) => {
                    eprintln!("earmark: {}", moved(&book, &to));
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return ExitCode::from(1),
            },
        }
    }
}

/// The server's newer place won (this device's went to the history).
fn moved(book: &crate::domain::BookId, to: &crate::domain::session::Place) -> String {
    format!(
        "{book}: the server has a newer place (another device's): chapter {} at {:.1} s; playing from there (this device's place is in `earmark history`)",
        to.chapter, to.position
    )
}

/// Until the session's book plays (with what it said on the way), or the
/// reason it will not.
async fn first_audio(
    snap: &mut tokio::sync::watch::Receiver<Snapshot>,
    events: &mut crate::playback::Events,
    asked: &Asked,
) -> Result<Vec<String>, Failed> {
    let mut notes = Vec::new();
    loop {
        if let Some(l) = snap.borrow_and_update().listening.as_ref()
            && l.book.id == asked.book
            && l.load != 0
        {
            match l.state {
                PlayState::Playing => return Ok(notes),
                // Resumed at its end (finished): nothing plays.
                PlayState::Ended => {
                    let m = format!(
                        "{} is at its end: nothing to play (`--at 0` plays it from the start)",
                        l.book.title
                    );
                    return Err(failed(StopReason::Local.exit_code(), m));
                }
                _ => {}
            }
        }
        tokio::select! {
            c = snap.changed() => if c.is_err() {
                return Err(failed(1, "the session stopped"));
            },
            e = events.recv() => match e {
                Ok(Event::Stopped(s)) => return Err(failed(s.reason.exit_code(), s.message)),
                Ok(Event::Said(Said::Failed(m))) => return Err(failed(1, m)),
                Ok(Event::Said(Said::NotDownloaded { book, why })) => {
                    let code = StopReason::Network.exit_code();
                    return Err(failed(code, format!("{why}; {book} is not downloaded")));
                }
                Ok(Event::Said(Said::MovedToServer { book, to })) => notes.push(moved(&book, &to)),
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_childs_line_says_ready_or_failed() {
        let log = Path::new("/tmp/earmark.log");
        let s = parse_said("ready 42 /run/user/1/earmark/default.sock", log).unwrap();
        assert_eq!(
            (s.pid, s.socket.as_path()),
            (42, Path::new("/run/user/1/earmark/default.sock"))
        );
        let f = parse_said("failed 5 the book b9 does not exist", log).unwrap_err();
        assert_eq!(
            (f.code, f.message.as_str()),
            (5, "the book b9 does not exist")
        );
        assert_eq!(parse_said("what", log).unwrap_err().code, 1);
    }
}
