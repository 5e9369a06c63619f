//! Cover fetches: the book's `coverUrl` on the server (with the token),
//! else `/books/{bookId}/cover`; another origin never gets the token; a
//! 404 is "no cover"; a cover over the cap is an error, not cut short.

use crate::harness::TestServer;
use crate::support::serve;
use axum::Router;
use axum::http::HeaderMap;
use axum::routing::get;
use earmark::api::{ApiError, BaseUrl, Client, ClientOptions, MAX_COVER_BYTES};
use earmark::domain::*;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn covers_come_with_the_token_from_the_server_and_without_it_from_elsewhere() {
    let lib = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let server = TestServer::start(lib).await.unwrap();
    let c = Client::new(
        BaseUrl::parse(server.base_url()).unwrap(),
        ClientOptions::default(),
    )
    .unwrap();
    c.login(&server.username, &server.password).await.unwrap();
    let books = c.books(&Default::default()).await.unwrap();
    let with = books.iter().find(|b| b.cover_url.is_some()).unwrap();

    // The coverUrl, and the same cover by the book's id alone.
    let by_url = c.cover(with).await.unwrap().expect("a cover");
    let by_id = c
        .cover_bytes(&with.id, None, MAX_COVER_BYTES)
        .await
        .unwrap()
        .expect("the same cover at /books/{id}/cover");
    assert_eq!(by_url, by_id);
    // No cover at all: 404, which is "none", not an error.
    let none = c
        .cover_bytes(&BookId::new("bk_no_such_book"), None, MAX_COVER_BYTES)
        .await
        .unwrap();
    assert!(none.is_none());
    // Over the cap: refused, naming the cap.
    let e = c
        .cover_bytes(&with.id, with.cover_url.as_deref(), 100)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Network { message, .. } if message.contains("larger than 100 bytes")),
        "{e:?}"
    );

    // A cover on another origin is fetched without the token.
    let seen: Arc<Mutex<Vec<Option<String>>>> = Default::default();
    let seen2 = seen.clone();
    let other = serve(Router::new().route(
        "/art/cover.jpg",
        get(move |h: HeaderMap| {
            let auth = h
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned());
            seen2.lock().unwrap().push(auth);
            async { "not checked here" }
        }),
    ))
    .await;
    let elsewhere = format!("{other}/art/cover.jpg");
    let got = c
        .cover_bytes(&with.id, Some(&elsewhere), MAX_COVER_BYTES)
        .await
        .unwrap()
        .expect("the bytes");
    assert_eq!(&got[..], b"not checked here");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![None],
        "no token to another origin"
    );
}
