//! The progress read, three-valued and found by what the answer says, not
//! where it says it. A **candidate** is any object, at any depth (a bare
//! record, a wrapper, an item of a list), that names a chapter of this
//! book's manifest and carries a position-like number; an object naming
//! another book is not this book's. Exactly one candidate (or several
//! saying the same place) is the progress; an answer that is empty
//! (`null`, `{}`, `[]`, nulls, ids and status fields) is "no progress
//! yet"; anything else is `Unreadable`, never "none", so no caller can
//! mistake an unknown place for "start at the beginning".
//!
//! Keys are read by their words in any case style: a chapter key names a
//! chapter or track (`chapterId`, `track`, `chapter: {id}`), a position key
//! a position, offset, time, elapsed or played amount (`positionSec`,
//! `offset_s`, `currentTime`); `…Ms`, `…_ms`, `…Millis` are milliseconds.
//! A number under a key without a unit (`position`, `currentTime`) that is
//! beyond its chapter's length is not trusted as seconds.

use super::ENVELOPE_KEYS;
use super::fields::*;
use super::progress::{FINISHED_KEYS, decode_settings_object, progress_at};
use crate::domain::{BookId, ChapterId, Manifest, ManifestItem, PlaybackSettings, Progress};
use serde_json::Value;

/// What `GET /auth/reading-progress/{bookId}` said.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgressRead {
    /// The server holds this place (and maybe playback settings).
    Record {
        progress: Progress,
        settings: Option<PlaybackSettings>,
    },
    /// No progress yet: a 404 on the read, 204, `null`, `{}`, `[]` or an
    /// empty record. A valid answer: starting at the beginning is right.
    NoProgress { settings: Option<PlaybackSettings> },
    /// An answer we do not recognise. Nothing may be reported for the book
    /// while its place is unknown; `shape` says what arrived, for the log.
    Unreadable { shape: String },
}

impl ProgressRead {
    pub fn progress(&self) -> Option<&Progress> {
        match self {
            ProgressRead::Record { progress, .. } => Some(progress),
            _ => None,
        }
    }

    pub fn settings(&self) -> Option<&PlaybackSettings> {
        match self {
            ProgressRead::Record { settings, .. } | ProgressRead::NoProgress { settings } => {
                settings.as_ref()
            }
            ProgressRead::Unreadable { .. } => None,
        }
    }

    pub fn is_unreadable(&self) -> bool {
        matches!(self, ProgressRead::Unreadable { .. })
    }

    /// The two-valued state, `None` when the answer was unreadable.
    pub fn known(&self) -> Option<super::ProgressState> {
        match self {
            ProgressRead::Unreadable { .. } => None,
            other => Some(super::ProgressState {
                progress: other.progress().cloned(),
                settings: other.settings().cloned(),
            }),
        }
    }
}

const SETTINGS_KEYS: &[&str] = &["playbackSettings", "playback_settings", "settings"];
/// Words of a key that names a chapter (by id, or as an object with one).
const CHAPTER_WORDS: &[&str] = &["chapter", "track", "episode", "section"];
/// Words of a key that holds a place in the chapter.
const POSITION_WORDS: &[&str] = &[
    "position", "pos", "offset", "time", "elapsed", "played", "listened", "resume", "seek",
    "playhead",
];
/// Words that hold a place only with a unit (`progressSec`): alone they
/// may be a share of the book (`progress: 0.4`), never trusted as seconds.
const WEAK_POSITION_WORDS: &[&str] = &["progress", "current", "location", "loc"];
/// Words that make a key something else: a book-wide or total amount, a
/// length, an instant, a share, a count, a list index (never an id), a
/// title.
const NOT_A_PLACE: &[&str] = &[
    "book",
    "total",
    "duration",
    "length",
    "updated",
    "created",
    "modified",
    "timestamp",
    "date",
    "at",
    "start",
    "end",
    "remaining",
    "left",
    "percent",
    "pct",
    "percentage",
    "ratio",
    "fraction",
    "count",
    "index",
    "idx",
    "number",
    "num",
    "no",
    "title",
    "name",
    "url",
    "size",
    "zone",
    "utc",
    "tz",
    "update",
    "create",
    "modify",
    "last",
];
const MS_WORDS: &[&str] = &["ms", "millis", "milliseconds", "msec", "msecs"];
const SEC_WORDS: &[&str] = &["s", "sec", "secs", "second", "seconds"];
/// Words of keys that say nothing about a place: ids, envelope and status
/// fields, bookkeeping, the paging facts of a list.
const QUIET_WORDS: &[&str] = &[
    "id",
    "ids",
    "uuid",
    "code",
    "message",
    "msg",
    "success",
    "ok",
    "status",
    "timestamp",
    "request",
    "trace",
    "revision",
    "updated",
    "created",
    "modified",
    "device",
    "version",
    "user",
    "server",
    "total",
    "count",
    "page",
    "pages",
    "size",
    "limit",
    "has",
    "more",
    "next",
    "prev",
    "previous",
    "first",
    "last",
    "number",
    "elements",
    "empty",
    "sorted",
];
/// Nesting looked into.
const MAX_DEPTH: u8 = 8;

fn has(words: &[String], set: &[&str]) -> bool {
    words.iter().any(|w| set.contains(&w.as_str()))
}

/// A key naming this book (`bookId`, `book_id`).
fn book_key(w: &[String]) -> bool {
    w.len() == 2 && w[0] == "book" && matches!(w[1].as_str(), "id" | "uuid")
}

fn chapter_key(w: &[String]) -> bool {
    has(w, CHAPTER_WORDS) && !has(w, NOT_A_PLACE) && !has(w, POSITION_WORDS)
}

fn position_key(w: &[String]) -> bool {
    let unit = has(w, MS_WORDS) || has(w, SEC_WORDS);
    let place =
        has(w, POSITION_WORDS) || (has(w, WEAK_POSITION_WORDS) && unit) || (unit && w.len() == 1);
    place && !has(w, NOT_A_PLACE)
}

/// What the answer is read against.
#[derive(Default)]
struct Ctx<'a> {
    book: Option<&'a BookId>,
    /// The chapters (and lengths) of the book; `None`: not known here.
    manifest: Option<&'a Manifest>,
}

/// What a walk over the answer found.
#[derive(Default)]
struct Found {
    candidates: Vec<Progress>,
    /// Why the answer is not simply empty, when it is not (first reason).
    said: Option<&'static str>,
}

impl Found {
    fn say(&mut self, why: &'static str) {
        self.said.get_or_insert(why);
    }
}

/// Decode the answer to a progress read of `book`, whose manifest is
/// `manifest`. Never fails: what it cannot read is `Unreadable`.
pub fn decode_progress_read(v: &Value, book: &BookId, manifest: &Manifest) -> ProgressRead {
    read(
        v,
        &Ctx {
            book: Some(book),
            manifest: Some(manifest),
        },
    )
}

/// The place a write's answer holds, when it holds exactly one: read
/// without the manifest (any chapter id counts, lengths unchecked).
pub fn progress_in_answer(v: &Value) -> Option<Progress> {
    read(v, &Ctx::default()).progress().cloned()
}

/// True when the answer says nothing at all: no record can be in it.
pub fn says_nothing(v: &Value) -> bool {
    matches!(read(v, &Ctx::default()), ProgressRead::NoProgress { .. })
}

fn read(v: &Value, ctx: &Ctx<'_>) -> ProgressRead {
    let unreadable = |why: &str| ProgressRead::Unreadable {
        shape: format!("{why}: {}", describe_shape(v)),
    };
    let settings = find_settings(v, 3);
    let mut content = v;
    for _ in 0..3 {
        match content.as_object().and_then(|o| {
            let keys: Vec<&String> = o.keys().filter(|k| !o[*k].is_null()).collect();
            let env = ENVELOPE_KEYS.iter().find_map(|k| o.get(*k))?;
            // `{"code": 0, "data": 7}`: an envelope around a plain value.
            keys.iter()
                .all(|k| ENVELOPE_KEYS.contains(&k.as_str()) || has(&key_words(k), QUIET_WORDS))
                .then_some(env)
        }) {
            Some(inner) => content = inner,
            None => break,
        }
    }
    match content {
        Value::Null | Value::Object(_) | Value::Array(_) => {}
        _ => return unreadable("a plain value where a record was expected"),
    }
    let mut found = Found::default();
    walk(content, ctx, &mut found, MAX_DEPTH, false);
    let mut places: Vec<Progress> = Vec::new();
    for c in found.candidates {
        if !places
            .iter()
            .any(|p| p.chapter_id == c.chapter_id && (p.position - c.position).abs() < 0.5)
        {
            places.push(c);
        }
    }
    match (places.as_slice(), found.said) {
        ([one], _) => ProgressRead::Record {
            progress: one.clone(),
            settings,
        },
        ([], None) => ProgressRead::NoProgress { settings },
        ([], Some(why)) => unreadable(why),
        _ => unreadable("several places for this book"),
    }
}

/// Looks at every object for candidates and notes what else says
/// something; `in_list`: `v` is an item of a list.
fn walk(v: &Value, ctx: &Ctx<'_>, found: &mut Found, depth: u8, in_list: bool) {
    if depth == 0 {
        return found.say("an answer nested deeper than earmark looks");
    }
    match v {
        Value::Array(a) => {
            for x in a {
                walk(x, ctx, found, depth - 1, true);
            }
        }
        Value::Object(o) => {
            if let Some(other) = other_book(o, ctx) {
                // Another book's record in a list is no concern of this
                // one; an answer about another book is not understood.
                if !in_list {
                    found.say(other);
                }
                return;
            }
            // A candidate's own fields are its record; anything else is
            // looked at key by key.
            let own = match candidate(o, ctx) {
                Ok(Some(p)) => {
                    found.candidates.push(p);
                    true
                }
                Ok(None) => false,
                Err(why) => {
                    found.say(why);
                    false
                }
            };
            for (k, x) in o {
                if SETTINGS_KEYS.contains(&k.as_str()) {
                    continue;
                }
                match x {
                    Value::Object(_) | Value::Array(_) => walk(x, ctx, found, depth - 1, false),
                    _ if own => {}
                    _ => quiet_or_not(k, x, found),
                }
            }
        }
        Value::Null => {}
        _ => found.say("a plain value in a list"),
    }
}

/// A scalar outside any candidate: nulls, ids, status fields and a
/// `finished: false` say nothing; anything else is not understood.
fn quiet_or_not(key: &str, v: &Value, found: &mut Found) {
    if v.is_null() {
        return;
    }
    let w = key_words(key);
    if FINISHED_KEYS.contains(&key) {
        if boolean_value(v) != Some(false) {
            found.say("a finished book without a place");
        }
    } else if chapter_key(&w) {
        found.say("a chapter that is not in this book's manifest");
    } else if position_key(&w) {
        // A 0 without a chapter is no place (a list's `offset: 0`).
        if number_value(v) != Some(0.0) {
            found.say("a position without a chapter of this book");
        }
    } else if !has(&w, QUIET_WORDS) && !book_key(&w) {
        found.say("an answer earmark does not recognise as progress");
    }
}

/// The reason an object is another book's, when it names one.
fn other_book(o: &Obj, ctx: &Ctx<'_>) -> Option<&'static str> {
    let book = ctx.book?;
    o.iter()
        .filter(|(k, _)| book_key(&key_words(k)))
        .filter_map(|(_, v)| id_value(v))
        .any(|id| id != book.as_str())
        .then_some("a record of another book")
}

/// The chapter an object names: the value of a chapter key (an id, or an
/// object with an `id`, returned too) that is a chapter of the manifest.
/// `Err` when it names chapters, none of them this book's.
fn chapter_of<'a>(
    o: &'a Obj,
    ctx: &Ctx<'_>,
) -> Result<Option<(ChapterId, Option<&'a Obj>)>, &'static str> {
    let mut named = false;
    for (k, v) in o {
        if !chapter_key(&key_words(k)) {
            continue;
        }
        let (id, inner) = match v {
            Value::Object(c) => (
                get(c, &["id", "chapterId", "chapter_id", "uuid"]).and_then(id_value),
                Some(c),
            ),
            other => (id_value(other), None),
        };
        let Some(id) = id else { continue };
        named = true;
        let id = ChapterId::new(id);
        match ctx.manifest {
            Some(m) if m.item(&id).is_none() => {}
            _ => return Ok(Some((id, inner))),
        }
    }
    if named {
        Err("a chapter that is not in this book's manifest")
    } else {
        Ok(None)
    }
}

/// What the manifest says of a chapter's length, to judge a position
/// whose key names no unit.
#[derive(Debug, Clone, Copy)]
enum Length {
    Secs(f64),
    /// The server gives none: a bare position is taken as seconds.
    NotGiven,
    /// The server gives a number without a unit that earmark has not read
    /// yet: a bare position cannot be judged either.
    Unread,
}

/// The places an object's position keys give, in seconds: `Err` when a
/// value is not a number or cannot be seconds in a chapter `length` long.
fn positions(o: &Obj, length: Length) -> Result<Vec<f64>, &'static str> {
    let mut out = Vec::new();
    for (k, v) in o {
        let w = key_words(k);
        if !position_key(&w) || v.is_null() {
            continue;
        }
        let raw = match v {
            Value::String(s) => clock_seconds(s),
            other => number_value(other),
        }
        .filter(|n| *n >= 0.0)
        .ok_or("a position that is not a number")?;
        let secs = if has(&w, MS_WORDS) { raw / 1000.0 } else { raw };
        // A key without a unit is taken as seconds only where seconds fit
        // (a little slack: a length and a position are measured apart).
        let bare = !has(&w, MS_WORDS) && !has(&w, SEC_WORDS);
        match length {
            Length::Secs(l) if bare && secs > l + 1.0 + l * 0.01 => {
                return Err("a position beyond the chapter's length (not trusted as seconds)");
            }
            Length::Unread if bare => {
                return Err(
                    "a position without a unit in a chapter whose length names none either (not trusted as seconds)",
                );
            }
            _ => {}
        }
        out.push(secs);
    }
    Ok(out)
}

/// `Ok(Some)`: this object is a candidate; `Ok(None)`: it names no place
/// of this book; `Err`: it names one that cannot be read safely.
fn candidate(o: &Obj, ctx: &Ctx<'_>) -> Result<Option<Progress>, &'static str> {
    // None: reported by the scalars it holds (a position without a chapter).
    let Some((chapter, inner)) = chapter_of(o, ctx)? else {
        return Ok(None);
    };
    let length = match ctx.manifest.and_then(|m| m.item(&chapter)) {
        Some(i) if i.duration_source.unchecked().is_some() => Length::Unread,
        Some(ManifestItem {
            duration: Some(l), ..
        }) => Length::Secs(*l),
        _ => Length::NotGiven,
    };
    let mut places = positions(o, length)?;
    if let (true, Some(c)) = (places.is_empty(), inner) {
        // `{"chapter": {"id": …, "position": …}}`
        places = positions(c, length)?;
    }
    let Some(&position) = places.first() else {
        return Err("a chapter without a position");
    };
    if places.iter().any(|p| (p - position).abs() > 1.0) {
        return Err("positions that disagree");
    }
    Ok(Some(progress_at(o, chapter, position)))
}

/// Playback settings under a settings key, at the top or in envelopes.
fn find_settings(v: &Value, depth: u8) -> Option<PlaybackSettings> {
    let o = v.as_object()?;
    if let Some(s) = get(o, SETTINGS_KEYS) {
        return decode_settings_lenient(s);
    }
    if depth == 0 {
        return None;
    }
    ENVELOPE_KEYS
        .iter()
        .filter_map(|k| o.get(*k))
        .find_map(|x| find_settings(x, depth - 1))
}

/// Playback settings as far as they can be read: no speed (or no object)
/// means no settings; unknown fields are ignored. Never an error.
pub fn decode_settings_lenient(v: &Value) -> Option<PlaybackSettings> {
    decode_settings_object(v, "").ok().flatten()
}

/// A short skeleton of a JSON value for the log: keys and kinds, never the
/// values (they may be personal), at most two levels and ~200 characters.
pub fn describe_shape(v: &Value) -> String {
    let mut s = String::new();
    shape_into(v, 2, &mut s);
    if s.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(0);
        s.truncate(cut);
        s.push('…');
    }
    s
}

fn shape_into(v: &Value, depth: u8, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(_) => out.push_str("bool"),
        Value::Number(_) => out.push_str("number"),
        Value::String(_) => out.push_str("string"),
        Value::Array(a) => {
            out.push_str(&format!(
                "[{} item{}",
                a.len(),
                if a.len() == 1 { "" } else { "s" }
            ));
            if let (Some(first), true) = (a.first(), depth > 0) {
                out.push_str(" like ");
                shape_into(first, depth - 1, out);
            }
            out.push(']');
        }
        Value::Object(o) if depth == 0 => out.push_str(&format!("{{{} keys}}", o.len())),
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().take(8).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                shape_into(x, depth - 1, out);
            }
            if o.len() > 8 {
                out.push_str(", …");
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests;
