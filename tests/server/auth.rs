//! Login, tokens, license gating, identity headers and the error shape.

use crate::common::*;
use crate::harness::TestServer;
use earmark::server::LicenseSetting;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn login_returns_token_server_id_and_numeric_user_id() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let res = into_resp(
        reqwest::Client::new()
            .post(format!("{}/auth/login", server.base_url()))
            .json(&json!({"username": "alice", "password": server.password}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let d = res.expect(200);
    assert_eq!(d["token"].as_str().unwrap().len(), 64, "256-bit hex token");
    assert_eq!(d["tokenType"], "Bearer");
    assert!(d["expiresAt"].as_i64().unwrap() > now_ms() + 29 * 24 * 3600 * 1000);
    assert!(d["serverId"].as_str().unwrap().starts_with("srv_"));
    assert_eq!(d["user"]["id"].as_u64(), Some(server.user_id));
    assert_eq!(d["user"]["username"], "alice");
}

#[tokio::test]
async fn login_errors_are_clear() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let http = reqwest::Client::new();
    let url = format!("{}/auth/login", server.base_url());
    let send = |body: String| {
        let req = http
            .post(&url)
            .header("content-type", "application/json")
            .body(body);
        async move { into_resp(req.send().await.unwrap()).await }
    };
    send(json!({"username": "alice", "password": "wrong"}).to_string())
        .await
        .expect_error(401, "invalid_credentials");
    send(json!({"username": "bob", "password": "x"}).to_string())
        .await
        .expect_error(401, "invalid_credentials");
    let r = send(json!({"username": "alice"}).to_string()).await;
    r.expect_error(400, "bad_request");
    assert!(
        r.body["message"].as_str().unwrap().contains("password"),
        "{}",
        r.body
    );
    let r = send("{\"username\": \"alice\", ".into()).await;
    r.expect_error(400, "bad_request");
    assert!(
        r.body["message"].as_str().unwrap().contains("JSON"),
        "{}",
        r.body
    );
    send(String::new()).await.expect_error(400, "bad_request");
    send("[1,2]".into()).await.expect_error(400, "bad_request");
    send(json!({"username": 5, "password": "x"}).to_string())
        .await
        .expect_error(400, "bad_request");
}

/// Every endpoint that needs a token, with a harmless request.
fn authed_endpoints(book: &str, chapter: &str) -> Vec<(Method, String, Option<Value>)> {
    let p = json!({"chapterId": chapter, "positionSec": 1.0, "clientUpdatedAt": now_ms()});
    vec![
        (Method::GET, "/license/status".into(), None),
        (Method::GET, "/books".into(), None),
        (Method::GET, "/books/search?q=a".into(), None),
        (Method::GET, format!("/books/{book}"), None),
        (Method::GET, format!("/books/{book}/chapters"), None),
        (
            Method::GET,
            format!("/books/{book}/download-manifest"),
            None,
        ),
        (Method::GET, format!("/books/{book}/cover"), None),
        (Method::GET, "/categories".into(), None),
        (Method::GET, format!("/chapters/{chapter}/play?raw=1"), None),
        (Method::GET, format!("/auth/reading-progress/{book}"), None),
        (
            Method::POST,
            format!("/auth/reading-progress/{book}"),
            Some(p.clone()),
        ),
        (
            Method::DELETE,
            format!("/auth/reading-progress/{book}"),
            None,
        ),
        (
            Method::POST,
            "/auth/reading-progress/batch".into(),
            Some(json!({"items": [p]})),
        ),
        (
            Method::POST,
            format!("/auth/playback-settings/{book}"),
            Some(json!({"speed": 1.5, "clientUpdatedAt": now_ms()})),
        ),
        (
            Method::DELETE,
            format!("/auth/playback-settings/{book}"),
            None,
        ),
        (Method::GET, "/auth/favorites".into(), None),
        (Method::POST, format!("/auth/favorites/{book}"), None),
        (Method::DELETE, format!("/auth/favorites/{book}"), None),
        (Method::GET, format!("/auth/bookmarks?bookId={book}"), None),
        (
            Method::POST,
            "/auth/bookmarks".into(),
            Some(json!({"bookId": book, "chapterId": chapter, "positionSec": 0.5})),
        ),
        (Method::DELETE, "/auth/bookmarks/bm_nope".into(), None),
        (Method::POST, "/auth/logout".into(), None),
    ]
}

/// The gated ones of the list above (docs/contract.md, "License").
fn is_gated(path: &str) -> bool {
    path.contains("/play")
        || path.starts_with("/auth/reading-progress")
        || path.starts_with("/auth/playback-settings")
        || path.starts_with("/auth/favorites")
        || path.starts_with("/auth/bookmarks")
}

#[tokio::test]
async fn every_endpoint_needs_a_valid_token() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = api.book_titled("Two Cities").await;
    let book_id = book["id"].as_str().unwrap();
    let m = api.manifest(book_id).await;
    let chapter = m["items"][0]["chapterId"].as_str().unwrap();
    for (method, path, body) in authed_endpoints(book_id, chapter) {
        for token in [None, Some("0000"), Some("")] {
            let mut req = api.http.request(method.clone(), api.url(&path));
            if let Some(t) = token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            let r = into_resp(req.send().await.unwrap()).await;
            assert_eq!(
                r.status, 401,
                "{method} {path} with token {token:?}: {}",
                r.body
            );
            assert_eq!(r.code(), "unauthorized", "{method} {path}");
        }
    }
}

#[tokio::test]
async fn logout_revokes_the_token() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    api.get("/books").await.expect(200);
    let r = api.send(Method::POST, "/auth/logout", None, false).await;
    assert_eq!(r.status, 204);
    api.get("/books").await.expect_error(401, "unauthorized");
}

#[tokio::test]
async fn license_gates_playback_and_sync_only() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = api.book_titled("Two Cities").await;
    let book_id = book["id"].as_str().unwrap().to_owned();
    let m = api.manifest(&book_id).await;
    let chapter = m["items"][0]["chapterId"].as_str().unwrap().to_owned();
    for state in [LicenseSetting::Expired, LicenseSetting::Missing] {
        server.set_license(state).unwrap();
        let status = api.get("/license/status").await;
        let d = status.expect(200);
        assert_eq!(d["status"], state.as_str());
        assert_eq!(d["valid"], false);
        assert!(!d["message"].as_str().unwrap().is_empty());
        for (method, path, body) in authed_endpoints(&book_id, &chapter) {
            if path == "/auth/logout" {
                continue;
            }
            let r = api.send(method.clone(), &path, body, true).await;
            if is_gated(&path) {
                r.expect_error(403, "license_required");
            } else {
                assert!(
                    r.status == 200,
                    "{method} {path} under {state:?}: {} {}",
                    r.status,
                    r.body
                );
            }
        }
    }
    // Back to valid: applies to the running server at once.
    server.set_license(LicenseSetting::Valid).unwrap();
    let d = api.get("/license/status").await;
    assert_eq!(d.expect(200)["status"], "valid");
    assert_eq!(d.data()["valid"], true);
    for (method, path, body) in authed_endpoints(&book_id, &chapter) {
        if path == "/auth/logout" || path.contains("/play") || path.contains("/cover") {
            continue;
        }
        let r = api.send(method.clone(), &path, body, true).await;
        assert!(
            r.status < 300 || r.status == 404,
            "{method} {path}: {} {}",
            r.status,
            r.body
        );
    }
}

/// The five sync writes of the contract plus our favorite/bookmark writes.
fn writes(book: &str, chapter: &str) -> Vec<(Method, String, Option<Value>)> {
    authed_endpoints(book, chapter)
        .into_iter()
        .filter(|(m, p, _)| *m != Method::GET && p != "/auth/logout")
        .collect()
}

#[tokio::test]
async fn identity_headers_on_every_write() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = api.book_titled("Two Cities").await;
    let book_id = book["id"].as_str().unwrap().to_owned();
    let m = api.manifest(&book_id).await;
    let chapter = m["items"][0]["chapterId"].as_str().unwrap().to_owned();
    let sid = api.session.server_id.clone();
    let uid = api.session.user_id.to_string();
    let cases: Vec<(Option<&str>, Option<&str>, u16, &str)> = vec![
        (None, None, 428, "listening_scope_required"),
        (Some(&sid), None, 428, "listening_scope_required"),
        (None, Some(&uid), 428, "listening_scope_required"),
        (Some(&sid), Some("abc"), 400, "listening_scope_invalid"),
        (Some(&sid), Some("-1"), 400, "listening_scope_invalid"),
        (Some(&sid), Some("1.5"), 400, "listening_scope_invalid"),
        (
            Some("srv_other"),
            Some(&uid),
            409,
            "listening_scope_mismatch",
        ),
        (Some(&sid), Some("999"), 409, "listening_scope_mismatch"),
    ];
    let writes = writes(&book_id, &chapter);
    assert_eq!(writes.len(), 9);
    for (method, path, body) in &writes {
        for (s, u, status, code) in &cases {
            let mut req = api
                .http
                .request(method.clone(), api.url(path))
                .bearer_auth(&api.session.token);
            if let Some(s) = s {
                req = req.header("X-Service-Expected-Server-Id", *s);
            }
            if let Some(u) = u {
                req = req.header("x-service-expected-user-id", *u);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let r = into_resp(req.send().await.unwrap()).await;
            assert_eq!(
                r.status, *status,
                "{method} {path} with {s:?}/{u:?}: {}",
                r.body
            );
            assert_eq!(r.code(), *code, "{method} {path}");
        }
        let r = api.send(method.clone(), path, body.clone(), true).await;
        assert!(
            r.status < 300 || (r.status == 404 && path.contains("bm_nope")),
            "{method} {path} with the right headers: {} {}",
            r.status,
            r.body
        );
    }
    // GETs never need them.
    api.get(&format!("/auth/reading-progress/{book_id}"))
        .await
        .expect(200);
    api.get("/books").await.expect(200);
    // The order of checks: a bad token wins over missing headers.
    let r = into_resp(
        api.http
            .post(api.url(&format!("/auth/reading-progress/{book_id}")))
            .bearer_auth("nope")
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(401, "unauthorized");
    // ...and headers win over the license.
    server.set_license(LicenseSetting::Expired).unwrap();
    let r = into_resp(
        api.http
            .delete(api.url(&format!("/auth/reading-progress/{book_id}")))
            .bearer_auth(&api.session.token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(428, "listening_scope_required");
}

#[tokio::test]
async fn header_prefix_and_gateway_prefix_are_configurable() {
    let lib = small_library();
    let server = TestServer::start_with(lib.path(), |c| {
        c.prefix = "/nas/earmark/".into();
        c.header_prefix = "X-Acme".into();
    })
    .await
    .unwrap();
    assert!(
        server.base_url().ends_with("/nas/earmark/api/v1"),
        "{}",
        server.base_url()
    );
    let mut api = Api::login(&server).await;
    let book = api.book_titled("Two Cities").await;
    let book_id = book["id"].as_str().unwrap().to_owned();
    let r = api
        .post(&format!("/auth/favorites/{book_id}"), json!({}))
        .await;
    r.expect_error(428, "listening_scope_required");
    api.header_prefix = "X-Acme".into();
    api.post(&format!("/auth/favorites/{book_id}"), json!({}))
        .await
        .expect(200);
    // Without the gateway prefix there is nothing, in our error shape.
    let r = into_resp(
        reqwest::get(format!("http://{}/api/v1/books", server.addr()))
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(404, "not_found");
}

#[tokio::test]
async fn unknown_paths_methods_and_big_bodies_use_the_error_shape() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    api.get("/nope").await.expect_error(404, "not_found");
    api.get("/books/bk_nope")
        .await
        .expect_error(404, "not_found");
    api.get("/books/bk_nope/chapters")
        .await
        .expect_error(404, "not_found");
    api.get("/books/bk_nope/download-manifest")
        .await
        .expect_error(404, "not_found");
    api.send(Method::PUT, "/books", None, false)
        .await
        .expect_error(405, "method_not_allowed");
    let big = "x".repeat(70 * 1024);
    let book = api.book_titled("Two Cities").await;
    let r = api
        .post(
            &format!("/auth/reading-progress/{}", book["id"].as_str().unwrap()),
            json!({"chapterId": big, "positionSec": 1, "clientUpdatedAt": 1}),
        )
        .await;
    r.expect_error(413, "payload_too_large");
    let r = into_resp(
        api.http
            .post(api.url("/auth/login"))
            .header("content-type", "application/json")
            .body(format!("{{\"username\": \"{big}\", \"password\": \"x\"}}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(413, "payload_too_large");
}

#[tokio::test]
async fn expired_tokens_are_401() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    api.get("/books").await.expect(200);
    let db = rusqlite::Connection::open(server.data_path().join("earmark.sqlite3")).unwrap();
    db.execute("UPDATE tokens SET expires_at = 1", []).unwrap();
    let r = api.get("/books").await;
    r.expect_error(401, "unauthorized");
    assert!(r.body["message"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn internal_errors_use_the_shape_and_leak_nothing() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let db = rusqlite::Connection::open(server.data_path().join("earmark.sqlite3")).unwrap();
    db.execute("DROP TABLE favorites", []).unwrap();
    let r = api.get("/auth/favorites").await;
    r.expect_error(500, "internal");
    let msg = r.body["message"].as_str().unwrap();
    assert!(
        !msg.contains("favorites") && !msg.to_lowercase().contains("sql"),
        "{msg}"
    );
    // The rest of the server keeps working.
    api.get("/license/status").await.expect(200);
}

#[tokio::test]
async fn undecodable_path_parameters_are_400_in_our_shape() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    api.get("/books/%FF%FE")
        .await
        .expect_error(400, "bad_request");
    api.get("/chapters/%FF/play")
        .await
        .expect_error(400, "bad_request");
}
