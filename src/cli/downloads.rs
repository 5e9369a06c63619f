//! `earmark download` and `earmark downloads`' flags (and the rate's
//! check), turned into [`crate::commands::downloads`]' plain arguments.

use crate::commands::downloads::{DownloadArgs, DownloadsArgs, DownloadsCommand};
use crate::config::SizeSetting;
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct DownloadFlags {
    /// The book to download (its complete manifest, in server order).
    pub book_id: String,
    /// At most this many bytes per second ("500k", "2M"…).
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub limit_rate: Option<u64>,
}

#[derive(Debug, Args)]
pub struct DownloadsFlags {
    #[command(subcommand)]
    pub command: Option<DownloadsSubcommand>,
}

#[derive(Debug, Subcommand)]
pub enum DownloadsSubcommand {
    /// Remove a downloaded book and free its space.
    Remove { book_id: String },
}

fn parse_rate(s: &str) -> Result<u64, String> {
    match SizeSetting::Text(s.to_owned()).bytes()? {
        0 => Err("the rate must be more than 0".into()),
        n => Ok(n),
    }
}

impl From<DownloadFlags> for DownloadArgs {
    fn from(f: DownloadFlags) -> DownloadArgs {
        DownloadArgs {
            book_id: f.book_id,
            limit_rate: f.limit_rate,
        }
    }
}

impl From<DownloadsFlags> for DownloadsArgs {
    fn from(f: DownloadsFlags) -> DownloadsArgs {
        DownloadsArgs {
            command: f.command.map(|c| match c {
                DownloadsSubcommand::Remove { book_id } => DownloadsCommand::Remove { book_id },
            }),
        }
    }
}
