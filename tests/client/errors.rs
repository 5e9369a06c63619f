//! Every row of the contract's error table maps to its typed error, over
//! real HTTP; GETs are retried on 5xx, writes never are.

use crate::harness::authed;
use crate::support::{client, fast_options, serve};
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use earmark::api::{ApiError, ErrorClass, ProgressWrite};
use earmark::domain::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `/books/{status}-{code}` answers that status with our error body.
async fn error_server(hits: Arc<AtomicUsize>) -> String {
    let h2 = hits.clone();
    let app = Router::new()
        .route(
            "/api/v1/books/{spec}",
            get(|Path(spec): Path<String>| async move {
                let (status, code) = spec.split_once('-').unwrap();
                let status = StatusCode::from_u16(status.parse().unwrap()).unwrap();
                (
                    status,
                    Json(json!({"code": code, "message": format!("said {code}")})),
                )
            }),
        )
        .route(
            "/api/v1/auth/reading-progress/{id}",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(json!({"code": "internal"})),
                )
            })
            .post(move || async move {
                h2.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(json!({"code": "internal", "message": "boom"})),
                )
            }),
        );
    let _ = hits;
    serve(app).await
}

#[tokio::test]
async fn every_row_of_the_error_table() {
    let addr = error_server(Arc::default()).await;
    let c = authed(&addr, fast_options());
    let get = |spec: &str| {
        let c = c.clone();
        let spec = spec.to_owned();
        async move { c.book(&BookId::new(spec)).await.unwrap_err() }
    };
    let e = get("400-bad_request").await;
    assert!(
        matches!(&e, ApiError::BadRequest { code: Some(c), message } if c == "bad_request" && message == "said bad_request"),
        "{e:?}"
    );
    assert!(matches!(
        get("400-listening_scope_invalid").await,
        ApiError::ScopeInvalid { .. }
    ));
    let e = get("401-unauthorized").await;
    assert!(
        matches!(&e, ApiError::Unauthorized { .. }) && e.class() == ErrorClass::Auth,
        "{e:?}"
    );
    assert!(matches!(
        get("403-forbidden").await,
        ApiError::Forbidden { .. }
    ));
    let e = get("403-license_required").await;
    assert!(
        matches!(&e, ApiError::LicenseRequired { .. }) && e.is_license(),
        "{e:?}"
    );
    assert!(matches!(
        get("404-not_found").await,
        ApiError::NotFound { .. }
    ));
    let e = get("409-listening_scope_mismatch").await;
    assert!(
        matches!(&e, ApiError::ScopeMismatch { .. }) && e.needs_login(),
        "{e:?}"
    );
    assert!(matches!(
        get("428-listening_scope_required").await,
        ApiError::ScopeRequired { .. }
    ));
    let e = get("500-internal").await;
    assert!(
        matches!(&e, ApiError::Server { status: 500, .. }) && e.is_retryable(),
        "{e:?}"
    );
    assert!(matches!(
        get("413-payload_too_large").await,
        ApiError::Status { status: 413, .. }
    ));
}

#[tokio::test]
async fn writes_are_not_retried() {
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = error_server(hits.clone()).await;
    let c = authed(&addr, fast_options());
    let w = ProgressWrite {
        chapter_id: ChapterId::new("c"),
        position: 3.0,
        client_updated_at: 1,
        finished: false,
        device_id: None,
        reset: false,
    };
    let e = c.post_progress(&BookId::new("b"), &w).await.unwrap_err();
    assert!(
        matches!(&e, ApiError::Server { status: 500, message, .. } if message == "boom"),
        "{e:?}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn calls_without_a_session_fail_before_sending() {
    let c = client("127.0.0.1:9", fast_options());
    let e = c.book(&BookId::new("x")).await.unwrap_err();
    assert!(matches!(e, ApiError::NotLoggedIn), "{e:?}");
}
