//! What the player shows for each stop reason, the same reasons `earmark
//! play` exits with (tests/sync/stops.rs): through the reducer for every
//! reason, and through the player's real backends for a license refusal
//! on the chapter stream and for what quitting leaves unsent.

use crate::backend::{demo_library, next_answer, open};
use crate::fixtures::*;
use crate::gate::Gate;
use crate::harness::TestServer;
use earmark::api::BookQuery;
use earmark::config::{Dirs, Profile, ProfileSelector};
use earmark::domain::session::{Event as SessionEvent, Start};
use earmark::domain::*;
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::*;
use earmark::ui::terminal::LoopEvent;
use std::sync::mpsc::Receiver;

#[test]
fn each_stop_reason_shows_as_the_player_words_it() {
    for reason in StopReason::ALL {
        let mut app = playing();
        let message = format!("stopped for {reason}");
        news(&mut app, SessionEvent::Stopped(Stop::new(reason, &message)));
        if reason == StopReason::License {
            // The banner, and the playback keys stop at it.
            assert_eq!(app.license_block.as_deref(), Some(message.as_str()));
            assert!(app.update(key(' ')).is_empty(), "{reason}");
            continue;
        }
        assert_eq!(app.license_block, None, "{reason}");
        let toast = app.toasts.back().expect("a message");
        assert!(toast.error, "{reason}");
        assert!(toast.text.contains(&message), "{reason}: {}", toast.text);
        assert_eq!(
            toast.text.contains("Press P to log in again"),
            matches!(reason, StopReason::Login | StopReason::Scope),
            "{reason}: {}",
            toast.text
        );
    }
}

/// Logged in to `base` (a gate in front of `server`) in `home`.
fn log_in_at(
    rt: &tokio::runtime::Runtime,
    server: &TestServer,
    base: &str,
    home: &std::path::Path,
) -> (Profile, earmark::config::LoggedIn) {
    let dirs = Dirs {
        config: home.join("config"),
        data: home.join("data"),
        cache: home.join("cache"),
    };
    let global = ProfileSelector {
        server: Some(base.to_owned()),
        user: Some(server.username.clone()),
        ..Default::default()
    };
    let profile = Profile::resolve_in(&global, dirs).unwrap();
    let done = rt
        .block_on(earmark::config::login(&profile, None, &server.password))
        .unwrap();
    (profile, done)
}

/// Answers until `done` holds, each one through the reducer.
fn follow(app: &mut App, rx: &Receiver<LoopEvent>, what: &str, done: impl Fn(&App) -> bool) {
    while !done(app) {
        let a = next_answer(rx, what, |_| true);
        app.update(Event::Answer(a));
    }
}

/// The reference server gates `/play` with the license: a refusal that
/// arrives on the chapter stream (every API call went through) stops
/// playback and shows the license banner, as an API call's would.
#[test]
fn a_license_refusal_on_the_chapter_stream_shows_the_license_banner() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let gate = rt.block_on(Gate::start(server.base_url()));
    gate.refuse_streams(
        403,
        r#"{"code":"license_required","message":"The license expired on the stream."}"#,
    );
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in_at(&rt, &server, &gate.base_url(), home.path());
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
    let mut app = App::new(
        earmark::ui::keymap::Keymap::default(),
        UiSettings::default(),
    );
    app.update(Event::Answer(Answer::Library {
        books: vec![book.clone()],
        from_cache: false,
    }));
    open(&mut live, &book, &manifest, Start::Resume);
    follow(&mut app, &rx, "the license banner", |a| {
        a.license_block.is_some()
    });
    assert!(
        app.license_block
            .as_deref()
            .is_some_and(|m| m.contains("expired on the stream")),
        "{:?}",
        app.license_block
    );
    assert!(gate.streams() > 0);
    live.shutdown();
}

/// Quitting with changes the server could not take yet says how many are
/// kept, as `earmark play` does.
#[test]
fn quitting_with_unsent_changes_says_how_many_are_kept() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = crate::backend::log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let book = rt.block_on(async { c.books(&BookQuery::default()).await.unwrap().remove(0) });
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
    // A favorite the server cannot take now is queued.
    live.handle(Effect::SetFavorite {
        book: book.id.clone(),
        favorite: true,
    });
    next_answer(
        &rx,
        "the favorite queued",
        |a| matches!(a, Answer::Notice(n) if n.contains("Offline")),
    );
    let words = live.shutdown().expect("the player says what it left");
    assert!(
        words.contains("1 change could not be sent yet; it is kept"),
        "{words}"
    );
}

/// A plain 403 on the chapter stream (no license code, a valid license):
/// the player bar says the server's words, never its raw JSON nor the
/// chapter's opaque id.
#[test]
fn a_plain_403_on_the_chapter_stream_is_said_in_words() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let gate = rt.block_on(Gate::start(server.base_url()));
    gate.refuse_streams(403, r#"{"code":"forbidden","message":"No access."}"#);
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in_at(&rt, &server, &gate.base_url(), home.path());
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
    let mut app = App::new(
        earmark::ui::keymap::Keymap::default(),
        UiSettings::default(),
    );
    app.update(Event::Answer(Answer::Library {
        books: vec![book.clone()],
        from_cache: false,
    }));
    app.screen = Screen::Library;
    app.update(code(earmark::ui::keymap::KeyCode::Enter));
    app.update(Event::Answer(Answer::BookLoaded {
        book: book.clone(),
        manifest: Some(manifest.clone()),
        bookmarks: vec![],
    }));
    for e in app.update(key(' ')) {
        live.handle(e);
    }
    follow(&mut app, &rx, "the refusal", |a| {
        matches!(a.playing().map(|p| &p.state), Some(PlayState::Error(_)))
    });
    let screen = render(&mut app, 80, 24);
    let bar = screen.lines().nth(20).unwrap_or_default().to_owned();
    assert!(bar.contains("No access."), "{screen}");
    assert!(!bar.contains('{'), "raw JSON: {bar}");
    assert!(
        !bar.contains(manifest.items[0].chapter_id.as_str()),
        "{bar}"
    );
    live.shutdown();
}
