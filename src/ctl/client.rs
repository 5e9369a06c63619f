//! `earmark ctl COMMAND`: one request to the profile's session over its
//! socket, its reply printed (text, or `--json`), the exit codes of
//! docs/cli.md plus [`EXIT_NO_SESSION`]. Plain blocking I/O: a whole
//! `earmark ctl status` is a few milliseconds (docs/benchmarks.md).

use super::place::Place;
use super::protocol::{self, Ask, Incoming, Refusal};
use super::status::{self, Status};
use crate::config::{Profile, ProfileSelector};
use crate::domain::clock::hms as clock;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// No session is running for the profile (docs/cli.md).
pub const EXIT_NO_SESSION: u8 = 8;
/// `earmark play` found the profile's session running (docs/cli.md).
pub const EXIT_RUNNING: u8 = 9;

/// What `earmark ctl` was asked (parsed in `crate::cli`).
#[derive(Debug)]
pub struct CtlArgs {
    pub ask: Ask,
    /// The socket to use instead of the profile's.
    pub socket: Option<PathBuf>,
}

struct Failure {
    code: u8,
    error: &'static str,
    message: String,
}

impl Failure {
    fn new(code: u8, error: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            error,
            message: message.into(),
        }
    }

    fn of(r: Refusal) -> Failure {
        Failure::new(r.code.exit_code(), r.code.as_str(), r.message)
    }
}

pub fn run(select: &ProfileSelector, json: bool, args: CtlArgs) -> ExitCode {
    match request(select, json, &args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if json {
                let doc =
                    json!({"error": {"exitCode": f.code, "code": f.error, "message": f.message}});
                println!("{doc}");
            }
            eprintln!("earmark ctl: {}", sentence(&f.message));
            ExitCode::from(f.code)
        }
    }
}

/// `m` ending as a sentence does.
pub fn sentence(m: &str) -> String {
    match m.trim().ends_with(['.', '!', '?']) {
        true => m.trim().to_owned(),
        false => format!("{}.", m.trim()),
    }
}

/// The session's socket, and (from the profile) the data directory its
/// hello must name.
fn place(
    select: &ProfileSelector,
    socket: Option<&PathBuf>,
) -> Result<(PathBuf, Option<Place>), Failure> {
    if let Some(s) = socket {
        return Ok((s.clone(), None));
    }
    let profile = Profile::resolve(select).map_err(|e| Failure::new(2, "usage", e.to_string()))?;
    let place = Place::of(&profile);
    Ok((place.socket.clone(), Some(place)))
}

fn no_session(profile: &str, socket: &std::path::Path, why: &str) -> Failure {
    Failure::new(
        EXIT_NO_SESSION,
        "no_session",
        format!(
            "no session is running for profile {profile} ({why} at {}); `earmark play BOOK --detach` starts one",
            socket.display()
        ),
    )
}

fn connect(
    select: &ProfileSelector,
    args: &CtlArgs,
) -> Result<(UnixStream, BufReader<UnixStream>), Failure> {
    let (socket, place) = place(select, args.socket.as_ref())?;
    let profile = place.as_ref().map_or("?".to_owned(), |p| p.profile.clone());
    let stream = UnixStream::connect(&socket).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => no_session(&profile, &socket, "no socket"),
        std::io::ErrorKind::ConnectionRefused => no_session(&profile, &socket, "nobody answers"),
        std::io::ErrorKind::PermissionDenied => {
            Failure::new(3, "forbidden", format!("{}: {e}", socket.display()))
        }
        _ => Failure::new(1, "local", format!("{}: {e}", socket.display())),
    })?;
    let timeout = Some(Duration::from_secs(15));
    let _ = stream.set_read_timeout(timeout);
    let _ = stream.set_write_timeout(timeout);
    let reader = stream
        .try_clone()
        .map_err(|e| Failure::new(1, "local", e.to_string()))?;
    let mut reader = BufReader::new(reader);
    match next(&mut reader)? {
        Incoming::Hello(h) => {
            if let Some(p) = &place
                && h["data"].as_str() != Some(&p.data.display().to_string())
            {
                return Err(no_session(
                    &profile,
                    &socket,
                    "the session there is another data directory's",
                ));
            }
        }
        Incoming::Reply { answer: Err(r), .. } => return Err(Failure::of(r)),
        _ => return Err(lost("the session did not say hello")),
    }
    Ok((stream, reader))
}

fn lost(why: &str) -> Failure {
    Failure::new(1, "internal", why)
}

/// The next line the session sends.
fn next(reader: &mut BufReader<UnixStream>) -> Result<Incoming, Failure> {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return Err(lost("the session closed the connection")),
            Ok(_) => {}
            Err(e) => return Err(lost(&format!("no answer from the session: {e}"))),
        }
        if let Some(i) = protocol::incoming(&line) {
            return Ok(i);
        }
    }
}

fn request(select: &ProfileSelector, json: bool, args: &CtlArgs) -> Result<(), Failure> {
    let (mut stream, mut reader) = connect(select, args)?;
    let line = protocol::encode(1, &args.ask);
    stream
        .write_all(line.as_bytes())
        .map_err(|e| lost(&format!("cannot write to the session: {e}")))?;
    let result = loop {
        if let Incoming::Reply { id, answer } = next(&mut reader)?
            && (id == json!(1) || id.is_null())
        {
            break answer.map_err(Failure::of)?;
        }
    };
    let mut out = std::io::stdout().lock();
    if let Ask::Watch(_) = args.ask {
        let _ = stream.set_read_timeout(None);
        return watch(&mut reader, &mut out, json);
    }
    let text = match json {
        true => vec![result.to_string()],
        false => words(&args.ask, &result),
    };
    for l in text {
        let _ = writeln!(out, "{l}");
    }
    Ok(())
}

/// The reply in words.
fn words(ask: &Ask, result: &Value) -> Vec<String> {
    let status = || serde_json::from_value::<Status>(result.clone()).ok();
    match ask {
        Ask::Status => status().map(|s| status::text(&s)).unwrap_or_default(),
        Ask::Quit => vec!["The session quits; its place is written to the server first.".into()],
        Ask::Bookmark(_) => {
            let b = &result["bookmark"];
            let at = clock(b["position"].as_f64().unwrap_or(0.0));
            let chapter = b["chapterId"].as_str().unwrap_or("?");
            vec![match result["queued"].as_bool() {
                Some(true) => format!(
                    "The server cannot be reached: the bookmark at {at} in chapter {chapter} is kept and sent when it is back."
                ),
                _ => format!(
                    "Added bookmark {} at {at} in chapter {chapter}.",
                    b["id"].as_str().unwrap_or("?")
                ),
            }]
        }
        _ => status().map(|s| vec![line(&s)]).unwrap_or_default(),
    }
}

/// The session in one line: `playing · 2/5 Title · 0:01:30 / 0:20:00 · 1.00×`.
pub fn line(s: &Status) -> String {
    let mut parts = vec![s.state.clone()];
    if let Some(c) = &s.chapter {
        let n = c.number.map_or("?".into(), |n| n.to_string());
        let title = c.title.clone().unwrap_or_else(|| c.id.clone());
        let of = c
            .duration
            .map(|d| format!(" / {}", clock(d)))
            .unwrap_or_default();
        parts.push(format!("{n}/{} {title}", c.count));
        parts.push(format!("{}{of}", clock(c.position)));
    }
    if let Some(x) = s.speed {
        parts.push(format!("{x:.2}×"));
    }
    if s.sleep.is_some() {
        parts.push(format!("sleep {}", status::sleep_words(s.sleep.as_ref())));
    }
    parts.join(" · ")
}

/// Prints each event until the session ends or stdout closes.
fn watch(
    reader: &mut BufReader<UnixStream>,
    out: &mut impl Write,
    json: bool,
) -> Result<(), Failure> {
    loop {
        let e = match next(reader) {
            Ok(Incoming::Event(e)) => e,
            Ok(_) => continue,
            // The session ended.
            Err(_) => return Ok(()),
        };
        let l = match json {
            true => e.to_string(),
            false => event_words(&e),
        };
        if writeln!(out, "{l}").and_then(|()| out.flush()).is_err() {
            return Ok(());
        }
        if e["event"] == "quit" {
            return Ok(());
        }
    }
}

/// One event in words (one line, for a status bar).
pub fn event_words(e: &Value) -> String {
    let s = |k: &str| e[k].as_str().unwrap_or("").to_owned();
    let t = |v: &Value| v.as_f64().map_or("?".to_owned(), clock);
    match e["event"].as_str().unwrap_or("") {
        "state" => match e["speed"].as_f64() {
            Some(x) => format!("state {} {x:.2}×", s("state")),
            None => format!("state {}", s("state")),
        },
        "place" => match e["bookPosition"].as_f64() {
            Some(b) => format!(
                "place {} {} (book {})",
                s("chapter"),
                t(&e["position"]),
                clock(b)
            ),
            None => format!("place {} {}", s("chapter"), t(&e["position"])),
        },
        "chapter" => match e["chapter"].as_object() {
            Some(c) => format!(
                "chapter {}/{} {} ({}) of {}",
                c.get("number")
                    .and_then(Value::as_u64)
                    .map_or("?".into(), |n| n.to_string()),
                c.get("count").and_then(Value::as_u64).unwrap_or(0),
                c.get("title").and_then(Value::as_str).unwrap_or(""),
                c.get("id").and_then(Value::as_str).unwrap_or(""),
                e["book"]["title"].as_str().unwrap_or("?"),
            ),
            None => "chapter none".into(),
        },
        "sleep" => {
            let now = serde_json::from_value::<status::SleepNow>(e["sleep"].clone()).ok();
            format!("sleep {}", status::sleep_words(now.as_ref()))
        }
        "link" => format!("link {}", s("link")),
        "stop" => format!("stop {}: {}", s("reason"), s("message")),
        "moved" => format!(
            "moved {} {} (the server's newer place)",
            s("chapter"),
            t(&e["position"])
        ),
        "quit" => "quit".into(),
        other => format!("{other} {e}"),
    }
}
