//! Scanning: persistent ids across rescans, restarts and renames; hostile
//! file names and symlinks; the server id.

use crate::common::*;
use crate::harness::TestServer;
use serde_json::Value;
use std::collections::BTreeMap;

/// title → (book id, chapter ids)
async fn ids(api: &Api) -> BTreeMap<String, (String, Vec<String>)> {
    let list = api.get("/books?pageSize=500").await.expect(200).clone();
    let mut out = BTreeMap::new();
    for b in list["items"].as_array().unwrap() {
        let id = b["id"].as_str().unwrap().to_owned();
        let m = api.manifest(&id).await;
        let ch = m["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i: &Value| i["chapterId"].as_str().unwrap().to_owned())
            .collect();
        out.insert(b["title"].as_str().unwrap().to_owned(), (id, ch));
    }
    out
}

#[tokio::test]
async fn ids_survive_rescan_restart_and_rename() {
    let lib = small_library();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let before = ids(&api).await;
    assert_eq!(before.len(), 3);
    let server_id = api.session.server_id.clone();

    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!(ids(&api).await, before, "rescan");

    server.restart().await.unwrap();
    assert_eq!(ids(&api).await, before, "restart");
    assert_eq!(
        server.login().await.unwrap().server_id,
        server_id,
        "same data dir, same server id"
    );

    // Rename a book folder and a chapter file; the running server picks
    // up the rescan at once.
    std::fs::rename(
        lib.path().join("Science/Cosmos"),
        lib.path().join("Science/Cosmos (renamed)"),
    )
    .unwrap();
    std::fs::rename(
        lib.path().join("loose.wav"),
        lib.path().join("loose-renamed.wav"),
    )
    .unwrap();
    let summary = earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!(summary.books, 3);
    assert_eq!(summary.new_books, 0);
    let after = ids(&api).await;
    assert_eq!(
        after["Cosmos (renamed)"], before["Cosmos"],
        "renamed folder keeps its ids"
    );
    assert_eq!(
        after["loose-renamed"], before["loose"],
        "renamed file keeps its ids"
    );
    assert_eq!(
        after["A Tale of Two Cities"],
        before["A Tale of Two Cities"]
    );

    // Progress written before the rename still resolves.
    let (book, chapters) = &before["Cosmos"];
    api.progress_write(book, &chapters[1], 1.0, now_ms())
        .await
        .expect(200);

    // A new chapter in a book: old chapters keep their ids, the new one is new.
    write_wav(&lib.path().join("Fiction/Two Cities/11.wav"), 0.5, 770.0);
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    let grown = ids(&api).await;
    let (gid, gch) = &grown["A Tale of Two Cities"];
    let (bid, bch) = &before["A Tale of Two Cities"];
    assert_eq!(gid, bid);
    assert_eq!(&gch[..3], &bch[..]);
    assert_eq!(gch.len(), 4);

    // A file rewritten in place is probed again (new duration).
    write_wav(&lib.path().join("loose-renamed.wav"), 6.0, 500.0);
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    let loose = api.book_titled("loose-renamed").await;
    assert!(
        (loose["durationSec"].as_f64().unwrap() - 6.0).abs() < 0.01,
        "{loose}"
    );
    assert_eq!(
        loose["id"].as_str().unwrap(),
        before["loose"].0,
        "same path, same book"
    );

    // A removed book is gone (404), and comes back with its id.
    std::fs::rename(
        lib.path().join("Science"),
        lib.path().join(".hidden-science"),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    api.get(&format!("/books/{book}"))
        .await
        .expect_error(404, "not_found");
    api.get(&format!("/chapters/{}/play", chapters[0]))
        .await
        .expect_error(404, "not_found");
    std::fs::rename(
        lib.path().join(".hidden-science"),
        lib.path().join("Science"),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    api.get(&format!("/books/{book}")).await.expect(200);
}

#[tokio::test]
async fn a_new_data_dir_is_a_new_instance() {
    let lib = small_library();
    let a = TestServer::start(lib.path()).await.unwrap();
    let b = TestServer::start(lib.path()).await.unwrap();
    let (sa, sb) = (a.login().await.unwrap(), b.login().await.unwrap());
    assert_ne!(sa.server_id, sb.server_id);
    // A token of one instance means nothing to the other.
    let api = Api::from_session(&b, sa);
    api.get("/books").await.expect_error(401, "unauthorized");
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_out_of_the_library_and_non_utf8_names_are_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let lib = small_library();
    let outside = tempfile::tempdir().unwrap();
    write_wav(&outside.path().join("secret/s1.wav"), 1.0, 100.0);
    write_wav(&outside.path().join("secret/s2.wav"), 1.0, 100.0);
    write_wav(&outside.path().join("secret.wav"), 1.0, 100.0);
    std::os::unix::fs::symlink(outside.path().join("secret"), lib.path().join("Escape")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.wav"),
        lib.path().join("escape.wav"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", lib.path().join("Fiction/Two Cities/3.wav")).unwrap();
    // A symlink inside the library is fine.
    std::os::unix::fs::symlink(lib.path().join("loose.wav"), lib.path().join("alias.wav")).unwrap();
    // A name that is not UTF-8, as a file and as a folder.
    let bad = std::ffi::OsStr::from_bytes(b"bad-\xff\xfe-name.wav");
    write_wav(&lib.path().join(bad), 1.0, 100.0);
    let bad_dir = lib.path().join(std::ffi::OsStr::from_bytes(b"Dir-\xff"));
    write_wav(&bad_dir.join("x1.wav"), 1.0, 100.0);
    write_wav(&bad_dir.join("x2.wav"), 1.0, 100.0);
    // A file that only looks like audio.
    std::fs::write(lib.path().join("broken.mp3"), b"this is not an mp3 at all").unwrap();

    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let all = ids(&api).await;
    let titles: Vec<&str> = all.keys().map(String::as_str).collect();
    assert_eq!(
        titles,
        ["A Tale of Two Cities", "Cosmos", "alias", "loose"],
        "{titles:?}"
    );
    assert_eq!(
        all["A Tale of Two Cities"].1.len(),
        3,
        "the symlink to /etc/passwd is not a chapter"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_retargeted_after_the_scan_is_not_followed_out() {
    let lib = small_library();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.wav"), b"top secret bytes").unwrap();
    std::os::unix::fs::symlink(lib.path().join("loose.wav"), lib.path().join("link.wav")).unwrap();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("link").await;
    let m = api.manifest(b["id"].as_str().unwrap()).await;
    let play = format!(
        "/chapters/{}/play?raw=1",
        m["items"][0]["chapterId"].as_str().unwrap()
    );
    let ok = api
        .http
        .get(api.url(&play))
        .bearer_auth(&api.session.token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    // Re-point the link outside the library without a rescan.
    std::fs::remove_file(lib.path().join("link.wav")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.wav"),
        lib.path().join("link.wav"),
    )
    .unwrap();
    api.get(&play).await.expect_error(404, "not_found");
}
