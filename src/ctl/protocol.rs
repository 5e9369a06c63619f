//! The control socket's protocol (docs/ctl.md), version [`VERSION`]: one
//! JSON object a line each way. A request `{"id": 1, "command": ["seek",
//! "+30"]}` gets one reply with the same id: `{"id": 1, "result": …}` or
//! `{"id": 1, "error": {"code": "…", "message": "…"}}`. Decoding is pure
//! ([`decode`]), and never panics on any bytes (property-tested, and the
//! `ctl_request` fuzz target).

use super::args::{bad, one, play, seek, short, sleep, speed};
use crate::domain::session::Command;
use crate::domain::sleep::SleepChoice;
use crate::domain::{BookId, ChapterId};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const VERSION: u32 = 1;
/// A longer request line is refused (and its connection closed).
pub const MAX_LINE: usize = 64 * 1024;
/// Speeds the session plays at.
pub const SPEEDS: std::ops::RangeInclusive<f32> = 0.5..=3.0;

/// A decoded request: the id to echo and what is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// `null`, a number or a string, echoed as sent.
    pub id: Value,
    pub ask: Ask,
}

/// What a client asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    Status,
    /// Play the session's book (`None`), or open one.
    Play(Option<Open>),
    Pause,
    Toggle,
    Seek(Seek),
    Next,
    Prev,
    Speed(Speed),
    Sleep(SleepChoice),
    /// A bookmark at the current place, with a note.
    Bookmark(Option<String>),
    Quit,
    Watch(Watch),
    /// What an attached player asks (its own shapes: [`PlayerAsk`]).
    Player(Box<PlayerAsk>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    pub book: BookId,
    pub chapter: Option<ChapterId>,
    /// Seconds into the chapter (without one: into the first).
    pub at: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Seek {
    /// Seconds of media into the current chapter.
    To(f64),
    /// ± seconds of media from here, across chapters.
    By(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    To(f32),
    By(f32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// The events of docs/ctl.md (state, place, chapter, sleep, stop, link…).
    Events,
    /// Every snapshot and event of the session, as `domain::session`'s
    /// types: what an attached player draws.
    Session,
}

/// An attached player's own requests: the session's commands and what
/// its backends ask of the session's owner (sync's journal, stops).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PlayerAsk {
    Send(Command),
    History(BookId),
    Stats,
    RetryRefused,
    DiscardRefused,
    QueueFavorite {
        book: BookId,
        favorite: bool,
    },
    QueueBookmark {
        book: BookId,
        client_id: String,
        chapter: ChapterId,
        position: f64,
        note: Option<String>,
    },
    LicenseValid,
    LicenseInvalid(String),
    ServerLost(String),
    DownloadsChanged,
    /// The profile's login changed on disk: the session reads it again.
    LogIn,
}

/// An error's code, as the reply names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Not JSON (or not UTF-8).
    BadJson,
    /// JSON, but not a request object with a `command` array.
    BadRequest,
    UnknownCommand,
    BadArgument,
    /// A line over [`MAX_LINE`].
    TooLong,
    UnsupportedVersion,
    /// The session has as many clients as it takes.
    Busy,
    /// The peer is another user.
    Forbidden,
    /// The command needs a book and the session has none.
    NothingPlaying,
    /// Not this session's to do (quit a player's session from its terminal).
    Refused,
    /// The server refused (bookmark): the stop's reason.
    Server(crate::domain::StopReason),
    Internal,
}

impl Code {
    pub const ALL_FIXED: [Code; 11] = [
        Code::BadJson,
        Code::BadRequest,
        Code::UnknownCommand,
        Code::BadArgument,
        Code::TooLong,
        Code::UnsupportedVersion,
        Code::Busy,
        Code::Forbidden,
        Code::NothingPlaying,
        Code::Refused,
        Code::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        use crate::domain::StopReason as R;
        match self {
            Code::BadJson => "bad_json",
            Code::BadRequest => "bad_request",
            Code::UnknownCommand => "unknown_command",
            Code::BadArgument => "bad_argument",
            Code::TooLong => "too_long",
            Code::UnsupportedVersion => "unsupported_version",
            Code::Busy => "busy",
            Code::Forbidden => "forbidden",
            Code::NothingPlaying => "nothing_playing",
            Code::Refused => "refused",
            Code::Internal => "internal",
            Code::Server(R::License) => "license",
            Code::Server(R::Login) => "login",
            Code::Server(R::Forbidden) => "no_permission",
            Code::Server(R::Scope) => "scope",
            Code::Server(R::NotFound) => "not_found",
            Code::Server(R::Network) => "network",
            Code::Server(R::Rejected) => "rejected",
            Code::Server(R::Local) => "local",
        }
    }

    pub fn parse(s: &str) -> Option<Code> {
        let server = crate::domain::StopReason::ALL.map(Code::Server);
        Code::ALL_FIXED
            .into_iter()
            .chain(server)
            .find(|c| c.as_str() == s)
    }

    /// `earmark ctl`'s exit code for it (docs/cli.md).
    pub fn exit_code(self) -> u8 {
        match self {
            Code::BadJson
            | Code::BadRequest
            | Code::UnknownCommand
            | Code::BadArgument
            | Code::TooLong
            | Code::UnsupportedVersion => 2,
            Code::Forbidden => 3,
            Code::Server(r) => r.exit_code(),
            Code::Busy | Code::NothingPlaying | Code::Refused | Code::Internal => 1,
        }
    }
}

/// A refused request: its code and one sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

impl Refusal {
    pub fn new(code: Code, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// The id of a request that could not be read far enough to find one.
const NO_ID: Value = Value::Null;

/// Reads one request line (without its newline). On an error, the id is
/// the request's when it could be read.
pub fn decode(line: &[u8]) -> Result<Request, (Value, Refusal)> {
    let refuse = |id: Value, code, m: String| Err((id, Refusal::new(code, m)));
    if line.len() > MAX_LINE {
        let m = format!("the request is longer than {MAX_LINE} bytes");
        return refuse(NO_ID, Code::TooLong, m);
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return refuse(NO_ID, Code::BadJson, format!("not JSON: {e}")),
    };
    let Value::Object(mut obj) = value else {
        let m = "a request is a JSON object: {\"id\": 1, \"command\": [\"status\"]}".to_owned();
        return refuse(NO_ID, Code::BadRequest, m);
    };
    let id = match obj.remove("id") {
        None => Value::Null,
        Some(id @ (Value::Null | Value::Number(_) | Value::String(_))) => id,
        Some(_) => {
            let m = "`id` is a number or a string".to_owned();
            return refuse(NO_ID, Code::BadRequest, m);
        }
    };
    match obj.get("version") {
        None => {}
        Some(v) if v.as_u64() == Some(u64::from(VERSION)) => {}
        Some(v) => {
            let m = format!("this session speaks version {VERSION} of the protocol, not {v}");
            return refuse(id, Code::UnsupportedVersion, m);
        }
    }
    let args = match obj.remove("command") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            let m = "`command` is a list, its first item the command's name: [\"seek\", \"+30\"]"
                .to_owned();
            return refuse(id, Code::BadRequest, m);
        }
    };
    match ask(&args) {
        Ok(ask) => Ok(Request { id, ask }),
        Err(r) => Err((id, r)),
    }
}

/// The command's name and arguments.
fn ask(args: &[Value]) -> Result<Ask, Refusal> {
    let Some(name) = args[0].as_str() else {
        return Err(Refusal::new(
            Code::BadRequest,
            "a command's name is a string",
        ));
    };
    let rest = &args[1..];
    let none = |ask: Ask| match rest.is_empty() {
        true => Ok(ask),
        false => Err(bad(format!("`{name}` takes no arguments"))),
    };
    match name {
        "status" => none(Ask::Status),
        "pause" => none(Ask::Pause),
        "toggle" => none(Ask::Toggle),
        "next" => none(Ask::Next),
        "prev" => none(Ask::Prev),
        "quit" => none(Ask::Quit),
        "play" => play(rest).map(Ask::Play),
        "seek" => one(name, rest).and_then(seek).map(Ask::Seek),
        "speed" => one(name, rest).and_then(speed).map(Ask::Speed),
        "sleep" => one(name, rest).and_then(sleep).map(Ask::Sleep),
        "bookmark" => match rest {
            [] | [Value::Null] => Ok(Ask::Bookmark(None)),
            [Value::String(s)] => Ok(Ask::Bookmark(Some(s.clone()))),
            _ => Err(bad("`bookmark` takes one note (a string), or none")),
        },
        "watch" => match rest {
            [] => Ok(Ask::Watch(Watch::Events)),
            [v] if v == "session" => Ok(Ask::Watch(Watch::Session)),
            _ => Err(bad("`watch` takes no arguments")),
        },
        "player" => match rest {
            [v] => serde_json::from_value::<PlayerAsk>(v.clone())
                .map(|p| Ask::Player(Box::new(p)))
                .map_err(|e| bad(format!("not a player's request: {e}"))),
            _ => Err(bad("`player` takes one object")),
        },
        other => Err(Refusal::new(
            Code::UnknownCommand,
            format!(
                "no command `{}`; the commands: status, play, pause, toggle, seek, next, prev, speed, sleep, bookmark, quit, watch",
                short(other)
            ),
        )),
    }
}

/// The request line for `ask` (a client's side), newline included.
pub fn encode(id: u64, ask: &Ask) -> String {
    let num = |x: f64| json!(x);
    // A place as Rust writes it reads back exactly (a JSON number may be
    // a unit in the last place off).
    let place = |x: f64| Value::String(x.to_string());
    let signed = |x: f64| Value::String(format!("{x:+}"));
    let command: Vec<Value> = match ask {
        Ask::Status => vec!["status".into()],
        Ask::Pause => vec!["pause".into()],
        Ask::Toggle => vec!["toggle".into()],
        Ask::Next => vec!["next".into()],
        Ask::Prev => vec!["prev".into()],
        Ask::Quit => vec!["quit".into()],
        Ask::Play(None) => vec!["play".into()],
        Ask::Play(Some(o)) => {
            let mut c = vec!["play".into(), o.book.as_str().into()];
            if o.chapter.is_some() || o.at.is_some() {
                c.push(
                    o.chapter
                        .as_ref()
                        .map_or(Value::Null, |c| c.as_str().into()),
                );
            }
            if let Some(at) = o.at {
                c.push(place(at));
            }
            c
        }
        Ask::Seek(Seek::To(s)) => vec!["seek".into(), place(*s)],
        Ask::Seek(Seek::By(s)) => vec!["seek".into(), signed(*s)],
        Ask::Speed(Speed::To(s)) => vec!["speed".into(), num(f64::from(*s))],
        Ask::Speed(Speed::By(s)) => vec!["speed".into(), signed(f64::from(*s))],
        Ask::Sleep(SleepChoice::Minutes(m)) => vec!["sleep".into(), json!(m)],
        Ask::Sleep(SleepChoice::Chapters(n)) => vec!["sleep".into(), format!("{n}ch").into()],
        Ask::Sleep(SleepChoice::Off) => vec!["sleep".into(), "off".into()],
        Ask::Bookmark(note) => {
            let mut c = vec!["bookmark".into()];
            c.extend(note.iter().map(|n| Value::String(n.clone())));
            c
        }
        Ask::Watch(Watch::Events) => vec!["watch".into()],
        Ask::Watch(Watch::Session) => vec!["watch".into(), "session".into()],
        Ask::Player(p) => vec![
            "player".into(),
            serde_json::to_value(p).unwrap_or(Value::Null),
        ],
    };
    format!("{}\n", json!({"id": id, "command": command}))
}

/// A result line.
pub fn result(id: &Value, result: Value) -> String {
    format!("{}\n", json!({"id": id, "result": result}))
}

/// An error line.
pub fn error(id: &Value, r: &Refusal) -> String {
    let error = json!({"code": r.code.as_str(), "message": r.message});
    format!("{}\n", json!({"id": id, "error": error}))
}

/// What the session says first on each connection.
pub fn hello(profile: &str, data: &std::path::Path) -> String {
    let hello = json!({
        "protocol": VERSION, "pid": std::process::id(),
        "profile": profile, "data": data.display().to_string(),
    });
    format!("{}\n", json!({ "hello": hello }))
}

/// One line the session sends, as a client reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Hello(Value),
    Reply {
        id: Value,
        answer: Result<Value, Refusal>,
    },
    /// An event of `watch` (`{"event": …}`) or `watch session`
    /// (`{"snapshot": …}`, `{"session": …}`): the whole object.
    Event(Value),
}

/// Reads a line of the session's (a client's side).
pub fn incoming(line: &str) -> Option<Incoming> {
    let Value::Object(mut obj) = serde_json::from_str(line).ok()? else {
        return None;
    };
    if let Some(h) = obj.remove("hello") {
        return Some(Incoming::Hello(h));
    }
    // A reply has an id (`null` when the request had none); an event never.
    let Some(id) = obj.remove("id") else {
        return Some(Incoming::Event(Value::Object(obj)));
    };
    if let Some(r) = obj.remove("result") {
        return Some(Incoming::Reply { id, answer: Ok(r) });
    }
    if let Some(e) = obj.remove("error") {
        let code = e["code"]
            .as_str()
            .and_then(Code::parse)
            .unwrap_or(Code::Internal);
        let message = e["message"].as_str().unwrap_or("").to_owned();
        return Some(Incoming::Reply {
            id,
            answer: Err(Refusal::new(code, message)),
        });
    }
    None
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
