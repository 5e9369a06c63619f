//! Each book's sound (boost, normalisation, skip silence) and the silence
//! skip silence saved, kept on this device in `sound.json` in the data
//! directory, keyed by server instance, account and book ([`SoundOwner`]),
//! whichever address of the server is in use. The player and `earmark
//! play` read the same file. A book's sound kept under a key from before
//! addresses (address, user name, book) moves to its new key the first
//! time the book's key is asked for ([`SoundBooks::key`]), in the file at
//! the next save.
//!
//! The contract's playback settings carry no such fields (docs/contract.md),
//! and a real server may refuse a write with fields it does not know, so
//! these never travel: speed and volume sync, these stay here. A damaged
//! file is moved aside (`sound.json.damaged`), never overwritten. A save
//! writes only what this process changed over what the file holds then,
//! so the player and `earmark sound` never undo each other.

use crate::api::BaseUrl;
use crate::domain::locks::lock;
use crate::domain::{BookId, ServerId, SoundSettings, UserId};
use crate::durable::{LockFile, Wait, write_atomic};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whose books' sound: a login's server instance and account, or a
/// profile that is not logged in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SoundOwner {
    pub login: Option<SoundLogin>,
    pub profile: String,
}

/// A login as `sound.json` names it.
#[derive(Debug, Clone, PartialEq)]
pub struct SoundLogin {
    pub server_id: ServerId,
    pub user_id: UserId,
    /// The server's addresses and the user name: the keys from before
    /// addresses named them.
    pub addresses: Vec<BaseUrl>,
    pub user: String,
}

impl SoundOwner {
    /// The key of `book`; not logged in, the profile's name stands for
    /// the server and the user.
    pub fn key(&self, book: &BookId) -> String {
        match &self.login {
            Some(l) => format!("{}|{}|{book}", l.server_id, l.user_id),
            None => format!("|{}|{book}", self.profile),
        }
    }

    /// The keys `book` had before addresses (one per address).
    fn older_keys(&self, book: &BookId) -> Vec<String> {
        let Some(l) = &self.login else {
            return Vec::new();
        };
        l.addresses
            .iter()
            .map(|a| format!("{a}|{}|{book}", l.user))
            .collect()
    }
}

/// Unsaved skipped seconds worth a write.
const SAVE_EVERY_SECS: f64 = 15.0;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BookSound {
    #[serde(flatten)]
    settings: SoundSettings,
    silence_saved_sec: f64,
}

#[derive(Debug, Default)]
struct Stored {
    books: BTreeMap<String, BookSound>,
    unsaved: f64,
    /// Changes made here since the last save, written over what the file
    /// holds then (another process, e.g. `earmark sound` beside a running
    /// player, may have changed other books meanwhile).
    set: BTreeMap<String, SoundSettings>,
    added: BTreeMap<String, f64>,
    /// Keys from before addresses moved to their new key (old → new).
    moved: BTreeMap<String, String>,
}

/// What reading the file gave.
enum Read {
    Books(BTreeMap<String, BookSound>),
    /// Not JSON of this shape (the parser's message).
    Damaged(String),
    /// Not readable at all (the message, naming the file).
    Unreadable(String),
}

fn read_books(path: &Path) -> Read {
    match std::fs::read(path) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(b) => Read::Books(b),
            Err(e) => Read::Damaged(e.to_string()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Read::Books(BTreeMap::new()),
        Err(e) => Read::Unreadable(format!("cannot read {}: {e}", path.display())),
    }
}

/// Moves a damaged file aside; where to, or why not.
fn move_aside(path: &Path, why: &str) -> Result<PathBuf, String> {
    let aside = path.with_extension("json.damaged");
    tracing::warn!(
        "{} is not readable ({why}); moved to {}",
        path.display(),
        aside.display()
    );
    std::fs::rename(path, &aside)
        .map(|()| aside)
        .map_err(|e| format!("cannot move {} aside: {e}", path.display()))
}

pub struct SoundBooks {
    path: PathBuf,
    stored: Mutex<Stored>,
    /// One save at a time in this process (each reads, merges, writes).
    saving: Mutex<()>,
    damaged: Option<PathBuf>,
    /// Why the file could not be read (then it is never written).
    unreadable: Option<String>,
}

impl SoundBooks {
    /// The store in `data_dir` (`sound.json`); a missing file is empty.
    pub fn open(data_dir: &Path) -> Self {
        Self::load(data_dir.join("sound.json"))
    }

    /// A file that can't be parsed is moved aside (`damaged`); one that
    /// can't be read at all is left alone and never overwritten (`save`
    /// refuses).
    pub fn load(path: PathBuf) -> Self {
        let (books, damaged, unreadable) = match read_books(&path) {
            Read::Books(b) => (b, None, None),
            Read::Damaged(why) => match move_aside(&path, &why) {
                Ok(aside) => (BTreeMap::new(), Some(aside), None),
                Err(e) => (BTreeMap::new(), None, Some(e)),
            },
            Read::Unreadable(e) => {
                tracing::warn!("{e}");
                (BTreeMap::new(), None, Some(e))
            }
        };
        Self {
            path,
            stored: Mutex::new(Stored {
                books,
                ..Stored::default()
            }),
            saving: Mutex::new(()),
            damaged,
            unreadable,
        }
    }

    /// The book's settings (the defaults when none are saved).
    pub fn settings(&self, key: &str) -> SoundSettings {
        lock(&self.stored)
            .books
            .get(key)
            .map(|b| b.settings)
            .unwrap_or_default()
    }

    /// Seconds skip silence saved: in this book, and in every book.
    pub fn saved(&self, key: &str) -> (f64, f64) {
        let s = lock(&self.stored);
        let book = s.books.get(key).map_or(0.0, |b| b.silence_saved_sec);
        (book, s.books.values().map(|b| b.silence_saved_sec).sum())
    }

    /// `book`'s key for `owner`. The book's sound kept under a key from
    /// before addresses moves to it now (in the file at the next save).
    pub fn key(&self, owner: &SoundOwner, book: &BookId) -> String {
        let key = owner.key(book);
        let mut s = lock(&self.stored);
        if !s.books.contains_key(&key) {
            for old in owner.older_keys(book) {
                if let Some(b) = s.books.remove(&old) {
                    s.books.insert(key.clone(), b);
                    s.moved.insert(old, key.clone());
                    break;
                }
            }
        }
        key
    }

    pub fn set(&self, key: String, settings: SoundSettings) {
        let mut s = lock(&self.stored);
        s.books.entry(key.clone()).or_default().settings = settings;
        s.set.insert(key, settings);
    }

    /// Adds skipped seconds; true when enough is unsaved to write.
    pub fn add_saved(&self, key: String, secs: f64) -> bool {
        let mut s = lock(&self.stored);
        s.books.entry(key.clone()).or_default().silence_saved_sec += secs;
        *s.added.entry(key).or_default() += secs;
        s.unsaved += secs;
        s.unsaved >= SAVE_EVERY_SECS
    }

    /// Writes this store's changes over what the file holds now, under a
    /// lock file, atomically (a failed write, e.g. on a full disk, leaves
    /// the old file whole and keeps the changes for the next save), and
    /// takes in what others wrote. Blocking. The error names the file and
    /// why ("the disk is full: cannot write …").
    pub fn save(&self) -> Result<(), String> {
        if let Some(why) = &self.unreadable {
            return Err(format!("{why}; not overwriting it"));
        }
        let _one = lock(&self.saving);
        let lock_path = self.path.with_extension("json.lock");
        let _file_lock = LockFile::take(&lock_path, Wait::Yes).map_err(|e| e.to_string())?;
        let mut books = match read_books(&self.path) {
            Read::Books(b) => b,
            Read::Damaged(why) => {
                move_aside(&self.path, &why)?;
                BTreeMap::new()
            }
            Read::Unreadable(e) => return Err(format!("{e}; not overwriting it")),
        };
        let (set, added, moved) = {
            let s = &mut *lock(&self.stored);
            s.unsaved = 0.0;
            use std::mem::take;
            (take(&mut s.set), take(&mut s.added), take(&mut s.moved))
        };
        move_keys(&mut books, &moved);
        apply(&mut books, &set, &added);
        let written = serde_json::to_vec_pretty(&books)
            .map_err(|e| e.to_string())
            .and_then(|bytes| write_atomic(&self.path, &bytes).map_err(|e| e.to_string()));
        let mut s = lock(&self.stored);
        match written {
            Ok(()) => {
                // Changes made during the write stay pending, on top.
                let (later_set, later_added) = (s.set.clone(), s.added.clone());
                move_keys(&mut books, &s.moved.clone());
                apply(&mut books, &later_set, &later_added);
                s.books = books;
                Ok(())
            }
            Err(e) => {
                for (k, v) in set {
                    s.set.entry(k).or_insert(v);
                }
                for (k, v) in added {
                    *s.added.entry(k).or_default() += v;
                }
                for (old, new) in moved {
                    s.moved.entry(old).or_insert(new);
                }
                Err(e)
            }
        }
    }

    /// Where an unreadable file was moved when this store was loaded.
    pub fn damaged(&self) -> Option<&Path> {
        self.damaged.as_deref()
    }
}

/// Keys from before addresses under their new key: a book already kept
/// under the new one keeps its settings and adds the silence saved.
fn move_keys(books: &mut BTreeMap<String, BookSound>, moved: &BTreeMap<String, String>) {
    for (old, new) in moved {
        let Some(b) = books.remove(old) else {
            continue;
        };
        match books.get_mut(new) {
            Some(have) => have.silence_saved_sec += b.silence_saved_sec,
            None => {
                books.insert(new.clone(), b);
            }
        }
    }
}

fn apply(
    books: &mut BTreeMap<String, BookSound>,
    set: &BTreeMap<String, SoundSettings>,
    added: &BTreeMap<String, f64>,
) {
    for (k, v) in set {
        books.entry(k.clone()).or_default().settings = *v;
    }
    for (k, v) in added {
        books.entry(k.clone()).or_default().silence_saved_sec += v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_silence_saved_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        let s = SoundSettings {
            boost_db: 6.0,
            normalize: true,
            skip_silence: true,
        };
        let store = SoundBooks::load(path.clone());
        store.set("srv|u|b1".into(), s);
        assert!(!store.add_saved("srv|u|b1".into(), 10.0));
        assert!(
            store.add_saved("srv|u|b2".into(), 5.0),
            "15 s unsaved: write"
        );
        store.save().unwrap();
        let again = SoundBooks::load(path);
        assert_eq!(again.settings("srv|u|b1"), s);
        assert_eq!(again.saved("srv|u|b1"), (10.0, 15.0));
        assert_eq!(again.settings("other|u|b1"), SoundSettings::default());
    }

    #[test]
    fn a_books_sound_kept_under_an_address_is_read_for_the_server_and_account() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        let old = serde_json::json!({
            "http://nas:8686/api/v1|alice|b1": {"boostDb": 6.0, "silenceSavedSec": 4.0},
        });
        std::fs::write(&path, old.to_string()).unwrap();
        let owner = SoundOwner {
            login: Some(SoundLogin {
                server_id: ServerId::new("s"),
                user_id: UserId::from(3),
                addresses: vec![
                    BaseUrl::parse("https://vpn/nas").unwrap(),
                    BaseUrl::parse("nas").unwrap(),
                ],
                user: "alice".into(),
            }),
            profile: "home".into(),
        };
        let store = SoundBooks::load(path.clone());
        let key = store.key(&owner, &BookId::new("b1"));
        assert_eq!(key, "s|3|b1");
        assert_eq!(store.settings(&key).boost_db, 6.0);
        store.add_saved(key.clone(), 1.0);
        assert_eq!(store.saved(&key), (5.0, 5.0), "counted once");
        store.save().unwrap();
        let file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            file,
            serde_json::json!({"s|3|b1": {"boostDb": 6.0, "normalize": false,
                "skipSilence": false, "silenceSavedSec": 5.0}}),
            "moved in the file"
        );
    }

    #[test]
    fn a_damaged_file_is_moved_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        std::fs::write(&path, b"{\"srv|u|b1\": {\"boostDb\": ").unwrap();
        let store = SoundBooks::load(path.clone());
        assert_eq!(store.settings("srv|u|b1").boost_db, 0.0);
        let aside = std::fs::read(dir.path().join("sound.json.damaged")).unwrap();
        assert_eq!(aside, b"{\"srv|u|b1\": {\"boostDb\": ");
    }

    #[test]
    fn sound_config_names_a_value_out_of_range() {
        use crate::config::SoundConfig;
        assert_eq!(SoundConfig::default().check(), Ok(()));
        let c: crate::config::Config = toml::from_str("[sound]\nsilence_min_ms = 50\n").unwrap();
        let e = c.sound.unwrap().check().unwrap_err();
        assert!(e.contains("silence_min_ms = 50"), "{e}");
        assert!(toml::from_str::<crate::config::Config>("[sound]\nloud = 1\n").is_err());
    }

    #[test]
    fn a_file_that_cannot_be_read_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        // Reading a folder fails (EISDIR), as a file without permission would.
        let path = dir.path().join("sound.json");
        std::fs::create_dir(&path).unwrap();
        let store = SoundBooks::load(path.clone());
        store.set("srv|u|b1".into(), SoundSettings::default());
        let e = store.save().unwrap_err();
        assert!(e.contains("not overwriting"), "{e}");
        assert!(path.is_dir(), "left as it was");
        assert!(store.damaged().is_none());
    }

    #[test]
    fn two_stores_on_one_file_keep_each_others_changes() {
        // The player (a) runs while `earmark sound` (b) changes the file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        let boost = |b: f32| SoundSettings {
            boost_db: b,
            ..SoundSettings::default()
        };
        let a = SoundBooks::load(path.clone());
        let b = SoundBooks::load(path.clone());
        a.set("s|u|one".into(), boost(3.0));
        a.add_saved("s|u|one".into(), 5.0);
        b.set("s|u|two".into(), boost(6.0));
        b.save().unwrap();
        a.save().unwrap();
        // a saved last, yet b's book is there; and a now sees it too.
        assert_eq!(a.settings("s|u|two"), boost(6.0));
        b.add_saved("s|u|one".into(), 2.0);
        b.set("s|u|one".into(), boost(9.0));
        b.save().unwrap();
        a.add_saved("s|u|one".into(), 1.0);
        a.save().unwrap();
        let c = SoundBooks::load(path);
        assert_eq!(c.settings("s|u|one"), boost(9.0), "b set it after a");
        assert_eq!(c.settings("s|u|two"), boost(6.0));
        assert_eq!(c.saved("s|u|one").0, 8.0, "5 + 2 + 1: every count kept");
    }
}
