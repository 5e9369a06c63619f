//! `earmark sound`'s flags, turned into [`crate::commands::sound::SoundArgs`].

use crate::commands::sound::SoundArgs;
use crate::domain::SoundSettings;
use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct SoundFlags {
    /// The book's id.
    pub book_id: String,
    /// Extra gain in dB, 0 to 12 (a true-peak limiter keeps it from clipping).
    #[arg(long, value_name = "DB", value_parser = parse_boost)]
    pub boost: Option<f32>,
    /// Loudness normalisation to `[sound] loudness_target`.
    #[arg(long, value_enum, value_name = "on|off")]
    pub normalize: Option<Switch>,
    /// Shorten long silences.
    #[arg(long, value_enum, value_name = "on|off")]
    pub skip_silence: Option<Switch>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

fn parse_boost(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("not a number of dB: {s}"))?;
    if !(0.0..=SoundSettings::MAX_BOOST_DB).contains(&v) {
        return Err(format!(
            "the boost must be 0 to {} dB, not {v}",
            SoundSettings::MAX_BOOST_DB
        ));
    }
    Ok(v)
}

impl From<SoundFlags> for SoundArgs {
    fn from(f: SoundFlags) -> SoundArgs {
        let on = |s: Switch| s == Switch::On;
        SoundArgs {
            book_id: f.book_id,
            boost: f.boost,
            normalize: f.normalize.map(on),
            skip_silence: f.skip_silence.map(on),
        }
    }
}
