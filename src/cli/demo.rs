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
    /// Audio output of the player: the default device, none (paced in real time), or auto.
    #[arg(long, value_enum, default_value_t = AudioFlag::Auto, env = "EARMARK_AUDIO")]
    pub audio: AudioFlag,
    /// The player for screen readers and braille displays (docs/ui.md).
    #[arg(long, env = "EARMARK_ACCESSIBLE", value_parser = clap::builder::BoolishValueParser::new())]
    pub accessible: bool,
}

impl From<DemoFlags> for DemoArgs {
    fn from(f: DemoFlags) -> DemoArgs {
        DemoArgs {
            library: f.library,
            server_only: f.server_only,
            audio: f.audio.into(),
            accessible: f.accessible,
        }
    }
}
