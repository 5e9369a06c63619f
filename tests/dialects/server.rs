//! A dialect test server: a small library service whose answers are picked
//! from variants along each axis the contract leaves "not shown". It has NO
//! zero guard and no merge policy (a real server may have none): it stores
//! what a write says, and records every write with its headers so a test
//! can check what the client sent. A [`Trigger`] makes it refuse one kind
//! of request (an API read, the stream, a write) with a given status and
//! code, for the exit-code tests; a dialect's [`Throttling`] answers one
//! kind "slow down" for a while and logs every [`Knock`] at it, so a test
//! can check that no path was asked again before the wait it was told.
//! The answers' shapes are in `answers`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use crate::dialect::*;

pub const TOKEN: &str = "tok-dialect-1";
pub const SERVER_ID: &str = "7";
pub const USER: &str = "alice";
pub const PASSWORD: &str = "pw-dialect";
pub const BOOKS: usize = 5;
/// Seconds of audio per chapter.
pub const CHAPTER_SECS: u32 = 120;

/// One write the server received.
#[derive(Debug, Clone)]
pub struct Write {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: HashMap<String, String>,
    pub body: Value,
    #[allow(dead_code)]
    pub status: u16,
}

/// Which requests a [`Trigger`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Reads of a book: details, chapters, manifest, progress.
    Api,
    /// The chapter stream.
    Stream,
    /// Every write.
    Write,
}

/// Refuse every request at `place` with `status` and `code` ("" for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    pub place: Place,
    pub status: u16,
    pub code: &'static str,
}

/// One request at the throttled place: its path, when it came, whether
/// it was refused, and the wait it was told (`None`: no `Retry-After`).
#[derive(Debug, Clone)]
pub struct Knock {
    pub path: String,
    pub at: std::time::Instant,
    pub refused: bool,
    pub told: Option<std::time::Duration>,
}

#[derive(Default)]
pub struct Store {
    /// When the throttle began (its place's first request).
    pub throttle_since: Option<std::time::Instant>,
    pub knocks: Vec<Knock>,
    /// book id → (chapter id, position in seconds).
    pub progress: HashMap<String, (String, f64)>,
    pub writes: Vec<Write>,
    pub requests: Vec<String>,
    /// Each request's path and `Accept-Encoding`.
    pub encodings: Vec<(String, Option<String>)>,
    pub trigger: Option<Trigger>,
}

pub struct DialectServer {
    pub dialect: Dialect,
    /// `http://127.0.0.1:PORT` (plus `/gw` behind the gateway): what the
    /// user types as the server address.
    pub address: String,
    pub origin: String,
    pub store: Arc<Mutex<Store>>,
}

pub(crate) struct Ctx {
    pub d: Dialect,
    pub origin: String,
    pub store: Arc<Mutex<Store>>,
    pub wav: Bytes,
}

/// Book `i`'s place in the series "Saga": 1, 1.5, 2, 10, 11 (so a text
/// order would be wrong).
pub fn series_number(i: usize) -> String {
    ["1", "1.5", "2", "10", "11"][(i - 1) % 5].to_owned()
}

/// What the client should read: (narrators, series labels).
pub fn want_people(d: &Dialect, i: usize) -> (Vec<String>, Vec<String>) {
    let saga = vec![format!("Saga #{}", series_number(i))];
    match d.people {
        People::Ours | People::Unreadable => (vec![], vec![]),
        People::FlatStrings => (vec!["Ned".into()], saga),
        People::SnakeNumbers => (vec!["Ned".into(), "Nia".into()], saga),
        People::SeriesList => (vec!["Ned".into()], saga),
    }
}

pub fn book_id(d: &Dialect, i: usize) -> String {
    match d.ids {
        Ids::Strings => format!("bk{i}"),
        Ids::Numbers => format!("{}", 100 + i),
        Ids::Big => format!("123456789012345678901{i:02}"),
        Ids::Padded => format!("{i:06}"),
    }
}

pub fn chapter_id(d: &Dialect, book: usize, ch: usize) -> String {
    match d.ids {
        Ids::Strings => format!("bk{book}-c{ch}"),
        Ids::Numbers => format!("{}", (100 + book) * 10 + ch),
        Ids::Big => format!("98765432109876543210{book:02}{ch}"),
        Ids::Padded => format!("{book:04}{ch:02}"),
    }
}

/// The user id as the server writes it (and wants it back in the header).
pub fn user_id(d: &Dialect) -> String {
    match d.ids {
        Ids::Strings | Ids::Numbers => "42".into(),
        Ids::Big => "98765432109876543210987".into(),
        Ids::Padded => "0042".into(),
    }
}

/// An id as this dialect writes it: a string, or a JSON number (beyond
/// 2^64 for `Big`, written as digits by [`json_response`]).
pub(crate) fn id_value(d: &Dialect, s: &str) -> Value {
    match d.ids {
        Ids::Strings | Ids::Padded => json!(s),
        Ids::Numbers => json!(s.parse::<u64>().unwrap()),
        Ids::Big => json!(format!("{BIG}{s}")),
    }
}

/// Marks a string that [`json_response`] writes as a bare number.
const BIG: &str = "#number:";

/// JSON text of `v` with every marked string written as the number it holds.
fn unmark(text: String) -> String {
    let quoted = format!("\"{BIG}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&quoted) {
        out.push_str(&rest[..at]);
        let digits = &rest[at + quoted.len()..];
        let end = digits.find('"').unwrap();
        out.push_str(&digits[..end]);
        rest = &digits[end + 1..];
    }
    out.push_str(rest);
    out
}

impl DialectServer {
    /// Start on a free port. Book 1 has progress (chapter 2 at 30 s).
    pub async fn start(d: Dialect) -> DialectServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let store = Arc::new(Mutex::new(Store::default()));
        store
            .lock()
            .unwrap()
            .progress
            .insert(book_id(&d, 1), (chapter_id(&d, 1, 2), 30.0));
        let ctx = Arc::new(Ctx {
            d: d.clone(),
            origin: origin.clone(),
            store: store.clone(),
            wav: Bytes::from(wav(CHAPTER_SECS)),
        });
        let app = Router::new().fallback(handle).with_state(ctx);
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        let address = if d.gateway {
            format!("{origin}/gw")
        } else {
            origin.clone()
        };
        DialectServer {
            dialect: d,
            address,
            origin,
            store,
        }
    }

    /// Each request's path and the encodings it accepted.
    pub fn encodings(&self) -> Vec<(String, Option<String>)> {
        self.store.lock().unwrap().encodings.clone()
    }

    /// Every request at the throttled place so far.
    pub fn knocks(&self) -> Vec<Knock> {
        self.store.lock().unwrap().knocks.clone()
    }

    pub fn writes(&self) -> Vec<Write> {
        self.store.lock().unwrap().writes.clone()
    }

    pub fn stored(&self, book: &str) -> Option<(String, f64)> {
        self.store.lock().unwrap().progress.get(book).cloned()
    }
}

/// 8-bit mono PCM at 2 kHz: small and quick to decode.
fn wav(secs: u32) -> Vec<u8> {
    let rate = 2000u32;
    let n = rate * secs;
    let mut b = Vec::with_capacity(44 + n as usize);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&8u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&n.to_le_bytes());
    b.resize(44 + n as usize, 128);
    b
}

pub(crate) fn styled(style: CodeStyle, code: &str) -> String {
    match style {
        CodeStyle::Snake => code.to_owned(),
        CodeStyle::Upper => code.to_ascii_uppercase(),
        CodeStyle::Kebab => code.replace('_', "-"),
        CodeStyle::Camel => code
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect(),
    }
}

pub(crate) fn json_response(status: StatusCode, v: Value) -> Response {
    typed_response(status, "application/json", v)
}

pub(crate) fn typed_response(status: StatusCode, ct: &str, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, ct.to_owned())],
        unmark(v.to_string()),
    )
        .into_response()
}

/// Every answer, gzipped when the dialect compresses and the request
/// takes gzip (JSON only: audio is never compressed here either).
async fn handle(
    State(ctx): State<Arc<Ctx>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let accept = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    ctx.store
        .lock()
        .unwrap()
        .encodings
        .push((uri.path().to_owned(), accept.clone()));
    let r = answer(State(ctx.clone()), method, uri, headers, body).await;
    let json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("json"));
    if !(ctx.d.gzip && json && accept.is_some_and(|a| a.contains("gzip"))) {
        return r;
    }
    let (mut parts, body) = r.into_parts();
    let plain = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    parts
        .headers
        .insert(header::CONTENT_ENCODING, "gzip".parse().unwrap());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(gzip_stored(&plain)))
}

/// `data` as a gzip member of stored (uncompressed) deflate blocks: a
/// real gzip body any decoder reads, made without a compressor.
pub fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let mut chunks = data.chunks(65_535).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(c) = chunks.next() {
        out.push(u8::from(chunks.peek().is_none()));
        let len = c.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

async fn answer(
    State(ctx): State<Arc<Ctx>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let prefix = if ctx.d.gateway {
        "/gw/api/v1"
    } else {
        "/api/v1"
    };
    let Some(path) = uri.path().strip_prefix(prefix) else {
        return ctx.err(404, "not_found", "outside the API");
    };
    let path = path.to_owned();
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    ctx.store
        .lock()
        .unwrap()
        .requests
        .push(format!("{method} {}", uri));
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if method == Method::POST && segs == ["auth", "login"] {
        return login(&ctx, &body);
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    let token_q = query.get("access_token").map(String::as_str) == Some(TOKEN);
    let stream_with_query_token = token_q && segs.first() == Some(&"chapters");
    if !(bearer || stream_with_query_token) {
        return ctx.err(401, "unauthorized", "not logged in");
    }
    if let Some(answer) = throttled(&ctx, &method, &segs, uri.path()) {
        return answer;
    }
    let trigger = ctx.store.lock().unwrap().trigger;
    if let Some(t) = trigger.filter(|t| Some(t.place) == place_of(&method, &segs)) {
        return ctx.refuse(t);
    }
    match (method.clone(), segs.as_slice()) {
        (Method::GET, ["license", "status"]) => ctx.ok(match ctx.d.license {
            LicenseWords::StatusValid => json!({"status": "valid"}),
            LicenseWords::StateActive => json!({"state": "ACTIVE"}),
            LicenseWords::ValidFlag => json!({"valid": true}),
            LicenseWords::Licensed => json!({"licensed": true, "message": "ok"}),
        }),
        (Method::GET, ["books"]) => crate::answers::books(&ctx, &query, "books"),
        (Method::GET, ["books", "search"]) => crate::answers::books(&ctx, &query, "books/search"),
        (Method::GET, ["books", "locked"]) => {
            ctx.err(403, "license_required", "Renew the license.")
        }
        (Method::GET, ["books", id]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(ctx.book(i)),
            None => ctx.err(404, "not_found", "no such book"),
        },
        (Method::GET, ["books", id, "chapters"]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(json!({"items": (1..=2).map(|c| {
                let mut ch = json!({"id": id_value(&ctx.d, &chapter_id(&ctx.d, i, c)),
                    "title": format!("Chapter {c}")});
                let (key, length) = ctx.d.length_field(CHAPTER_SECS);
                ch[key] = length;
                ch
            }).collect::<Vec<_>>()})),
            None => ctx.err(404, "not_found", "no such book"),
        },
        (Method::GET, ["books", id, "download-manifest"]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(json!({"items": (1..=2).map(|c| {
                let cid = chapter_id(&ctx.d, i, c);
                let mut item = json!({"chapterId": id_value(&ctx.d, &cid),
                    "title": format!("Chapter {c}"), "mimeType": "audio/wav"});
                let (key, length) = ctx.d.length_field(CHAPTER_SECS);
                item[key] = length;
                if ctx.d.gateway {
                    // A server behind a gateway does not know its prefix.
                    item["url"] = json!(format!("{}/chapters/{cid}/play?raw=1", ctx.api_path()));
                }
                item
            }).collect::<Vec<_>>()})),
            None => ctx.err(404, "not_found", "no such book"),
        },
        (Method::GET, ["chapters", _, "play"]) => {
            ([(header::CONTENT_TYPE, "audio/wav")], ctx.wav.clone()).into_response()
        }
        (Method::GET, ["auth", "reading-progress", id]) => crate::answers::progress_read(&ctx, id),
        (m, ["auth", "reading-progress", ..])
        | (m, ["auth", "playback-settings", ..])
        | (m, ["auth", "favorites", ..])
        | (m, ["auth", "bookmarks", ..])
            if m != Method::GET =>
        {
            write(&ctx, &method, &path, &headers, body)
        }
        _ => ctx.err(404, "not_found", "no such path"),
    }
}

/// The throttle's answer when `segs` is at its place and it is on; every
/// request there is logged as a [`Knock`].
fn throttled(ctx: &Ctx, method: &Method, segs: &[&str], path: &str) -> Option<Response> {
    let t = ctx.d.throttle?;
    if place_of(method, segs) != Some(t.place) {
        return None;
    }
    let now = std::time::Instant::now();
    let mut store = ctx.store.lock().unwrap();
    let since = *store.throttle_since.get_or_insert(now);
    let on = now < since + t.lasts;
    let wait = std::time::Duration::from_secs(t.secs);
    store.knocks.push(Knock {
        path: path.to_owned(),
        at: now,
        refused: on,
        told: (on && t.form != RetryForm::Absent).then_some(wait),
    });
    drop(store);
    if !on {
        return None;
    }
    let code = if t.status == 429 {
        "too_many_requests"
    } else {
        "service_unavailable"
    };
    let mut r = ctx.err(t.status, code, "slow down");
    // A 200 envelope would hide the status a gateway sends anyway.
    *r.status_mut() = StatusCode::from_u16(t.status).unwrap();
    let secs_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let h = r.headers_mut();
    match t.form {
        RetryForm::Seconds => {
            h.insert(header::RETRY_AFTER, t.secs.to_string().parse().unwrap());
        }
        RetryForm::Date => {
            h.insert(header::DATE, http_date(secs_now).parse().unwrap());
            let at = http_date(secs_now + t.secs);
            h.insert(header::RETRY_AFTER, at.parse().unwrap());
        }
        RetryForm::Absent => {}
    }
    Some(r)
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for seconds since the epoch.
pub fn http_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        WD[days.rem_euclid(7) as usize],
        MO[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// What kind of request this is, for a [`Trigger`]; `None` for the rest.
fn place_of(method: &Method, segs: &[&str]) -> Option<Place> {
    Some(match (method, segs) {
        (&Method::GET, ["chapters", _, "play"]) => Place::Stream,
        (&Method::GET, ["books", _, ..] | ["auth", "reading-progress", _]) => Place::Api,
        (m, _) if m != Method::GET => Place::Write,
        _ => return None,
    })
}

impl DialectServer {
    /// From now on, refuse every request at `t.place` as `t` says.
    pub fn trigger(&self, t: Trigger) {
        self.store.lock().unwrap().trigger = Some(t);
    }
}

pub(crate) fn index_of(d: &Dialect, id: &str) -> Option<usize> {
    (1..=BOOKS).find(|i| book_id(d, *i) == id)
}

fn login(ctx: &Ctx, body: &Value) -> Response {
    if body["username"] != USER || body["password"] != PASSWORD {
        return ctx.err(401, "invalid_credentials", "wrong user name or password");
    }
    let uid = id_value(&ctx.d, &user_id(&ctx.d));
    let v = match ctx.d.token {
        TokenKey::Token => json!({"token": TOKEN, "serverId": SERVER_ID, "user": {"id": uid}}),
        TokenKey::AccessToken => {
            json!({"accessToken": TOKEN, "serverId": SERVER_ID, "user": {"id": uid, "name": USER}})
        }
        TokenKey::NestedAuth => {
            json!({"auth": {"accessToken": TOKEN}, "serverId": 7, "user": {"id": uid}})
        }
        TokenKey::Jwt => json!({"jwt": TOKEN, "server_id": SERVER_ID, "userId": uid}),
    };
    ctx.ok(v)
}

fn write(ctx: &Ctx, method: &Method, path: &str, headers: &HeaderMap, body: Value) -> Response {
    let hs: HashMap<String, String> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let p = ctx.d.prefix.to_ascii_lowercase();
    let sid = hs.get(&format!("{p}-expected-server-id")).cloned();
    let uid = hs.get(&format!("{p}-expected-user-id")).cloned();
    let status = match (&sid, &uid) {
        (None, _) | (_, None) => 428,
        (Some(s), Some(u)) if s != SERVER_ID || *u != user_id(&ctx.d) => 409,
        _ => 200,
    };
    ctx.store.lock().unwrap().writes.push(Write {
        method: method.to_string(),
        path: path.to_owned(),
        headers: hs,
        body: body.clone(),
        status,
    });
    match status {
        428 => {
            return ctx.err(
                428,
                "listening_scope_required",
                &format!(
                    "sync writes need {0}-Expected-Server-Id and {0}-Expected-User-Id",
                    ctx.d.prefix
                ),
            );
        }
        409 => return ctx.err(409, "listening_scope_mismatch", "another server or user"),
        _ => {}
    }
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut store = ctx.store.lock().unwrap();
    let mut apply = |book: &str, b: &Value| -> bool {
        if index_of(&ctx.d, book).is_none() {
            return false;
        }
        let ch = match &b["chapterId"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return false,
        };
        let Some(pos) = b["positionSec"].as_f64() else {
            return false;
        };
        store.progress.insert(book.to_owned(), (ch, pos));
        true
    };
    match (method.as_str(), segs.as_slice()) {
        ("POST", ["auth", "reading-progress", "batch"]) => {
            let items = body["items"].as_array().cloned().unwrap_or_default();
            let results: Vec<Value> = items
                .iter()
                .map(|it| {
                    let book = match &it["bookId"] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let ok = apply(&book, it);
                    json!({"bookId": book, "status": if ok { 200 } else { 404 }})
                })
                .collect();
            drop(store);
            ctx.ok(json!({"results": results}))
        }
        ("POST", ["auth", "reading-progress", book]) => {
            if apply(book, &body) {
                drop(store);
                ctx.ok(json!({"applied": true}))
            } else {
                drop(store);
                ctx.err(404, "not_found", "no such book or chapter")
            }
        }
        ("DELETE", ["auth", "reading-progress", book]) => {
            store.progress.remove(*book);
            drop(store);
            StatusCode::NO_CONTENT.into_response()
        }
        _ => {
            drop(store);
            ctx.ok(json!({}))
        }
    }
}
