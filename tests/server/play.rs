//! Streaming: exact bytes, Range, 416, token in the query, covers, and a
//! server stopped mid-stream then restarted on the same port.

use crate::common::*;
use crate::harness::TestServer;
use earmark::server::LicenseSetting;
use std::time::{Duration, Instant};

async fn first_chapter(api: &Api, title: &str) -> (String, std::path::PathBuf) {
    let b = api.book_titled(title).await;
    let m = api.manifest(b["id"].as_str().unwrap()).await;
    (
        m["items"][0]["chapterId"].as_str().unwrap().to_owned(),
        std::path::PathBuf::new(),
    )
}

#[tokio::test]
async fn play_streams_exact_bytes_with_ranges() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let (cid, _) = first_chapter(&api, "Two Cities").await;
    let file = std::fs::read(lib.path().join("Fiction/Two Cities/1.wav")).unwrap();
    let url = api.url(&format!("/chapters/{cid}/play?raw=1"));
    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "audio/wav");
    assert_eq!(res.headers()["accept-ranges"], "bytes");
    assert_eq!(res.bytes().await.unwrap().as_ref(), &file[..]);

    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .header("range", "bytes=100-199")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(
        res.headers()["content-range"],
        format!("bytes 100-199/{}", file.len())
    );
    assert_eq!(res.bytes().await.unwrap().as_ref(), &file[100..200]);

    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .header("range", "bytes=-10")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(
        res.bytes().await.unwrap().as_ref(),
        &file[file.len() - 10..]
    );

    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .header("range", format!("bytes={}-", file.len() - 5))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(res.bytes().await.unwrap().as_ref(), &file[file.len() - 5..]);

    let res = api
        .http
        .head(&url)
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-length"],
        file.len().to_string().as_str()
    );
    assert_eq!(res.bytes().await.unwrap().len(), 0);

    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .header("range", format!("bytes={}-", file.len() + 10))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 416);
    assert_eq!(
        res.headers()["content-range"],
        format!("bytes */{}", file.len())
    );
}

#[tokio::test]
async fn play_accepts_the_token_in_the_query() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let (cid, _) = first_chapter(&api, "Cosmos").await;
    let file = std::fs::read(lib.path().join("Science/Cosmos/a.wav")).unwrap();
    let base = api.url(&format!("/chapters/{cid}/play?raw=1"));
    let res = reqwest::get(format!("{base}&access_token={}", api.session.token))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().as_ref(), &file[..]);
    let res = reqwest::Client::new()
        .get(format!("{base}&access_token={}", api.session.token))
        .header("range", "bytes=0-3")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(res.bytes().await.unwrap().as_ref(), b"RIFF");
    let wrong = into_resp(
        reqwest::get(format!("{base}&access_token=deadbeef"))
            .await
            .unwrap(),
    )
    .await;
    wrong.expect_error(401, "unauthorized");
    let none = into_resp(reqwest::get(&base).await.unwrap()).await;
    none.expect_error(401, "unauthorized");
    // The token query is only for play and cover; JSON endpoints want the header.
    let r = into_resp(
        reqwest::get(api.url(&format!("/books?access_token={}", api.session.token)))
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(401, "unauthorized");
    server.set_license(LicenseSetting::Missing).unwrap();
    let r = into_resp(
        reqwest::get(format!("{base}&access_token={}", api.session.token))
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(403, "license_required");
}

#[tokio::test]
async fn ids_with_path_traversal_are_not_found() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    for id in [
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "%2E%2E",
        "ch_..%2Floose.wav",
        "..%5C..%5Cwin.ini",
    ] {
        api.get(&format!("/chapters/{id}/play?raw=1"))
            .await
            .expect_error(404, "not_found");
        api.get(&format!("/books/{id}"))
            .await
            .expect_error(404, "not_found");
        api.get(&format!("/books/{id}/cover"))
            .await
            .expect_error(404, "not_found");
    }
}

#[tokio::test]
async fn covers_are_served_or_404() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let res = api
        .http
        .get(api.url(b["coverUrl"].as_str().unwrap()))
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/jpeg");
    assert_eq!(
        res.bytes().await.unwrap().as_ref(),
        b"\xff\xd8\xff\xe0 not really a jpeg"
    );
    let loose = api.book_titled("loose").await;
    api.get(&format!("/books/{}/cover", loose["id"].as_str().unwrap()))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn shutdown_cuts_open_streams_and_restart_reuses_the_port() {
    let lib = small_library();
    // A file big enough that the client's paused read leaves it unfinished.
    write_wav(&lib.path().join("Big/big.wav"), 1800.0, 220.0);
    let big_len = std::fs::metadata(lib.path().join("Big/big.wav"))
        .unwrap()
        .len() as usize;
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let (cid, _) = first_chapter(&api, "Big").await;
    let url = api.url(&format!("/chapters/{cid}/play?raw=1"));
    let mut res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let first = res.chunk().await.unwrap().unwrap();
    assert!(!first.is_empty());
    let addr = server.addr();
    let t = Instant::now();
    server.stop().await;
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "shutdown waited for the stream: {:?}",
        t.elapsed()
    );
    // The stream ends with an error (or EOF) instead of hanging.
    let rest = tokio::time::timeout(Duration::from_secs(5), async {
        let mut total = first.len();
        loop {
            match res.chunk().await {
                Ok(Some(c)) => total += c.len(),
                Ok(None) | Err(_) => return total,
            }
        }
    })
    .await
    .expect("stream still open after shutdown");
    assert!(rest < big_len, "the whole file was sent after shutdown");
    assert!(
        reqwest::get(api.url("/books")).await.is_err(),
        "port still accepting"
    );
    server.restart().await.unwrap();
    assert_eq!(server.addr(), addr);
    let api2 = Api::login(&server).await;
    let (cid2, _) = first_chapter(&api2, "Big").await;
    assert_eq!(cid, cid2, "ids survive a restart");
    // The old token is still valid after a restart (same data dir).
    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .header("range", "bytes=0-3")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
}

#[tokio::test]
async fn embedded_cover_art_is_extracted_and_served() {
    let lib = tempfile::tempdir().unwrap();
    let src = demo_library()
        .join("Fables/Die Bremer Stadtmusikanten – Märchen/Die Bremer Stadtmusikanten.mp3");
    std::fs::create_dir_all(lib.path().join("Tales/Bremen")).unwrap();
    std::fs::copy(&src, lib.path().join("Tales/Bremen/bremen.mp3")).unwrap();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Bremer").await;
    let url = api.url(b["coverUrl"].as_str().expect("embedded art gives a cover"));
    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let ctype = res.headers()["content-type"].to_str().unwrap().to_owned();
    let bytes = res.bytes().await.unwrap();
    let is_jpeg = bytes.starts_with(&[0xff, 0xd8]);
    let is_png = bytes.starts_with(b"\x89PNG");
    assert!(
        is_jpeg && ctype == "image/jpeg" || is_png && ctype == "image/png",
        "{ctype}"
    );
    // After a restart (cached probe) the cover is still there.
    server.restart().await.unwrap();
    let res = api
        .http
        .get(&url)
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap(), bytes);
}
