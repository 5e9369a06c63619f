//! `earmark play`'s flags (and the speed's check), turned into
//! [`crate::commands::play::PlayArgs`].

use super::AudioFlag;
use crate::commands::play::PlayArgs;
use clap::Args;

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
        }
    }
}
