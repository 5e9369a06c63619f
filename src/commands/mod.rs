//! Client commands of the CLI (`earmark login`, `books`, …): each one
//! talks to the server through `crate::api` and prints text or JSON.

pub mod play;

use crate::cli::GlobalArgs;
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Log in and store the session token.
    Login {
        /// Read the password from standard input instead of the terminal.
        #[arg(long)]
        password_stdin: bool,
    },
}

pub fn run(_global: &GlobalArgs, _cmd: ClientCommand) -> ExitCode {
    eprintln!("earmark: not implemented yet");
    ExitCode::from(2)
}
