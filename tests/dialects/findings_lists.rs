//! Named tests of issue 16's findings on lists, paging, the doctor and
//! the command line.

use crate::cli::{assert_writes_in_scope, configured, login};
use crate::harness::text;
use crate::server::*;
use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use earmark::api::{BaseUrl, BookQuery, Client, ClientOptions};
use earmark::domain::*;
use serde_json::{Value, json};
use std::time::Duration;

use crate::findings::{authed, logged_in, opts, serve};

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

    let home = configured(&addr, "X-Service", "");
    assert!(login(&home).await.status.success());
    let o = home.run_async(&["books", "--json"], None).await;
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["items"].as_array().unwrap().len(), 2);
    assert_eq!(doc["skipped"].as_array().unwrap().len(), 2, "{doc}");
    let o = home.run_async(&["books"], None).await;
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
    let home = configured(&addr, "X-Service", "");
    let o = login(&home).await;
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
        progress: ProgressShape::Opaque,
        prefix: "X-Acme",
        ..Dialect::default()
    };
    let s = DialectServer::start(d).await;
    let home = configured(&s.address, "X-Service", "");
    let o = home
        .run_async(&["doctor", "--json", "--password-stdin"], Some(PASSWORD))
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
    let home = configured(&s.address, "X-Service", "");
    assert!(login(&home).await.status.success());
    let o = home.run_async(&["doctor"], None).await;
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
    let home = configured(&s.address, "X-Service", "");
    assert!(login(&home).await.status.success());
    let o = home.run_async(&["books", "--json", "--stream"], None).await;
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
    let home = configured(
        &s.address,
        "X-Service",
        "[profiles.d.fields]\nbookmark_position = \"offsetSec\"\nbookmark_client_id = \"\"\n",
    );
    assert!(login(&home).await.status.success());
    let _ = home
        .run_async(
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
    assert_writes_in_scope(&writes, "X-Service", &user_id(&s.dialect));
}
