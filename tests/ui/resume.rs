//! Smart rewind's "how long was the break" comes from the playback owner
//! (when sync last saved the book's place, here or on another device),
//! never from the library list: through the player's real backends, the
//! engine on the null output and the reference server.

use crate::backend::{demo_library, log_in, next_answer};
use earmark::api::{BookQuery, ProgressWrite};
use earmark::domain::{Book, Manifest, now_millis};
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::server::testing::TestServer;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::{Answer, Effect, EngineCmd, PlayState, StartAt};
use earmark::ui::terminal::LoopEvent;
use std::sync::mpsc::Receiver;

fn play(live: &mut Live, book: &Book, manifest: &Manifest) {
    live.handle(Effect::Play {
        book: book.clone(),
        manifest: manifest.clone(),
        start: StartAt::Resume,
    });
}

/// The `Resumed` answer of `book`, checked to come before its first view.
fn resumed(rx: &Receiver<LoopEvent>, book: &Book) -> i64 {
    let a = next_answer(rx, "the book resumed", |a| match a {
        Answer::Resumed { book: b, .. } => *b == book.id,
        Answer::Engine(v) => v.book == book.id,
        _ => false,
    });
    match a {
        Answer::Resumed { saved_at, .. } => saved_at,
        other => panic!("an engine view before the break was known: {other:?}"),
    }
}

fn state(rx: &Receiver<LoopEvent>, book: &Book, want: PlayState) {
    next_answer(
        rx,
        &format!("{want:?}"),
        |a| matches!(a, Answer::Engine(v) if v.book == book.id && v.state == want),
    );
}

#[test]
fn the_break_is_timed_from_the_last_save_of_the_place_not_the_library() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let two_hours_ago = now_millis() - 2 * 3600 * 1000;
    let ((a, ma), (b, mb)) = rt.block_on(async {
        let books = c.books(&BookQuery::default()).await.unwrap();
        let a = books[0].clone();
        let b = books[1].clone();
        let ma = c.manifest(&a.id).await.unwrap();
        let mb = c.manifest(&b.id).await.unwrap();
        // Another device saved A's place two hours ago.
        c.post_progress(
            &a.id,
            &ProgressWrite {
                chapter_id: ma.items[0].chapter_id.clone(),
                position: 5.0,
                client_updated_at: two_hours_ago,
                finished: false,
                device_id: None,
                reset: false,
            },
        )
        .await
        .unwrap();
        ((a, ma), (b, mb))
    });
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(ui, profile, Some(done.session), AudioMode::Null).unwrap();

    play(&mut live, &a, &ma);
    let saved = resumed(&rx, &a);
    assert!(
        (saved - two_hours_ago).abs() < 1000,
        "the server's save: {saved} vs {two_hours_ago}"
    );
    state(&rx, &a, PlayState::Playing);
    // Listened to: the place moved on from where the server had it.
    next_answer(
        &rx,
        "A playing past its saved place",
        |x| matches!(x, Answer::Engine(v) if v.book == a.id && v.state == PlayState::Playing && v.position > 5.3),
    );
    live.handle(Effect::Engine(EngineCmd::Toggle));
    state(&rx, &a, PlayState::Paused);
    let paused_at = now_millis();

    // Another book, then A again: its break began at the pause, although
    // the library still says two hours ago.
    play(&mut live, &b, &mb);
    state(&rx, &b, PlayState::Playing);
    play(&mut live, &a, &ma);
    let saved = resumed(&rx, &a);
    assert!(
        (saved - paused_at).abs() < 5_000,
        "the place saved at the pause: {saved} vs {paused_at}"
    );
    live.shutdown();
}
