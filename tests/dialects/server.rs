//! A dialect test server: a small library service whose answers are picked
//! from variants along each axis the contract leaves "not shown". It has NO
//! zero guard and no merge policy (a real server may have none): it stores
//! what a write says, and records every write with its headers so a test
//! can check what the client sent.

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
pub const USER_ID: u64 = 42;
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

#[derive(Default)]
pub struct Store {
    /// book id → (chapter id, position in seconds).
    pub progress: HashMap<String, (String, f64)>,
    pub writes: Vec<Write>,
    pub requests: Vec<String>,
}

pub struct DialectServer {
    pub dialect: Dialect,
    /// `http://127.0.0.1:PORT` (plus `/gw` behind the gateway): what the
    /// user types as the server address.
    pub address: String,
    pub origin: String,
    pub store: Arc<Mutex<Store>>,
}

struct Ctx {
    d: Dialect,
    origin: String,
    store: Arc<Mutex<Store>>,
    wav: Bytes,
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
    }
}

pub fn chapter_id(d: &Dialect, book: usize, ch: usize) -> String {
    match d.ids {
        Ids::Strings => format!("bk{book}-c{ch}"),
        Ids::Numbers => format!("{}", (100 + book) * 10 + ch),
    }
}

fn id_value(d: &Dialect, s: &str) -> Value {
    match d.ids {
        Ids::Strings => json!(s),
        Ids::Numbers => json!(s.parse::<u64>().unwrap()),
    }
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

fn styled(style: CodeStyle, code: &str) -> String {
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

fn json_response(status: StatusCode, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

impl Ctx {
    fn wrap(&self, v: Value) -> Value {
        match self.d.envelope {
            Envelope::Data => json!({ "data": v }),
            Envelope::CodeData => json!({"code": 0, "msg": "ok", "data": v}),
            Envelope::Result => json!({"success": true, "result": v}),
            Envelope::Bare => v,
        }
    }

    fn ok(&self, v: Value) -> Response {
        json_response(StatusCode::OK, self.wrap(v))
    }

    fn err(&self, status: u16, code: &str, message: &str) -> Response {
        let c = styled(self.d.code_style, code);
        let (http, body) = match self.d.error {
            ErrorShape::CodeMessage => (status, json!({"code": c, "message": message})),
            ErrorShape::Nested => (status, json!({"error": {"code": c, "message": message}})),
            ErrorShape::FastApiDetail => (status, json!({"detail": {"code": c, "msg": message}})),
            ErrorShape::JsonApi => (
                status,
                json!({"errors": [{"status": status.to_string(), "code": c, "title": message}]}),
            ),
            ErrorShape::NumericCodeAndErrorCode => (
                status,
                json!({"code": status, "errorCode": c, "message": message}),
            ),
            ErrorShape::NumericCodeAndError => {
                (status, json!({"code": status, "error": c, "msg": message}))
            }
            ErrorShape::In200Envelope => (
                200,
                json!({"success": false, "code": status, "errorCode": c, "message": message}),
            ),
        };
        json_response(StatusCode::from_u16(http).unwrap(), body)
    }

    fn book(&self, i: usize) -> Value {
        let id = book_id(&self.d, i);
        let mut b = json!({"id": id_value(&self.d, &id), "title": format!("Book {i}"), "author": "Ann",
               "durationSec": 2 * CHAPTER_SECS, "data": {"extra": true}});
        let o = b.as_object_mut().unwrap();
        let people = match self.d.people {
            People::Ours => json!({}),
            People::FlatStrings => json!({"narrator": "Ned", "series": "Saga",
                "seriesSequence": format!("#{}", series_number(i))}),
            People::SnakeNumbers => json!({"author": null, "authors": [{"name": "Ann"}],
                "narrators": ["Ned", "Nia"], "series_name": "Saga",
                "series_index": series_number(i).parse::<f64>().unwrap()}),
            People::SeriesList => json!({"narrators": [{"name": "Ned"}],
                "series": [{"id": "s1", "name": "Saga", "sequence": series_number(i)}]}),
            People::Unreadable => json!({"series": {"id": "s1", "seq": 3}}),
        };
        o.extend(people.as_object().unwrap().clone());
        b
    }

    fn list(&self, items: Vec<Value>, extra: Value) -> Value {
        let key = match self.d.list_key {
            ListKey::Items => "items",
            ListKey::Content => "content",
            ListKey::Records => "records",
            ListKey::Data => "data",
        };
        let mut o = extra.as_object().cloned().unwrap_or_default();
        o.insert(key.into(), Value::Array(items));
        Value::Object(o)
    }

    fn api_path(&self) -> &'static str {
        "/api/v1"
    }
}

async fn handle(
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
    match (method.clone(), segs.as_slice()) {
        (Method::GET, ["license", "status"]) => ctx.ok(match ctx.d.license {
            LicenseWords::StatusValid => json!({"status": "valid"}),
            LicenseWords::StateActive => json!({"state": "ACTIVE"}),
            LicenseWords::ValidFlag => json!({"valid": true}),
            LicenseWords::Licensed => json!({"licensed": true, "message": "ok"}),
        }),
        (Method::GET, ["books"]) => books(&ctx, &query),
        (Method::GET, ["books", "locked"]) => {
            ctx.err(403, "license_required", "Renew the license.")
        }
        (Method::GET, ["books", id]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(ctx.book(i)),
            None => ctx.err(404, "not_found", "no such book"),
        },
        (Method::GET, ["books", id, "chapters"]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(json!({"items": (1..=2).map(|c| json!({
                "id": id_value(&ctx.d, &chapter_id(&ctx.d, i, c)), "title": format!("Chapter {c}"),
                "durationSec": CHAPTER_SECS})).collect::<Vec<_>>()})),
            None => ctx.err(404, "not_found", "no such book"),
        },
        (Method::GET, ["books", id, "download-manifest"]) => match index_of(&ctx.d, id) {
            Some(i) => ctx.ok(json!({"items": (1..=2).map(|c| {
                let cid = chapter_id(&ctx.d, i, c);
                let mut item = json!({"chapterId": id_value(&ctx.d, &cid),
                    "title": format!("Chapter {c}"), "durationSec": CHAPTER_SECS,
                    "mimeType": "audio/wav"});
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
        (Method::GET, ["auth", "reading-progress", id]) => progress_read(&ctx, id),
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

fn index_of(d: &Dialect, id: &str) -> Option<usize> {
    (1..=BOOKS).find(|i| book_id(d, *i) == id)
}

fn login(ctx: &Ctx, body: &Value) -> Response {
    if body["username"] != USER || body["password"] != PASSWORD {
        return ctx.err(401, "invalid_credentials", "wrong user name or password");
    }
    let uid = match ctx.d.ids {
        Ids::Strings => json!(USER_ID.to_string()),
        Ids::Numbers => json!(USER_ID),
    };
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

fn books(ctx: &Ctx, q: &HashMap<String, String>) -> Response {
    let all: Vec<Value> = (1..=BOOKS).map(|i| ctx.book(i)).collect();
    let per = 2usize;
    let num = |k: &str, d: usize| q.get(k).and_then(|v| v.parse::<usize>().ok()).unwrap_or(d);
    let slice = |from: usize, n: usize| all.iter().skip(from).take(n).cloned().collect::<Vec<_>>();
    let next_link = |p: usize| -> Value {
        if (p - 1) * per >= BOOKS {
            return Value::Null;
        }
        let api = if ctx.d.gateway {
            "/gw/api/v1"
        } else {
            "/api/v1"
        };
        json!(match ctx.d.paging {
            Paging::NextAbsolute | Paging::LinksNext => format!("{}{api}/books?p={p}", ctx.origin),
            // Root-relative as a server unaware of the gateway writes it.
            Paging::NextRootRelative => format!("/api/v1/books?p={p}"),
            _ => format!("?p={p}"),
        })
    };
    let v = match ctx.d.paging {
        Paging::Page => {
            let p = num("page", 1);
            ctx.list(
                slice((p - 1) * per, per),
                json!({"page": p, "pageSize": per, "total": BOOKS}),
            )
        }
        Paging::Offset => {
            let o = num("offset", 0);
            ctx.list(
                slice(o, per),
                json!({"offset": o, "limit": per, "total": BOOKS}),
            )
        }
        Paging::Cursor => {
            let from: usize = q
                .get("cursor")
                .and_then(|c| c.strip_prefix("cur-"))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let more = from + per < BOOKS;
            ctx.list(
                slice(from, per),
                json!({"nextCursor": if more { json!(format!("cur-{}", from + per)) } else { Value::Null },
                       "hasMore": more}),
            )
        }
        Paging::NextAbsolute | Paging::NextRootRelative | Paging::NextRelative => {
            let p = num("p", 1);
            ctx.list(slice((p - 1) * per, per), json!({"next": next_link(p + 1)}))
        }
        Paging::LinksNext => {
            let p = num("p", 1);
            ctx.list(
                slice((p - 1) * per, per),
                json!({"links": {"next": next_link(p + 1)}, "meta": {"total": BOOKS}}),
            )
        }
        Paging::IgnoresPageSize => {
            let p = num("page", 1);
            ctx.list(slice((p - 1) * 3, 3), json!({}))
        }
        Paging::None => ctx.list(all.clone(), json!({})),
    };
    ctx.ok(v)
}

fn progress_read(ctx: &Ctx, id: &str) -> Response {
    let Some(i) = index_of(&ctx.d, id) else {
        return ctx.err(404, "not_found", "no such book");
    };
    let stored = ctx.store.lock().unwrap().progress.get(id).cloned();
    let Some((ch, pos)) = stored else {
        return match ctx.d.no_progress {
            NoProgress::NotFound => ctx.err(404, "not_found", "no progress"),
            NoProgress::NoContent => StatusCode::NO_CONTENT.into_response(),
            NoProgress::Null => match ctx.d.envelope {
                Envelope::Bare => json_response(StatusCode::OK, Value::Null),
                _ => ctx.ok(Value::Null),
            },
            NoProgress::EmptyObject => ctx.ok(json!({})),
            NoProgress::EmptyRecord => ctx.ok(
                json!({"bookId": id_value(&ctx.d, id), "chapterId": null, "positionSec": null}),
            ),
        };
    };
    let _ = i;
    let cid = id_value(&ctx.d, &ch);
    match ctx.d.progress {
        ProgressShape::Ours => ctx.ok(json!({"bookId": id_value(&ctx.d, id),
            "progress": {"chapterId": cid, "positionSec": pos, "finished": false},
            "playbackSettings": null})),
        ProgressShape::Bare => {
            ctx.ok(json!({"chapterId": cid, "positionMs": (pos * 1000.0).round() as i64}))
        }
        ProgressShape::LastProgress => ctx.ok(json!({
            "lastProgress": {"chapterId": cid, "positionSec": pos},
            "playbackSettings": {"volume": 0.5, "equalizer": "flat"}})),
        ProgressShape::ListUnderData => json_response(
            StatusCode::OK,
            json!({"data": [{"chapterId": cid, "positionSec": pos}]}),
        ),
        ProgressShape::UnknownWrapper => ctx.ok(json!({"state": {"track": cid, "offset_s": pos}})),
    }
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
        (Some(s), Some(u)) if s != SERVER_ID || *u != USER_ID.to_string() => 409,
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
