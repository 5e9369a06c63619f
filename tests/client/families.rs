//! Three payload families that are NOT ours (docs/contract.md): other
//! envelopes, token names, list keys, id types, paging styles and error
//! shapes. The client decodes each, or fails with a clear typed error.

use crate::support::{client, fast_options, serve};
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use axum::{Json, Router};
use earmark::api::{ApiError, BookQuery, ProgressWrite, error::BodyKind};
use earmark::domain::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<HeaderMap>>>;

fn write(chapter: &str, pos: f64) -> ProgressWrite {
    ProgressWrite {
        chapter_id: ChapterId::new(chapter),
        position: pos,
        client_updated_at: 1_795_000_000_000,
        finished: false,
        device_id: Some("test".into()),
        reset: false,
    }
}

/// Family A: a gateway prefix, `{"code":0,"data":…}` envelopes, the token
/// nested under `data.auth.accessToken`, numeric string user ids, Spring
/// paging (`content`/`totalElements`/`last`), ids as numbers, durations in
/// ms and `HH:MM:SS`, error bodies `{"error":{"code","message"}}`.
#[tokio::test]
async fn family_a_gateway_spring_envelopes() {
    let seen: Seen = Arc::default();
    let s2 = seen.clone();
    let book = |n: u64| json!({"bookId": n, "name": format!("Book {n}"), "authors": [{"name": "Ann"}], "durationMs": 61000});
    let api = Router::new()
        .route(
            "/auth/login",
            post(|Json(b): Json<Value>| async move {
                assert_eq!(b["username"], "alice");
                assert_eq!(b["password"], "pw");
                Json(json!({"code": 0, "data": {"auth": {"accessToken": "tokA"}, "serverId": 77,
                    "user": {"id": "42", "name": "alice"}}}))
            }),
        )
        .route("/license/status", get(|| async { Json(json!({"code": 0, "data": {"licensed": true}})) }))
        .route(
            "/books",
            get(move |Query(q): Query<HashMap<String, String>>| async move {
                let page: u64 = q.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let items: Vec<Value> = if page == 1 { vec![book(1), book(2)] } else { vec![book(3)] };
                Json(json!({"code": 0, "data": {"content": items, "totalElements": 3, "last": page != 1}}))
            }),
        )
        .route(
            "/books/{id}",
            get(move |Path(id): Path<u64>| async move { Json(json!({"code": 0, "data": {"book": book(id)}})) }),
        )
        .route(
            "/books/{id}/download-manifest",
            get(|| async {
                Json(json!({"code": 0, "data": {"chapters": [
                    {"id": 12, "name": "Second first", "durationMs": 1000, "playUrl": "/gw/app/api/v1/chapters/12/play?raw=1"},
                    {"id": 11, "name": "First second", "duration": "00:00:02"}]}}))
            }),
        )
        .route(
            "/auth/reading-progress/{id}",
            get(|| async { Json(json!({"code": 0, "data": {"chapter_id": 11, "positionMs": 5000}})) }).post(
                move |h: HeaderMap| async move {
                    s2.lock().unwrap().push(h);
                    StatusCode::NO_CONTENT
                },
            ),
        )
        .route("/categories", get(|| async { Json(json!({"code": 0, "data": ["Poetry", "Drama"]})) }))
        .route(
            "/auth/favorites",
            get(|| async {
                (StatusCode::FORBIDDEN, Json(json!({"error": {"code": "LICENSE_REQUIRED", "message": "Renew it."}})))
            }),
        );
    let addr = serve(Router::new().nest("/gw/app/api/v1", api)).await;
    let c = client(&format!("{addr}/gw/app"), fast_options());

    let login = c.login("alice", "pw").await.unwrap();
    assert_eq!(
        (
            login.token.expose(),
            login.server_id.as_str(),
            login.user_id
        ),
        ("tokA", "77", UserId::from(42))
    );
    assert!(c.license_status().await.unwrap().valid);

    let books = c.books(&BookQuery::default()).await.unwrap();
    let ids: Vec<_> = books.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"], "all pages fetched, in order");
    assert_eq!(books[0].authors, ["Ann"]);
    assert_eq!(books[0].duration, Some(61.0));

    let b = c.book(&BookId::new("2")).await.unwrap();
    assert_eq!(b.title, "Book 2");

    let m = c.manifest(&BookId::new("2")).await.unwrap();
    let order: Vec<_> = m.items.iter().map(|i| i.chapter_id.as_str()).collect();
    assert_eq!(order, ["12", "11"], "server order kept");
    assert_eq!(m.items[1].duration, Some(2.0));
    let s = c.stream_request(&m.items[0]);
    assert_eq!(
        s.url.as_str(),
        format!("{addr}/gw/app/api/v1/chapters/12/play?raw=1")
    );
    assert_eq!(
        s.headers,
        [("Authorization".to_owned(), "Bearer tokA".to_owned())]
    );
    let s = c.stream_request(&m.items[1]);
    assert_eq!(
        s.url.as_str(),
        format!("{addr}/gw/app/api/v1/chapters/11/play?raw=1")
    );
    let t = c.stream_url_with_token(&m.items[1]);
    assert_eq!(
        t.as_str(),
        format!("{addr}/gw/app/api/v1/chapters/11/play?raw=1&access_token=tokA")
    );

    let p = c
        .progress(&BookId::new("2"))
        .await
        .unwrap()
        .progress
        .unwrap();
    assert_eq!((p.chapter_id.as_str(), p.position), ("11", 5.0));
    let w = c
        .post_progress(&BookId::new("2"), &write("11", 6.0))
        .await
        .unwrap();
    assert!(w.applied && w.record.is_none(), "a 204 is an applied write");
    let h = seen.lock().unwrap().pop().unwrap();
    assert_eq!(h["authorization"], "Bearer tokA");
    assert_eq!(h["x-service-expected-server-id"], "77");
    assert_eq!(h["x-service-expected-user-id"], "42");

    let cats = c.categories().await.unwrap();
    assert_eq!(
        cats.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Poetry", "Drama"]
    );

    let e = c.favorites().await.unwrap_err();
    assert!(
        matches!(&e, ApiError::LicenseRequired { message } if message == "Renew it."),
        "{e:?}"
    );
}

/// Family B: no envelope at all, `access_token` at the top, login body
/// names and the search parameter overridden per profile, offset/limit
/// paging under `rows`, numeric ids, authors as arrays, another identity
/// header prefix, `{"errorCode","msg"}` errors.
#[tokio::test]
async fn family_b_bare_offset_custom_names() {
    let book = |n: u64| json!({"id": n, "title": format!("B{n}"), "author": ["A", "B"], "duration": "00:01:00"});
    let app = Router::new()
        .route(
            "/api/v1/auth/login",
            post(|Json(b): Json<Value>| async move {
                if b["user"] != "bob" || b["pass"] != "pw" {
                    return (StatusCode::BAD_REQUEST, Json(json!({"detail": "user and pass are required"})));
                }
                (StatusCode::OK, Json(json!({"access_token": "tokB", "server_id": "srv-b", "userId": 7})))
            }),
        )
        .route(
            "/api/v1/books",
            get(move |Query(q): Query<HashMap<String, String>>| async move {
                let off: u64 = q.get("offset").and_then(|p| p.parse().ok()).unwrap_or(0);
                let rows: Vec<Value> = (off..(off + 2).min(5)).map(|i| book(i + 1)).collect();
                Json(json!({"rows": rows, "offset": off, "limit": 2, "total": 5}))
            }),
        )
        .route(
            "/api/v1/books/search",
            get(move |Query(q): Query<HashMap<String, String>>| async move {
                assert_eq!(q.get("keyword").map(String::as_str), Some("B3"));
                Json(json!([book(3)]))
            }),
        )
        .route(
            "/api/v1/books/{id}/download-manifest",
            get(|| async { Json(json!([{"chapterId": "a", "durationSec": 1.0}, {"chapterId": "b"}])) }),
        )
        .route(
            "/api/v1/auth/reading-progress/{id}",
            post(|h: HeaderMap, Json(b): Json<Value>| async move {
                if h.get("x-acme-expected-user-id").and_then(|v| v.to_str().ok()) != Some("7")
                    || h.get("x-acme-expected-server-id").and_then(|v| v.to_str().ok()) != Some("srv-b")
                {
                    return (StatusCode::CONFLICT, Json(json!({"errorCode": "listening_scope_mismatch", "msg": "wrong account"})));
                }
                (StatusCode::OK, Json(json!({"applied": true, "progress": {"chapterId": b["chapterId"], "positionSec": b["positionSec"]}})))
            })
            .delete(|| async { StatusCode::NO_CONTENT }),
        );
    let addr = serve(app).await;
    let mut opts = fast_options();
    opts.paths.login_user_field = "user".into();
    opts.paths.login_password_field = "pass".into();
    opts.paths.search_param = "keyword".into();
    opts.identity_header_prefix = "X-Acme".into();
    let c = client(&addr, opts);

    let l = c.login("bob", "pw").await.unwrap();
    assert_eq!(
        (l.token.expose(), l.server_id.as_str(), l.user_id),
        ("tokB", "srv-b", UserId::from(7))
    );
    let books = c.books(&BookQuery::default()).await.unwrap();
    assert_eq!(
        books.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(),
        ["1", "2", "3", "4", "5"]
    );
    assert_eq!(books[0].authors, ["A", "B"]);
    assert_eq!(books[0].duration, Some(60.0));
    let first = c
        .books_page(&BookQuery::default(), &earmark::api::NextPage::Page(1))
        .await
        .unwrap();
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.total, Some(5));
    assert_eq!(
        first.next,
        Some(earmark::api::NextPage::Offset(2)),
        "paging continues lazily"
    );

    let found = c
        .search(&BookQuery {
            text: Some("B3".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(found[0].title, "B3");
    let m = c.manifest(&BookId::new("3")).await.unwrap();
    assert_eq!(m.book_id.as_str(), "3");
    assert_eq!(m.items.len(), 2);
    let s = c.stream_request(&m.items[1]);
    assert_eq!(
        s.url.as_str(),
        format!("{addr}/api/v1/chapters/b/play?raw=1")
    );

    let w = c
        .post_progress(&BookId::new("3"), &write("a", 0.5))
        .await
        .unwrap();
    assert_eq!(w.record.unwrap().position, 0.5);
    assert!(c.delete_progress(&BookId::new("3")).await.unwrap());

    // A stale identity is a typed scope mismatch.
    let mut auth = c.auth().unwrap();
    auth.user_id = UserId::from(8);
    c.set_auth(Some(auth));
    let e = c
        .post_progress(&BookId::new("3"), &write("a", 1.0))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::ScopeMismatch { message } if message == "wrong account"),
        "{e:?}"
    );
    assert!(e.needs_login());

    // Wrong login field names would be a clear 400.
    let c2 = client(&addr, fast_options());
    let e = c2.login("bob", "pw").await.unwrap_err();
    assert!(
        matches!(&e, ApiError::BadRequest { message, .. } if message.contains("required")),
        "{e:?}"
    );
}

/// Family C: `result.jwt`, cursor paging, `uuid` ids, and the failures a
/// gateway produces: an HTML 502 page, an HTML login page with 200, an
/// empty body, `{"detail"}` 404s, `success:false` envelopes, a list item
/// without an id.
#[tokio::test]
async fn family_c_cursor_and_gateway_failures() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h2 = hits.clone();
    let app = Router::new()
        .route(
            "/api/v1/auth/login",
            post(|| async { Json(json!({"result": {"jwt": "tokC", "instanceId": "i-1", "user": {"userId": 5}}})) }),
        )
        .route(
            "/api/v1/books",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                match q.get("cursor").map(String::as_str) {
                    None => Json(json!({"data": {"items": [{"uuid": "u1", "title": "One"}, {"uuid": "u2", "title": "Two"}], "nextCursor": "c2"}})),
                    Some("c2") => Json(json!({"data": {"items": [{"uuid": "u3", "title": "Three"}], "nextCursor": null}})),
                    Some(other) => panic!("unexpected cursor {other}"),
                }
            }),
        )
        .route(
            "/api/v1/books/search",
            get(move || async move {
                h2.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::BAD_GATEWAY,
                    [(header::CONTENT_TYPE, "text/html")],
                    "<html><body><h1>502 Bad Gateway</h1></body></html>",
                )
            }),
        )
        .route(
            "/api/v1/categories",
            get(|| async { ([(header::CONTENT_TYPE, "text/html")], "<!DOCTYPE html><form>NAS login</form>") }),
        )
        .route("/api/v1/license/status", get(|| async { StatusCode::OK }))
        .route(
            "/api/v1/books/{id}",
            get(|| async { (StatusCode::NOT_FOUND, Json(json!({"detail": "no such book"}))) }),
        )
        .route(
            "/api/v1/books/{id}/chapters",
            get(|| async { Json(json!({"data": {"list": [{"chapterId": 1, "title": "x"}, {"title": "no id"}]}})) }),
        )
        .route(
            "/api/v1/auth/reading-progress/{id}",
            get(|| async { Json(json!({"success": false, "code": 401, "msg": "token expired"})) }),
        );
    let addr = serve(app).await;
    let c = client(&addr, fast_options());
    let l = c.login("carol", "pw").await.unwrap();
    assert_eq!(
        (l.token.expose(), l.server_id.as_str(), l.user_id),
        ("tokC", "i-1", UserId::from(5))
    );

    let books = c.books(&BookQuery::default()).await.unwrap();
    assert_eq!(
        books.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(),
        ["u1", "u2", "u3"]
    );

    let e = c
        .search(&BookQuery {
            text: Some("x".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(&e, ApiError::Server { status: 502, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("HTML page") && msg.contains(&addr), "{msg}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        3,
        "a GET is retried twice on 5xx"
    );

    let e = c.categories().await.unwrap_err();
    assert!(
        matches!(
            &e,
            ApiError::NotJson {
                kind: BodyKind::Html,
                status: 200,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&addr) && msg.contains("gateway prefix"),
        "{msg}"
    );

    let e = c.license_status().await.unwrap_err();
    assert!(
        matches!(
            &e,
            ApiError::NotJson {
                kind: BodyKind::Empty,
                ..
            }
        ),
        "{e:?}"
    );

    let e = c.book(&BookId::new("nope")).await.unwrap_err();
    assert!(
        matches!(&e, ApiError::NotFound { message } if message == "no such book"),
        "{e:?}"
    );

    // An item without an id is skipped (and logged), the rest is kept.
    let chapters = c.chapters(&BookId::new("u1")).await.unwrap();
    let ids: Vec<_> = chapters.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["1"], "the readable chapter is kept");

    let e = c.progress(&BookId::new("u1")).await.unwrap_err();
    assert!(matches!(&e, ApiError::Unauthorized { .. }), "{e:?}");
}

/// Nothing listening: a network error naming the address, after retries.
#[tokio::test]
async fn unreachable_server_is_a_network_error() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let c = client(&addr, fast_options());
    let e = c.login("a", "b").await.unwrap_err();
    assert!(matches!(&e, ApiError::Network { .. }), "{e:?}");
    assert!(e.to_string().contains(&addr), "{e}");
    assert!(e.is_retryable());
}
