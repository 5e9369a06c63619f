//! A full disk and a read-only data directory lose nothing (issue 22):
//! real small disks (tmpfs, `small_disk`), the reference server over real
//! HTTP, the sync front door and the real binary. A change the journal
//! cannot take is still sent while the server is up, kept in memory while
//! it is not, and the user is told why; `sound.json` and the listening log
//! keep every whole record; a download stops with "the disk is full" and
//! leaves nothing counted complete.

use crate::harness::{Home, logged_in, text, titled};
use crate::proxy::Mode;
use crate::small_disk::SmallDisk;
use crate::support::*;
use earmark::api::{Client, ProgressWrite};
use earmark::config::SoundBooks;
use earmark::domain::session::{Event, Said};
use earmark::domain::{
    BookId, ChapterId, JumpCause, Manifest, PlaceMark, SoundSettings, now_millis,
};
use earmark::sync::Records;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn ch(m: &Manifest, i: usize) -> ChapterId {
    m.items[i].chapter_id.clone()
}

/// Plays from `from` for `steps` × 50 ms at 1× (media time follows wall time).
async fn play(p: &Player, chapter: &ChapterId, from: f64, steps: u32) -> f64 {
    let mut pos = from;
    for _ in 0..steps {
        tokio::time::sleep(Duration::from_millis(50)).await;
        pos += 0.05;
        p.position(1, chapter, pos, true);
    }
    pos
}

/// Sync's news (data), in the words the player and `earmark play` use.
fn info_says(n: &Event, words: &str) -> bool {
    matches!(n, Event::Said(Said::Sync(news)) if earmark::ui::words::sync_news(news).contains(words))
}

/// What the journal holds on the disk (read without its lock).
fn journaled(dir: &Path) -> usize {
    let j = Records::new(dir).pending(None).unwrap();
    j.queued.len() + j.refused.len() + j.held.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_outbox_still_sends_the_place_keeps_it_in_memory_offline_and_says_the_disk_is_full()
 {
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&root.path().join("sync"), 256 * 1024, "outbox") else {
        return;
    };
    let client = env.client().await;
    let mut p = start_worker(&client, disk.path());
    p.sync.settle().await;
    assert!(p.sync.status().durable(), "the journal opened on the disk");
    disk.fill();

    // The server is up: the place reaches it although nothing is journaled.
    p.open(1, &book, &m);
    p.load().await;
    p.position(1, &ch(&m, 0), 0.0, true);
    p.action(1, Action::Play);
    let pos = play(&p, &ch(&m, 0), 0.0, 8).await;
    let n = p.notice(|n| info_says(n, "the disk is full")).await;
    assert!(
        info_says(&n, "outbox.journal") && info_says(&n, "kept in memory"),
        "{n:?}"
    );
    p.action(1, Action::Pause);
    let s = p
        .until("sent, in memory", |s| s.queued == 0 && !s.durable())
        .await;
    assert!(
        s.last_error
            .as_deref()
            .is_some_and(|e| e.contains("disk is full")),
        "{s:?}"
    );
    let sp = env
        .server_progress(&book)
        .await
        .expect("the place was sent");
    assert!(
        (sp.position - pos).abs() < 1e-6,
        "server {} vs {pos}",
        sp.position
    );
    assert_eq!(journaled(disk.path()), 0, "nothing could be journaled");

    // The server is away: the change waits in memory, with the same rules.
    env.proxy.set_mode(Mode::Refuse);
    p.action(1, Action::Play);
    let pos = play(&p, &ch(&m, 0), pos, 8).await;
    p.action(1, Action::Pause);
    p.until("queued in memory", |s| s.queued == 1 && !s.durable())
        .await;
    assert_eq!(journaled(disk.path()), 0);

    // Room again: the next change writes the journal whole, and says so.
    disk.free();
    p.action(1, Action::Play);
    let pos = play(&p, &ch(&m, 0), pos, 8).await;
    p.action(1, Action::Pause);
    p.notice(|n| info_says(n, "saves changes on this device again"))
        .await;
    p.until("durable again", |s| s.durable() && s.queued == 1)
        .await;
    assert_eq!(journaled(disk.path()), 1, "the queued place is on the disk");

    env.proxy.set_mode(Mode::Forward);
    p.sync.flush();
    p.until("flushed", |s| s.queued == 0).await;
    let sp = env.server_progress(&book).await.unwrap();
    assert!(
        (sp.position - pos).abs() < 1e-6,
        "server {} vs {pos}",
        sp.position
    );
    assert_eq!(journaled(disk.path()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_never_truncates_the_listening_log_and_the_marks_it_could_not_take_are_written_once_there_is_room()
 {
    let env = Env::start().await;
    let (book, m) = env.book("Long").await;
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&root.path().join("sync"), 256 * 1024, "listening") else {
        return;
    };
    let client = env.client().await;
    let mut p = start_worker(&client, disk.path());
    let log = disk.path().join("listening.journal");
    let mark = |i: usize| PlaceMark {
        at: 1_000_000 + i as i64 * 60_000,
        chapter_id: ch(&m, 0),
        position: 10.0 * i as f64,
        cause: JumpCause::Seek,
    };
    let mut marks = Vec::new();
    for i in 0..3 {
        p.sync.mark_place(book.clone(), mark(i));
        marks.push(mark(i));
    }
    p.sync.settle().await;
    assert_eq!(Records::new(disk.path()).history(&book).unwrap(), marks);
    disk.fill();

    // The log's last page still has room for a few records; then a mark
    // cannot be written, and the file keeps exactly the whole ones.
    let mut told = None;
    for i in 3..200 {
        let before = std::fs::metadata(&log).unwrap().len();
        p.sync.mark_place(book.clone(), mark(i));
        marks.push(mark(i));
        p.sync.settle().await;
        if let Ok(n) = p.notices.try_recv()
            && info_says(&n, "listening history cannot be saved")
        {
            assert!(info_says(&n, "the disk is full"), "{n:?}");
            assert_eq!(std::fs::metadata(&log).unwrap().len(), before, "cut back");
            assert_eq!(
                Records::new(disk.path()).history(&book).unwrap(),
                marks[..i],
                "every whole record, not the one that failed"
            );
            told = Some(i);
            break;
        }
        assert_eq!(Records::new(disk.path()).history(&book).unwrap(), marks);
    }
    assert!(
        told.is_some(),
        "a mark failed to be written on the full disk"
    );
    let bytes = std::fs::read(&log).unwrap();
    let (_, recovery, _) = earmark::durable::frames(b"EMLG", &bytes);
    assert!(recovery.is_clean(), "{recovery:?}");
    assert_eq!(p.sync.history(book.clone()).await, marks, "kept in memory");

    disk.free();
    p.sync.mark_place(book.clone(), mark(500));
    marks.push(mark(500));
    p.sync.settle().await;
    assert_eq!(
        Records::new(disk.path()).history(&book).unwrap(),
        marks,
        "the log was written whole from memory"
    );
}

#[test]
fn a_full_disk_leaves_sound_json_as_it_was_and_the_save_says_the_disk_is_full() {
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&root.path().join("data"), 128 * 1024, "sound.json") else {
        return;
    };
    let path = disk.path().join("sound.json");
    let boost = |b: f32| SoundSettings {
        boost_db: b,
        ..SoundSettings::default()
    };
    let store = SoundBooks::load(path.clone());
    store.set("s|u|one".into(), boost(3.0));
    store.save().unwrap();
    let before = std::fs::read(&path).unwrap();
    disk.fill();

    store.set("s|u|two".into(), boost(6.0));
    let e = store.save().unwrap_err();
    assert!(
        e.contains("the disk is full") && e.contains("sound.json"),
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "not truncated");
    let names: Vec<String> = std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains("tmp")),
        "no temporary file left: {names:?}"
    );

    disk.free();
    store.save().unwrap();
    let again = SoundBooks::load(path);
    assert_eq!(again.settings("s|u|one"), boost(3.0));
    assert_eq!(
        again.settings("s|u|two"),
        boost(6.0),
        "kept for the next save"
    );
}

/// A home whose data directory is a small disk, logged in (the token is
/// written there before the disk is filled or made read-only).
async fn home_on_small_disk(
    server: &crate::harness::TestServer,
    bytes: u64,
    test: &str,
) -> Option<(Home, SmallDisk, Client)> {
    let home = Home::at(server.base_url());
    let disk = SmallDisk::mount(&home.dir.path().join("data"), bytes, test)?;
    let o = home.run(&["login", "--password-stdin"], Some(&server.password));
    assert!(o.status.success(), "{}", text(&o));
    let direct = crate::harness::direct(server).await;
    Some((home, disk, direct))
}

async fn book_id(c: &Client, title: &str) -> BookId {
    let books = c.books(&Default::default()).await.unwrap();
    titled(&books, title).id.clone()
}

/// `earmark play BOOK --at 20 --for 4` with the data directory on `disk`
/// after `prepare`: the server must hold the place afterwards.
async fn play_on(home: &Home, direct: &Client, book: &BookId) -> String {
    let m = direct.manifest(book).await.unwrap();
    direct
        .post_progress(
            book,
            &ProgressWrite {
                chapter_id: ch(&m, 1),
                position: 100.0,
                client_updated_at: now_millis() - 60_000,
                finished: false,
                device_id: None,
                reset: false,
            },
        )
        .await
        .unwrap();
    let o = home.run(
        &[
            "play",
            book.as_str(),
            "--audio",
            "null",
            "--at",
            "20",
            "--for",
            "4",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let p = direct.progress(book).await.unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch(&m, 0), "{t}");
    assert!(
        (20.0..=26.0).contains(&p.position),
        "the server holds {} ({t})",
        p.position
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_on_a_full_disk_sends_the_place_and_says_the_disk_is_full() {
    let lib = library();
    let server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) = home_on_small_disk(&server, 512 * 1024, "play full").await
    else {
        return play_with_no_room_for_any_file(&server).await;
    };
    let book = book_id(&direct, "Alpha").await;
    disk.fill();
    let err = play_on(&home, &direct, &book).await;
    assert!(err.contains("the disk is full"), "{err}");
    assert!(!err.contains("other player"), "{err}");
}

/// Where no tmpfs can be mounted: the same, with a file size limit of 0
/// for the player (every write to a file fails as on a full disk).
async fn play_with_no_room_for_any_file(server: &crate::harness::TestServer) {
    use std::os::unix::process::CommandExt;
    eprintln!("play full: trying RLIMIT_FSIZE instead");
    let (home, direct, books) = logged_in(server).await;
    let book = titled(&books, "Alpha").id.clone();
    let m = direct.manifest(&book).await.unwrap();
    let mut c = home.command(&[
        "play",
        book.as_str(),
        "--audio",
        "null",
        "--at",
        "20",
        "--for",
        "4",
    ]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &none) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.stdin(std::process::Stdio::null()).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("the disk is full"), "{t}");
    let p = direct.progress(&book).await.unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch(&m, 0), "{t}");
    assert!((20.0..=26.0).contains(&p.position), "{} ({t})", p.position);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_with_a_read_only_data_directory_sends_the_place_and_says_read_only_not_another_player()
 {
    let lib = library();
    let server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) =
        home_on_small_disk(&server, 512 * 1024, "play read-only").await
    else {
        return;
    };
    let book = book_id(&direct, "Alpha").await;
    // A first run creates the profile's files, as on any used machine.
    let o = home.run(
        &["play", book.as_str(), "--audio", "null", "--for", "0.5"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    disk.read_only();
    let err = play_on(&home, &direct, &book).await;
    assert!(err.contains("read-only"), "{err}");
    assert!(!err.contains("other player"), "{err}");
    assert!(!err.contains("another earmark"), "{err}");
}

/// `sync push` and `sync retry` over a journal on a read-only disk name
/// the fault, never another earmark (the journal is not locked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_push_and_retry_on_a_read_only_disk_say_read_only_not_another_earmark() {
    let lib = library();
    let server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) =
        home_on_small_disk(&server, 512 * 1024, "sync read-only").await
    else {
        return;
    };
    let book = book_id(&direct, "Alpha").await;
    let o = home.run(
        &["play", book.as_str(), "--audio", "null", "--for", "0.5"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    disk.read_only();
    for what in ["push", "retry"] {
        let o = home.run(&["sync", what], None);
        let t = text(&o);
        assert!(!o.status.success(), "{what}: {t}");
        assert!(t.contains("read-only"), "{what}: {t}");
        assert!(!t.contains("another earmark"), "{what}: {t}");
    }
}

/// `earmark play` that can neither send its last place (the server went
/// away) nor keep it (a read-only disk) says the change is lost, not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_that_cannot_send_nor_keep_says_the_changes_are_lost() {
    let lib = library();
    let mut server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) = home_on_small_disk(&server, 512 * 1024, "play lost").await
    else {
        return;
    };
    let book = book_id(&direct, "Alpha").await;
    let o = home.run(
        &["play", book.as_str(), "--audio", "null", "--for", "0.5"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    disk.read_only();
    let mut child = home
        .command(&["play", book.as_str(), "--audio", "null", "--for", "3"])
        .spawn()
        .unwrap();
    // The server goes away once the book plays (its status line says so).
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("playing") {
                let _ = tx.send(());
            }
        }
    });
    tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60)))
        .await
        .unwrap()
        .expect("earmark play never said it was playing");
    server.stop().await;
    let o = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("lost"), "{err}");
    assert!(!err.contains("kept and sent next time"), "{err}");
}

/// One book "Short" of two WAV chapters of `secs` seconds (2 kB/s each).
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

fn files_named(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(r) = std::fs::read_dir(dir) {
        for e in r.map_while(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_named(&p, ext));
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out
}

fn downloads_json(home: &Home) -> serde_json::Value {
    let o = home.run(&["--json", "downloads"], None);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_bigger_than_the_free_space_is_refused_before_any_audio_is_written() {
    let lib = short_library(100);
    let server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) = home_on_small_disk(&server, 256 * 1024, "download room").await
    else {
        return;
    };
    let book = book_id(&direct, "Short").await;
    let o = home.run(&["download", book.as_str()], None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("the disk is full: this book needs"), "{t}");
    let offline = disk.path().join("earmark/offline");
    assert!(files_named(&offline, "part").is_empty());
    assert!(files_named(&offline, "audio").is_empty());
    let l = downloads_json(&home);
    assert_eq!(l["downloads"].as_array().map(Vec::len), Some(0), "{l}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_that_fills_up_during_a_download_stops_it_with_the_disk_is_full_and_nothing_counts_as_complete()
 {
    let lib = short_library(100);
    let server = crate::harness::TestServer::start(lib.path()).await.unwrap();
    let Some((home, disk, direct)) =
        home_on_small_disk(&server, 2048 * 1024, "download full").await
    else {
        return;
    };
    let book = book_id(&direct, "Short").await;
    // 2 × 200 kB at 100 kB/s: the disk fills while the first file arrives.
    let mut child = home
        .command(&["download", book.as_str(), "--limit-rate", "100k"])
        .spawn()
        .unwrap();
    let offline = disk.path().join("earmark/offline");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !files_named(&offline, "part")
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 4000))
    {
        assert!(Instant::now() < deadline, "no partial file appeared");
        assert!(child.try_wait().unwrap().is_none(), "download ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    disk.fill();
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("the disk is full: cannot write"), "{t}");
    assert!(t.contains("removed"), "{t}");
    assert!(
        files_named(&offline, "part").is_empty(),
        "the part gave its space back"
    );
    let l = downloads_json(&home);
    for d in l["downloads"].as_array().unwrap() {
        assert_ne!(d["state"], "complete", "{l}");
    }

    // With room again, the download completes.
    disk.free();
    let o = home.run(&["--json", "download", book.as_str()], None);
    assert!(o.status.success(), "{}", text(&o));
    let l = downloads_json(&home);
    assert_eq!(l["downloads"][0]["state"], "complete", "{l}");
}
