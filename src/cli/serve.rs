//! `earmark serve`'s flags and sub-commands, turned into the plain
//! [`crate::server::cli::ServeArgs`].

use crate::server::LicenseSetting;
use crate::server::cli::{LicenseCommand, ServeArgs, ServeCommand, UserCommand};
use clap::{Args, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeFlags {
    #[command(subcommand)]
    pub command: Option<ServeSubcommand>,
    /// The library folder to serve.
    #[arg(long)]
    pub library: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8686")]
    pub listen: SocketAddr,
    /// Data directory (database, covers). Default: the platform data dir.
    #[arg(long, global = true)]
    pub data: Option<PathBuf>,
    /// Gateway prefix to emulate, e.g. /nas/earmark (the API is then under {prefix}/api/v1).
    #[arg(long, default_value = "")]
    pub prefix: String,
    /// Prefix of the identity header names ({prefix}-Expected-Server-Id).
    #[arg(long, default_value = "X-Service")]
    pub header_prefix: String,
    /// Keep every progress write the server decides (applied, stale or
    /// refused as a 0 over a valid place) in the database's progress_log
    /// table, for soak tests; it grows without bound.
    #[arg(long)]
    pub log_writes: bool,
    /// Answer HTTP/1.1 only (by default the port also speaks HTTP/2 to a
    /// client that starts with it, h2c): a server as an HTTP/1.1 proxy
    /// would show it, for tests.
    #[arg(long)]
    pub http1_only: bool,
}

#[derive(Debug, Subcommand)]
pub enum ServeSubcommand {
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserSubcommand,
    },
    /// Set the simulated license state (applies to a running server at once).
    License {
        #[command(subcommand)]
        command: LicenseSubcommand,
    },
    /// Rescan the library into the catalog (a running server picks it up).
    Rescan {
        /// The library folder.
        #[arg(long)]
        library: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserSubcommand {
    /// Add a user.
    Add {
        /// The user name.
        name: String,
        /// Read the password from the first line of standard input.
        #[arg(long, required = true)]
        password_stdin: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum LicenseSubcommand {
    /// Set the license state.
    Set {
        #[arg(value_enum)]
        state: LicenseFlag,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LicenseFlag {
    Valid,
    Expired,
    Missing,
}

impl From<ServeFlags> for ServeArgs {
    fn from(f: ServeFlags) -> ServeArgs {
        ServeArgs {
            command: f.command.map(ServeCommand::from),
            library: f.library,
            listen: f.listen,
            data: f.data,
            prefix: f.prefix,
            header_prefix: f.header_prefix,
            log_writes: f.log_writes,
            http1_only: f.http1_only,
        }
    }
}

impl From<ServeSubcommand> for ServeCommand {
    fn from(c: ServeSubcommand) -> ServeCommand {
        match c {
            ServeSubcommand::User {
                command:
                    UserSubcommand::Add {
                        name,
                        password_stdin,
                    },
            } => ServeCommand::User {
                command: UserCommand::Add {
                    name,
                    password_stdin,
                },
            },
            ServeSubcommand::License {
                command: LicenseSubcommand::Set { state },
            } => ServeCommand::License {
                command: LicenseCommand::Set {
                    state: state.into(),
                },
            },
            ServeSubcommand::Rescan { library } => ServeCommand::Rescan { library },
        }
    }
}

impl From<LicenseFlag> for LicenseSetting {
    fn from(f: LicenseFlag) -> LicenseSetting {
        match f {
            LicenseFlag::Valid => LicenseSetting::Valid,
            LicenseFlag::Expired => LicenseSetting::Expired,
            LicenseFlag::Missing => LicenseSetting::Missing,
        }
    }
}
