//! Decoding of progress, playback settings, batch results and bookmarks.

use super::fields::*;
use super::{content, error_parts, find_list, missing, object};
use crate::api::error::ApiError;
use crate::domain::*;
use serde_json::Value;

// ---------------------------------------------------------------- progress

/// Progress and playback settings of one book as the server has them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProgressState {
    pub progress: Option<Progress>,
    pub settings: Option<PlaybackSettings>,
}

/// The answer to a progress or settings write.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOutcome<T> {
    /// Whether the server applied this write (`true` when it does not say).
    pub applied: bool,
    /// The merged record the server now holds, when it returned one.
    pub record: Option<T>,
}

pub(super) const POSITION_SEC: &[&str] = &[
    "positionSec",
    "position_sec",
    "position",
    "currentTime",
    "offset",
    "progressSec",
];
pub(super) const POSITION_MS: &[&str] = &["positionMs", "position_ms", "currentTimeMs"];

/// A progress object; `Ok(None)` for an empty object.
pub fn decode_progress_object(v: &Value, endpoint: &str) -> Result<Option<Progress>, ApiError> {
    if v.is_null() {
        return Ok(None);
    }
    let obj = object(v, endpoint, "progress")?;
    if obj.is_empty() {
        return Ok(None);
    }
    let cid = id(obj, &["chapterId", "chapter_id", "chapterID"])
        .ok_or_else(|| missing(endpoint, "progress.chapterId"))?;
    let position = seconds(obj, POSITION_SEC, POSITION_MS)
        .ok_or_else(|| missing(endpoint, "progress.positionSec"))?;
    Ok(Some(progress_at(obj, ChapterId::new(cid), position)))
}

pub(super) const FINISHED_KEYS: &[&str] = &["finished", "isFinished", "completed", "done"];

/// The record of a place (`chapter`, `position`) found in `obj`: the rest
/// of its fields as `obj` has them.
pub(super) fn progress_at(obj: &Obj, chapter: ChapterId, position: f64) -> Progress {
    Progress {
        chapter_id: chapter,
        position,
        book_position: seconds(
            obj,
            &["bookPositionSec", "book_position_sec", "bookPosition"],
            &["bookPositionMs"],
        ),
        finished: boolean(obj, FINISHED_KEYS).unwrap_or(false),
        client_updated_at: instant_millis(
            obj,
            &[
                "clientUpdatedAt",
                "client_updated_at",
                "updatedAt",
                "updated_at",
            ],
        ),
        server_updated_at: instant_millis(obj, &["serverUpdatedAt", "server_updated_at"]),
    }
}

pub fn decode_settings_object(
    v: &Value,
    _endpoint: &str,
) -> Result<Option<PlaybackSettings>, ApiError> {
    let Some(obj) = v.as_object() else {
        return Ok(None);
    };
    // No speed (or an unknown shape) means no settings, never a failed read.
    let Some(speed) = number(obj, &["speed", "playbackRate", "rate", "playbackSpeed"])
        .filter(|s| *s > 0.0 && *s <= 16.0)
    else {
        return Ok(None);
    };
    Ok(Some(PlaybackSettings {
        speed: speed as f32,
        volume: number(obj, &["volume"]).map(|v| v as f32),
        client_updated_at: instant_millis(
            obj,
            &["clientUpdatedAt", "client_updated_at", "updatedAt"],
        ),
    }))
}

/// The answer to a write: `{applied, …record}`, a bare record, or an
/// empty body; `applied` is `true` when it does not say.
fn decode_write<T>(
    v: &Value,
    record: impl FnOnce(&Value, &Obj) -> Result<Option<T>, ApiError>,
) -> Result<WriteOutcome<T>, ApiError> {
    let c = content(v);
    let Some(obj) = c.as_object() else {
        return Ok(WriteOutcome {
            applied: true,
            record: None,
        });
    };
    let applied = boolean(obj, &["applied", "accepted", "updated"]).unwrap_or(true);
    let record = record(c, obj)?;
    Ok(WriteOutcome { applied, record })
}

pub fn decode_progress_write(
    v: &Value,
    _endpoint: &str,
) -> Result<WriteOutcome<Progress>, ApiError> {
    // The write went through; a record we cannot read is "not said".
    decode_write(v, |c, _| Ok(super::progress_in_answer(c)))
}

pub fn decode_settings_write(
    v: &Value,
    endpoint: &str,
) -> Result<WriteOutcome<PlaybackSettings>, ApiError> {
    decode_write(v, |c, obj| {
        let settings = get(obj, &["playbackSettings", "playback_settings", "settings"]);
        decode_settings_object(settings.unwrap_or(c), endpoint)
    })
}

/// One result of a batch progress write.
#[derive(Debug, Clone)]
pub struct BatchResult {
    pub book_id: Option<BookId>,
    pub outcome: Result<WriteOutcome<Progress>, ApiError>,
}

pub fn decode_batch(
    v: &Value,
    endpoint: &str,
    address: &str,
) -> Result<Vec<BatchResult>, ApiError> {
    let c = content(v);
    let list = find_list(c, endpoint)?;
    Ok(list
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let ep = format!("{endpoint} results[{i}]");
            let obj = item.as_object();
            let book_id = obj
                .and_then(|o| id(o, &["bookId", "book_id", "id"]))
                .map(BookId::new);
            let status = obj
                .and_then(|o| unsigned(o, &["status", "statusCode"]))
                .unwrap_or(200) as u16;
            // Each result is read as an answer of its own: a failure it
            // reports in any shape is that error.
            let outcome = if status >= 400 {
                let (code, message) = error_parts(item);
                Err(ApiError::from_status(status, code, message, address))
            } else if let Some((st, code, message)) = super::envelope_error(item) {
                Err(ApiError::from_status(st, code, message, address))
            } else {
                decode_progress_write(item, &ep)
            };
            BatchResult { book_id, outcome }
        })
        .collect())
}

// ---------------------------------------------------------------- bookmarks

pub fn decode_bookmark(
    v: &Value,
    book: Option<&BookId>,
    endpoint: &str,
) -> Result<Bookmark, ApiError> {
    let c = content(v);
    let obj = object(c, endpoint, "bookmark")?;
    let bid = id(obj, &["id", "bookmarkId", "bookmark_id", "uuid"])
        .ok_or_else(|| missing(endpoint, "id"))?;
    let book_id = id(obj, &["bookId", "book_id"])
        .map(BookId::new)
        .or_else(|| book.cloned())
        .ok_or_else(|| missing(endpoint, "bookId"))?;
    let chapter =
        id(obj, &["chapterId", "chapter_id"]).ok_or_else(|| missing(endpoint, "chapterId"))?;
    Ok(Bookmark {
        id: BookmarkId::new(bid),
        book_id,
        chapter_id: ChapterId::new(chapter),
        position: seconds(obj, POSITION_SEC, POSITION_MS).unwrap_or(0.0),
        note: string(obj, &["note", "text", "comment", "title"]),
        created_at: instant_millis(obj, &["createdAt", "created_at", "createdTime"]),
    })
}
