//! Reading progress, the merge policy, batch writes and playback settings.

use crate::common::*;
use crate::harness::TestServer;
use serde_json::{Value, json};

struct Book {
    id: String,
    chapters: Vec<String>,
}

async fn two_cities(api: &Api) -> Book {
    let b = api.book_titled("Two Cities").await;
    let id = b["id"].as_str().unwrap().to_owned();
    let m = api.manifest(&id).await;
    let chapters = m["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chapterId"].as_str().unwrap().to_owned())
        .collect();
    Book { id, chapters }
}

#[tokio::test]
async fn write_then_read_with_book_position() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let path = format!("/auth/reading-progress/{}", book.id);
    let empty = api.get(&path).await.expect(200).clone();
    assert_eq!(empty["bookId"], book.id.as_str());
    assert!(empty["progress"].is_null());
    assert!(empty["playbackSettings"].is_null());
    let at = now_ms() - 1000;
    let r = api
        .post(&path, json!({"chapterId": book.chapters[1], "positionSec": 0.5, "clientUpdatedAt": at, "deviceId": "laptop"}))
        .await;
    let d = r.expect(200).clone();
    assert_eq!(d["applied"], true);
    let p = &d["progress"];
    assert_eq!(p["bookId"], book.id.as_str());
    assert_eq!(p["chapterId"], book.chapters[1].as_str());
    assert_eq!(p["positionSec"], 0.5);
    assert!(
        (p["bookPositionSec"].as_f64().unwrap() - 2.5).abs() < 0.01,
        "{p}"
    );
    assert_eq!(p["finished"], false);
    assert_eq!(p["clientUpdatedAt"], at);
    assert!(p["serverUpdatedAt"].as_i64().unwrap() >= at);
    assert_eq!(p["deviceId"], "laptop");
    assert_eq!(p["revision"], 1);
    let read = api.get(&path).await.expect(200).clone();
    assert_eq!(read["progress"], *p);
    // The book object carries it too.
    let b = api
        .get(&format!("/books/{}", book.id))
        .await
        .expect(200)
        .clone();
    assert_eq!(b["progress"]["chapterId"], book.chapters[1].as_str());
    // Delete.
    let d = api.delete(&path).await.expect(200).clone();
    assert_eq!(d["deleted"], true);
    let d = api.delete(&path).await.expect(200).clone();
    assert_eq!(d["deleted"], false);
    assert!(api.get(&path).await.expect(200)["progress"].is_null());
}

#[tokio::test]
async fn merge_policy_newer_wins_and_equal_is_idempotent() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let t = now_ms() - 60_000;
    let r = api
        .progress_write(&book.id, &book.chapters[1], 0.7, t)
        .await;
    assert_eq!(r.expect(200)["applied"], true);
    // Older: not applied, the stored record comes back.
    let r = api
        .progress_write(&book.id, &book.chapters[2], 1.0, t - 5)
        .await;
    let d = r.expect(200);
    assert_eq!(d["applied"], false);
    assert_eq!(d["progress"]["chapterId"], book.chapters[1].as_str());
    assert_eq!(d["progress"]["revision"], 1);
    // Equal timestamp: a retry, kept.
    let r = api
        .progress_write(&book.id, &book.chapters[2], 1.0, t)
        .await;
    let d = r.expect(200);
    assert_eq!(d["applied"], false);
    assert_eq!(d["progress"]["positionSec"], 0.7);
    // Newer wins, even backwards in the book.
    let r = api
        .progress_write(&book.id, &book.chapters[0], 1.5, t + 1)
        .await;
    let d = r.expect(200);
    assert_eq!(d["applied"], true);
    assert_eq!(d["progress"]["chapterId"], book.chapters[0].as_str());
    assert_eq!(d["progress"]["revision"], 2);
}

#[tokio::test]
async fn merge_policy_clamps_and_validates() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let path = format!("/auth/reading-progress/{}", book.id);
    // A timestamp from the future is clamped to the server clock.
    let before = now_ms();
    let r = api
        .progress_write(&book.id, &book.chapters[0], 1.0, before + 3_600_000)
        .await;
    let p = r.expect(200)["progress"].clone();
    assert!(p["clientUpdatedAt"].as_i64().unwrap() <= now_ms(), "{p}");
    assert!(p["clientUpdatedAt"].as_i64().unwrap() >= before);
    // A position past the chapter end is clamped to its duration (1 s).
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let r = api
        .progress_write(&book.id, &book.chapters[1], 99.0, now_ms() + 5)
        .await;
    let p = r.expect(200)["progress"].clone();
    assert!(
        (p["positionSec"].as_f64().unwrap() - 1.0).abs() < 0.01,
        "{p}"
    );
    // Unknown chapter, chapter of another book, bad numbers, missing fields.
    let cosmos = api.book_titled("Cosmos").await;
    let other = api.manifest(cosmos["id"].as_str().unwrap()).await;
    let other_ch = other["items"][0]["chapterId"].as_str().unwrap();
    for ch in ["ch_nope", other_ch] {
        api.progress_write(&book.id, ch, 1.0, now_ms())
            .await
            .expect_error(400, "unknown_chapter");
    }
    for body in [
        json!({"chapterId": book.chapters[0], "positionSec": -1, "clientUpdatedAt": now_ms()}),
        json!({"chapterId": book.chapters[0], "positionSec": 1, "clientUpdatedAt": 0}),
        json!({"chapterId": book.chapters[0], "positionSec": "1", "clientUpdatedAt": now_ms()}),
        json!({"chapterId": book.chapters[0], "clientUpdatedAt": now_ms()}),
        json!({"positionSec": 1, "clientUpdatedAt": now_ms()}),
        json!({"chapterId": book.chapters[0], "positionSec": 1}),
    ] {
        api.post(&path, body).await.expect_error(400, "bad_request");
    }
    // Unknown book.
    api.progress_write("bk_nope", &book.chapters[0], 1.0, now_ms())
        .await
        .expect_error(404, "not_found");
    api.get("/auth/reading-progress/bk_nope")
        .await
        .expect_error(404, "not_found");
    // Malformed JSON names the problem.
    let r = into_resp(
        api.http
            .post(api.url(&path))
            .bearer_auth(&api.session.token)
            .header("X-Service-Expected-Server-Id", &api.session.server_id)
            .header(
                "X-Service-Expected-User-Id",
                api.session.user_id.to_string(),
            )
            .header("content-type", "application/json")
            .body("{\"chapterId\": ")
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(400, "bad_request");
    assert!(r.body["message"].as_str().unwrap().contains("JSON"));
}

#[tokio::test]
async fn zero_guard_protects_progress_unless_reset_or_finished() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let path = format!("/auth/reading-progress/{}", book.id);
    let t = now_ms() - 60_000;
    api.progress_write(&book.id, &book.chapters[2], 1.0, t)
        .await
        .expect(200);
    let r = api
        .progress_write(&book.id, &book.chapters[0], 0.0, t + 10)
        .await;
    let d = r.expect(200);
    assert_eq!(d["applied"], false, "a 0 must not overwrite progress");
    assert_eq!(d["progress"]["chapterId"], book.chapters[2].as_str());
    // Further into the first chapter is an ordinary newer write.
    let r = api
        .progress_write(&book.id, &book.chapters[0], 1.5, t + 20)
        .await;
    assert_eq!(r.expect(200)["applied"], true);
    api.progress_write(&book.id, &book.chapters[2], 1.0, t + 30)
        .await
        .expect(200);
    // An explicit reset goes through.
    let r = api
        .post(&path, json!({"chapterId": book.chapters[0], "positionSec": 0, "clientUpdatedAt": t + 40, "reset": true}))
        .await;
    let d = r.expect(200);
    assert_eq!(d["applied"], true);
    assert_eq!(d["progress"]["positionSec"], 0.0);
    // finished is kept until a newer write says otherwise.
    let r = api
        .post(&path, json!({"chapterId": book.chapters[2], "positionSec": 1.5, "clientUpdatedAt": t + 50, "finished": true}))
        .await;
    assert_eq!(r.expect(200)["progress"]["finished"], true);
    let r = api
        .progress_write(&book.id, &book.chapters[0], 0.0, t + 60)
        .await;
    assert_eq!(
        r.expect(200)["applied"],
        false,
        "zero guard also protects a finished book"
    );
    assert_eq!(
        api.get(&path).await.expect(200)["progress"]["finished"],
        true
    );
}

#[tokio::test]
async fn progress_is_per_user() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let alice = Api::login(&server).await;
    server.add_user("bob", "hunter2hunter2").unwrap();
    let bob = Api::from_session(
        &server,
        server.login_as("bob", "hunter2hunter2").await.unwrap(),
    );
    let book = two_cities(&alice).await;
    alice
        .progress_write(&book.id, &book.chapters[1], 0.5, now_ms())
        .await
        .expect(200);
    let r = bob
        .get(&format!("/auth/reading-progress/{}", book.id))
        .await;
    assert!(r.expect(200)["progress"].is_null());
    // Bob may not write with Alice's user id.
    let mut forged = bob.clone();
    forged.session.user_id = alice.session.user_id;
    forged
        .progress_write(&book.id, &book.chapters[0], 1.0, now_ms())
        .await
        .expect_error(409, "listening_scope_mismatch");
}

#[tokio::test]
async fn batch_answers_per_item() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let loose = api.book_titled("loose").await;
    let loose_id = loose["id"].as_str().unwrap();
    let loose_ch = api.manifest(loose_id).await["items"][0]["chapterId"]
        .as_str()
        .unwrap()
        .to_owned();
    let t = now_ms() - 1000;
    let r = api
        .post(
            "/auth/reading-progress/batch",
            json!({"items": [
                {"bookId": book.id, "chapterId": book.chapters[1], "positionSec": 0.25, "clientUpdatedAt": t},
                {"bookId": "bk_nope", "chapterId": book.chapters[1], "positionSec": 1, "clientUpdatedAt": t},
                {"bookId": loose_id, "chapterId": "ch_nope", "positionSec": 1, "clientUpdatedAt": t},
                {"bookId": loose_id, "chapterId": loose_ch, "positionSec": "x", "clientUpdatedAt": t},
                {"chapterId": loose_ch},
                {"bookId": loose_id, "chapterId": loose_ch, "positionSec": 2, "clientUpdatedAt": t},
                {"bookId": book.id, "chapterId": book.chapters[1], "positionSec": 0.5, "clientUpdatedAt": t - 1},
            ]}),
        )
        .await;
    let results = r.expect(200)["results"].as_array().unwrap().clone();
    let statuses: Vec<u64> = results
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 404, 400, 400, 400, 200, 200], "{results:?}");
    assert_eq!(results[0]["applied"], true);
    assert_eq!(results[0]["progress"]["positionSec"], 0.25);
    assert_eq!(results[1]["code"], "not_found");
    assert_eq!(results[2]["code"], "unknown_chapter");
    assert_eq!(results[3]["code"], "bad_request");
    assert!(results[4]["bookId"].is_null());
    assert_eq!(results[6]["applied"], false);
    assert_eq!(results[6]["progress"]["positionSec"], 0.25);
    let read: Value = api
        .get(&format!("/auth/reading-progress/{loose_id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(read["progress"]["positionSec"], 2.0);
    // Envelope errors fail the whole request.
    let many: Vec<Value> = (0..101).map(|_| json!({"bookId": loose_id})).collect();
    for body in [
        json!({}),
        json!({"items": []}),
        json!({"items": {}}),
        json!({"items": many}),
        json!([1]),
    ] {
        api.post("/auth/reading-progress/batch", body)
            .await
            .expect_error(400, "bad_request");
    }
}

#[tokio::test]
async fn playback_settings_ride_along_with_progress() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let book = two_cities(&api).await;
    let path = format!("/auth/playback-settings/{}", book.id);
    let t = now_ms() - 1000;
    let r = api
        .post(
            &path,
            json!({"speed": 1.25, "volume": 0.8, "clientUpdatedAt": t}),
        )
        .await;
    let d = r.expect(200).clone();
    assert_eq!(d["applied"], true);
    assert_eq!(d["playbackSettings"]["speed"], 1.25);
    assert_eq!(d["playbackSettings"]["volume"], 0.8);
    let r = api
        .post(&path, json!({"speed": 2.0, "clientUpdatedAt": t - 1}))
        .await;
    let d = r.expect(200).clone();
    assert_eq!(d["applied"], false);
    assert_eq!(d["playbackSettings"]["speed"], 1.25);
    let read = api
        .get(&format!("/auth/reading-progress/{}", book.id))
        .await
        .expect(200)
        .clone();
    assert_eq!(read["playbackSettings"]["speed"], 1.25);
    assert_eq!(read["playbackSettings"]["clientUpdatedAt"], t);
    for body in [
        json!({"speed": 0.4, "clientUpdatedAt": t + 1}),
        json!({"speed": 3.5, "clientUpdatedAt": t + 1}),
        json!({"speed": 1.0, "volume": 1.5, "clientUpdatedAt": t + 1}),
        json!({"speed": 1.0}),
        json!({"volume": 0.5, "clientUpdatedAt": t + 1}),
    ] {
        api.post(&path, body).await.expect_error(400, "bad_request");
    }
    api.post(
        "/auth/playback-settings/bk_nope",
        json!({"speed": 1.0, "clientUpdatedAt": t}),
    )
    .await
    .expect_error(404, "not_found");
    assert_eq!(api.delete(&path).await.expect(200)["deleted"], true);
    assert!(
        api.get(&format!("/auth/reading-progress/{}", book.id))
            .await
            .expect(200)["playbackSettings"]
            .is_null()
    );
}
