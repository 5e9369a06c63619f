//! `earmark serve` and its sub-commands.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The library folder to serve.
    #[arg(long)]
    pub library: Option<PathBuf>,
}

pub fn run(_args: ServeArgs) -> ExitCode {
    eprintln!("earmark: serve is not implemented yet");
    ExitCode::from(2)
}
