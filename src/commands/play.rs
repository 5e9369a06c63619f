//! `earmark play`: headless playback of a book's manifest.

use crate::cli::GlobalArgs;
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The book to play.
    pub book_id: String,
}

pub fn run(_global: &GlobalArgs, _args: PlayArgs) -> ExitCode {
    eprintln!("earmark: play is not implemented yet");
    ExitCode::from(2)
}
