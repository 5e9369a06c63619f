//! The command-line interface: parses arguments and hands each command to
//! the module that owns it. No command logic lives here, and clap's types
//! stop here (as ripgrep's `hiargs.rs`): every command's flags live in
//! `cli/` (`…Flags`, with their checks) and are turned with `From` into
//! the plain values its module takes (`commands::play::PlayArgs`,
//! `server::cli::ServeArgs`, `player::AudioMode`, …); the options every
//! command understands become [`Invocation`], built once. A test fails
//! when clap is named anywhere else.

use crate::commands::Invocation;
use crate::config::ProfileSelector;
use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;

mod audio;
mod client;
mod ctl;
mod demo;
mod downloads;
mod export;
mod play;
mod serve;
mod shell;
mod sound;
mod sync;

pub use audio::AudioFlag;
pub use export::ExportFlag;

#[derive(Debug, Parser)]
#[command(
    name = "earmark",
    version,
    about = "A keyboard-driven terminal audiobook player"
)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Audio output of the player, `play` and `demo`: the default device,
    /// none (paced in real time), or auto.
    #[arg(long, global = true, value_enum, default_value_t = AudioFlag::Auto, env = "EARMARK_AUDIO")]
    pub audio: AudioFlag,
    /// The player for screen readers and braille displays: no borders, bars
    /// or covers, the state in words (as `[ui] accessible = true`).
    #[arg(long, env = "EARMARK_ACCESSIBLE", value_parser = clap::builder::BoolishValueParser::new())]
    pub accessible: bool,
}

/// Options every client command understands.
#[derive(Debug, Clone, Default, Args)]
struct GlobalArgs {
    /// Profile from config.toml to use (default: `default_profile`).
    #[arg(long, global = true, env = "EARMARK_PROFILE")]
    profile: Option<String>,
    /// Server address: host, host:port, URL, or URL with a gateway prefix.
    #[arg(long, global = true, env = "EARMARK_SERVER")]
    server: Option<String>,
    /// Server-side user name.
    #[arg(long, global = true, env = "EARMARK_USER")]
    user: Option<String>,
    /// Print one JSON document instead of text (see docs/cli.md).
    #[arg(long, global = true)]
    json: bool,
}

impl GlobalArgs {
    fn invocation(self) -> Invocation {
        Invocation {
            select: ProfileSelector {
                profile: self.profile,
                server: self.server,
                user: self.user,
            },
            json: self.json,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Client(client::ClientSubcommand),
    /// Play a book headlessly (no TUI); with --detach, with no terminal at all.
    Play(play::PlayFlags),
    /// Control the running session: status, play, pause, seek, sleep, … (docs/ctl.md).
    Ctl(ctl::CtlFlags),
    /// Download a book to play it without the server.
    Download(downloads::DownloadFlags),
    /// Downloaded books (sizes, state), or remove one.
    Downloads(downloads::DownloadsFlags),
    /// Queued progress and settings changes: list, send or drop them.
    Sync(sync::SyncFlags),
    /// The place before each jump in a book, on this device (newest first).
    History {
        /// The book's id.
        book_id: String,
        /// Write the history as Markdown or CSV, with chapter titles from the server.
        #[arg(long, value_enum)]
        export: Option<ExportFlag>,
    },
    /// Time listened on this device: last 30 days, totals, streaks.
    Stats,
    /// A book's sound on this device (boost, normalisation, skip silence): show or set it.
    Sound(sound::SoundFlags),
    /// Run the reference Audiobook Library Service.
    Serve(serve::ServeFlags),
    /// Start a demo server with the demo library and open the player.
    Demo(demo::DemoFlags),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff).
    Man,
}

pub fn main() -> ExitCode {
    // `earmark play --json` reports its start-up phases from here.
    let started = std::time::Instant::now();
    let cli = Cli::parse();
    let global = cli.global.invocation();
    if let Some(
        Command::Client(_)
        | Command::Ctl(_)
        | Command::Sync(_)
        | Command::History { .. }
        | Command::Stats
        | Command::Sound(_)
        | Command::Downloads(_),
    ) = &cli.command
    {
        quiet_on_closed_pipe();
    }
    match cli.command {
        Some(Command::Client(cmd)) => crate::commands::run(&global, cmd.into()),
        Some(Command::Play(args)) if args.detach => play::detach(&global, args, cli.audio),
        Some(Command::Play(args)) => {
            let args = crate::commands::play::PlayArgs {
                audio: cli.audio.into(),
                ..args.into()
            };
            crate::commands::play::run(&global, args, started)
        }
        Some(Command::Ctl(flags)) => match crate::ctl::CtlArgs::try_from(flags) {
            Ok(args) => crate::ctl::client::run(&global.select, global.json, args),
            Err(m) => {
                eprintln!("earmark ctl: {m}");
                ExitCode::from(2)
            }
        },
        Some(Command::Sync(args)) => crate::commands::sync::run(&global, args.into()),
        Some(Command::History { book_id, export }) => match export {
            Some(f) => crate::commands::export::history(&global, book_id, f.into()),
            None => crate::commands::listening::history(&global, book_id),
        },
        Some(Command::Stats) => crate::commands::listening::stats(&global),
        Some(Command::Sound(args)) => crate::commands::sound::run(&global, args.into()),
        Some(Command::Download(args)) => {
            crate::commands::downloads::run_download(&global, args.into())
        }
        Some(Command::Downloads(args)) => {
            crate::commands::downloads::run_downloads(&global, args.into())
        }
        Some(Command::Serve(args)) => crate::server::cli::run(args.into()),
        Some(Command::Demo(args)) => crate::demo::run(crate::demo::DemoArgs {
            audio: cli.audio.into(),
            ..args.into()
        }),
        Some(Command::Completions(args)) => shell::completions(args),
        Some(Command::Man) => shell::man(),
        None => crate::runtime::open(&global.select, cli.audio.into(), cli.accessible),
    }
}

/// `earmark books --json | head` must end quietly, like any Unix filter,
/// instead of panicking in `println!`. Only for the one-shot printing
/// commands: the server, the player and `play` keep the default so they can
/// finish their work. Not `SIG_DFL`: HTTP/2 writes a socket with `writev`,
/// which has no MSG_NOSIGNAL, so a server or proxy that hangs up (an
/// HTTP/1.1 proxy refusing the h2c probe) would kill the process; the
/// handler ends it only when stdout is the pipe whose reader is gone.
fn quiet_on_closed_pipe() {
    extern "C" fn on_sigpipe(_: libc::c_int) {
        let mut out = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll, signal and raise are async-signal-safe; a pipe
        // without a reader polls as POLLERR for its writer.
        unsafe {
            if libc::poll(&mut out, 1, 0) == 1 && out.revents & libc::POLLERR != 0 {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::raise(libc::SIGPIPE);
            }
        }
    }
    // SAFETY: installing a handler at start-up, before any thread is
    // spawned; the handler only makes async-signal-safe calls.
    unsafe {
        libc::signal(
            libc::SIGPIPE,
            on_sigpipe as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

#[cfg(test)]
mod tests;
