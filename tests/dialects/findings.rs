//! One named test per finding of issue 16 that the api layer owns (the
//! others belong to sync and the player).

use crate::cli::{assert_writes_in_scope, configured, login};
use crate::harness::{self, text};
use crate::server::*;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use earmark::api::{ApiError, Client, ClientOptions, ProgressRead};
use earmark::domain::*;
use serde_json::{Value, json};
use std::time::Duration;

pub fn opts(prefix: &str) -> ClientOptions {
    ClientOptions {
        identity_header_prefix: prefix.to_owned(),
        retries: 0,
        request_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    }
}

/// A client of `s` logged in with the API's login.
pub async fn logged_in(s: &DialectServer) -> Client {
    harness::client_logged_in(&s.address, opts(s.dialect.prefix), USER, PASSWORD).await
}

/// Serve `app` under `/api/v1` on a free port; returns the address.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().nest("/api/v1", app);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

pub use harness::authed;

#[tokio::test]
async fn an_unreadable_progress_answer_is_unknown_not_none() {
    for shape in [
        ProgressShape::Opaque,
        ProgressShape::ChapterIndex,
        ProgressShape::BareMillis,
    ] {
        let s = DialectServer::start(Dialect {
            progress: shape,
            ..Dialect::default()
        })
        .await;
        let c = logged_in(&s).await;
        let r = c
            .progress_read_fetching_manifest(&BookId::new(book_id(&s.dialect, 1)))
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
    // A chapter that is not one of this book's is never guessed.
    let app = Router::new()
        .route(
            "/auth/reading-progress/{id}",
            get(|| async {
                axum::Json(json!({"data": {"lastProgress": {"chapter": 3, "seconds": 40}}}))
            }),
        )
        .route(
            "/books/{id}/download-manifest",
            get(|| async {
                axum::Json(json!({"items": [{"chapterId": "c1"}, {"chapterId": "c2"}]}))
            }),
        );
    let c = authed(&serve(app).await, opts("X-Service"));
    assert!(
        c.progress_read_fetching_manifest(&BookId::new("b"))
            .await
            .unwrap()
            .is_unreadable()
    );
}

#[tokio::test]
async fn earmark_progress_says_an_unreadable_place_could_not_be_read() {
    let s = DialectServer::start(Dialect {
        progress: ProgressShape::Opaque,
        ..Dialect::default()
    })
    .await;
    let home = configured(&s.address, "X-Service", "");
    assert!(login(&home).await.status.success());
    let o = home
        .run_async(&["progress", &book_id(&s.dialect, 1)], None)
        .await;
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
        progress: ProgressShape::Opaque,
        ..Dialect::default()
    })
    .await;
    let home = configured(&s.address, "X-Service", "");
    assert!(login(&home).await.status.success());
    let b1 = book_id(&s.dialect, 1);
    let o = home
        .run_async(&["play", &b1, "--for", "2", "--audio", "null"], None)
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
                .progress_read_fetching_manifest(&b2)
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
        .progress_read_fetching_manifest(&BookId::new(book_id(&s.dialect, 1)))
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
    let item = |id: &str| ManifestItem::whole(id, "", None);
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
    let home = configured(&s.address, "X-Service", "");
    assert!(login(&home).await.status.success());
    let o = home
        .run_async(&["favorites", "add", &book_id(&s.dialect, 2)], None)
        .await;
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("other names")
            && t.contains("identity_header_prefix")
            && t.contains("\"X-Service\""),
        "{t}"
    );
    assert_writes_in_scope(&s.writes(), "X-Service", &user_id(&s.dialect));
}

#[tokio::test]
async fn series_and_narrators_are_read_in_every_shape_and_an_unreadable_series_is_unknown() {
    for people in [
        People::Ours,
        People::FlatStrings,
        People::SnakeNumbers,
        People::SeriesList,
        People::Unreadable,
    ] {
        let s = DialectServer::start(Dialect {
            people,
            ..Dialect::default()
        })
        .await;
        let c = logged_in(&s).await;
        for i in 1..=BOOKS {
            let b = c.book(&BookId::new(book_id(&s.dialect, i))).await.unwrap();
            let labels: Vec<String> = b.series.iter().map(SeriesRef::label).collect();
            assert_eq!(
                (b.narrators, labels),
                want_people(&s.dialect, i),
                "{people:?}"
            );
        }
    }
}
