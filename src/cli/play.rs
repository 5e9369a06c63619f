//! `earmark play`'s flags (and the speed's check), turned into
//! [`crate::commands::play::PlayArgs`].

use super::AudioFlag;
use crate::commands::Invocation;
use crate::commands::play::PlayArgs;
use clap::{Args, ValueEnum};
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct PlayFlags {
    /// The book to play.
    pub book_id: String,
    /// Start at this chapter (default: the server's progress, else the first).
    #[arg(long)]
    pub chapter: Option<String>,
    /// Start this many seconds into the chapter.
    #[arg(long)]
    pub at: Option<f64>,
    /// Playback speed, 0.5–3.0 (pitch is kept).
    #[arg(long, value_parser = parse_speed)]
    pub speed: Option<f32>,
    /// Stop after this many seconds of wall time (the audio is paused there,
    /// and that place is printed and saved).
    #[arg(long = "for", value_name = "SECONDS")]
    pub for_secs: Option<f64>,
    /// When the book ends, play on as the player does: the up next list, then the series.
    #[arg(long)]
    pub up_next: bool,
    /// Play with no terminal: return once audio plays and print the
    /// session's socket; `earmark ctl` controls it (docs/ctl.md).
    #[arg(long)]
    pub detach: bool,
    /// The pipe of the `earmark play --detach` that started this session.
    #[arg(long, hide = true, conflicts_with = "detach")]
    pub session_fd: Option<i32>,
}

fn parse_speed(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    if !(0.5..=3.0).contains(&v) {
        return Err(format!("speed must be between 0.5 and 3.0, not {v}"));
    }
    Ok(v)
}

impl From<PlayFlags> for PlayArgs {
    fn from(f: PlayFlags) -> PlayArgs {
        PlayArgs {
            book_id: f.book_id,
            chapter: f.chapter,
            at: f.at,
            speed: f.speed,
            for_secs: f.for_secs,
            // The global `--audio` (main sets it).
            audio: AudioFlag::Auto.into(),
            up_next: f.up_next,
            session_fd: f.session_fd,
        }
    }
}

impl PlayFlags {
    /// The same `earmark play` without `--detach`: what the detached
    /// session runs.
    fn detached_args(&self, global: &Invocation, audio: AudioFlag) -> Vec<OsString> {
        let mut a: Vec<String> = vec!["play".into(), self.book_id.clone()];
        let mut flag = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                a.extend([format!("--{name}"), v]);
            }
        };
        flag("chapter", self.chapter.clone());
        flag("at", self.at.map(|x| x.to_string()));
        flag("speed", self.speed.map(|x| x.to_string()));
        flag("for", self.for_secs.map(|x| x.to_string()));
        let audio = audio.to_possible_value().map(|v| v.get_name().to_owned());
        flag("audio", audio);
        flag("profile", global.select.profile.clone());
        flag("server", global.select.server.clone());
        flag("user", global.select.user.clone());
        if self.up_next {
            a.push("--up-next".into());
        }
        a.into_iter().map(OsString::from).collect()
    }
}

/// `earmark play BOOK --detach`: starts the session with no terminal and
/// returns once it plays.
pub fn detach(global: &Invocation, flags: PlayFlags, audio: AudioFlag) -> ExitCode {
    let args = flags.detached_args(global, audio);
    crate::ctl::detach::run(&global.select, global.json, &args)
}
