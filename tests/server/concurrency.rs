//! 50 concurrent progress writes from 5 users: every one is answered, and
//! nothing is lost or crossed between users.

use crate::common::*;
use crate::harness::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_writes_from_five_users() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let mut users = Vec::new();
    for u in 0..5 {
        let name = format!("user{u}");
        server.add_user(&name, "password-of-a-user").unwrap();
        users.push(Api::from_session(
            &server,
            server.login_as(&name, "password-of-a-user").await.unwrap(),
        ));
    }
    let b = users[0].book_titled("Cosmos").await;
    let book_id = b["id"].as_str().unwrap().to_owned();
    let m = users[0].manifest(&book_id).await;
    let chapter = m["items"][0]["chapterId"].as_str().unwrap().to_owned(); // 3 s long
    let base = now_ms() - 100_000;
    let mut tasks = Vec::new();
    for (u, api) in users.iter().enumerate() {
        for i in 0..10 {
            let api = api.clone();
            let (book_id, chapter) = (book_id.clone(), chapter.clone());
            // The position encodes the user and the write: u.i / 10 s.
            let pos = u as f64 * 0.5 + i as f64 * 0.01 + 0.1;
            tasks.push(tokio::spawn(async move {
                let r = api.progress_write(&book_id, &chapter, pos, base + i).await;
                (u, i, r.status, r.body)
            }));
        }
    }
    let mut applied = [0u32; 5];
    for t in tasks {
        let (u, i, status, body) = t.await.unwrap();
        assert_eq!(status, 200, "user {u} write {i}: {body}");
        let d = &body["data"];
        if d["applied"] == true {
            applied[u] += 1;
        }
        // Whatever the answer, it is this user's record.
        let pos = d["progress"]["positionSec"].as_f64().unwrap();
        let owner = ((pos - 0.1) / 0.5 + 1e-6).floor() as usize;
        assert_eq!(owner, u, "user {u} got another user's record: {d}");
    }
    for (u, api) in users.iter().enumerate() {
        let p = api
            .get(&format!("/auth/reading-progress/{book_id}"))
            .await
            .expect(200)["progress"]
            .clone();
        let want = u as f64 * 0.5 + 9.0 * 0.01 + 0.1;
        assert!(
            (p["positionSec"].as_f64().unwrap() - want).abs() < 1e-9,
            "user {u}: {p}"
        );
        assert_eq!(p["clientUpdatedAt"], base + 9);
        assert_eq!(
            p["revision"].as_u64().unwrap(),
            applied[u] as u64,
            "user {u}"
        );
        assert!(applied[u] >= 1);
    }
}
