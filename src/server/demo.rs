//! `earmark demo`: a throw-away server with the demo library.

use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DemoArgs {}

pub fn run(_args: DemoArgs) -> ExitCode {
    eprintln!("earmark: demo is not implemented yet");
    ExitCode::from(2)
}
