//! `earmark demo`'s flags, turned into [`crate::demo::DemoArgs`].

use super::AudioFlag;
use crate::demo::DemoArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DemoFlags {
    /// Library to serve instead of the bundled demo library.
    #[arg(long)]
    pub library: Option<PathBuf>,
    /// Only run the server and print its address (no player).
    #[arg(long)]
    pub server_only: bool,
    /// The player for screen readers and braille displays (docs/ui.md).
    #[arg(long, env = "EARMARK_ACCESSIBLE", value_parser = clap::builder::BoolishValueParser::new())]
    pub accessible: bool,
}

impl From<DemoFlags> for DemoArgs {
    fn from(f: DemoFlags) -> DemoArgs {
        DemoArgs {
            library: f.library,
            server_only: f.server_only,
            // The global `--audio` (main sets it).
            audio: AudioFlag::Auto.into(),
            accessible: f.accessible,
        }
    }
}
