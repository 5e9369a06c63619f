//! `earmark sound BOOK_ID`: the sound the player and `earmark play` use for
//! a book on this device (boost, normalisation, skip silence; kept in
//! `sound.json`, see `config::sound`): shown, or changed with flags. No
//! server needed.

use super::output::{Out, clock};
use super::{EXIT_USAGE, Invocation};
use crate::config::{Profile, SoundBooks, SoundOwner, read_record};
use crate::domain::BookId;
use serde_json::json;
use std::process::ExitCode;

/// What `earmark sound` was asked (parsed in `crate::cli`); `None`
/// leaves a setting as it is.
#[derive(Debug)]
pub struct SoundArgs {
    /// The book's id.
    pub book_id: String,
    /// Extra gain in dB, 0 to 12.
    pub boost: Option<f32>,
    /// Loudness normalisation to `[sound] loudness_target`.
    pub normalize: Option<bool>,
    /// Shorten long silences.
    pub skip_silence: Option<bool>,
}

pub fn run(global: &Invocation, args: SoundArgs) -> ExitCode {
    let mut out = Out::new(global.json);
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return out.fail(EXIT_USAGE, &e.to_string()),
    };
    // The key the player uses: the logged-in server and user, if any.
    let record = match read_record(&profile) {
        Ok(r) => r,
        Err(e) => return out.fail(1, &e.to_string()),
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
        settings.normalize = n;
    }
    if let Some(s) = args.skip_silence {
        settings.skip_silence = s;
    }
    if settings != before {
        store.set(key.clone(), settings);
        if let Err(e) = store.save() {
            return out.fail(1, &e);
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
