//! Redirects: the Bearer token (and the identity headers) never reach
//! another host; same-origin redirects keep working; writes are never
//! re-sent elsewhere.

use crate::support::{client, fast_options, serve};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use earmark::api::{ApiError, Auth, Token};
use earmark::domain::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<HeaderMap>>>;

fn recorder(seen: Seen) -> Router {
    let s2 = seen.clone();
    Router::new()
        .route(
            "/api/v1/books/{id}",
            get(move |h: HeaderMap| async move {
                seen.lock().unwrap().push(h);
                Json(json!({"data": {"id": "moved", "title": "Elsewhere"}}))
            }),
        )
        .route(
            "/audio.mp3",
            get(move |h: HeaderMap| async move {
                s2.lock().unwrap().push(h);
                ([(header::CONTENT_TYPE, "audio/mpeg")], vec![0u8; 16])
            }),
        )
}

#[tokio::test]
async fn token_never_follows_a_redirect_to_another_host() {
    let other_seen: Seen = Arc::default();
    let other = serve(recorder(other_seen.clone())).await;
    let home_seen: Seen = Arc::default();
    let hs = home_seen.clone();
    let o1 = other.clone();
    let o3 = other.clone();
    let home = Router::new()
        .route(
            "/api/v1/books/away",
            get(move || async move {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, format!("{o1}/api/v1/books/away"))],
                )
                    .into_response()
            }),
        )
        .route(
            "/api/v1/books/here",
            get(|| async {
                (
                    StatusCode::MOVED_PERMANENTLY,
                    [(header::LOCATION, "/api/v1/books/target")],
                )
            }),
        )
        .route(
            "/api/v1/books/target",
            get(move |h: HeaderMap| async move {
                hs.lock().unwrap().push(h);
                Json(json!({"data": {"id": "target", "title": "Here"}}))
            }),
        )
        .route(
            "/api/v1/chapters/{id}/play",
            get(move || async move {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, format!("{o3}/audio.mp3"))],
                )
            }),
        )
        .route(
            "/api/v1/auth/favorites/{id}",
            axum::routing::post(move || async move {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/api/v1/books/target")],
                )
                    .into_response()
            }),
        );
    let addr = serve(home).await;
    let c = client(&addr, fast_options());
    c.set_auth(Some(Auth {
        token: Token::new("secret-token"),
        server_id: ServerId::new("s"),
        user_id: UserId::from(1),
    }));

    // Cross-host: the request arrives, without the token.
    let b = c.book(&BookId::new("away")).await.unwrap();
    assert_eq!(b.title, "Elsewhere");
    let h = other_seen
        .lock()
        .unwrap()
        .pop()
        .expect("the other host was reached");
    assert!(
        h.get(header::AUTHORIZATION).is_none(),
        "token leaked: {h:?}"
    );
    assert!(h.keys().all(|k| !k.as_str().contains("expected")));

    // Same origin: the token is kept.
    let b = c.book(&BookId::new("here")).await.unwrap();
    assert_eq!(b.title, "Here");
    let h = home_seen.lock().unwrap().pop().unwrap();
    assert_eq!(h[header::AUTHORIZATION], "Bearer secret-token");

    // A write is never re-sent, not even to the same host.
    let e = c.add_favorite(&BookId::new("x")).await.unwrap_err();
    assert!(matches!(e, ApiError::Redirect { .. }), "{e:?}");
    assert!(home_seen.lock().unwrap().is_empty());

    // Streams: the token goes to the server, not to where it redirects.
    let item = ManifestItem::whole("c1", "c", None);
    let req = c.stream_request(&item);
    assert_eq!(req.headers.len(), 1);
    let resp = c.open_stream(&req, Some(4)).await.unwrap();
    assert_eq!(resp.bytes().await.unwrap().len(), 16);
    let h = other_seen.lock().unwrap().pop().unwrap();
    assert!(
        h.get(header::AUTHORIZATION).is_none(),
        "token leaked on a stream: {h:?}"
    );
    assert_eq!(h[header::RANGE], "bytes=4-");

    // A manifest URL on another origin never gets the token at all.
    let foreign = ManifestItem {
        url: Some(format!("{other}/audio.mp3")),
        ..item
    };
    assert!(c.stream_request(&foreign).headers.is_empty());
    assert!(
        !c.stream_url_with_token(&foreign)
            .as_str()
            .contains("access_token")
    );
}
