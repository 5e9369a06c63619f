//! `earmark sound BOOK_ID`: the sound the player and `earmark play` use for
//! a book on this device (boost, normalisation, skip silence; kept in
//! `sound.json`, see `config::sound`): shown, or changed with flags. No
//! server needed.

use super::output::{Out, clock};
use super::{EXIT_USAGE, Invocation};
use crate::config::{Profile, SoundBooks, SoundOwner, read_record};
use crate::domain::{BookId, SoundSettings};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SoundArgs {
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

pub fn run(global: &Invocation, args: SoundArgs) -> ExitCode {
    let mut out = Out::new(global.json);
    let fail = |out: &mut Out, code: u8, msg: &str| {
        eprintln!("earmark: {msg}");
        out.error(code, msg);
        out.finish();
        ExitCode::from(code)
    };
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return fail(&mut out, EXIT_USAGE, &e.to_string()),
    };
    // The key the player uses: the logged-in server and user, if any.
    let record = match read_record(&profile) {
        Ok(r) => r,
        Err(e) => return fail(&mut out, 1, &e.to_string()),
    };
    let owner = SoundOwner {
        login: record.as_ref().map(|r| r.sound_login()),
        profile: profile.name.clone(),
    };
    let book = BookId::new(args.book_id);

    let store = SoundBooks::open(&profile.dirs.data);
    if let Some(aside) = store.damaged() {
        eprintln!(
            "earmark: sound.json could not be read; it was moved to {} and the defaults apply",
            aside.display()
        );
    }
    let key = store.key(&owner, &book);
    let mut settings = store.settings(&key);
    let before = settings;
    if let Some(b) = args.boost {
        settings.boost_db = b;
    }
    if let Some(n) = args.normalize {
        settings.normalize = n == Switch::On;
    }
    if let Some(s) = args.skip_silence {
        settings.skip_silence = s == Switch::On;
    }
    if settings != before {
        store.set(key.clone(), settings);
        if let Err(e) = store.save() {
            return fail(&mut out, 1, &e);
        }
    }
    let (saved_book, saved_total) = store.saved(&key);
    out.json(json!({
        "bookId": book,
        "boostDb": settings.boost_db,
        "normalize": settings.normalize,
        "skipSilence": settings.skip_silence,
        "silenceSavedSec": saved_book,
        "silenceSavedTotalSec": saved_total,
        "changed": settings != before,
    }));
    let what = if settings.is_neutral() {
        "as recorded (no boost, no normalisation, no skip silence)".to_owned()
    } else {
        settings.describe()
    };
    out.line(format!("Book {book}: {what}."));
    if saved_book > 0.0 {
        out.line(format!(
            "Skip silence saved {} in this book ({} in all books on this device).",
            clock(saved_book),
            clock(saved_total)
        ));
    }
    if settings != before {
        out.line("A running player picks this up when it restarts.");
    }
    out.finish();
    ExitCode::SUCCESS
}
