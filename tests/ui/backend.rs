//! The player's backends (`runtime::Live`) against the reference
//! server with null audio: the effects the reducer emits go in, the
//! answers the UI would get come out.

use crate::harness::TestServer;
use earmark::api::{BookQuery, ProgressWrite};
use earmark::config::{Dirs, Profile, ProfileSelector};
use earmark::domain::session::{
    Command, Event as SessionEvent, Keep, Listening, Place, Said, Start, known,
};
use earmark::domain::{Book, Manifest, Stop, StopReason, now_millis};
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::{Answer, Effect, Event, PlayState};
use earmark::ui::terminal::LoopEvent;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub(crate) fn demo_library() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("demo")
}

/// The session's book in a snapshot the player got.
pub(crate) fn listening(a: &Answer) -> Option<&Listening> {
    match a {
        Answer::Session(s) => s.listening.as_ref(),
        _ => None,
    }
}

/// The session's book in `state`, as a snapshot says.
pub(crate) fn in_state(a: &Answer, state: PlayState) -> bool {
    listening(a).is_some_and(|l| l.state == state)
}

/// Opens `book` as the player's book screen does.
pub(crate) fn open(live: &mut Live, book: &Book, manifest: &Manifest, start: Start) {
    live.handle(Effect::Session(Command::Open {
        book: book.id.clone(),
        start,
        known: known(book.clone(), manifest.clone()),
    }));
}

pub(crate) fn next_answer(
    rx: &Receiver<LoopEvent>,
    what: &str,
    f: impl Fn(&Answer) -> bool,
) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(LoopEvent::App(Event::Answer(a))) if f(&a) => return a,
            Ok(_) => {}
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
}

/// The conflict prompt comes from the sync worker's restore (server and
/// this device more than a minute apart), and the user's answer flows back
/// through the reconciler to the engine and the server.
#[test]
fn conflict_prompt_appears_and_the_choice_reaches_the_server() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    // A book of several chapters, longer in all than the prompt threshold.
    let (book, manifest): (Book, Manifest) = rt.block_on(async {
        for b in c.books(&BookQuery::default()).await.unwrap() {
            let m = c.manifest(&b.id).await.unwrap();
            let total: f64 = m.items.iter().filter_map(|i| i.duration).sum();
            if m.items.len() >= 3 && total > 120.0 && m.items[0].duration.unwrap_or(0.0) > 25.0 {
                return (b, m);
            }
        }
        panic!("no demo book with several chapters");
    });
    let last = manifest.items.len() - 1;
    let (ch0, ch1) = (m_ch(&manifest, 0), m_ch(&manifest, last));
    // The server (another device) is in the last chapter; this device in
    // the first.
    // This device listened in the first chapter up to 20 s …
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile.clone(),
        Some(done.session.clone()),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    open(&mut live, &book, &manifest, Start::At(ch0.clone(), 19.5));
    next_answer(&rx, "this device playing at 20 s", |a| {
        listening(a).is_some_and(|l| l.chapter == ch0 && l.position >= 20.0)
    });
    live.handle(Effect::Session(Command::Pause));
    next_answer(&rx, "paused at 20 s", |a| in_state(a, PlayState::Paused));
    live.shutdown();
    let here = rt.block_on(c.progress(&book.id)).unwrap().progress.unwrap();
    assert_eq!(here.chapter_id, ch0);
    // … then another device, later, in the last chapter.
    rt.block_on(c.post_progress(
        &book.id,
        &ProgressWrite {
            chapter_id: ch1.clone(),
            position: 5.0,
            client_updated_at: now_millis(),
            finished: false,
            device_id: Some("other".into()),
            reset: false,
        },
    ))
    .unwrap();

    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    open(&mut live, &book, &manifest, Start::Resume);
    let a = next_answer(&rx, "the conflict prompt", |a| {
        matches!(a, Answer::SessionEvent(SessionEvent::Conflict { .. }))
    });
    assert_eq!(
        a,
        Answer::SessionEvent(SessionEvent::Conflict {
            book: book.id.clone(),
            server: Place {
                chapter: ch1.clone(),
                position: 5.0
            },
            local: Place {
                chapter: ch0.clone(),
                position: here.position
            },
        })
    );
    live.handle(Effect::Session(Command::Choose {
        book: book.id.clone(),
        keep: Keep::Local,
    }));
    // The engine plays from this device's place, then is paused there.
    next_answer(&rx, "playing from this device's place", |a| {
        listening(a).is_some_and(|l| l.chapter == ch0 && l.position >= 20.5)
    });
    live.handle(Effect::Session(Command::Pause));
    next_answer(&rx, "paused", |a| in_state(a, PlayState::Paused));
    live.shutdown();
    let p = rt.block_on(c.progress(&book.id)).unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch0, "the user's choice reached the server");
    assert!(p.position >= 20.0 && p.position < 40.0, "{}", p.position);
}

pub(crate) fn log_in(
    rt: &tokio::runtime::Runtime,
    server: &TestServer,
    home: &std::path::Path,
) -> (Profile, earmark::config::LoggedIn) {
    let dirs = Dirs {
        config: home.join("config"),
        data: home.join("data"),
        cache: home.join("cache"),
    };
    let global = ProfileSelector {
        server: Some(server.base_url().to_owned()),
        user: Some(server.username.clone()),
        ..Default::default()
    };
    let profile = Profile::resolve_in(&global, dirs).unwrap();
    let done = rt
        .block_on(earmark::config::login(&profile, None, &server.password))
        .unwrap();
    (profile, done)
}

/// A 403 `license_required` on any request (here the library refresh)
/// stops playback and sync; a valid license status resumes sync at once.
#[test]
fn license_required_anywhere_stops_playback_and_a_valid_status_resumes_sync() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let (book, manifest) = rt.block_on(async {
        let b = c.books(&BookQuery::default()).await.unwrap().remove(0);
        let m = c.manifest(&b.id).await.unwrap();
        (b, m)
    });
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    open(&mut live, &book, &manifest, Start::Resume);
    next_answer(&rx, "playing", |a| in_state(a, PlayState::Playing));
    server
        .set_license(earmark::server::LicenseSetting::Expired)
        .unwrap();
    live.handle(Effect::LoadLibrary);
    // The banner and the pause may come in either order: the sync worker's
    // own request can meet the 403 before the library refresh does.
    let (mut banner, mut paused) = (false, false);
    while !(banner && paused) {
        match next_answer(&rx, "the license banner and playback stopped", |a| {
            matches!(
                a,
                Answer::SessionEvent(SessionEvent::Stopped(Stop {
                    reason: StopReason::License,
                    ..
                }))
            ) || in_state(a, PlayState::Paused)
        }) {
            Answer::SessionEvent(_) => banner = true,
            _ => paused = true,
        }
    }
    // Meanwhile nothing plays, whoever asks (a key, MPRIS): the stop is
    // said again.
    live.handle(Effect::Session(Command::Play));
    next_answer(&rx, "the stop said again", |a| {
        matches!(
            a,
            Answer::SessionEvent(SessionEvent::Stopped(Stop {
                reason: StopReason::License,
                ..
            }))
        )
    });
    server
        .set_license(earmark::server::LicenseSetting::Valid)
        .unwrap();
    live.handle(Effect::LoadLicense);
    // The worker polls every 30 s on its own; the valid status must not
    // have to wait for that.
    next_answer(&rx, "sync resumed", |a| {
        *a == Answer::SessionEvent(SessionEvent::Said(Said::LicenseRestored))
    });
    live.shutdown();
}

pub(crate) fn m_ch(m: &Manifest, i: usize) -> earmark::domain::ChapterId {
    m.items[i].chapter_id.clone()
}

/// Speed and volume changes are saved per book through the sync worker
/// (that the sleep timer's fade is not is tests/ui/sleep.rs's).
#[test]
fn speed_and_volume_are_saved_for_the_book() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let (book, manifest) = rt.block_on(async {
        let b = c.books(&BookQuery::default()).await.unwrap().remove(0);
        let m = c.manifest(&b.id).await.unwrap();
        (b, m)
    });
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    open(&mut live, &book, &manifest, Start::Resume);
    next_answer(&rx, "playing", |a| in_state(a, PlayState::Playing));
    live.handle(Effect::Session(Command::Volume(0.5)));
    next_answer(&rx, "volume applied", |a| {
        listening(a).is_some_and(|l| (l.volume - 0.5).abs() < 1e-3)
    });
    live.handle(Effect::Session(Command::Speed(1.5)));
    next_answer(&rx, "speed applied", |a| {
        listening(a).is_some_and(|l| (l.speed - 1.5).abs() < 1e-3)
    });
    live.shutdown();
    let s = rt
        .block_on(c.progress(&book.id))
        .unwrap()
        .settings
        .expect("settings saved");
    assert!((s.speed - 1.5).abs() < 1e-3, "{s:?}");
    assert_eq!(s.volume.map(|v| (v * 100.0).round()), Some(50.0), "{s:?}");
}

/// Mark finished: the playing book at its landed place (the reconciler's
/// intent), another book at the server's place; both through the outbox.
#[test]
fn mark_finished_uses_the_landed_place_and_keeps_other_books_progress() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let (a, am, b, bm) = rt.block_on(async {
        let mut books = c.books(&BookQuery::default()).await.unwrap();
        let b = books.remove(1);
        let a = books.remove(0);
        let am = c.manifest(&a.id).await.unwrap();
        let bm = c.manifest(&b.id).await.unwrap();
        (a, am, b, bm)
    });
    let b_ch = m_ch(&bm, bm.items.len() - 1);
    rt.block_on(c.post_progress(
        &b.id,
        &ProgressWrite {
            chapter_id: b_ch.clone(),
            position: 3.0,
            client_updated_at: now_millis() - 60_000,
            finished: false,
            device_id: Some("other".into()),
            reset: false,
        },
    ))
    .unwrap();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    let a_ch = m_ch(&am, am.items.len() - 1);
    open(&mut live, &a, &am, Start::At(a_ch.clone(), 2.0));
    next_answer(&rx, "playing", |a| {
        listening(a).is_some_and(|l| l.state == PlayState::Playing && l.position > 2.2)
    });
    live.handle(Effect::Session(Command::Pause));
    next_answer(&rx, "paused", |a| in_state(a, PlayState::Paused));
    for book in [&a.id, &b.id] {
        live.handle(Effect::Session(Command::MarkFinished {
            book: book.clone(),
            finished: true,
        }));
    }
    next_answer(&rx, "the other book marked", |x| {
        matches!(x, Answer::SessionEvent(SessionEvent::ProgressChanged { book, progress })
            if *book == b.id && progress.finished)
    });
    live.shutdown();
    let pa = rt.block_on(c.progress(&a.id)).unwrap().progress.unwrap();
    assert!(pa.finished);
    assert_eq!(pa.chapter_id, a_ch);
    assert!(pa.position > 2.0, "marked at the landed place: {pa:?}");
    let pb = rt.block_on(c.progress(&b.id)).unwrap().progress.unwrap();
    assert!(pb.finished);
    assert_eq!((pb.chapter_id, pb.position), (b_ch, 3.0));
}

/// Rapid switching A → B → A: each book's server progress stays its own.
#[test]
fn rapid_switching_never_writes_one_books_place_into_another() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let books: Vec<(Book, Manifest)> = rt.block_on(async {
        let mut out = Vec::new();
        for b in c
            .books(&BookQuery::default())
            .await
            .unwrap()
            .into_iter()
            .take(2)
        {
            let m = c.manifest(&b.id).await.unwrap();
            out.push((b, m));
        }
        out
    });
    for (i, (b, m)) in books.iter().enumerate() {
        rt.block_on(c.post_progress(
            &b.id,
            &ProgressWrite {
                chapter_id: m_ch(m, m.items.len() - 1),
                position: 2.0 + i as f64,
                client_updated_at: now_millis() - 60_000,
                finished: false,
                device_id: Some("other".into()),
                reset: false,
            },
        ))
        .unwrap();
    }
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    for i in [0, 1, 0, 1, 0] {
        let (b, m) = &books[i];
        open(&mut live, b, m, Start::Resume);
    }
    let a = &books[0].0.id;
    next_answer(&rx, "A playing", |x| {
        listening(x)
            .is_some_and(|l| l.book.id == *a && l.state == PlayState::Playing && l.position > 2.5)
    });
    live.handle(Effect::Session(Command::Pause));
    next_answer(&rx, "paused", |x| in_state(x, PlayState::Paused));
    live.shutdown();
    for (i, (b, m)) in books.iter().enumerate() {
        let p = rt.block_on(c.progress(&b.id)).unwrap().progress.unwrap();
        assert!(
            m.position_of(&p.chapter_id).is_some(),
            "book {i} holds another book's chapter: {p:?}"
        );
        assert_eq!(p.chapter_id, m_ch(m, m.items.len() - 1), "book {i}: {p:?}");
        assert!(p.position >= 2.0 + i as f64, "book {i} went back: {p:?}");
    }
}

/// Flow step 2: the player reads the license status on start, so an
/// invalid license shows its banner before any request or stream fails.
#[test]
fn an_invalid_license_shows_its_banner_on_start_before_anything_fails() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    server
        .set_license(earmark::server::LicenseSetting::Expired)
        .unwrap();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    let a = next_answer(&rx, "the license banner", |a| {
        matches!(
            a,
            Answer::SessionEvent(SessionEvent::Stopped(Stop {
                reason: StopReason::License,
                ..
            }))
        )
    });
    let Answer::SessionEvent(SessionEvent::Stopped(Stop { message, .. })) = a else {
        unreachable!()
    };
    assert!(!message.is_empty());
    live.shutdown();
}

/// A request that cannot reach the server is said in earmark's words:
/// the address and the first reason, not the HTTP library's chain.
#[test]
fn an_unreachable_server_is_said_without_the_http_librarys_words() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    rt.block_on(server.stop());
    live.handle(Effect::Search("fox".into()));
    let Answer::Failed(words) = next_answer(
        &rx,
        "the search failed",
        |a| matches!(a, Answer::Failed(m) if m.contains("Search")),
    ) else {
        unreachable!()
    };
    assert!(words.contains("cannot reach the server at"), "{words}");
    assert!(!words.contains("client error"), "{words}");
    assert!(!words.contains("tcp"), "{words}");
    live.shutdown();
}
