//! Up next through the player's real backends (`runtime::Live`: the
//! engine on the null output, sync, the reference server over HTTP): a
//! book of a two-book series ends, is marked finished on the server, and
//! the next one starts from the place the server holds for it (never 0);
//! the play next list is kept on disk across restarts, per account; a
//! finished book the list brings back plays from 0 as a restart the
//! server records, an unfinished one resumes; `n` in the last chapter goes
//! on at once, the book marked finished on the server.

use crate::backend::{log_in, next_answer};
use crate::driver::Driver;
use crate::fixtures::*;
use crate::harness::TestServer;
use earmark::api::ProgressWrite;
use earmark::config::{ListeningRules, UpNextStore};
use earmark::domain::session::{Command, UpNextCommand};
use earmark::domain::*;
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use std::path::Path;

/// A mono 8-bit WAV of `secs` seconds of silence at 2 kHz.
fn wav(path: &Path, secs: u32) {
    let (rate, n) = (2000u32, 2000 * secs);
    let mut b = Vec::with_capacity(44 + n as usize);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    for v in [
        16u32.to_le_bytes().as_slice(),
        &1u16.to_le_bytes(),
        &1u16.to_le_bytes(),
    ] {
        b.extend_from_slice(v);
    }
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&8u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&n.to_le_bytes());
    b.resize(44 + n as usize, 128);
    std::fs::write(path, b).unwrap();
}

/// A series "Saga": "Saga One" (#1, two chapters of `one` seconds each)
/// and "Saga Two" (#2, two chapters of 40 s), and "Beta", in no series.
pub(crate) fn saga_library(one: u32) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("earmark-saga-")
        .tempdir()
        .unwrap();
    for (title, lens, series) in [
        ("Saga One", [one, one], "series = \"Saga\"\nsequence = 1\n"),
        ("Saga Two", [40, 40], "series = \"Saga\"\nsequence = 2\n"),
        ("Beta", [40, 40], ""),
    ] {
        let b = dir.path().join(title);
        std::fs::create_dir_all(&b).unwrap();
        for (i, l) in lens.iter().enumerate() {
            wav(&b.join(format!("0{} - {title} {}.wav", i + 1, i + 1)), *l);
        }
        std::fs::write(
            b.join("book.toml"),
            format!("title = \"{title}\"\nauthor = \"Test\"\n{series}"),
        )
        .unwrap();
    }
    dir
}

/// Gives `book` a place on the server: chapter 2 at `position`, saved a
/// minute ago (another device's).
/// The player on Saga One's book screen, its library and up next list
/// read, and Saga Two's synced place set to chapter 2 at 12 s: Saga Two
/// and that chapter.
fn saga_one_open(lib: &Path, rules: ListeningRules) -> (Driver, Book, ChapterId) {
    let mut d = Driver::start_on(lib, rules, |b, _| b.title == "Saga One");
    let books = d.rt.block_on(d.client.books(&Default::default())).unwrap();
    let two = crate::harness::titled(&books, "Saga Two").clone();
    let two_ch2 = d.rt.block_on(place(&d.client, &two.id, 12.0));
    d.step(Event::Answer(Answer::Library {
        books,
        from_cache: false,
    }));
    (d, two, two_ch2)
}

pub(crate) async fn place(c: &earmark::api::Client, book: &BookId, position: f64) -> ChapterId {
    let m = c.manifest(book).await.unwrap();
    let ch = m.items[1].chapter_id.clone();
    c.post_progress(
        book,
        &ProgressWrite {
            chapter_id: ch.clone(),
            position,
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

#[test]
fn a_finished_book_is_marked_finished_and_the_next_of_its_series_resumes_at_its_place() {
    let lib = saga_library(2);
    let rules = ListeningRules {
        rewind: None,
        up_next_countdown: std::time::Duration::from_millis(1_500),
        ..Default::default()
    };
    let (mut d, two, two_ch2) = saga_one_open(lib.path(), rules);
    d.step(code(KeyCode::Enter)); // chapter 1 from 0
    d.follow("next: Saga Two", |a| {
        a.snap
            .up_next
            .next
            .as_ref()
            .is_some_and(|n| n.book == two.id)
    });
    d.follow("the countdown", |a| a.snap.up_next.countdown.is_some());
    // Every place of Saga Two the player is shown, until it plays.
    let seen = std::cell::RefCell::new(Vec::new());
    d.follow("Saga Two playing", |a| {
        let Some(np) = a.playing().filter(|p| p.book.id == two.id) else {
            return false;
        };
        if np.state != PlayState::Loading && np.state != PlayState::Ready {
            seen.borrow_mut().push((np.chapter.clone(), np.position));
        }
        np.state == PlayState::Playing
    });
    for (ch, pos) in seen.borrow().iter() {
        assert_eq!(ch, &two_ch2, "its synced chapter: {:?}", seen.borrow());
        assert!(
            *pos >= 11.9,
            "its synced place, never 0: {:?}",
            seen.borrow()
        );
    }
    // Saga One ended: sync marked it finished on the server.
    let one = d.book.id.clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let p = d.rt.block_on(d.client.progress(&one)).unwrap().progress;
        if p.as_ref().is_some_and(|p| p.finished) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Saga One not finished: {p:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    d.live.shutdown();
    let p =
        d.rt.block_on(d.client.progress(&two.id))
            .unwrap()
            .progress
            .unwrap();
    assert_eq!(p.chapter_id, two_ch2);
    assert!(p.position >= 12.0, "{}", p.position);
}

#[test]
fn a_key_during_the_countdown_keeps_the_next_book_from_starting() {
    let lib = saga_library(2);
    let rules = ListeningRules {
        up_next_countdown: std::time::Duration::from_millis(1_500),
        ..Default::default()
    };
    let mut d = Driver::start_on(lib.path(), rules, |b, _| b.title == "Saga One");
    let books = d.rt.block_on(d.client.books(&Default::default())).unwrap();
    d.step(Event::Answer(Answer::Library {
        books,
        from_cache: false,
    }));
    d.step(code(KeyCode::Enter));
    d.follow("the countdown", |a| a.snap.up_next.countdown.is_some());
    d.step(key('x'));
    d.follow("cancelled", |a| a.snap.up_next.countdown.is_none());
    // Well past the countdown, Saga One is still the book, ended.
    let until = d.app.now + 3_000;
    d.follow("3 s", |a| a.now >= until);
    let np = d.app.playing().unwrap();
    assert_eq!(np.book.id, d.book.id);
    assert_eq!(np.state, PlayState::Ended);
    d.live.shutdown();
}

#[test]
fn the_list_is_kept_across_restarts_for_its_account_only() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = saga_library(2);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    server.add_user("bob", "bobs-password-1").unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let books = rt.block_on(done.client.books(&Default::default())).unwrap();
    let list: Vec<Queued> = books.iter().rev().map(Queued::of).collect();
    // The session's list once it was read (an empty list is published
    // at start, before the disk is read: wait for `want`'s length).
    let read = |rx: &std::sync::mpsc::Receiver<_>, want: usize| match next_answer(
        rx,
        "the list",
        |a| matches!(a, Answer::Session(s) if s.up_next.list.len() == want),
    ) {
        Answer::Session(s) => s.up_next.list,
        _ => unreachable!(),
    };
    {
        let (ui, rx) = UiSender::channel();
        let mut live = Live::start(
            ui,
            profile.clone(),
            Some(done.session.clone()),
            AudioMode::Null,
            Default::default(),
        )
        .unwrap();
        assert_eq!(read(&rx, 0), vec![], "nothing kept yet");
        for q in &list {
            live.handle(Effect::Session(Command::UpNext(UpNextCommand::Toggle(
                q.clone(),
            ))));
        }
        assert_eq!(read(&rx, list.len()), list);
        live.shutdown();
    }
    // A restart reads it back.
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    assert_eq!(read(&rx, list.len()), list);
    // Bob, on the same device and server, has his own (empty) list.
    live.handle(Effect::Login {
        address: server.base_url().to_owned(),
        user: "bob".into(),
        password: Password::new("bobs-password-1"),
        profile: Some("bob".into()),
    });
    // (The login's answer and the session's snapshot come by two ways.)
    assert!(read(&rx, 0).is_empty());
    live.shutdown();
    let dir = home.path().join("data/up-next");
    assert_eq!(
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "json")
            })
            .count(),
        1,
        "only alice's list was written"
    );
}

/// Saga One plays to its end with Beta on the list, Beta's place on the
/// server chapter 2 at 20 s, `finished` or not; every view of Beta the
/// player gets until it plays, and Beta's place on the server once the
/// player quit.
fn beta_from_the_list(finished: bool) -> (Vec<(ChapterId, f64)>, Manifest, Progress) {
    let lib = saga_library(2);
    let rules = ListeningRules {
        rewind: None,
        up_next_countdown: std::time::Duration::from_millis(1_000),
        ..Default::default()
    };
    let prepare = |rt: &tokio::runtime::Runtime, c: &earmark::api::Client, list: &UpNextStore| {
        let books = rt.block_on(c.books(&Default::default())).unwrap();
        let beta = crate::harness::titled(&books, "Beta");
        let m = rt.block_on(c.manifest(&beta.id)).unwrap();
        let write = ProgressWrite {
            chapter_id: m.items[1].chapter_id.clone(),
            position: 20.0,
            client_updated_at: now_millis() - 60_000,
            finished,
            device_id: None,
            reset: false,
        };
        rt.block_on(c.post_progress(&beta.id, &write)).unwrap();
        list.save(&[Queued::of(beta)]).unwrap();
    };
    let mut d = Driver::start_prepared(lib.path(), rules, |b, _| b.title == "Saga One", prepare);
    // The library as the server now tells it.
    let books = d.rt.block_on(d.client.books(&Default::default())).unwrap();
    let beta = crate::harness::titled(&books, "Beta").clone();
    assert_eq!(
        beta.progress.as_ref().map(|p| p.finished),
        Some(finished),
        "the library tells it"
    );
    let m = d.rt.block_on(d.client.manifest(&beta.id)).unwrap();
    d.step(Event::Answer(Answer::Library {
        books,
        from_cache: false,
    }));
    d.follow("the account's list read", |a| {
        !a.snap.up_next.list.is_empty()
    });
    d.step(code(KeyCode::Enter));
    d.follow("the countdown to Beta", |a| {
        a.snap
            .up_next
            .countdown
            .as_ref()
            .is_some_and(|c| c.next.book == beta.id)
    });
    let seen = std::cell::RefCell::new(Vec::new());
    d.follow("Beta playing", |a| {
        let Some(np) = a.playing().filter(|p| p.book.id == beta.id) else {
            return false;
        };
        if np.state != PlayState::Loading && np.state != PlayState::Ready {
            seen.borrow_mut().push((np.chapter.clone(), np.position));
        }
        np.state == PlayState::Playing
    });
    // The list comes before the series (Saga Two), and its book left it.
    d.follow("Beta off the list", |a| a.snap.up_next.list.is_empty());
    d.live.shutdown();
    let p =
        d.rt.block_on(d.client.progress(&beta.id))
            .unwrap()
            .progress
            .unwrap();
    (seen.into_inner(), m, p)
}

#[test]
fn a_finished_book_from_the_list_plays_from_0_and_the_server_records_the_restart() {
    let (seen, m, p) = beta_from_the_list(true);
    let first = &m.items[0].chapter_id;
    for (ch, pos) in &seen {
        assert_eq!(ch, first, "its first chapter: {seen:?}");
        assert!(*pos < 5.0, "from 0, not its end: {seen:?}");
    }
    assert!(!p.finished, "the server recorded the restart: {p:?}");
    assert_eq!(&p.chapter_id, first, "{p:?}");
    assert!(p.position < 5.0, "{p:?}");
}

#[test]
fn an_unfinished_book_from_the_list_resumes_at_its_place() {
    let (seen, m, p) = beta_from_the_list(false);
    let second = &m.items[1].chapter_id;
    for (ch, pos) in &seen {
        assert_eq!(ch, second, "its synced chapter: {seen:?}");
        assert!(*pos >= 19.9, "its synced place, never 0: {seen:?}");
    }
    assert!(
        !p.finished && &p.chapter_id == second && p.position >= 20.0,
        "{p:?}"
    );
}

#[test]
fn n_in_the_last_chapter_marks_the_book_finished_on_the_server_and_the_next_resumes_at_once() {
    // Chapters of 30 s: nothing ends by itself while the keys are pressed.
    let lib = saga_library(30);
    let rules = ListeningRules {
        rewind: None,
        ..Default::default()
    };
    let (mut d, two, two_ch2) = saga_one_open(lib.path(), rules);
    d.step(code(KeyCode::Enter));
    let (one, last) = (d.book.id.clone(), d.manifest.items[1].chapter_id.clone());
    d.follow("Saga One playing", |a| {
        Driver::at(a).is_some_and(|(s, _, _)| s == PlayState::Playing)
    });
    d.step(key('n'));
    d.follow("its last chapter", |a| {
        Driver::at(a).is_some_and(|(s, c, _)| s == PlayState::Playing && c == last)
    });
    d.step(key('n'));
    d.follow("Saga Two playing", |a| {
        assert!(
            a.snap.up_next.countdown.is_none(),
            "no countdown: n asked for it"
        );
        a.playing().is_some_and(|p| p.book.id == two.id)
            && Driver::at(a).is_some_and(|(s, _, _)| s == PlayState::Playing)
    });
    let (_, ch, pos) = Driver::at(&d.app).unwrap();
    assert_eq!(ch, two_ch2, "its synced chapter");
    assert!(pos >= 11.9, "its synced place, never 0: {pos}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let p = d.rt.block_on(d.client.progress(&one)).unwrap().progress;
        if p.as_ref().is_some_and(|p| p.finished) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Saga One not finished on the server: {p:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    d.live.shutdown();
}

/// A book with nothing after it ends quietly; `n` after its end says why
/// nothing follows (the list is empty, `up_next = "queue"`).
#[test]
fn a_book_with_nothing_after_it_ends_quietly_and_n_says_why() {
    use crate::backend::{listening, open};
    use earmark::domain::session::{Event as SessionEvent, Said, Start, UpNextWhy};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = saga_library(2);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let books = rt.block_on(c.books(&Default::default())).unwrap();
    let one = crate::harness::titled(&books, "Saga One").clone();
    let m = rt.block_on(c.manifest(&one.id)).unwrap();
    let rules = ListeningRules {
        up_next: UpNextMode::Queue,
        rewind: None,
        ..Default::default()
    };
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(ui, profile, Some(done.session), AudioMode::Null, rules).unwrap();
    let last = m.items[1].chapter_id.clone();
    open(&mut live, &one, &m, Start::At(last, 0.5));
    let none = |a: &Answer| {
        matches!(
            a,
            Answer::SessionEvent(SessionEvent::Said(Said::UpNextNone(_)))
        )
    };
    let ended = next_answer(&rx, "the end (or words before it)", |a| {
        none(a) || listening(a).is_some_and(|l| l.state == PlayState::Ended)
    });
    assert!(!none(&ended), "the end was not quiet");
    // Snapshots and events come by two ways: a command's words after the
    // end mark where the end's own words would have come.
    use earmark::domain::sleep::{SleepChoice, SleepNews};
    live.handle(Effect::Session(Command::Sleep(SleepChoice::Off)));
    let marker = next_answer(&rx, "the timer's words", |a| {
        none(a)
            || matches!(
                a,
                Answer::SessionEvent(SessionEvent::Said(Said::Sleep(SleepNews::Set { .. })))
            )
    });
    assert!(!none(&marker), "the end was not quiet");
    live.handle(Effect::Session(Command::UpNext(UpNextCommand::Go)));
    let said = next_answer(&rx, "n's words", none);
    assert_eq!(
        said,
        Answer::SessionEvent(SessionEvent::Said(Said::UpNextNone(
            UpNextWhy::NothingFollows
        )))
    );
    live.shutdown();
}

/// A book on the list that the listener starts by hand leaves the list.
#[test]
fn a_book_played_by_hand_leaves_the_list_too() {
    use crate::backend::{listening, open};
    use earmark::domain::session::Start;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = saga_library(2);
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let books = rt.block_on(c.books(&Default::default())).unwrap();
    let beta = crate::harness::titled(&books, "Beta").clone();
    let m = rt.block_on(c.manifest(&beta.id)).unwrap();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    let queued = Command::UpNext(UpNextCommand::Toggle(Queued::of(&beta)));
    live.handle(Effect::Session(queued));
    next_answer(
        &rx,
        "Beta up next",
        |a| matches!(a, Answer::Session(s) if s.up_next.list.len() == 1),
    );
    open(&mut live, &beta, &m, Start::Resume);
    next_answer(&rx, "Beta playing, off the list", |a| {
        listening(a).is_some_and(|l| l.book.id == beta.id)
            && matches!(a, Answer::Session(s) if s.up_next.list.is_empty())
    });
    live.shutdown();
}
