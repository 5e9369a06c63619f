//! `--audio` as the command line spells it (`earmark`, `earmark demo`,
//! `earmark play`), turned into the player's [`AudioMode`].

use crate::player::AudioMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AudioFlag {
    /// The default device, or the null output (with a notice) when none opens.
    #[default]
    Auto,
    /// The default device; fail when it cannot be opened.
    Device,
    /// No sound, paced in real time.
    Null,
}

impl From<AudioFlag> for AudioMode {
    fn from(f: AudioFlag) -> AudioMode {
        match f {
            AudioFlag::Auto => AudioMode::Auto,
            AudioFlag::Device => AudioMode::Device,
            AudioFlag::Null => AudioMode::Null,
        }
    }
}
