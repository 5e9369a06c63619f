//! `earmark ctl`'s commands, turned into [`crate::ctl::CtlArgs`]: each is
//! checked by the protocol's own decoder (one copy of every rule: what
//! `ctl` refuses, the socket refuses the same way).

use crate::ctl::CtlArgs;
use crate::ctl::protocol;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CtlFlags {
    /// The session's socket (default: the profile's, see docs/ctl.md).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    #[command(subcommand)]
    pub command: CtlCommand,
}

#[derive(Debug, Subcommand)]
pub enum CtlCommand {
    /// The book, the chapter, the place in both, the state, the speed and the sleep timer.
    Status,
    /// Play the session's book, or open BOOK_ID (at its synced place, or --chapter/--at).
    Play {
        book_id: Option<String>,
        /// Start at this chapter (needs BOOK_ID).
        #[arg(long, requires = "book_id")]
        chapter: Option<String>,
        /// Seconds into the chapter (95 or 1:35; without --chapter, into the first).
        #[arg(long, requires = "book_id")]
        at: Option<String>,
    },
    /// Pause.
    Pause,
    /// Play or pause.
    Toggle,
    /// S seconds into this chapter (95, 1:35), or +S / -S from here, across chapters.
    Seek {
        #[arg(allow_hyphen_values = true, value_name = "±S|S")]
        to: String,
    },
    /// The next chapter (in the last one: up next).
    Next,
    /// The previous chapter (the start of this one when more than 3 s in).
    Prev,
    /// The speed, 0.5–3.0, or +X / -X from the current one.
    Speed {
        #[arg(allow_hyphen_values = true, value_name = "X")]
        speed: String,
    },
    /// The sleep timer: minutes (25, 1:30, 1h30), chapter (this one's end), 3ch, or off.
    Sleep {
        #[arg(value_name = "MIN|chapter|off")]
        when: String,
    },
    /// A bookmark at the current place, with an optional note.
    Bookmark { note: Vec<String> },
    /// End the session (its place is written to the server first).
    Quit,
    /// One line per event (state, place, chapter, sleep, stop, link) until the session ends.
    Watch,
}

impl TryFrom<CtlFlags> for CtlArgs {
    type Error = String;

    fn try_from(f: CtlFlags) -> Result<CtlArgs, String> {
        let text = |s: Option<String>| s.map_or(Value::Null, Value::from);
        let command = match f.command {
            CtlCommand::Status => json!(["status"]),
            CtlCommand::Play { book_id: None, .. } => json!(["play"]),
            CtlCommand::Play {
                book_id,
                chapter,
                at,
            } => json!(["play", book_id, text(chapter), text(at)]),
            CtlCommand::Pause => json!(["pause"]),
            CtlCommand::Toggle => json!(["toggle"]),
            CtlCommand::Seek { to } => json!(["seek", to]),
            CtlCommand::Next => json!(["next"]),
            CtlCommand::Prev => json!(["prev"]),
            CtlCommand::Speed { speed } => json!(["speed", speed]),
            CtlCommand::Sleep { when } => json!(["sleep", when]),
            CtlCommand::Bookmark { note } if note.is_empty() => json!(["bookmark"]),
            CtlCommand::Bookmark { note } => json!(["bookmark", note.join(" ")]),
            CtlCommand::Quit => json!(["quit"]),
            CtlCommand::Watch => json!(["watch"]),
        };
        let line = json!({"command": command}).to_string();
        let ask = protocol::decode(line.as_bytes())
            .map_err(|(_, r)| r.message)?
            .ask;
        Ok(CtlArgs {
            ask,
            socket: f.socket,
        })
    }
}
