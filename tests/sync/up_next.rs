//! `earmark play --up-next`: the real binary crosses into the next book
//! when one ends (the series, or the up next list the player keeps),
//! marks the finished one finished and restores the next one's place by
//! the rules of sync (never 0 over a place); a finished book from the
//! list starts from its beginning as a restart the server records.

use crate::harness::TestServer;
use crate::harness::{Home, logged_in, text, titled};
use crate::support::wav;
use earmark::api::{Client, ProgressWrite};
use earmark::config::UpNextStore;
use earmark::domain::{Account, BookId, ChapterId, Queued, now_millis};

/// "Saga One" (#1, 2 × 2 s), "Saga Two" (#2, 2 × 30 s), "Beta" (2 × 30 s).
fn saga() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (title, lens, series) in [
        ("Saga One", [2, 2], "series = \"Saga\"\nsequence = 1\n"),
        ("Saga Two", [30, 30], "series = \"Saga\"\nsequence = 2\n"),
        ("Beta", [30, 30], ""),
    ] {
        let b = dir.path().join(title);
        std::fs::create_dir_all(&b).unwrap();
        for (i, l) in lens.iter().enumerate() {
            wav(&b.join(format!("{:02}.wav", i + 1)), *l);
        }
        std::fs::write(
            b.join("book.toml"),
            format!("title = \"{title}\"\nauthor = \"Test\"\n{series}"),
        )
        .unwrap();
    }
    dir
}

fn id(books: &[earmark::domain::Book], title: &str) -> BookId {
    titled(books, title).id.clone()
}

/// `book`'s place on the server: chapter 2 at 9 s, from another device.
async fn place(c: &Client, book: &BookId) -> ChapterId {
    let ch = c.manifest(book).await.unwrap().items[1].chapter_id.clone();
    c.post_progress(
        book,
        &ProgressWrite {
            chapter_id: ch.clone(),
            position: 9.0,
            client_updated_at: now_millis() - 60_000,
            finished: false,
            device_id: None,
            reset: false,
        },
    )
    .await
    .unwrap();
    ch
}

/// `[player] up_next_countdown` in the home's config.toml.
fn countdown(home: &Home, secs: u32) {
    let dir = home.dir.path().join("config/earmark");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[player]\nup_next_countdown = {secs}\n"),
    )
    .unwrap();
}

/// The status lines of `earmark --json play`.
fn lines(o: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| !v["chapter_id"].is_null())
        .collect()
}

async fn finished(c: &Client, book: &BookId) -> bool {
    c.progress(book)
        .await
        .unwrap()
        .progress
        .is_some_and(|p| p.finished)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_crosses_into_the_next_of_the_series_at_its_synced_place() {
    let lib = saga();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let (one, two) = (id(&books, "Saga One"), id(&books, "Saga Two"));
    let two_ch2 = place(&direct, &two).await;
    countdown(&home, 1);
    let o = home.run(
        &[
            "--json",
            "play",
            one.as_str(),
            "--audio",
            "null",
            "--up-next",
            "--for",
            "10",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("up next: Saga Two"), "{t}");
    assert!(
        t.contains("earmark: next: Saga Two in 1 s, Ctrl-C to stop"),
        "the countdown of config.toml: {t}"
    );
    let m1 = direct.manifest(&one).await.unwrap();
    let all = lines(&o);
    let of_one = |v: &&serde_json::Value| {
        m1.items
            .iter()
            .any(|i| v["chapter_id"] == i.chapter_id.as_str())
    };
    let of_two: Vec<&serde_json::Value> = all.iter().skip_while(of_one).collect();
    assert!(!of_two.is_empty(), "it went on: {t}");
    for v in &of_two {
        assert_eq!(v["chapter_id"].as_str(), Some(two_ch2.as_str()), "{t}");
        assert!(v["position"].as_f64().unwrap() >= 8.9, "never 0: {t}");
    }
    assert!(finished(&direct, &one).await, "Saga One is finished: {t}");
    let p = direct.progress(&two).await.unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, two_ch2);
    assert!(p.position > 9.0, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_takes_the_list_first_and_the_book_leaves_it() {
    let lib = saga();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let (one, beta) = (id(&books, "Saga One"), id(&books, "Beta"));
    let auth = direct.auth().unwrap();
    let store = UpNextStore::of(
        &home.dir.path().join("data/earmark"),
        &Account {
            server_id: auth.server_id,
            user_id: auth.user_id,
        },
    );
    let q = |b: &BookId, title: &str| Queued {
        id: b.clone(),
        title: title.into(),
    };
    // The book played leaves the list at once; Beta is next.
    store
        .save(&[q(&one, "Saga One"), q(&beta, "Beta")])
        .unwrap();
    countdown(&home, 0);
    let o = home.run(
        &[
            "play",
            one.as_str(),
            "--audio",
            "null",
            "--up-next",
            "--for",
            "6",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("up next: Beta"), "{t}");
    assert!(!t.contains("Ctrl-C to stop"), "no countdown at 0: {t}");
    assert_eq!(store.load().unwrap(), vec![], "both left the list");
}

/// Beta on the account's list, its place on the server chapter 2 at
/// 20 s, `finished` or not; Saga One (4 s) plays with `--up-next`.
/// Returns the run's text, Beta's status lines, a client, Beta's id and
/// manifest, and the server with its library (kept while it is read).
async fn beta_from_the_list(
    finished: bool,
) -> (
    String,
    Vec<serde_json::Value>,
    Client,
    BookId,
    earmark::domain::Manifest,
    (TestServer, tempfile::TempDir),
) {
    let lib = saga();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let (one, beta) = (id(&books, "Saga One"), id(&books, "Beta"));
    let m = direct.manifest(&beta).await.unwrap();
    direct
        .post_progress(
            &beta,
            &ProgressWrite {
                chapter_id: m.items[1].chapter_id.clone(),
                position: 20.0,
                client_updated_at: now_millis() - 60_000,
                finished,
                device_id: None,
                reset: false,
            },
        )
        .await
        .unwrap();
    let auth = direct.auth().unwrap();
    UpNextStore::of(
        &home.dir.path().join("data/earmark"),
        &Account {
            server_id: auth.server_id,
            user_id: auth.user_id,
        },
    )
    .save(&[Queued {
        id: beta.clone(),
        title: "Beta".into(),
    }])
    .unwrap();
    countdown(&home, 0);
    let o = home.run(
        &[
            "--json",
            "play",
            one.as_str(),
            "--audio",
            "null",
            "--up-next",
            "--for",
            "8",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("up next: Beta"), "{t}");
    let of_beta = lines(&o)
        .into_iter()
        .filter(|v| {
            m.items
                .iter()
                .any(|i| v["chapter_id"] == i.chapter_id.as_str())
        })
        .collect();
    (t, of_beta, direct, beta, m, (server, lib))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_starts_a_finished_book_from_the_list_from_its_beginning_and_the_server_records_it()
 {
    let (t, of_beta, direct, beta, m, _server) = beta_from_the_list(true).await;
    assert!(
        t.contains("from the beginning: it was finished"),
        "said: {t}"
    );
    assert!(!of_beta.is_empty(), "Beta played: {t}");
    let first = m.items[0].chapter_id.as_str();
    for v in &of_beta {
        assert_eq!(
            v["chapter_id"].as_str(),
            Some(first),
            "its first chapter: {t}"
        );
        assert!(
            v["position"].as_f64().unwrap() < 6.0,
            "from 0, not its end: {t}"
        );
    }
    let p = direct.progress(&beta).await.unwrap().progress.unwrap();
    assert!(!p.finished, "the restart is recorded: {p:?}");
    assert_eq!(p.chapter_id.as_str(), first, "{p:?}");
    assert!(p.position < 6.0, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_resumes_an_unfinished_book_from_the_list_at_its_place() {
    let (t, of_beta, direct, beta, m, _server) = beta_from_the_list(false).await;
    assert!(!t.contains("from the beginning"), "{t}");
    assert!(!of_beta.is_empty(), "Beta played: {t}");
    let second = m.items[1].chapter_id.as_str();
    for v in &of_beta {
        assert_eq!(v["chapter_id"].as_str(), Some(second), "{t}");
        assert!(v["position"].as_f64().unwrap() >= 19.9, "never 0: {t}");
    }
    let p = direct.progress(&beta).await.unwrap().progress.unwrap();
    assert!(
        !p.finished && p.chapter_id.as_str() == second && p.position >= 20.0,
        "{p:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_announces_the_next_book_and_ctrl_c_during_the_countdown_keeps_it_from_starting()
 {
    use std::io::BufRead;
    let lib = saga();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let (one, two) = (id(&books, "Saga One"), id(&books, "Saga Two"));
    let two_ch2 = place(&direct, &two).await;
    // No config.toml: the default countdown, 10 s.
    let mut child = home
        .command(&["play", one.as_str(), "--audio", "null", "--up-next"])
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut said = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !said
        .iter()
        .any(|l: &String| l.contains("next: Saga Two in 10 s, Ctrl-C to stop"))
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => said.push(l),
            Err(_) => panic!("no countdown line: {said:?}"),
        }
    }
    // Ctrl-C while it counts down.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    said.extend(rx.try_iter());
    assert_eq!(o.status.code(), Some(130), "{said:?}");
    assert!(
        !said.iter().any(|l| l.contains("up next: Saga Two")),
        "it never started: {said:?}"
    );
    assert!(finished(&direct, &one).await, "Saga One stays finished");
    let p = direct.progress(&two).await.unwrap().progress.unwrap();
    assert_eq!((p.chapter_id, p.position), (two_ch2, 9.0), "untouched");
}

/// Issue 29, item 5: offline, up next offers only a downloaded book. The
/// next book of the list is not downloaded and the server is away: the
/// book that ends plays from its download, then earmark says the next one
/// cannot play and stops, without a countdown to a book it cannot open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_up_next_offline_says_the_next_book_is_not_downloaded_without_a_countdown() {
    let lib = saga();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let (one, two) = (id(&books, "Saga One"), id(&books, "Saga Two"));
    let o = home.run(&["download", one.as_str()], None);
    assert!(o.status.success(), "{}", text(&o));
    let auth = direct.auth().unwrap();
    UpNextStore::of(
        &home.dir.path().join("data/earmark"),
        &Account {
            server_id: auth.server_id,
            user_id: auth.user_id,
        },
    )
    .save(&[Queued {
        id: two.clone(),
        title: "Saga Two".into(),
    }])
    .unwrap();
    countdown(&home, 2);
    let last = direct.manifest(&one).await.unwrap().items[1]
        .chapter_id
        .clone();
    server.stop().await;
    let began = std::time::Instant::now();
    let o = home.run(
        &[
            "play",
            one.as_str(),
            "--chapter",
            last.as_str(),
            "--audio",
            "null",
            "--up-next",
            "--for",
            "20",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("playing the downloaded copy"), "{t}");
    assert!(t.contains("the next book is not downloaded"), "{t}");
    assert!(!t.contains("next: Saga Two in"), "no countdown to it: {t}");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(15),
        "said at the end, not after a wait: {t}"
    );
}
