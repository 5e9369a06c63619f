//! The first screen of a big library: the player's backends (`Live`)
//! against the reference server over 127.0.0.1, with a small page size so
//! the library takes many pages. The first page is on screen, counted and
//! usable before the list is complete; a page that keeps failing (a
//! gateway answering 502) leaves what arrived on screen, says the rest is
//! missing, and is never cached as the library.

use crate::fixtures::*;
use crate::harness::TestServer;
use earmark::config::{Dirs, Profile, ProfileSelector};
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::keymap::{KeyCode, Keymap};
use earmark::ui::state::*;
use earmark::ui::terminal::LoopEvent;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc::Receiver};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const BOOKS: usize = 240;
const PAGE: u32 = 10;

/// `n` one-chapter books titled "Arrival 000"… (a tiny silent wav each).
fn generated_library(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rate = 8000u32;
    let data = vec![0u8; 800]; // 0.1 s of 8-bit silence
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&rate.to_le_bytes());
    wav.extend_from_slice(&rate.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(data.len() as u32).to_le_bytes());
    wav.extend_from_slice(&data);
    for i in 0..n {
        let folder = dir.path().join(format!("shelf{}/book{i:03}", i % 8));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("01.wav"), &wav).unwrap();
        std::fs::write(
            folder.join("book.toml"),
            format!(
                "title = \"Arrival {i:03}\"\nauthor = \"Writer {}\"\n",
                i % 5
            ),
        )
        .unwrap();
    }
    dir
}

/// A profile for `address` whose pages hold `PAGE` books, logged in.
fn log_in(
    rt: &tokio::runtime::Runtime,
    address: &str,
    server: &TestServer,
    home: &Path,
) -> (Profile, earmark::config::LoggedIn) {
    let dirs = Dirs {
        config: home.join("config"),
        data: home.join("data"),
        cache: home.join("cache"),
    };
    let global = ProfileSelector {
        server: Some(address.to_owned()),
        user: Some(server.username.clone()),
        ..Default::default()
    };
    let mut profile = Profile::resolve_in(&global, dirs).unwrap();
    profile.options.paths.page_size = PAGE;
    let done = rt
        .block_on(earmark::config::login(&profile, None, &server.password))
        .unwrap();
    (profile, done)
}

fn app() -> App {
    let mut app = App::new(Keymap::default(), UiSettings::default());
    app.update(Event::Tick(1_000));
    app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://127.0.0.1/api/v1".into(),
        user: "alice".into(),
        profile: None,
    })));
    app
}

/// Feeds answers to the app until one matches `f` (which is fed too).
fn until(
    app: &mut App,
    rx: &Receiver<LoopEvent>,
    what: &str,
    f: impl Fn(&Answer) -> bool,
) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(LoopEvent::App(Event::Answer(a))) => {
                let hit = f(&a);
                app.update(Event::Answer(a.clone()));
                if hit {
                    return a;
                }
            }
            Ok(_) => {}
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
}

fn is_page(a: &Answer) -> bool {
    matches!(a, Answer::LibraryPage { .. })
}

fn is_complete(a: &Answer) -> bool {
    matches!(
        a,
        Answer::Library {
            from_cache: false,
            ..
        }
    )
}

#[test]
fn the_first_page_is_on_screen_counted_and_usable_before_the_library_is_complete() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = generated_library(BOOKS);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, server.base_url(), &server, home.path());
    let mut app = app();
    assert!(render(&mut app, 80, 24).contains("Loading the library…"));
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();

    // Only the first page is in the app: rows, the count, keys answered.
    let first = until(&mut app, &rx, "the first page", is_page);
    assert!(matches!(
        &first,
        Answer::LibraryPage { books, total: Some(240), first: true } if books.len() == PAGE as usize
    ));
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("10 of 240 loaded…"), "{screen}");
    assert!(screen.contains("Arrival 000"), "{screen}");
    assert!(screen.contains("Arrival 009"), "{screen}");
    app.update(key('j'));
    assert_eq!(app.library.selected().unwrap().title, "Arrival 001");
    app.update(key('/'));
    for c in "009".chars() {
        app.update(key(c));
    }
    while app.library.step_scan() {}
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("1 found, searching 10 of 240 loaded"),
        "{screen}"
    );
    assert_eq!(app.library.selected().unwrap().title, "Arrival 009");
    app.update(code(KeyCode::Esc));

    // The rest arrives page by page, then the whole list replaces it.
    let mut pages = 1;
    let complete = until(&mut app, &rx, "the complete library", |a| {
        is_page(a) || is_complete(a)
    });
    let mut last = complete;
    while is_page(&last) {
        pages += 1;
        last = until(&mut app, &rx, "the complete library", |a| {
            is_page(a) || is_complete(a)
        });
    }
    assert_eq!(pages, BOOKS / PAGE as usize, "one answer per page");
    assert_eq!(app.library.total(), BOOKS);
    assert!(app.library.arrival.is_none());
    let screen = render(&mut app, 80, 24);
    assert!(!screen.contains("loaded…"), "{screen}");
    // The cursor stayed on the book the search left it on.
    assert_eq!(app.library.selected().unwrap().title, "Arrival 009");
    live.shutdown();
}

/// A gateway in front of the server that answers 502 (an HTML page) to
/// the first `failures` requests for page 3 of the book list.
struct Gateway {
    addr: SocketAddr,
    page3: Arc<AtomicUsize>,
}

impl Gateway {
    async fn start(upstream: SocketAddr, failures: usize) -> Gateway {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let page3 = Arc::new(AtomicUsize::new(0));
        let seen = page3.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream, seen.clone(), failures));
            }
        });
        Gateway { addr, page3 }
    }

    fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }
}

/// One request per connection: the head is read and judged, then the
/// connection is relayed with `Connection: close`.
async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    page3: Arc<AtomicUsize>,
    failures: usize,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let target = text.split(' ').nth(1).unwrap_or("");
    if target.contains("/books?") && target.contains("page=3&") {
        let n = page3.fetch_add(1, Ordering::SeqCst);
        if n < failures {
            let body = "<html><body>502 Bad Gateway</body></html>";
            let resp = format!(
                "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = client.write_all(resp.as_bytes()).await;
            let _ = client.shutdown().await;
            return;
        }
    }
    let mut lines: Vec<&str> = text
        .trim_end()
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    lines.push("Connection: close");
    let head = format!("{}\r\n\r\n", lines.join("\r\n"));
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    if server.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

#[test]
fn a_page_that_keeps_failing_leaves_what_arrived_says_the_rest_is_missing_and_is_not_cached() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = generated_library(60);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    let gateway = rt.block_on(Gateway::start(server.addr(), usize::MAX));
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &gateway.base_url(), &server, home.path());
    let per_call = profile.options.retries + 1; // the client's own repeats of a GET
    let session = done.session.clone();
    let mut app = app();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    let failed = until(&mut app, &rx, "the load to give up", |a| {
        assert!(!is_complete(a), "a partial list passed for the library");
        matches!(a, Answer::LibraryIncomplete(_))
    });
    let Answer::LibraryIncomplete(why) = failed else {
        unreachable!()
    };
    assert!(
        why.contains("Loaded 20 books; the rest of the library could not be loaded"),
        "{why}"
    );
    // Asked once and then again four times.
    assert_eq!(gateway.page3.load(Ordering::SeqCst), 5 * per_call as usize);
    assert_eq!(app.library.len(), 20);
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("20 of 60 loaded; the rest could not be loaded (r retries)"),
        "{screen}"
    );
    assert!(screen.contains("Arrival 014"), "{screen}");
    assert_eq!(app.library.row(19).unwrap().title, "Arrival 019");
    // Nothing of the partial list was cached as the library.
    let scope = earmark::runtime::cache::Scope {
        server_id: session.server_id.clone(),
        user_id: session.user_id,
    };
    let file = earmark::runtime::cache::path(&home.path().join("cache"), &scope);
    live.shutdown();
    assert!(!file.exists(), "the partial list was cached");
}

#[test]
fn a_page_that_fails_twice_is_asked_again_and_the_library_completes() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = generated_library(60);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    // The gateway fails page 3 through two whole calls (each with the
    // client's own repeats), so the loader has to ask again twice.
    let per_call = earmark::api::ClientOptions::default().retries as usize + 1;
    let gateway = rt.block_on(Gateway::start(server.addr(), 2 * per_call));
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &gateway.base_url(), &server, home.path());
    assert_eq!(profile.options.retries as usize + 1, per_call);
    let mut app = app();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    until(&mut app, &rx, "the complete library", |a| {
        assert!(!matches!(a, Answer::LibraryIncomplete(_)), "{a:?}");
        is_complete(a)
    });
    assert_eq!(gateway.page3.load(Ordering::SeqCst), 2 * per_call + 1);
    assert_eq!(app.library.total(), 60);
    assert!(app.library.arrival.is_none());
    live.shutdown();
}

/// A first start with 12,000 of `total` books arrived, in pages of 100.
fn arriving(total: Option<u64>) -> App {
    let mut app = App::new(Keymap::default(), UiSettings::default());
    app.update(Event::Tick(1_000));
    app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://nas.local:8686/api/v1".into(),
        user: "anna".into(),
        profile: Some("default".into()),
    })));
    let books = crate::bench::big_library(12_000);
    for (i, page) in books.chunks(100).enumerate() {
        app.update(Event::Answer(Answer::LibraryPage {
            books: page.to_vec(),
            total,
            first: i == 0,
        }));
    }
    app
}

fn both(name: &str, mut make: impl FnMut() -> App) {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = make();
        let text = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

#[test]
fn snapshot_library_arriving_shows_the_count() {
    both("library_arriving", || arriving(Some(100_000)));
    both("library_arriving_no_total", || arriving(None));
}

#[test]
fn snapshot_search_while_arriving_says_what_it_covers() {
    both("library_arriving_search", || {
        let mut app = arriving(Some(100_000));
        app.update(key('/'));
        for c in "storm whale".chars() {
            app.update(key(c));
        }
        while app.library.step_scan() {}
        app
    });
}

#[test]
fn snapshot_library_arrival_failed_says_the_rest_is_missing() {
    both("library_arrival_failed", || {
        let mut app = arriving(Some(100_000));
        app.update(Event::Answer(Answer::LibraryIncomplete(
            "Loaded 12000 books; the rest of the library could not be loaded: the server did not answer in 30 s.".into(),
        )));
        app
    });
}

/// Benchmark (docs/benchmarks.md, issue 15): a first start with no cache
/// against a running `earmark serve` with a big library, from starting the
/// backends to the first rows drawn, and to the complete list. The server
/// is given by EARMARK_BENCH_SERVER, EARMARK_BENCH_USER and
/// EARMARK_BENCH_PASSWORD (127.0.0.1 only). The player's own page size.
#[test]
#[ignore]
fn bench_first_rows_on_screen_no_cache() {
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_owned());
    let address = var("EARMARK_BENCH_SERVER", "http://127.0.0.1:18686/api/v1");
    assert!(address.starts_with("http://127.0.0.1:"), "127.0.0.1 only");
    let user = var("EARMARK_BENCH_USER", "bench");
    let password = var("EARMARK_BENCH_PASSWORD", "bench-password");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let theme = earmark::ui::theme::Theme::default();
    let (mut first_rows, mut complete) = (Vec::new(), Vec::new());
    for run in 0..5 {
        let home = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            config: home.path().join("config"),
            data: home.path().join("data"),
            cache: home.path().join("cache"),
        };
        let global = ProfileSelector {
            server: Some(address.clone()),
            user: Some(user.clone()),
            ..Default::default()
        };
        let profile = Profile::resolve_in(&global, dirs).unwrap();
        let done = rt
            .block_on(earmark::config::login(&profile, None, &password))
            .unwrap();
        let mut app = app();
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
        let t = Instant::now();
        let (ui, rx) = UiSender::channel();
        let mut live = Live::start(
            ui,
            profile,
            Some(done.session),
            AudioMode::Null,
            Default::default(),
        )
        .unwrap();
        until(&mut app, &rx, "the first page", is_page);
        term.draw(|f| earmark::ui::views::render(&mut app, &theme, f))
            .unwrap();
        let first = t.elapsed().as_secs_f64() * 1000.0;
        assert!(app.library.row(0).is_some());
        let mut pages = 1;
        while is_page(&until(&mut app, &rx, "the complete library", |a| {
            is_page(a) || is_complete(a)
        })) {
            pages += 1;
        }
        term.draw(|f| earmark::ui::views::render(&mut app, &theme, f))
            .unwrap();
        let all = t.elapsed().as_secs_f64() * 1000.0;
        println!(
            "  run {run}: first rows drawn {first:.1} ms; all {} books ({pages} pages) {all:.0} ms",
            app.library.total()
        );
        live.shutdown();
        first_rows.push(first);
        complete.push(all);
    }
    first_rows.sort_by(f64::total_cmp);
    complete.sort_by(f64::total_cmp);
    println!(
        "first start, no cache: first rows on screen median {:.1} ms (max {:.1}); complete list median {:.0} ms",
        first_rows[2], first_rows[4], complete[2]
    );
}
