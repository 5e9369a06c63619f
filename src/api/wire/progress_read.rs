//! The progress read, three-valued: a record, "no progress yet", or an
//! answer we cannot read. Unknown is never none: a shape we do not
//! recognise is `Unreadable` (with a short description of the raw shape for
//! the log), so no caller can mistake it for "start at the beginning".

use super::ENVELOPE_KEYS;
use super::fields::*;
use super::progress::{POSITION_MS, POSITION_SEC, decode_progress_object, decode_settings_object};
use crate::domain::{PlaybackSettings, Progress};
use serde_json::Value;

/// What `GET /auth/reading-progress/{bookId}` said.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgressRead {
    /// The server holds this place (and maybe playback settings).
    Record {
        progress: Progress,
        settings: Option<PlaybackSettings>,
    },
    /// No progress yet: a 404 on the read, 204, `null`, `{}` or an empty
    /// record. A valid answer: starting at the beginning is right.
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

const CHAPTER_KEYS: &[&str] = &["chapterId", "chapter_id", "chapterID"];
const SETTINGS_KEYS: &[&str] = &["playbackSettings", "playback_settings", "settings"];
/// Keys that may wrap a progress record. Mapped only when exactly one is
/// present and it holds a chapter id and a position.
const WRAPPERS: &[&str] = &[
    "progress",
    "readingProgress",
    "reading_progress",
    "lastProgress",
    "last_progress",
    "record",
    "listeningProgress",
];
/// Keys that say nothing about a place: an object holding only these (and
/// null values) is an empty record.
const HARMLESS: &[&str] = &[
    "bookId",
    "book_id",
    "userId",
    "user_id",
    "code",
    "message",
    "msg",
    "success",
    "ok",
    "status",
    "timestamp",
    "requestId",
    "request_id",
    "traceId",
    "updatedAt",
    "updated_at",
    "serverUpdatedAt",
    "revision",
    "deviceId",
];

/// Decode the answer to a progress read. Never fails: what it cannot read
/// is `Unreadable`.
pub fn decode_progress_read(v: &Value) -> ProgressRead {
    let unreadable = |why: &str| ProgressRead::Unreadable {
        shape: format!("{why}: {}", describe_shape(v)),
    };
    let mut cur = v;
    for _ in 0..3 {
        let Some(o) = cur.as_object() else { break };
        if get(o, CHAPTER_KEYS).is_some() || WRAPPERS.iter().any(|k| o.contains_key(*k)) {
            break;
        }
        match ENVELOPE_KEYS.iter().find_map(|k| o.get(*k)) {
            Some(Value::Null) => return ProgressRead::NoProgress { settings: None },
            Some(inner @ Value::Object(_)) => cur = inner,
            Some(Value::Array(_)) => return unreadable("a list where one record was expected"),
            Some(_) => return unreadable("a plain value where a record was expected"),
            None => break,
        }
    }
    let obj = match cur {
        Value::Null => return ProgressRead::NoProgress { settings: None },
        Value::Object(o) => o,
        Value::Array(_) => return unreadable("a list where one record was expected"),
        _ => return unreadable("a plain value where a record was expected"),
    };
    let settings = get(obj, SETTINGS_KEYS).and_then(decode_settings_lenient);
    let wrappers: Vec<(&str, &Value)> = WRAPPERS
        .iter()
        .filter_map(|k| obj.get(*k).map(|v| (*k, v)))
        .filter(|(_, v)| !v.is_null())
        .collect();
    let record = match wrappers.as_slice() {
        [] if WRAPPERS.iter().any(|k| obj.contains_key(*k)) => {
            return ProgressRead::NoProgress { settings };
        }
        [] => record_of(obj, true),
        [(_, Value::Object(inner))] => match record_of(inner, false) {
            // `{"record": {"progress": {…}}}`: one more level, same rules.
            Err(_) if WRAPPERS.iter().any(|k| inner.contains_key(*k)) => {
                match decode_progress_read(&Value::Object(inner.clone())) {
                    ProgressRead::Record { progress, .. } => Ok(Some(progress)),
                    ProgressRead::NoProgress { .. } => Ok(None),
                    ProgressRead::Unreadable { .. } => Err("a nested progress object"),
                }
            }
            other => other,
        },
        [(_, _)] => Err("a progress key that holds no object"),
        _ => Err("several progress keys"),
    };
    match record {
        Ok(Some(progress)) => ProgressRead::Record { progress, settings },
        Ok(None) => ProgressRead::NoProgress { settings },
        Err(why) => unreadable(why),
    }
}

/// A record in `o`: `Ok(Some)` with a chapter id and a position, `Ok(None)`
/// when empty, `Err` when it holds something we cannot map safely.
fn record_of(o: &Obj, top: bool) -> Result<Option<Progress>, &'static str> {
    let chapter = get(o, CHAPTER_KEYS).is_some();
    let position = seconds(o, POSITION_SEC, POSITION_MS).is_some();
    match (chapter, position) {
        (true, true) => {
            return decode_progress_object(&Value::Object(o.clone()), "")
                .map_err(|_| "a progress record we cannot read");
        }
        (true, false) => return Err("a progress object without a position"),
        (false, true) => return Err("a progress object without a chapterId"),
        (false, false) => {}
    }
    let finished = boolean(o, &["finished", "isFinished", "completed", "done"]) == Some(true);
    let place_keys = CHAPTER_KEYS
        .iter()
        .chain(POSITION_SEC)
        .chain(POSITION_MS)
        .chain(
            [
                "finished",
                "isFinished",
                "completed",
                "done",
                "bookPositionSec",
            ]
            .iter(),
        );
    let place_keys: Vec<&str> = place_keys.copied().collect();
    let known = |k: &str| {
        place_keys.contains(&k)
            || HARMLESS.contains(&k)
            || (top && (SETTINGS_KEYS.contains(&k) || ENVELOPE_KEYS.contains(&k)))
    };
    let unknown = o.iter().any(|(k, v)| !v.is_null() && !known(k));
    if finished {
        Err("a finished book without a place")
    } else if unknown {
        Err("an object earmark does not recognise as progress")
    } else {
        Ok(None)
    }
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
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> ProgressRead {
        decode_progress_read(&v)
    }

    #[test]
    fn every_no_progress_answer_is_none() {
        for v in [
            json!(null),
            json!({}),
            json!({"data": null}),
            json!({"data": {}}),
            json!({"code": 0, "data": null, "msg": "ok"}),
            json!({"data": {"bookId": "b", "progress": null, "playbackSettings": null}}),
            json!({"data": {"bookId": "b", "chapterId": null, "positionSec": null}}),
            json!({"lastProgress": null}),
            json!({"progress": {}}),
        ] {
            assert!(
                matches!(read(v.clone()), ProgressRead::NoProgress { .. }),
                "{v}"
            );
        }
    }

    #[test]
    fn unrecognised_progress_shapes_are_unreadable_not_none() {
        for v in [
            json!({"data": [{"chapterId": "c", "positionSec": 5}]}),
            json!([{"chapterId": "c", "positionSec": 5}]),
            json!({"lastProgress": {"chapter": 3, "seconds": 5}}),
            json!({"record": {"track": "c", "pos": 5}}),
            json!({"data": {"state": {"chapterId": "c", "positionSec": 5}}}),
            json!({"progress": {"positionSec": 3}}),
            json!({"progress": {"chapterId": "c"}}),
            json!({"progress": {"chapterId": "c", "positionSec": 1}, "lastProgress": {"chapterId": "d", "positionSec": 2}}),
            json!({"data": {"finished": true}}),
            json!({"data": "c:5"}),
        ] {
            let r = read(v.clone());
            let ProgressRead::Unreadable { shape } = &r else {
                panic!("{v} read as {r:?}");
            };
            assert!(!shape.is_empty());
        }
        let ProgressRead::Unreadable { shape } = read(json!({"data": [1, 2, 3]})) else {
            panic!()
        };
        assert!(shape.contains("[3 items"), "{shape}");
    }

    #[test]
    fn wrappers_holding_a_chapter_and_position_are_mapped() {
        for v in [
            json!({"data": {"lastProgress": {"chapterId": "c", "positionSec": 5}}}),
            json!({"record": {"chapter_id": "c", "positionMs": 5000}}),
            json!({"data": {"progress": {"chapterId": "c", "position": 5, "extra": [1]}}}),
            json!({"record": {"progress": {"chapterId": "c", "positionSec": 5}}}),
            json!({"chapterId": "c", "positionSec": 5, "bookId": "b"}),
        ] {
            let p = read(v.clone())
                .progress()
                .cloned()
                .unwrap_or_else(|| panic!("{v}"));
            assert_eq!((p.chapter_id.as_str(), p.position), ("c", 5.0), "{v}");
        }
    }

    #[test]
    fn settings_without_speed_or_with_unknown_fields_never_fail_the_read() {
        let v = json!({"data": {"progress": {"chapterId": "c", "positionSec": 5},
            "playbackSettings": {"volume": 0.5, "eq": "rock"}}});
        let r = read(v);
        assert!(r.progress().is_some());
        assert!(r.settings().is_none());
        let v = json!({"data": {"progress": null, "playbackSettings": {"speed": 1.5, "pitch": 2}}});
        assert_eq!(read(v).settings().unwrap().speed, 1.5);
    }
}
