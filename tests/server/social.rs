//! Favorites and bookmarks.

use crate::common::*;
use crate::harness::TestServer;
use serde_json::json;

#[tokio::test]
async fn favorites_are_idempotent_and_listed() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Cosmos").await;
    let id = b["id"].as_str().unwrap();
    for _ in 0..2 {
        let d = api
            .post(&format!("/auth/favorites/{id}"), json!(null))
            .await
            .expect(200)
            .clone();
        assert_eq!(d, json!({"bookId": id, "favorite": true}));
    }
    let list = api.get("/auth/favorites").await.expect(200).clone();
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["bookId"], id);
    assert!(list["items"][0]["createdAt"].as_i64().unwrap() > 0);
    assert_eq!(list["items"][0]["book"]["favorite"], true);
    assert_eq!(
        api.get(&format!("/books/{id}")).await.expect(200)["favorite"],
        true
    );
    let only = api.get("/books?favorites=true").await.expect(200).clone();
    assert_eq!(only["total"], 1);
    api.post("/auth/favorites/bk_nope", json!(null))
        .await
        .expect_error(404, "not_found");
    for _ in 0..2 {
        let d = api
            .delete(&format!("/auth/favorites/{id}"))
            .await
            .expect(200)
            .clone();
        assert_eq!(d, json!({"bookId": id, "favorite": false}));
    }
    assert_eq!(api.get("/auth/favorites").await.expect(200)["total"], 0);
}

#[tokio::test]
async fn bookmarks_create_list_dedupe_and_delete() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let id = b["id"].as_str().unwrap();
    let m = api.manifest(id).await;
    let ch: Vec<String> = m["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chapterId"].as_str().unwrap().to_owned())
        .collect();
    let r = api
        .post("/auth/bookmarks", json!({"bookId": id, "chapterId": ch[2], "positionSec": 0.5, "note": "great line", "clientId": "c-1"}))
        .await;
    let first = r.expect(201).clone();
    assert!(first["id"].as_str().unwrap().starts_with("bm_"));
    assert_eq!(first["note"], "great line");
    assert_eq!(first["clientId"], "c-1");
    // Same clientId: the first bookmark, 200, no duplicate.
    let r = api
        .post("/auth/bookmarks", json!({"bookId": id, "chapterId": ch[2], "positionSec": 0.5, "note": "great line", "clientId": "c-1"}))
        .await;
    assert_eq!(r.expect(200)["id"], first["id"]);
    let r = api
        .post(
            "/auth/bookmarks",
            json!({"bookId": id, "chapterId": ch[0], "positionSec": 1.25}),
        )
        .await;
    let second = r.expect(201).clone();
    assert!(second["note"].is_null());
    let list = api
        .get(&format!("/auth/bookmarks?bookId={id}"))
        .await
        .expect(200)
        .clone();
    let ids: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            second["id"].as_str().unwrap(),
            first["id"].as_str().unwrap()
        ],
        "chapter order"
    );
    api.get("/auth/bookmarks")
        .await
        .expect_error(400, "bad_request");
    api.get("/auth/bookmarks?bookId=bk_nope")
        .await
        .expect_error(404, "not_found");
    api.post(
        "/auth/bookmarks",
        json!({"bookId": id, "chapterId": "ch_nope", "positionSec": 1}),
    )
    .await
    .expect_error(400, "unknown_chapter");
    api.post(
        "/auth/bookmarks",
        json!({"bookId": id, "chapterId": ch[0], "positionSec": 1, "note": "x".repeat(2001)}),
    )
    .await
    .expect_error(400, "bad_request");
    api.post("/auth/bookmarks", json!({"bookId": id, "chapterId": ch[0]}))
        .await
        .expect_error(400, "bad_request");
    // Another user can neither see nor delete it.
    server.add_user("bob", "bobs-password").unwrap();
    let bob = Api::from_session(
        &server,
        server.login_as("bob", "bobs-password").await.unwrap(),
    );
    assert_eq!(
        bob.get(&format!("/auth/bookmarks?bookId={id}"))
            .await
            .expect(200)["total"],
        0
    );
    bob.delete(&format!(
        "/auth/bookmarks/{}",
        first["id"].as_str().unwrap()
    ))
    .await
    .expect_error(404, "not_found");
    let d = api
        .delete(&format!(
            "/auth/bookmarks/{}",
            first["id"].as_str().unwrap()
        ))
        .await
        .expect(200)
        .clone();
    assert_eq!(d["deleted"], true);
    api.delete(&format!(
        "/auth/bookmarks/{}",
        first["id"].as_str().unwrap()
    ))
    .await
    .expect_error(404, "not_found");
}
