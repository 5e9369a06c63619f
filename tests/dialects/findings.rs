//! One named test per finding of issue 16 that the api layer owns (the
//! others belong to sync and the player).

use crate::cli::{Home, assert_writes_in_scope, text};
use crate::server::*;
use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use earmark::api::{ApiError, BaseUrl, BookQuery, Client, ClientOptions, ProgressRead};
use earmark::domain::*;
use serde_json::{Value, json};
use std::time::Duration;

fn opts(prefix: &str) -> ClientOptions {
    ClientOptions {
        identity_header_prefix: prefix.to_owned(),
        retries: 0,
        request_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    }
}

async fn logged_in(s: &DialectServer) -> Client {
    let c = Client::new(BaseUrl::parse(&s.address).unwrap(), opts(s.dialect.prefix)).unwrap();
    c.login(USER, PASSWORD).await.unwrap();
    c
}

/// Serve `app` under `/api/v1` on a free port; returns the address.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().nest("/api/v1", app);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn authed(addr: &str, o: ClientOptions) -> Client {
    Client::with_auth(
        BaseUrl::parse(addr).unwrap(),
        o,
        earmark::api::Auth {
            token: earmark::api::Token::new("t"),
            server_id: ServerId::new("s"),
            user_id: UserId(1),
        },
    )
    .unwrap()
}

#[tokio::test]
async fn an_unreadable_progress_answer_is_unknown_not_none() {
    for shape in [ProgressShape::ListUnderData, ProgressShape::UnknownWrapper] {
        let s = DialectServer::start(Dialect {
            progress: shape,
            ..Dialect::default()
        })
        .await;
        let c = logged_in(&s).await;
        let r = c
            .progress_read(&BookId::new(book_id(&s.dialect, 1)))
            .await
            .unwrap();
        let ProgressRead::Unreadable { shape: raw } = &r else {
            panic!("{r:?}")
        };
        assert!(
            raw.contains('{') || raw.contains('['),
            "the raw shape is described: {raw}"
        );
        let e = c
            .progress(&BookId::new(book_id(&s.dialect, 1)))
            .await
            .unwrap_err();
        assert!(matches!(e, ApiError::Decode { .. }), "{e:?}");
    }
    // A wrapper we cannot map safely is never guessed.
    let app = Router::new().route(
        "/auth/reading-progress/{id}",
        get(|| async {
            axum::Json(json!({"data": {"lastProgress": {"chapter": 3, "seconds": 40}}}))
        }),
    );
    let c = authed(&serve(app).await, opts("X-Service"));
    assert!(
        c.progress_read(&BookId::new("b"))
            .await
            .unwrap()
            .is_unreadable()
    );
}

#[tokio::test]
async fn earmark_progress_says_an_unreadable_place_could_not_be_read() {
    let s = DialectServer::start(Dialect {
        progress: ProgressShape::ListUnderData,
        ..Dialect::default()
    })
    .await;
    let home = Home::new(&s.address, "X-Service", "");
    assert!(home.login().await.status.success());
    let o = home.run(&["progress", &book_id(&s.dialect, 1)], None).await;
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("could not be read") && t.contains("not empty"),
        "{t}"
    );
    assert!(!t.contains("No progress yet"), "{t}");
}

/// Depends on the sync wiring (issue 9): `earmark play` must report
/// nothing for a book whose place on the server could not be read, and say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn earmark_play_writes_nothing_for_a_book_whose_place_is_unreadable() {
    let s = DialectServer::start(Dialect {
        progress: ProgressShape::ListUnderData,
        ..Dialect::default()
    })
    .await;
    let home = Home::new(&s.address, "X-Service", "");
    assert!(home.login().await.status.success());
    let b1 = book_id(&s.dialect, 1);
    let o = home
        .run(&["play", &b1, "--for", "2", "--audio", "null"], None)
        .await;
    let writes = s.writes();
    assert!(writes.is_empty(), "wrote {writes:?}; {}", text(&o));
    assert_eq!(s.stored(&b1), Some((chapter_id(&s.dialect, 1, 2), 30.0)));
    assert!(
        text(&o).contains("could not be read"),
        "says in one sentence that the place on the server could not be read: {}",
        text(&o)
    );
}

#[tokio::test]
async fn every_no_progress_answer_is_a_valid_none() {
    for np in [
        NoProgress::NotFound,
        NoProgress::NoContent,
        NoProgress::Null,
        NoProgress::EmptyObject,
        NoProgress::EmptyRecord,
    ] {
        for error in [ErrorShape::CodeMessage, ErrorShape::In200Envelope] {
            let s = DialectServer::start(Dialect {
                no_progress: np,
                error,
                ..Dialect::default()
            })
            .await;
            let c = logged_in(&s).await;
            let b2 = BookId::new(book_id(&s.dialect, 2));
            let r = c
                .progress_read(&b2)
                .await
                .unwrap_or_else(|e| panic!("{np:?}: {e}"));
            assert!(
                matches!(r, ProgressRead::NoProgress { .. }),
                "{np:?}: {r:?}"
            );
            assert!(c.progress(&b2).await.unwrap().progress.is_none());
        }
    }
}

#[tokio::test]
async fn playback_settings_without_speed_do_not_fail_the_progress_read() {
    let s = DialectServer::start(Dialect {
        progress: ProgressShape::LastProgress,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let r = c
        .progress_read(&BookId::new(book_id(&s.dialect, 1)))
        .await
        .unwrap();
    assert_eq!(r.progress().unwrap().position, 30.0);
    assert!(
        r.settings().is_none(),
        "settings without a speed are absent"
    );
}

#[tokio::test]
async fn error_codes_are_found_wherever_the_server_puts_them() {
    type Check = fn(&ApiError) -> bool;
    let cases: Vec<(u16, Value, Check)> = vec![
        (
            403,
            json!({"code": 403, "errorCode": "license_required"}),
            |e| e.is_license(),
        ),
        (
            409,
            json!({"code": 409, "error": "listening_scope_mismatch"}),
            |e| matches!(e, ApiError::ScopeMismatch { .. }),
        ),
        (403, json!({"detail": "license_required"}), |e| {
            e.is_license()
        }),
        (403, json!({"detail": {"code": "LicenseRequired"}}), |e| {
            e.is_license()
        }),
        (
            403,
            json!({"errors": [{"code": "LICENSE_REQUIRED", "title": "Renew"}]}),
            |e| e.is_license(),
        ),
        (403, json!({"type": "license-required"}), |e| e.is_license()),
        (403, json!({"reason": "licenseRequired"}), |e| {
            e.is_license()
        }),
        (403, json!({"message": "license_required"}), |e| {
            e.is_license()
        }),
        (
            409,
            json!({"error": {"code": "ListeningScopeMismatch"}}),
            |e| e.needs_login(),
        ),
        (
            200,
            json!({"success": false, "code": 401, "msg": "token expired"}),
            |e| matches!(e, ApiError::Unauthorized { .. }),
        ),
        (
            200,
            json!({"code": 403, "errorCode": "license_required"}),
            |e| e.is_license(),
        ),
        (
            200,
            json!({"status": "fail", "error": "LicenseRequired"}),
            |e| e.is_license(),
        ),
        (403, json!({"detail": "Not enough rights."}), |e| {
            matches!(e, ApiError::Forbidden { .. })
        }),
    ];
    for (status, body, check) in cases {
        let b = body.clone();
        let app = Router::new().route(
            "/books/{id}",
            get(move || {
                let b = b.clone();
                async move { (StatusCode::from_u16(status).unwrap(), axum::Json(b)) }
            }),
        );
        let c = authed(&serve(app).await, opts("X-Service"));
        let e = c.book(&BookId::new("x")).await.unwrap_err();
        assert!(check(&e), "{status} {body} → {e:?}");
    }
}

#[tokio::test]
async fn a_stream_403_without_the_license_code_is_no_permission_not_a_license_stop() {
    let app = Router::new()
        .route(
            "/chapters/c1/play",
            get(|| async {
                (
                    StatusCode::FORBIDDEN,
                    axum::Json(json!({"code": "forbidden"})),
                )
            }),
        )
        .route(
            "/chapters/c2/play",
            get(|| async {
                (
                    StatusCode::FORBIDDEN,
                    axum::Json(json!({"error": "LICENSE_REQUIRED"})),
                )
            }),
        );
    let c = authed(&serve(app).await, opts("X-Service"));
    let item = |id: &str| ManifestItem {
        chapter_id: ChapterId::new(id),
        title: String::new(),
        duration: None,
        url: None,
        mime_type: None,
        size_bytes: None,
        start: 0.0,
        end: None,
    };
    let e = c
        .open_stream(&c.stream_request(&item("c1")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, ApiError::Forbidden { .. }) && !e.is_license(),
        "{e:?}"
    );
    let e = c
        .open_stream(&c.stream_request(&item("c2")), None)
        .await
        .unwrap_err();
    assert!(e.is_license(), "{e:?}");
}

#[tokio::test]
async fn a_428_although_both_headers_were_sent_names_the_header_prefix_setting() {
    let s = DialectServer::start(Dialect {
        prefix: "X-Acme",
        ..Dialect::default()
    })
    .await;
    let home = Home::new(&s.address, "X-Service", "");
    assert!(home.login().await.status.success());
    let o = home
        .run(&["favorites", "add", &book_id(&s.dialect, 2)], None)
        .await;
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("other names")
            && t.contains("identity_header_prefix")
            && t.contains("\"X-Service\""),
        "{t}"
    );
    assert_writes_in_scope(&s.writes(), "X-Service");
}

#[tokio::test]
async fn next_page_urls_are_followed_absolute_root_relative_and_relative() {
    for paging in [
        Paging::NextAbsolute,
        Paging::NextRootRelative,
        Paging::NextRelative,
        Paging::LinksNext,
    ] {
        for gateway in [false, true] {
            let s = DialectServer::start(Dialect {
                paging,
                gateway,
                ..Dialect::default()
            })
            .await;
            let c = logged_in(&s).await;
            let l = c.books_listing(&BookQuery::default()).await.unwrap();
            let ids: Vec<String> = l.items.iter().map(|b| b.id.to_string()).collect();
            assert_eq!(
                ids,
                ["bk1", "bk2", "bk3", "bk4", "bk5"],
                "{paging:?} gateway {gateway}"
            );
            if paging == Paging::LinksNext {
                assert_eq!(l.total, Some(5), "meta.total is read");
            }
            let asks = s
                .store
                .lock()
                .unwrap()
                .requests
                .iter()
                .filter(|r| r.contains("/books"))
                .count();
            assert_eq!(asks, 3, "three pages, no page twice: {paging:?}");
        }
    }
}

#[tokio::test]
async fn a_next_url_on_another_origin_is_never_followed() {
    let other = DialectServer::start(Dialect::default()).await;
    let elsewhere = format!("{}/api/v1/books?p=2", other.origin);
    let app = Router::new().route(
        "/books",
        get(move || {
            let n = elsewhere.clone();
            async move { axum::Json(json!({"items": [{"id": "a"}], "next": n})) }
        }),
    );
    let c = authed(&serve(app).await, opts("X-Service"));
    let mut pager = c.book_pager(&BookQuery::default());
    assert_eq!(
        pager.next_page().await.unwrap().unwrap().items.len(),
        1,
        "the first page arrives"
    );
    let e = pager.next_page().await.unwrap_err();
    assert!(e.to_string().contains("another origin"), "{e}");
    assert!(
        other.store.lock().unwrap().requests.is_empty(),
        "the token never left"
    );
}

#[tokio::test]
async fn a_server_that_ignores_page_size_is_not_cut_off_after_a_short_page() {
    for paging in [Paging::IgnoresPageSize, Paging::None] {
        let s = DialectServer::start(Dialect {
            paging,
            ..Dialect::default()
        })
        .await;
        let c = logged_in(&s).await;
        let books = c.books(&BookQuery::default()).await.unwrap();
        assert_eq!(books.len(), BOOKS, "{paging:?}");
    }
}

#[tokio::test]
async fn an_endless_list_ends_at_the_page_cap_with_a_clear_error() {
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let app = Router::new().route(
        "/books",
        get(move || {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                axum::Json(
                    json!({"items": [{"id": format!("b{n}")}], "nextCursor": format!("c{n}")}),
                )
            }
        }),
    );
    let c = authed(
        &serve(app).await,
        ClientOptions {
            max_pages: 5,
            ..opts("X-Service")
        },
    );
    let e = c.books(&BookQuery::default()).await.unwrap_err();
    assert!(e.to_string().contains("did not end after 5 pages"), "{e}");
}

#[tokio::test]
async fn an_undecodable_item_is_skipped_and_counted_and_the_rest_works() {
    let app = Router::new()
        .route(
            "/books",
            get(|| async {
                axum::Json(json!({"items": [
                    {"id": "a", "title": "A", "data": {"nested": 1}},
                    {"title": "no id"},
                    "not an object",
                    {"id": "d", "title": "D"}], "total": 4}))
            }),
        )
        .route(
            "/auth/login",
            axum::routing::post(|| async {
                axum::Json(json!({"data": {"token": "t", "serverId": "s", "user": {"id": 1}}}))
            }),
        );
    let addr = serve(app).await;
    let c = authed(&addr, opts("X-Service"));
    let l = c.books_listing(&BookQuery::default()).await.unwrap();
    let titles: Vec<&str> = l.items.iter().map(|b| b.title.as_str()).collect();
    assert_eq!(
        titles,
        ["A", "D"],
        "an item with a nested data object is read"
    );
    assert_eq!(l.skipped.len(), 2, "{:?}", l.skipped);
    assert!(l.skipped[0].place.contains("items[1]"), "{}", l.skipped[0]);

    let home = Home::new(&addr, "X-Service", "");
    assert!(home.login().await.status.success());
    let o = home.run(&["books", "--json"], None).await;
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["items"].as_array().unwrap().len(), 2);
    assert_eq!(doc["skipped"].as_array().unwrap().len(), 2, "{doc}");
    let o = home.run(&["books"], None).await;
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 books could not be read"),
        "{}",
        text(&o)
    );
}

#[tokio::test]
async fn root_relative_urls_behind_a_gateway_are_not_prefixed_twice() {
    let s = DialectServer::start(Dialect {
        gateway: true,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let m = c.manifest(&BookId::new("bk1")).await.unwrap();
    let url = c.stream_url(&m.items[0]);
    assert_eq!(
        url.as_str(),
        format!("{}/gw/api/v1/chapters/bk1-c1/play?raw=1", s.origin)
    );
    let resp = c
        .open_stream(&c.stream_request(&m.items[0]), None)
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn a_rate_limited_login_says_try_again_never_wrong_password() {
    let app = Router::new().route(
        "/auth/login",
        axum::routing::post(|| async {
            let mut h = HeaderMap::new();
            h.insert(header::RETRY_AFTER, "7".parse().unwrap());
            (
                StatusCode::TOO_MANY_REQUESTS,
                h,
                axum::Json(json!({"code": "too_many_requests", "message": "slow down"})),
            )
                .into_response()
        }),
    );
    let addr = serve(app).await;
    let c = Client::new(BaseUrl::parse(&addr).unwrap(), opts("X-Service")).unwrap();
    let e = c.login("a", "b").await.unwrap_err();
    assert_eq!(e.retry_after(), Some(Duration::from_secs(7)), "{e:?}");
    assert!(e.is_transient());
    let home = Home::new(&addr, "X-Service", "");
    let o = home.login().await;
    let t = text(&o);
    assert_eq!(o.status.code(), Some(6), "{t}");
    assert!(
        t.contains("try again in 7 s") && !t.contains("password"),
        "{t}"
    );
}

#[tokio::test]
async fn doctor_reports_what_it_did_not_recognise_and_writes_once_without_identity_headers() {
    let d = Dialect {
        progress: ProgressShape::ListUnderData,
        prefix: "X-Acme",
        ..Dialect::default()
    };
    let s = DialectServer::start(d).await;
    let home = Home::new(&s.address, "X-Service", "");
    let o = home
        .run(&["doctor", "--json", "--password-stdin"], Some(PASSWORD))
        .await;
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["recognised"], false, "{doc}");
    let check = |name: &str| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {doc}"))
    };
    assert_eq!(check("progress shape")["recognised"], false);
    let id = check("identity headers");
    assert_eq!(id["recognised"], false);
    assert!(
        id["detail"]
            .as_str()
            .unwrap()
            .contains("identity_header_prefix = \"X-Acme\""),
        "{id}"
    );
    assert_eq!(check("token key")["detail"], "data.token");
    assert_eq!(check("paging style")["recognised"], true);
    let writes = s.writes();
    assert_eq!(writes.len(), 1, "one write: {writes:?}");
    let w = &writes[0];
    assert!(w.path.contains("earmark-doctor-no-such-book"), "{w:?}");
    assert!(
        !w.headers.keys().any(|k| k.contains("expected-")),
        "no identity headers: {w:?}"
    );
    assert_eq!(
        s.stored("bk1"),
        Some(("bk1-c2".into(), 30.0)),
        "real progress untouched"
    );
}

#[tokio::test]
async fn doctor_recognises_the_reference_dialect() {
    let s = DialectServer::start(Dialect::default()).await;
    let home = Home::new(&s.address, "X-Service", "");
    assert!(home.login().await.status.success());
    let o = home.run(&["doctor"], None).await;
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("Everything earmark checked was recognised"),
        "{t}"
    );
    assert!(
        t.contains("identity headers") && t.contains("understood"),
        "{t}"
    );
}

#[tokio::test]
async fn books_stream_prints_a_json_line_per_page_as_it_arrives() {
    let s = DialectServer::start(Dialect::default()).await;
    let home = Home::new(&s.address, "X-Service", "");
    assert!(home.login().await.status.success());
    let o = home.run(&["books", "--json", "--stream"], None).await;
    assert!(o.status.success(), "{}", text(&o));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sizes: Vec<usize> = lines
        .iter()
        .map(|l| l["items"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
    assert_eq!(lines[0]["page"], 1);
    assert_eq!(lines[0]["total"], 5);
}

#[tokio::test]
async fn body_field_names_come_from_the_profile() {
    let s = DialectServer::start(Dialect::default()).await;
    let home = Home::new(
        &s.address,
        "X-Service",
        "[profiles.d.fields]\nbookmark_position = \"offsetSec\"\nbookmark_client_id = \"\"\n",
    );
    assert!(home.login().await.status.success());
    let _ = home
        .run(
            &[
                "bookmarks",
                "bk2",
                "add",
                "--chapter",
                "bk2-c1",
                "--at",
                "5",
            ],
            None,
        )
        .await;
    let writes = s.writes();
    let w = writes
        .iter()
        .find(|w| w.path == "/auth/bookmarks")
        .expect("the bookmark write");
    assert_eq!(w.body["offsetSec"], 5.0, "{w:?}");
    assert!(
        w.body.get("positionSec").is_none() && w.body.get("clientId").is_none(),
        "{w:?}"
    );
    assert_writes_in_scope(&writes, "X-Service");
}
