//! Place history and listening statistics through the player's backends
//! (`runtime::Live`), the real engine on the null output and the reference
//! server over 127.0.0.1.

use crate::backend::{demo_library, in_state, listening, log_in, m_ch, next_answer, open};
use crate::harness::TestServer;
use earmark::api::{BookQuery, ProgressWrite};
use earmark::domain::session::{Command, Event as SessionEvent, Start};
use earmark::domain::{Book, JumpCause, Manifest, now_millis};
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::{Answer, Effect, PlayState};

/// A jump back picked in the history is a user intent: the server's place
/// moves back; the mark is kept on this device, and the time played is
/// counted in the statistics. Reopened later, a server place that moved
/// (another device) is a restore, and where this device was goes to history.
#[test]
fn a_history_jump_moves_the_server_back_and_a_moving_restore_is_remembered() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(TestServer::start(demo_library())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let (book, manifest): (Book, Manifest) = rt.block_on(async {
        for b in c.books(&BookQuery::default()).await.unwrap() {
            let m = c.manifest(&b.id).await.unwrap();
            if m.items[0].duration.unwrap_or(0.0) > 60.0 {
                return (b, m);
            }
        }
        panic!("no demo book with a chapter over a minute");
    });
    let ch0 = m_ch(&manifest, 0);
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile.clone(),
        Some(done.session.clone()),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    open(&mut live, &book, &manifest, Start::At(ch0.clone(), 40.0));
    next_answer(&rx, "playing past 41 s", |a| {
        listening(a).is_some_and(|l| l.chapter == ch0 && l.position >= 41.0)
    });
    // What the reducer sends for Enter on a history row: a seek whose
    // cause goes to the history with the place it left.
    live.handle(Effect::Session(Command::Seek {
        chapter: ch0.clone(),
        position: 5.0,
        cause: JumpCause::History,
    }));
    let Answer::SessionEvent(SessionEvent::PlaceMarked { mark, .. }) =
        next_answer(&rx, "the jump's mark", |a| {
            matches!(a, Answer::SessionEvent(SessionEvent::PlaceMarked { .. }))
        })
    else {
        unreachable!()
    };
    assert_eq!((mark.cause, &mark.chapter_id), (JumpCause::History, &ch0));
    assert!(mark.position >= 41.0, "{mark:?}");
    next_answer(&rx, "playing after the jump back", |a| {
        listening(a).is_some_and(|l| l.chapter == ch0 && (5.5..30.0).contains(&l.position))
    });
    live.handle(Effect::Session(Command::Pause));
    next_answer(&rx, "paused", |a| in_state(a, PlayState::Paused));
    live.handle(Effect::LoadHistory(book.id.clone()));
    let got = next_answer(&rx, "the history", |a| matches!(a, Answer::History { .. }));
    assert_eq!(
        got,
        Answer::History {
            book: book.id.clone(),
            marks: vec![mark]
        }
    );
    live.handle(Effect::LoadStats);
    let Answer::Stats(stats) = next_answer(&rx, "the stats", |a| matches!(a, Answer::Stats(_)))
    else {
        unreachable!()
    };
    assert!(stats.total_wall_secs >= 0.5, "{stats:?}");
    assert_eq!(stats.books[0].book_id, book.id);
    live.shutdown();
    let p = rt.block_on(c.progress(&book.id)).unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch0);
    assert!(p.position < 30.0, "the server moved back: {}", p.position);

    // Another device goes on 40 s further (close: no prompt, the server's
    // place is used): this device's place is remembered as a restore.
    let before = p.position;
    rt.block_on(c.post_progress(
        &book.id,
        &ProgressWrite {
            chapter_id: ch0.clone(),
            position: before + 40.0,
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
    let got = next_answer(&rx, "the restore's mark", |a| {
        matches!(a, Answer::SessionEvent(SessionEvent::PlaceMarked { .. }))
    });
    let Answer::SessionEvent(SessionEvent::PlaceMarked { book: b, mark }) = got else {
        unreachable!()
    };
    assert_eq!(b, book.id);
    assert_eq!(mark.cause, JumpCause::Restore);
    assert_eq!(mark.chapter_id, ch0);
    assert!((mark.position - before).abs() < 1.0, "{mark:?} vs {before}");
    live.shutdown();
}
