//! Offline listening (issue 11): `earmark download`, `downloads`,
//! `downloads remove` and `play` of a downloaded book, with the real
//! binary and the reference server over 127.0.0.1, stopped and restarted
//! on the same data dir.

use crate::harness::TestServer;
use crate::harness::{Home, logged_in, text, titled};
use crate::support::wav;
use earmark::domain::BookId;
use earmark::offline::Snapshot;
use earmark::server::LicenseSetting;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One book "Short" of two WAV chapters of `secs` seconds each.
fn short_library(secs: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("Short");
    std::fs::create_dir_all(&b).unwrap();
    wav(&b.join("01.wav"), secs);
    wav(&b.join("02.wav"), secs);
    std::fs::write(
        b.join("book.toml"),
        "title = \"Short\"\nauthor = \"Test\"\n",
    )
    .unwrap();
    dir
}

struct Setup {
    server: TestServer,
    home: Home,
    book: BookId,
    lib: tempfile::TempDir,
}

async fn setup(secs: u32) -> Setup {
    let lib = short_library(secs);
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, _, books) = logged_in(&server).await;
    let book = titled(&books, "Short").id.clone();
    Setup {
        server,
        home,
        book,
        lib,
    }
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", text(o)))
}

/// The complete files of a download, in server order.
fn downloaded_files(dir: &Path) -> Vec<PathBuf> {
    let s: Snapshot =
        serde_json::from_slice(&std::fs::read(dir.join("snapshot.json")).unwrap()).unwrap();
    s.files.iter().map(|f| dir.join(f.name())).collect()
}

fn assert_identical_to_library(dir: &Path, lib: &Path) {
    let files = downloaded_files(dir);
    assert_eq!(files.len(), 2);
    for (got, name) in files.iter().zip(["01.wav", "02.wav"]) {
        let want = std::fs::read(lib.join("Short").join(name)).unwrap();
        let have = std::fs::read(got).unwrap();
        assert!(have == want, "{} differs from {name}", got.display());
    }
}

fn part_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "part"))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_is_byte_identical_is_listed_stops_on_license_and_removing_it_frees_the_space() {
    let s = setup(3).await;
    let id = s.book.as_str();
    let o = s.home.run(&["--json", "download", id], None);
    assert!(o.status.success(), "{}", text(&o));
    let v = json_of(&o);
    assert_eq!(v["state"], "complete", "{v}");
    assert_eq!(v["chapters"], 2);
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert_identical_to_library(&dir, s.lib.path());
    assert!(part_files(&dir).is_empty());
    let size = v["bytes"].as_u64().unwrap();
    assert!(size > 2 * 6000, "{v}");

    let o = s.home.run(&["--json", "downloads"], None);
    let l = json_of(&o);
    assert_eq!(l["downloads"][0]["bookId"], id, "{l}");
    assert_eq!(l["downloads"][0]["state"], "complete");
    assert_eq!(l["downloads"][0]["title"], "Short");
    assert_eq!(l["usedBytes"].as_u64(), Some(size));

    // A reachable server that says the license is required stops the
    // downloaded book too.
    s.server.set_license(LicenseSetting::Expired).unwrap();
    let o = s
        .home
        .run(&["play", id, "--audio", "null", "--for", "1"], None);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    s.server.set_license(LicenseSetting::Valid).unwrap();

    let o = s.home.run(&["--json", "downloads", "remove", id], None);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(json_of(&o)["freedBytes"].as_u64(), Some(size));
    assert!(!dir.exists());
    let l = json_of(&s.home.run(&["--json", "downloads"], None));
    assert_eq!(l["downloads"].as_array().map(Vec::len), Some(0), "{l}");
    assert_eq!(l["usedBytes"].as_u64(), Some(0));
    let o = s.home.run(&["downloads", "remove", id], None);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));

    // Without a valid license nothing is downloaded, and nothing is left.
    s.server.set_license(LicenseSetting::Expired).unwrap();
    let o = s.home.run(&["download", id], None);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let l = json_of(&s.home.run(&["--json", "downloads"], None));
    assert_eq!(l["downloads"].as_array().map(Vec::len), Some(0), "{l}");
    let left: Vec<PathBuf> = walk(&s.home.dir.path().join("data/earmark/offline"))
        .into_iter()
        .filter(|p| !p.ends_with("scope.json"))
        .collect();
    assert_eq!(left, Vec::<PathBuf>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_size_limit_refuses_a_download_before_any_audio_is_written() {
    let s = setup(3).await;
    let config = s.home.dir.path().join("config/earmark");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[downloads]\nmax_size = \"10 kB\"\n",
    )
    .unwrap();
    let o = s.home.run(&["download", s.book.as_str()], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("limit is 10.0 kB"), "{}", text(&o));
    let l = json_of(&s.home.run(&["--json", "downloads"], None));
    assert_eq!(l["downloads"].as_array().map(Vec::len), Some(0), "{l}");
    assert_eq!(l["usedBytes"].as_u64(), Some(0));
    assert_eq!(l["limitBytes"].as_u64(), Some(10_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_killed_halfway_is_never_played_and_resumes_to_identical_files() {
    let mut s = setup(20).await;
    let id = s.book.as_str().to_owned();
    // 2 × 40 kB at 20 kB/s: the kill lands while a file is partial.
    let mut child = s
        .home
        .command(&["download", &id, "--limit-rate", "20k"])
        .spawn()
        .unwrap();
    let offline = s.home.dir.path().join("data/earmark/offline");
    let deadline = Instant::now() + Duration::from_secs(60);
    let part = loop {
        let parts: Vec<PathBuf> = walk(&offline)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "part"))
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 4000))
            .collect();
        if let Some(p) = parts.into_iter().next() {
            break p;
        }
        assert!(Instant::now() < deadline, "no partial file appeared");
        assert!(child.try_wait().unwrap().is_none(), "download ended early");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let l = json_of(&s.home.run(&["--json", "downloads"], None));
    assert_eq!(l["downloads"][0]["state"], "partial", "{l}");

    // With the server away, the partial download is not played.
    s.server.stop().await;
    let o = s.home.run(
        &["--json", "play", &id, "--audio", "null", "--for", "2"],
        None,
    );
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("playing"),
        "{}",
        text(&o)
    );
    s.server.restart().await.unwrap();

    let had = std::fs::metadata(&part).unwrap().len();
    let o = s.home.run(&["--json", "download", &id], None);
    assert!(o.status.success(), "{}", text(&o));
    let v = json_of(&o);
    let total = v["bytes"].as_u64().unwrap();
    let fetched = v["fetchedBytes"].as_u64().unwrap();
    assert!(
        fetched <= total - had,
        "resumed, not restarted: fetched {fetched} of {total} with {had} on disk"
    );
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert_identical_to_library(&dir, s.lib.path());
    assert!(part_files(&dir).is_empty());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(r) = std::fs::read_dir(dir) {
        for e in r.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloaded_book_plays_to_the_end_offline_and_its_progress_reaches_the_server_later() {
    let mut s = setup(2).await;
    let id = s.book.as_str().to_owned();
    let o = s.home.run(&["--json", "download", &id], None);
    assert!(o.status.success(), "{}", text(&o));
    // A first listen online: this device now knows the place.
    let o = s
        .home
        .run(&["play", &id, "--audio", "null", "--for", "1"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("playing the downloaded copy"),
        "{}",
        text(&o)
    );

    s.server.stop().await;
    let o = s
        .home
        .run(&["--json", "play", &id, "--audio", "null"], None);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("server cannot be reached"), "{t}");
    let last: Value = t
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .unwrap();
    assert_eq!(last["state"], "ended", "{t}");
    let pending = json_of(&s.home.run(&["--json", "sync", "pending"], None));
    assert!(
        pending["queued"].as_array().is_some_and(|q| !q.is_empty()),
        "the offline progress is queued: {pending}"
    );

    s.server.restart().await.unwrap();
    let o = s.home.run(&["sync", "push"], None);
    assert!(o.status.success(), "{}", text(&o));
    let o = s.home.run(&["--json", "progress", &id], None);
    let p = json_of(&o);
    let m = json_of(&s.home.run(&["--json", "manifest", &id], None));
    assert_eq!(
        p["progress"]["chapterId"], m["items"][1]["chapterId"],
        "the place played offline reached the server: {p}"
    );
    assert_eq!(p["progress"]["finished"], true, "{p}");

    // The server's manifest changes: play says so and streams the new queue.
    wav(&s.lib.path().join("Short/03.wav"), 2);
    s.server.restart().await.unwrap();
    let o = s
        .home
        .run(&["play", &id, "--audio", "null", "--for", "1"], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("changed since it was downloaded"),
        "{}",
        text(&o)
    );
    let o = s.home.run(&["--json", "download", &id], None);
    let v = json_of(&o);
    assert_eq!(v["replaced"], true, "{v}");
    assert_eq!(v["chapters"], 3, "{v}");
}
