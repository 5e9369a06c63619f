//! The dialect server's answers: envelopes, errors (and refusals), books,
//! lists in each paging style, and progress in each shape.

use crate::server::*;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;

/// A code a refusal names when a trigger gives none.
fn code_for(status: u16) -> &'static str {
    match status {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        409 => "conflict",
        _ => "internal",
    }
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

    pub fn ok(&self, v: Value) -> Response {
        json_response(StatusCode::OK, self.wrap(v))
    }

    /// An error answer in this dialect's shape.
    pub fn err(&self, status: u16, code: &str, message: &str) -> Response {
        let c = styled(self.d.code_style, code);
        let uri = format!("https://errors.example/{c}");
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
            ErrorShape::ProblemUri => {
                let body = json!({"type": uri, "title": message, "status": status});
                return typed_response(
                    StatusCode::from_u16(status).unwrap(),
                    "application/problem+json",
                    body,
                );
            }
            ErrorShape::UriFragment => (
                status,
                json!({"error": {"message": message,
                    "help": format!("https://docs.example/errors#{c}")}}),
            ),
        };
        json_response(StatusCode::from_u16(http).unwrap(), body)
    }

    /// A refusal of a trigger; on the stream, in the dialect's stream form.
    pub fn refuse(&self, t: Trigger) -> Response {
        let code = if t.code.is_empty() {
            code_for(t.status)
        } else {
            t.code
        };
        let message = format!("refused: {code}");
        if t.place != Place::Stream {
            return self.err(t.status, code, &message);
        }
        let page = |status: u16| {
            // A page names the code only when the trigger gave one.
            let link = if t.code.is_empty() {
                String::new()
            } else {
                let c = styled(self.d.code_style, code);
                format!("<a href=\"https://errors.example/{c}\">why</a>")
            };
            (
                StatusCode::from_u16(status).unwrap(),
                [(header::CONTENT_TYPE, "text/html")],
                format!("<!DOCTYPE html><html><body><h1>{message}</h1>{link}</body></html>"),
            )
                .into_response()
        };
        match self.d.stream_refusal {
            StreamRefusal::Status => self.err(t.status, code, &message),
            StreamRefusal::Json200 => {
                let mut r = self.err(t.status, code, &message);
                *r.status_mut() = StatusCode::OK;
                r
            }
            StreamRefusal::Html200 => page(200),
            StreamRefusal::Html4xx => page(t.status),
        }
    }

    pub fn book(&self, i: usize) -> Value {
        let id = book_id(&self.d, i);
        let mut b = json!({"id": id_value(&self.d, &id), "title": format!("Book {i}"), "author": "Ann",
               "data": {"extra": true}});
        let o = b.as_object_mut().unwrap();
        let (key, length) = self.d.length_field(2 * CHAPTER_SECS);
        o.insert(key.into(), length);
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

    pub fn api_path(&self) -> &'static str {
        "/api/v1"
    }
}

/// The library (`list`: `books`), or search results (`books/search`: the
/// whole library, whatever the text), in the dialect's paging.
pub fn books(ctx: &Ctx, q: &HashMap<String, String>, list: &str) -> Response {
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
            Paging::NextAbsolute | Paging::LinksNext => {
                format!("{}{api}/{list}?p={p}", ctx.origin)
            }
            // Root-relative as a server unaware of the gateway writes it.
            Paging::NextRootRelative => format!("/api/v1/{list}?p={p}"),
            _ => format!("?p={p}"),
        })
    };
    // One-based servers refuse a page 0 as the reference server does.
    let one_based = matches!(
        ctx.d.paging,
        Paging::Page | Paging::TotalInWrapper | Paging::Overcounts | Paging::IgnoresPageSize
    );
    if one_based && q.get("page").map(String::as_str) == Some("0") {
        return ctx.err(400, "bad_request", "page starts at 1");
    }
    let v = match ctx.d.paging {
        Paging::Page => {
            let p = num("page", 1);
            ctx.list(
                slice((p - 1) * per, per),
                json!({"page": p, "pageSize": per, "total": BOOKS}),
            )
        }
        Paging::Overcounts => {
            let p = num("page", 1);
            ctx.list(
                slice((p - 1) * per, per),
                json!({"page": p, "pageSize": per, "total": BOOKS + 2}),
            )
        }
        Paging::ZeroBasedEcho => {
            let p = num("page", 0);
            let last = (p + 1) * per >= BOOKS;
            ctx.list(
                slice(p * per, per),
                json!({"page": p, "pageSize": per, "total": BOOKS,
                       "first": p == 0, "last": last}),
            )
        }
        Paging::ZeroBasedTotalOnly | Paging::TotalInWrapper => {
            let p = num("page", 0);
            let from = match ctx.d.paging {
                Paging::TotalInWrapper => p.max(1) - 1,
                _ => p,
            } * per;
            // The total sits beside the content, never with the list.
            let inner = ctx.list(slice(from, per), json!({}));
            return json_response(StatusCode::OK, json!({"total": BOOKS, "data": inner}));
        }
        Paging::Offset => {
            let o = num("offset", 0);
            ctx.list(
                slice(o, per),
                json!({"offset": o, "limit": per, "total": BOOKS}),
            )
        }
        Paging::Cursor => return cursor_page(ctx, q, &all),
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

/// A page of a cursor-paged list, the cursor written as the dialect
/// writes it; a cursor that is not one the server gave is refused.
fn cursor_page(ctx: &Ctx, q: &HashMap<String, String>, all: &[Value]) -> Response {
    let per = 2usize;
    let from = match q.get("cursor") {
        None => 0,
        Some(c) => match ctx.d.cursor_from(c) {
            Some(n) => n,
            None => return ctx.err(400, "bad_request", "not a cursor of this list"),
        },
    };
    let more = from + per < BOOKS;
    let next = match more {
        true => json!(ctx.d.cursor_for(from + per)),
        false => Value::Null,
    };
    let mut extra = json!({"hasMore": more});
    extra[ctx.d.cursor_key()] = next;
    let items = all.iter().skip(from).take(per).cloned().collect();
    ctx.ok(ctx.list(items, extra))
}

pub fn progress_read(ctx: &Ctx, id: &str) -> Response {
    if index_of(&ctx.d, id).is_none() {
        return ctx.err(404, "not_found", "no such book");
    }
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
            NoProgress::EmptyList => ctx.ok(json!([])),
        };
    };
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
        ProgressShape::ListOfAllBooks => {
            // Another book's record comes first: only this book's counts.
            let other = if book_id(&ctx.d, 3) == id { 4 } else { 3 };
            ctx.ok(json!({"records": [
                {"bookId": id_value(&ctx.d, &book_id(&ctx.d, other)),
                 "chapterId": id_value(&ctx.d, &chapter_id(&ctx.d, other, 1)), "positionSec": 99},
                {"bookId": id_value(&ctx.d, id), "chapterId": cid, "positionSec": pos}]}))
        }
        ProgressShape::Opaque => ctx.ok(json!({"loc": format!("{ch}@{pos}")})),
        ProgressShape::ChapterIndex => ctx.ok(json!({"chapterIndex": 1, "positionSec": pos})),
        ProgressShape::BareMillis => {
            ctx.ok(json!({"chapterId": cid, "position": (pos * 1000.0).round() as i64}))
        }
    }
}
