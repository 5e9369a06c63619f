//! Tolerant decoding of server payloads into domain types. Pure: bytes and
//! `serde_json::Value` in, domain types or typed errors out; no I/O.
//!
//! Written against docs/contract.md, but a real server's shapes are "not
//! shown", so every decoder accepts the variants listed in the section
//! "What the client tolerates" of that file.

pub mod audio_head;
mod errors;
pub mod fields;
mod paging;
mod progress;
mod progress_read;
mod series;
#[cfg(test)]
mod tests;

use crate::api::error::{ApiError, BodyKind};
use crate::domain::*;
use fields::*;
use serde_json::Value;

pub use errors::*;
pub use paging::*;
pub use progress::*;
pub use progress_read::*;

/// Keys whose object value is a wrapper around the content.
const ENVELOPE_KEYS: &[&str] = &["data", "result", "payload", "response"];
/// Keys only a record has; an object with one is content, not a wrapper.
const RECORD_KEYS: &[&str] = &[
    "id",
    "bookId",
    "book_id",
    "chapterId",
    "chapter_id",
    "title",
];

// ---------------------------------------------------------------- bodies

/// Parse a response body as JSON, recognising gateway HTML pages and empty
/// bodies. A leading UTF-8 BOM is skipped.
pub fn parse_body(content_type: Option<&str>, body: &[u8]) -> Result<Value, BodyKind> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        return Err(BodyKind::Empty);
    }
    if trimmed.starts_with(b"<") {
        return Err(BodyKind::Html);
    }
    match serde_json::from_slice(&quote_big_integers(trimmed)) {
        Ok(v) => Ok(v),
        Err(_) if content_type.is_some_and(|c| c.contains("html")) => Err(BodyKind::Html),
        Err(_) => Err(BodyKind::Garbage),
    }
}

/// JSON text with every integer that no 64-bit integer holds written as a
/// string of its digits: serde_json would read it as a float and lose
/// digits, and an id is kept exactly as sent (a number field still reads
/// the string as a number). Borrowed unchanged when there is none.
pub fn quote_big_integers(json: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    while i < json.len() {
        let b = json[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if !(b == b'-' || b.is_ascii_digit()) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < json.len() && matches!(json[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
            i += 1;
        }
        let token = &json[start..i];
        if token.len() <= 18 {
            continue; // 18 digits always fit
        }
        let integer = token.iter().skip(1).all(u8::is_ascii_digit)
            && (token[0] == b'-' || token[0].is_ascii_digit());
        let fits = std::str::from_utf8(token)
            .is_ok_and(|t| t.parse::<u64>().is_ok() || t.parse::<i64>().is_ok());
        if integer && !fits {
            let o = out.get_or_insert_with(|| Vec::with_capacity(json.len() + 8));
            o.extend_from_slice(&json[copied..start]);
            o.push(b'"');
            o.extend_from_slice(token);
            o.push(b'"');
            copied = i;
        }
    }
    match out {
        Some(mut o) => {
            o.extend_from_slice(&json[copied..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(json),
    }
}

/// The content of a response: descends through `data`/`result`/… wrappers
/// that hold an object, but not out of an object that is itself a record
/// (has an id or a title).
pub fn content(v: &Value) -> &Value {
    let mut cur = v;
    for _ in 0..3 {
        let Some(obj) = cur.as_object() else { break };
        // A record that happens to have a `data` field is not an envelope.
        if RECORD_KEYS
            .iter()
            .any(|k| obj.get(*k).is_some_and(|v| !v.is_null()))
        {
            break;
        }
        match ENVELOPE_KEYS
            .iter()
            .filter_map(|k| obj.get(*k))
            .find(|d| d.is_object() || d.is_array())
        {
            Some(inner) if inner.is_object() => cur = inner,
            _ => break,
        }
    }
    cur
}

fn object<'a>(v: &'a Value, endpoint: &str, what: &str) -> Result<&'a Obj, ApiError> {
    v.as_object().ok_or_else(|| ApiError::Decode {
        endpoint: endpoint.to_owned(),
        field: what.to_owned(),
        problem: format!("is not an object (got {})", kind_of(v)),
    })
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn missing(endpoint: &str, field: &str) -> ApiError {
    ApiError::Decode {
        endpoint: endpoint.to_owned(),
        field: field.to_owned(),
        problem: "is missing".to_owned(),
    }
}

// ---------------------------------------------------------------- login

/// What a login answer carries.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginData {
    pub token: crate::api::Token,
    pub server_id: ServerId,
    pub user_id: UserId,
    pub user_name: Option<String>,
}

impl LoginData {
    /// What the calls of this login carry.
    pub fn auth(&self) -> crate::api::Auth {
        crate::api::Auth {
            token: self.token.clone(),
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
        }
    }
}

/// Keys that may carry the token of a login answer.
pub const TOKEN_KEYS: &[&str] = &["token", "accessToken", "access_token", "jwt", "authToken"];

fn find_token(v: &Value, depth: u8) -> Option<String> {
    let obj = v.as_object()?;
    if let Some(t) = TOKEN_KEYS
        .iter()
        .filter_map(|k| obj.get(*k))
        .find_map(|t| t.as_str().filter(|s| !s.trim().is_empty()))
    {
        return Some(t.to_owned());
    }
    if depth == 0 {
        return None;
    }
    obj.values().find_map(|child| find_token(child, depth - 1))
}

pub fn decode_login(v: &Value, endpoint: &str) -> Result<LoginData, ApiError> {
    let token = find_token(v, 3).ok_or_else(|| missing(endpoint, "data.token"))?;
    let c = content(v);
    let data = object(c, endpoint, "data")?;
    let top = v.as_object();
    let server_keys = ["serverId", "server_id", "instanceId", "serverID"];
    let server_id = id(data, &server_keys)
        .or_else(|| top.and_then(|t| id(t, &server_keys)))
        .or_else(|| {
            data.get("server")
                .and_then(Value::as_object)
                .and_then(|s| id(s, &["id", "serverId"]))
        })
        .ok_or_else(|| missing(endpoint, "data.serverId"))?;
    let user = data.get("user").and_then(Value::as_object);
    let raw_uid = user
        .and_then(|u| get(u, &["id", "userId", "user_id", "uid"]))
        .or_else(|| get(data, &["userId", "user_id", "uid"]))
        .ok_or_else(|| missing(endpoint, "data.user.id"))?;
    // The server's digits exactly: `"0042"` stays `0042`.
    let user_id = match raw_uid {
        Value::Number(n) => n.as_u64().map(UserId::from),
        Value::String(s) => UserId::parse(s),
        _ => None,
    }
    .ok_or_else(|| ApiError::Decode {
        endpoint: endpoint.to_owned(),
        field: "data.user.id".to_owned(),
        problem: format!("is not a number ({raw_uid})"),
    })?;
    let user_name = user
        .and_then(|u| string(u, &["username", "userName", "name", "login"]))
        .or_else(|| string(data, &["username", "userName"]));
    Ok(LoginData {
        token: crate::api::Token::new(token),
        server_id: ServerId::new(server_id),
        user_id,
        user_name,
    })
}

// ---------------------------------------------------------------- license

pub fn decode_license(v: &Value, endpoint: &str) -> Result<LicenseStatus, ApiError> {
    let c = content(v);
    let obj = object(c, endpoint, "data")?;
    let obj = obj.get("license").and_then(Value::as_object).unwrap_or(obj);
    let word = string(obj, &["status", "state", "licenseStatus"]).map(|s| s.to_ascii_lowercase());
    let flag = boolean(obj, &["valid", "isValid", "licensed", "active", "ok"]);
    let state = match (word.as_deref(), flag) {
        (Some("valid" | "active" | "ok" | "licensed" | "true"), _) => LicenseState::Valid,
        (Some("expired"), _) => LicenseState::Expired,
        (Some("missing" | "none" | "unlicensed" | "absent"), _) => LicenseState::Missing,
        (Some(_), Some(true)) => LicenseState::Valid,
        (Some(_), _) => LicenseState::Invalid,
        (None, Some(true)) => LicenseState::Valid,
        (None, Some(false)) => LicenseState::Invalid,
        (None, None) => return Err(missing(endpoint, "data.status")),
    };
    Ok(LicenseStatus {
        state,
        valid: flag.unwrap_or(state == LicenseState::Valid),
        message: string(obj, &["message", "msg", "detail", "description"]),
    })
}

// ---------------------------------------------------------------- books

const BOOK_ID_KEYS: &[&str] = &["id", "bookId", "book_id", "uuid", "bookID"];

/// Authors or narrators; a shape that names no one is logged and read as
/// unknown (no names), never guessed.
fn people_or_warn(obj: &Obj, keys: &[&str]) -> Vec<String> {
    people(obj, keys).unwrap_or_else(|| {
        if let Some((key, v)) = keys
            .iter()
            .find_map(|k| obj.get(*k).filter(|v| !v.is_null()).map(|v| (k, v)))
        {
            let raw: String = v.to_string().chars().take(300).collect();
            tracing::warn!("book field {key} has a shape I cannot read, left unknown: {raw}");
        }
        Vec::new()
    })
}

/// Keys of a length, those that name their unit first
/// ([`fields::length`]).
const LENGTH_KEYS: &[&str] = &[
    "durationSec",
    "duration_sec",
    "durationSeconds",
    "duration_seconds",
    "durationMs",
    "duration_ms",
    "durationMillis",
    "lengthSec",
    "lengthMs",
    "length_ms",
    "durationMinutes",
    "duration",
    "length",
    "runtime",
];

pub fn decode_book(v: &Value, endpoint: &str) -> Result<Book, ApiError> {
    decode_book_and_length(v, endpoint).map(|(b, _)| b)
}

/// A book, and where its length came from: a number under a key that
/// names no unit is no length (`duration` is `None`) until it is checked
/// ([`DurationSource::Unchecked`] keeps it).
pub fn decode_book_and_length(
    v: &Value,
    endpoint: &str,
) -> Result<(Book, DurationSource), ApiError> {
    let c = content(v);
    let obj = object(c, endpoint, "book")?;
    // A favorite entry wraps the book: {"bookId", "book": {...}}.
    if let Some(inner) = obj.get("book").filter(|b| b.is_object()) {
        let (mut b, source) = decode_book_and_length(inner, endpoint)?;
        if b.id.as_str().is_empty() {
            b.id = BookId::new(id(obj, BOOK_ID_KEYS).unwrap_or_default());
        }
        if let Some(f) = boolean(obj, &["favorite", "isFavorite"]) {
            b.favorite = f;
        }
        return Ok((b, source));
    }
    let book_id = id(obj, BOOK_ID_KEYS).ok_or_else(|| missing(endpoint, "id"))?;
    let title = string(obj, &["title", "name", "bookTitle"]).unwrap_or_default();
    let authors = people_or_warn(
        obj,
        &[
            "authors", "author", "writers", "writer", "artist", "creator",
        ],
    );
    let narrators = people_or_warn(obj, &["narrators", "narrator", "readers", "reader"]);
    let categories = get(obj, &["categories", "category", "genres", "genre"])
        .map(decode_category_refs)
        .unwrap_or_default();
    let progress = match obj.get("progress") {
        Some(p) if p.is_object() => decode_progress_object(p, endpoint).ok().flatten(),
        _ => None,
    };
    let (duration, duration_source) = length(obj, LENGTH_KEYS);
    let book = Book {
        id: BookId::new(book_id),
        title,
        authors,
        narrators,
        series: series::decode_series(obj),
        description: string(obj, &["description", "summary", "desc", "intro"]),
        duration,
        chapter_count: unsigned(
            obj,
            &["chapterCount", "chapter_count", "chapters", "numChapters"],
        )
        .map(|n| n.min(u32::MAX as u64) as u32),
        categories,
        cover_url: string(
            obj,
            &["coverUrl", "cover_url", "cover", "coverImage", "image"],
        ),
        favorite: boolean(obj, &["favorite", "isFavorite", "favorited"]).unwrap_or(false),
        added_at: instant_millis(obj, &["addedAt", "createdAt", "created_at", "added_at"]),
        progress,
    };
    Ok((book, duration_source))
}

fn decode_category_refs(v: &Value) -> Vec<Category> {
    match v {
        Value::Array(a) => a.iter().flat_map(decode_category_refs).collect(),
        Value::String(_) | Value::Object(_) => decode_category(v, "").ok().into_iter().collect(),
        _ => Vec::new(),
    }
}

pub fn decode_category(v: &Value, endpoint: &str) -> Result<Category, ApiError> {
    if let Some(s) = v.as_str().filter(|s| !s.trim().is_empty()) {
        return Ok(Category {
            id: CategoryId::new(s),
            name: s.to_owned(),
            book_count: None,
        });
    }
    let obj = object(v, endpoint, "category")?;
    let name = string(obj, &["name", "title", "label"]);
    let cid = id(obj, &["id", "categoryId", "category_id", "slug"])
        .or_else(|| name.clone())
        .ok_or_else(|| missing(endpoint, "id"))?;
    Ok(Category {
        name: name.unwrap_or_else(|| cid.clone()),
        id: CategoryId::new(cid),
        book_count: unsigned(obj, &["bookCount", "book_count", "count", "books", "total"]),
    })
}

pub fn decode_chapter(v: &Value, endpoint: &str) -> Result<Chapter, ApiError> {
    let obj = object(v, endpoint, "chapter")?;
    let cid = id(obj, &["id", "chapterId", "chapter_id", "uuid"])
        .ok_or_else(|| missing(endpoint, "id"))?;
    let (duration, duration_source) = length(obj, LENGTH_KEYS);
    Ok(Chapter {
        id: ChapterId::new(cid),
        title: string(obj, &["title", "name"]).unwrap_or_default(),
        duration,
        duration_source,
    })
}

// ---------------------------------------------------------------- manifest

pub fn decode_manifest(v: &Value, book: &BookId, endpoint: &str) -> Result<Manifest, ApiError> {
    let c = content(v);
    let list = find_list(c, endpoint)?;
    let items = decode_items(&list, endpoint, decode_manifest_item)?;
    let book_id = c
        .as_object()
        .and_then(|o| id(o, &["bookId", "book_id"]))
        .map(BookId::new)
        .unwrap_or_else(|| book.clone());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        if !seen.insert(&item.chapter_id) {
            return Err(ApiError::Decode {
                endpoint: endpoint.to_owned(),
                field: format!("items[{i}].chapterId"),
                problem: format!("repeats {}", item.chapter_id),
            });
        }
    }
    Ok(Manifest { book_id, items })
}

pub fn decode_manifest_item(v: &Value, endpoint: &str) -> Result<ManifestItem, ApiError> {
    let obj = object(v, endpoint, "item")?;
    let cid = id(obj, &["chapterId", "chapter_id", "chapterID", "id"])
        .ok_or_else(|| missing(endpoint, "chapterId"))?;
    let (duration, duration_source) = length(obj, LENGTH_KEYS);
    Ok(ManifestItem {
        chapter_id: ChapterId::new(cid),
        title: string(obj, &["title", "name"]).unwrap_or_default(),
        duration,
        duration_source,
        url: string(
            obj,
            &["url", "playUrl", "streamUrl", "src", "href", "downloadUrl"],
        ),
        mime_type: string(
            obj,
            &["mimeType", "mime_type", "contentType", "mime", "type"],
        ),
        size_bytes: unsigned(
            obj,
            &["sizeBytes", "size_bytes", "size", "fileSize", "bytes"],
        ),
        start: seconds(
            obj,
            &["startSec", "start_sec", "start", "startTime", "offset"],
            &["startMs", "start_ms"],
        )
        .unwrap_or(0.0),
        end: seconds(
            obj,
            &["endSec", "end_sec", "end", "endTime"],
            &["endMs", "end_ms"],
        ),
    })
}
