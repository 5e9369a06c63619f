//! Smart rewind's "how long was the break" comes from the session's
//! owner (when sync last saved the book's place, here or on another
//! device), never from the library list: through the player's real
//! backends, the engine on the null output and the reference server.

use crate::backend::{demo_library, listening, log_in, next_answer, open};
use crate::harness::TestServer;
use earmark::api::{BookQuery, ProgressWrite};
use earmark::domain::now_millis;
use earmark::domain::rewind::RewindAfter;
use earmark::domain::session::{Command, Event as SessionEvent, Said, Start};
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::{Answer, PlayState};

/// The break the session rewound for when it opened book `id`, if it
/// did before the book played past `past` seconds.
fn break_rewound(
    rx: &std::sync::mpsc::Receiver<earmark::ui::terminal::LoopEvent>,
    id: &earmark::domain::BookId,
    past: f64,
) -> Option<f64> {
    let a = next_answer(rx, "the book playing", |a| match a {
        Answer::SessionEvent(SessionEvent::Said(Said::Rewound {
            after: RewindAfter::Break,
            ..
        })) => true,
        a => listening(a).is_some_and(|l| {
            &l.book.id == id && l.state == PlayState::Playing && l.position > past
        }),
    });
    match a {
        Answer::SessionEvent(SessionEvent::Said(Said::Rewound { back, .. })) => Some(back),
        _ => None,
    }
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
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();

    // Two hours: the curve's most, 30 s, but not past the chapter's start.
    open(&mut live, &a, &ma, Start::Resume);
    let back = break_rewound(&rx, &a.id, 8.0).expect("a rewind for the break");
    assert!((5.0..5.5).contains(&back), "to the chapter's start: {back}");
    // Listened to: the place moved on.
    next_answer(&rx, "A playing on", |x| {
        listening(x).is_some_and(|l| l.book.id == a.id && l.position > 1.5)
    });
    live.handle(earmark::ui::state::Effect::Session(Command::Pause));
    let paused = next_answer(&rx, "A paused", |x| {
        listening(x).is_some_and(|l| l.book.id == a.id && l.state == PlayState::Paused)
    });
    let paused_at = listening(&paused).unwrap().position;

    // Another book, then A again: its break began at the pause (seconds:
    // no rewind), although the library still says two hours ago.
    open(&mut live, &b, &mb, Start::Resume);
    next_answer(&rx, "B playing", |x| {
        listening(x).is_some_and(|l| l.book.id == b.id && l.state == PlayState::Playing)
    });
    open(&mut live, &a, &ma, Start::Resume);
    assert_eq!(break_rewound(&rx, &a.id, paused_at + 2.0), None);
    live.shutdown();
}
