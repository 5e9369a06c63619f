//! Safe on a home network: nothing outside the library is ever served, and
//! login abuse gets 429 instead of unbounded password hashing.

use crate::common::*;
use crate::harness::TestServer;
use serde_json::json;
use std::time::{Duration, Instant};

const SECRET: &str = "root:x:0:0:top secret bytes";

/// Every JSON answer and cover body the caller can reach for `book`.
async fn everything_served(api: &Api, book_id: &str) -> String {
    let mut all = String::new();
    for path in [
        format!("/books/{book_id}"),
        format!("/books/{book_id}/chapters"),
        format!("/books/{book_id}/download-manifest"),
        "/books?pageSize=500".to_owned(),
        "/categories".to_owned(),
    ] {
        all.push_str(&api.get(&path).await.body.to_string());
    }
    let cover = api
        .http
        .get(api.url(&format!("/books/{book_id}/cover")))
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    all.push_str(&String::from_utf8_lossy(&cover.bytes().await.unwrap()));
    all
}

#[cfg(unix)]
#[tokio::test]
async fn a_cover_or_book_toml_symlinked_out_of_the_library_is_never_served() {
    let lib = small_library();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("passwd");
    std::fs::write(&secret, SECRET).unwrap();
    std::fs::write(
        outside.path().join("book.toml"),
        format!("title = \"{SECRET}\"\ndescription = \"{SECRET}\"\n"),
    )
    .unwrap();
    // Cosmos has no cover and no book.toml of its own: both are links out.
    let cosmos = lib.path().join("Science/Cosmos");
    std::os::unix::fs::symlink(&secret, cosmos.join("cover.jpg")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("book.toml"), cosmos.join("book.toml")).unwrap();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Cosmos").await;
    let id = b["id"].as_str().unwrap();
    assert!(b["coverUrl"].is_null(), "the outside cover is skipped: {b}");
    api.get(&format!("/books/{id}/cover"))
        .await
        .expect_error(404, "not_found");
    let served = everything_served(&api, id).await;
    assert!(!served.contains("top secret"), "leaked: {served}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_cover_re_pointed_out_of_the_library_after_the_scan_is_404() {
    let lib = small_library();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("passwd");
    std::fs::write(&secret, SECRET).unwrap();
    let two = lib.path().join("Fiction/Two Cities");
    let real_cover = lib.path().join("Fiction/cover-file.jpg");
    std::fs::rename(two.join("cover.jpg"), &real_cover).unwrap();
    std::os::unix::fs::symlink(&real_cover, two.join("cover.jpg")).unwrap();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let id = b["id"].as_str().unwrap().to_owned();
    let cover = format!("/books/{id}/cover");
    let ok = api
        .http
        .get(api.url(&cover))
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200, "a link inside the library is served");
    // The scan stored where the link led; turn that file into a link out
    // of the library, without a rescan.
    std::fs::remove_file(&real_cover).unwrap();
    std::os::unix::fs::symlink(&secret, &real_cover).unwrap();
    let r = api.get(&cover).await;
    r.expect_error(404, "not_found");
    assert!(!r.body.to_string().contains("top secret"));
    let served = everything_served(&api, &id).await;
    assert!(!served.contains("top secret"), "leaked: {served}");
}

async fn login_status(http: &reqwest::Client, base: &str, user: &str, password: &str) -> Resp {
    let res = http
        .post(format!("{base}/auth/login"))
        .json(&json!({"username": user, "password": password}))
        .send()
        .await
        .unwrap();
    let retry_after = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let r = into_resp(res).await;
    if r.status == 429 {
        let secs: u64 = retry_after
            .expect("a 429 carries Retry-After")
            .parse()
            .expect("Retry-After in whole seconds");
        assert!(secs >= 1, "Retry-After {secs}");
        r.expect_error(429, "too_many_requests");
    }
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_wrong_logins_hash_at_most_n_at_once_and_the_rest_get_429() {
    const N: usize = 2;
    let lib = small_library();
    let server = TestServer::start_with(lib.path(), |c| {
        c.login.max_concurrent_hashes = N;
        c.login.hash_wait = Duration::from_millis(20);
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let base = server.base_url().to_owned();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (http, base) = (http.clone(), base.clone());
            tokio::spawn(async move {
                login_status(&http, &base, "alice", &format!("wrong {i}"))
                    .await
                    .status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    let refused = statuses.iter().filter(|&&s| s == 429).count();
    let wrong = statuses.iter().filter(|&&s| s == 401).count();
    assert_eq!(refused + wrong, 20, "only 401 or 429: {statuses:?}");
    assert!(refused >= 1, "some are refused: {statuses:?}");
    let stats = server.login_stats().unwrap();
    assert!(stats.peak_hashes <= N, "{stats:?}");
    assert!(stats.peak_hashes >= 1, "{stats:?}");
    assert_eq!(stats.hashes as usize, wrong, "{stats:?}");
    assert_eq!(
        (stats.rejected_busy + stats.rejected_backoff) as usize,
        refused,
        "{stats:?}"
    );
}

#[tokio::test]
async fn repeated_failures_back_off_with_429_then_a_good_login_works_again() {
    let lib = small_library();
    let server = TestServer::start_with(lib.path(), |c| {
        c.login.free_failures = 3;
        c.login.first_backoff = Duration::from_millis(1500);
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let base = server.base_url().to_owned();
    for _ in 0..4 {
        login_status(&http, &base, "alice", "wrong")
            .await
            .expect_error(401, "invalid_credentials");
    }
    // Locked out now: even the right password waits, and nothing is hashed.
    let hashed = server.login_stats().unwrap().hashes;
    login_status(&http, &base, "alice", &server.password)
        .await
        .expect_error(429, "too_many_requests");
    login_status(&http, &base, "someone-else", "x")
        .await
        .expect_error(429, "too_many_requests");
    assert_eq!(server.login_stats().unwrap().hashes, hashed);
    // Once the back-off has passed, the right password logs in.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = login_status(&http, &base, "alice", &server.password).await;
        if r.status == 200 {
            break;
        }
        assert_eq!(r.status, 429, "{}", r.body);
        assert!(Instant::now() < deadline, "still locked out");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A success clears the failures: a wrong password is a plain 401 again.
    login_status(&http, &base, "alice", "wrong")
        .await
        .expect_error(401, "invalid_credentials");
}

/// Fires `n` wrong logins at once (user names from `user`) and returns their
/// statuses.
async fn wrong_login_burst(base: &str, n: usize, user: fn(usize) -> String) -> Vec<u16> {
    let http = reqwest::Client::new();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (http, base) = (http.clone(), base.to_owned());
            tokio::spawn(async move {
                login_status(&http, &base, &user(i), &format!("wrong {i}"))
                    .await
                    .status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    statuses
}

/// A server whose hash slots never run out during a burst, so every 429 is
/// the failure limit's.
async fn patient_server(lib: &std::path::Path) -> TestServer {
    TestServer::start_with(lib, |c| c.login.hash_wait = Duration::from_secs(60))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_concurrent_wrong_logins_for_one_user_get_six_hashes_then_the_right_password_works() {
    let lib = small_library();
    let server = patient_server(lib.path()).await;
    let free = earmark::server::login::LoginLimits::default().free_failures as usize;
    let statuses = wrong_login_burst(server.base_url(), 60, |_| "alice".to_owned()).await;
    let wrong = statuses.iter().filter(|&&s| s == 401).count();
    let refused = statuses.iter().filter(|&&s| s == 429).count();
    // As many guesses as the same logins one after another: the free
    // failures and the one that starts the back-off.
    assert_eq!(wrong, free + 1, "{statuses:?}");
    assert_eq!(refused, 60 - wrong, "only 401 or 429: {statuses:?}");
    let stats = server.login_stats().unwrap();
    assert_eq!(stats.hashes as usize, wrong, "{stats:?}");
    assert_eq!(stats.rejected_backoff as usize, refused, "{stats:?}");
    // Bounded memory: nothing left in flight, one name and one address remembered.
    assert_eq!(stats.keys_in_flight, 0, "{stats:?}");
    assert_eq!(stats.keys_remembered, 2, "{stats:?}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = login_status(&http, server.base_url(), "alice", &server.password).await;
        if r.status == 200 {
            break;
        }
        assert_eq!(r.status, 429, "{}", r.body);
        assert!(Instant::now() < deadline, "still locked out");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        server.login_stats().unwrap().hashes as usize,
        wrong + 1,
        "the back-off polls were never hashed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_concurrent_wrong_logins_for_sixty_names_from_one_address_get_six_hashes() {
    let lib = small_library();
    let server = patient_server(lib.path()).await;
    let free = earmark::server::login::LoginLimits::default().free_failures as usize;
    let statuses = wrong_login_burst(server.base_url(), 60, |i| format!("user{i}")).await;
    let wrong = statuses.iter().filter(|&&s| s == 401).count();
    assert_eq!(wrong, free + 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|&&s| s == 429).count(), 60 - wrong);
    let stats = server.login_stats().unwrap();
    assert_eq!(stats.hashes as usize, wrong, "{stats:?}");
    assert_eq!(stats.keys_in_flight, 0, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_right_logins_from_one_address_all_log_in() {
    let lib = small_library();
    let server = patient_server(lib.path()).await;
    let http = reqwest::Client::new();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (http, base, pw) = (
                http.clone(),
                server.base_url().to_owned(),
                server.password.clone(),
            );
            tokio::spawn(async move { login_status(&http, &base, "alice", &pw).await.status })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    // Held while six were in flight, then admitted as they were found right.
    assert!(statuses.iter().all(|&s| s == 200), "{statuses:?}");
    let stats = server.login_stats().unwrap();
    assert_eq!(stats.hashes, 20, "{stats:?}");
    assert_eq!(stats.keys_in_flight, 0, "{stats:?}");
}
