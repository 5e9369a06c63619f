//! `earmark completions <shell>` and `earmark man`: generated from the
//! same clap definition that parses the command line, so they never drift.

use clap::{Args, CommandFactory};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Write the completion script for `args.shell` to standard output.
pub fn completions(args: CompletionsArgs) -> ExitCode {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "earmark", &mut out);
    write_stdout(&out)
}

/// Write the man page (roff, section 1) to standard output.
pub fn man() -> ExitCode {
    let mut out = Vec::new();
    match clap_mangen::Man::new(super::Cli::command()).render(&mut out) {
        Ok(()) => write_stdout(&out),
        Err(e) => {
            eprintln!("earmark: could not render the man page: {e}");
            ExitCode::from(1)
        }
    }
}

fn write_stdout(bytes: &[u8]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("earmark: could not write to standard output: {e}");
            ExitCode::from(1)
        }
    }
}
