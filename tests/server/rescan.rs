//! Rescans that skip unchanged books by their files' metadata: every kind
//! of change is still picked up, and what did not change is not read.

use crate::common::*;
use crate::harness::TestServer;
use earmark::server::scan::SETTLE;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The newest change time under `dir` (the folder itself included), ns.
fn newest_ctime(dir: &Path) -> i64 {
    let meta = std::fs::metadata(dir).unwrap();
    let mut newest = meta.ctime() * 1_000_000_000 + meta.ctime_nsec();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::metadata(&path).unwrap();
        newest = newest.max(if meta.is_dir() {
            newest_ctime(&path)
        } else {
            meta.ctime() * 1_000_000_000 + meta.ctime_nsec()
        });
    }
    newest
}

/// Waits until every file under `dir` is old enough for a scan to trust
/// its metadata (the scan's rule, `SETTLE`).
fn wait_settled(dir: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let settled = SETTLE.as_nanos() as i64 + 50_000_000;
    loop {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        if now.as_nanos() as i64 - newest_ctime(dir) > settled {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "files never settled");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn toml(title: &str) -> String {
    format!("title = \"{title}\"\nauthor = \"Ann Author\"\n")
}

/// `Shelf/B0`…`Shelf/B8`, each one WAV (1 s, 1.25 s, …) and, but for B6,
/// a `book.toml` titled "Book N aaaa"; and `loose.wav` in the root. With
/// `EXTRA`, also `Shelf/Author K/Extra K` (one 1 s WAV each): enough
/// sub-folders for the walk to look ahead on all cores, two levels deep.
fn library(extra: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..9 {
        let book = dir.path().join(format!("Shelf/B{i}"));
        write_wav(
            &book.join("01.wav"),
            1.0 + i as f64 * 0.25,
            300.0 + i as f64,
        );
        if i != 6 {
            std::fs::write(book.join("book.toml"), toml(&format!("Book {i} aaaa"))).unwrap();
        }
    }
    if extra {
        for k in 0..EXTRA {
            let book = dir.path().join(format!("Shelf/Author {k}/Extra {k}"));
            write_wav(&book.join("01.wav"), 1.0, 400.0 + k as f64);
        }
    }
    write_wav(&dir.path().join("loose.wav"), 2.0, 500.0);
    dir
}

/// Extra books (see `library`): with the 9 of `Shelf`, over the walk's
/// threshold for looking ahead (16 sub-folders).
const EXTRA: usize = 12;

fn rescan(lib: &Path, server: &TestServer) -> earmark::server::catalog::ScanSummary {
    earmark::server::rescan(lib, server.data_path()).unwrap()
}

async fn duration(api: &Api, title: &str) -> f64 {
    api.book_titled(title).await["durationSec"]
        .as_f64()
        .unwrap()
}

#[tokio::test]
async fn a_rescan_skips_unchanged_books_unread_and_picks_up_every_kind_of_change() {
    every_kind_of_change(false).await;
}

#[tokio::test]
async fn a_rescan_that_looks_ahead_on_all_cores_finds_the_same_changes() {
    every_kind_of_change(true).await;
}

async fn every_kind_of_change(extra: bool) {
    let n = if extra { EXTRA } else { 0 };
    let lib = library(extra);
    let root = lib.path();
    let server = TestServer::start(root).await.unwrap();
    let api = Api::login(&server).await;
    wait_settled(root);
    // The first rescan after the files settled reads every book once more
    // and stamps it; from then on an unchanged library is not read.
    let first = rescan(root, &server);
    assert_eq!((first.books, first.unchanged_books), (10 + n, 10 + n));
    let idle = rescan(root, &server);
    assert_eq!(
        (idle.books, idle.unchanged_books, idle.unread_books),
        (10 + n, 10 + n, 10 + n),
        "{idle:?}"
    );
    let id = |t: &'static str| {
        let api = &api;
        async move { api.book_titled(t).await["id"].as_str().unwrap().to_owned() }
    };
    let (b3, b4, b5) = (id("Book 3").await, id("Book 4").await, id("Book 5").await);

    let shelf = root.join("Shelf");
    // B0: book.toml rewritten in place, same size, its mtime set back.
    let t0 = shelf.join("B0/book.toml");
    let mtime = std::fs::metadata(&t0).unwrap().modified().unwrap();
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&t0).unwrap();
        let text = toml("Book 0 zzzz");
        assert_eq!(text.len() as u64, f.metadata().unwrap().len());
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f.set_modified(mtime).unwrap();
    }
    assert_eq!(std::fs::metadata(&t0).unwrap().modified().unwrap(), mtime);
    // B1: the audio replaced by a new file renamed over it.
    write_wav(&shelf.join("B1/new.tmp"), 5.0, 200.0);
    std::fs::rename(shelf.join("B1/new.tmp"), shelf.join("B1/01.wav")).unwrap();
    // B2: the audio rewritten in place.
    write_wav(&shelf.join("B2/01.wav"), 6.0, 210.0);
    // B3: touched only.
    std::fs::File::options()
        .write(true)
        .open(shelf.join("B3/01.wav"))
        .unwrap()
        .set_modified(SystemTime::now())
        .unwrap();
    // B4 removed, B5 renamed, B6 gains a book.toml, B8 a second chapter,
    // B9 is new; B7 and loose.wav are untouched.
    std::fs::rename(shelf.join("B4"), root.join(".gone")).unwrap();
    std::fs::rename(shelf.join("B5"), shelf.join("B5 renamed")).unwrap();
    std::fs::write(shelf.join("B6/book.toml"), toml("Six")).unwrap();
    write_wav(&shelf.join("B8/02.wav"), 1.0, 700.0);
    write_wav(&shelf.join("B9/01.wav"), 1.0, 800.0);
    // Two levels down: Extra 0 rewritten in place; the other extras untouched.
    if extra {
        write_wav(&shelf.join("Author 0/Extra 0/01.wav"), 3.0, 400.0);
    }
    // Untouched and unread: B7, loose and the other extras.
    let untouched = 2 + n.saturating_sub(1);

    let changed = rescan(root, &server);
    assert_eq!(changed.books, 10 + n, "{changed:?}");
    assert_eq!((changed.new_books, changed.removed_books), (1, 1));
    // B3 (touched) is as stored too, though read.
    assert_eq!(
        (changed.unchanged_books, changed.unread_books),
        (untouched + 1, untouched),
        "{changed:?}"
    );
    api.book_titled("Book 0 zzzz").await;
    assert!((duration(&api, "Book 1").await - 5.0).abs() < 0.01);
    assert!((duration(&api, "Book 2").await - 6.0).abs() < 0.01);
    assert_eq!(id("Book 3").await, b3, "a touched book is the same book");
    api.get(&format!("/books/{b4}"))
        .await
        .expect_error(404, "not_found");
    assert_eq!(id("Book 5").await, b5, "a renamed folder keeps its id");
    api.book_titled("Six").await;
    assert!((duration(&api, "Book 8").await - 4.0).abs() < 0.01);
    api.book_titled("B9").await;
    if extra {
        assert!((duration(&api, "Extra 0").await - 3.0).abs() < 0.01);
        assert!((duration(&api, "Extra 5").await - 1.0).abs() < 0.01);
    }

    // Once the changed files settle, their books are stamped again and an
    // unchanged library is not read at all.
    wait_settled(root);
    let restamp = rescan(root, &server);
    assert_eq!((restamp.books, restamp.unchanged_books), (10 + n, 10 + n));
    let idle = rescan(root, &server);
    assert_eq!((idle.unchanged_books, idle.unread_books), (10 + n, 10 + n));
    api.book_titled("Book 0 zzzz").await;
}
