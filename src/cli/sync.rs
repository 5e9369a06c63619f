//! `earmark sync`'s sub-commands, turned into
//! [`crate::commands::sync::SyncArgs`].

use crate::commands::sync::{SyncArgs, SyncCommand};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct SyncFlags {
    #[command(subcommand)]
    pub command: SyncSubcommand,
}

#[derive(Debug, Subcommand)]
pub enum SyncSubcommand {
    /// List the changes waiting to be sent, and those held back because
    /// they belong to another server instance or account.
    Pending,
    /// Send everything queued; held changes are sent to the server and
    /// account you are logged in to now.
    Push,
    /// Send the changes the server refused (set aside) once more.
    Retry,
    /// Drop held changes (with --refused: those the server refused; with
    /// --all: every queued change).
    Discard {
        /// Drop every queued change, not only the held ones.
        #[arg(long, conflicts_with = "refused")]
        all: bool,
        /// Drop the changes the server refused again and again.
        #[arg(long)]
        refused: bool,
    },
}

impl From<SyncFlags> for SyncArgs {
    fn from(f: SyncFlags) -> SyncArgs {
        SyncArgs {
            command: match f.command {
                SyncSubcommand::Pending => SyncCommand::Pending,
                SyncSubcommand::Push => SyncCommand::Push,
                SyncSubcommand::Retry => SyncCommand::Retry,
                SyncSubcommand::Discard { all, refused } => SyncCommand::Discard { all, refused },
            },
        }
    }
}
