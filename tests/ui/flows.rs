//! The reducer's behaviour, driven by events as the loop would send them.

use crate::fixtures::*;
use earmark::domain::session::{Command, Event as SessionEvent, Keep, Place, Queue, Said, Start};
use earmark::domain::*;
use earmark::ui::keymap::{Key, KeyCode};
use earmark::ui::state::*;

#[test]
fn skips_are_listened_time() {
    let mut app = playing(); // 1.25×
    assert_eq!(
        commands(&app.update(code(KeyCode::Left))),
        [Command::SkipBy(-12.5)]
    );
    assert_eq!(
        commands(&app.update(Event::Key(Key::shift(KeyCode::Right)))),
        [Command::SkipBy(37.5)]
    );
    assert_eq!(commands(&app.update(key('h'))), [Command::SkipBy(-37.5)]);
}

#[test]
fn speed_steps_and_limits() {
    let mut app = playing(); // 1.25×
    assert_eq!(commands(&app.update(key(']'))), [Command::Speed(1.3)]);
    assert_eq!(commands(&app.update(key('{'))), [Command::Speed(1.0)]);
    // The session's speed is what the next step starts from.
    let at = |app: &mut App, speed: f32| {
        let mut l = app.snap.listening.clone().unwrap();
        l.speed = speed;
        session(app, snap(l));
    };
    at(&mut app, 2.9);
    assert_eq!(commands(&app.update(key('}'))), [Command::Speed(3.0)]);
    at(&mut app, 3.0);
    assert_eq!(commands(&app.update(key(']'))), [Command::Speed(3.0)]);
    at(&mut app, 0.55);
    assert_eq!(commands(&app.update(key('{'))), [Command::Speed(0.5)]);
}

#[test]
fn login_sends_the_password_once_and_forgets_it() {
    let mut app = App::new(Default::default(), Default::default());
    for c in "localhost".chars() {
        app.update(key(c));
    }
    app.update(code(KeyCode::Tab));
    for c in "demo".chars() {
        app.update(key(c));
    }
    app.update(code(KeyCode::Tab));
    for c in "pw".chars() {
        app.update(key(c));
    }
    let fx = app.update(code(KeyCode::Enter));
    match fx.as_slice() {
        [
            Effect::Login {
                address,
                user,
                password,
                ..
            },
        ] => {
            assert_eq!(
                (address.as_str(), user.as_str(), password.expose()),
                ("localhost", "demo", "pw")
            );
            assert_eq!(format!("{password:?}"), "Password(***)");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(app.login.password.expose(), "");
    app.update(Event::Answer(Answer::LoginFailed(
        LoginError::BadCredentials,
    )));
    assert_eq!(app.screen, Screen::Login);
    assert_eq!(app.login.field(), LoginField::Password);
}

#[test]
fn search_is_instant_then_asks_the_server_after_a_pause() {
    let mut app = logged_in();
    app.update(Event::Tick(10_000));
    for c in "/emma".chars() {
        assert!(app.update(key(c)).is_empty());
    }
    assert_eq!(app.library.len(), 1);
    assert_eq!(app.next_wake(), Some(10_000 + SEARCH_DEBOUNCE_MS));
    assert!(app.update(Event::Tick(10_100)).is_empty());
    assert_eq!(
        app.update(Event::Tick(10_400)),
        [Effect::Search("emma".into())]
    );
    // Server results merge in.
    app.update(Event::Answer(Answer::SearchResults {
        query: "emma".into(),
        books: vec![book("emma2", "Emma (abridged)", "Jane Austen", 60.0)],
    }));
    assert_eq!(app.library.len(), 2);
    // Enter asks at once for a new query and moves focus to the list.
    app.update(code(KeyCode::Backspace));
    assert_eq!(
        app.update(code(KeyCode::Enter)),
        [Effect::Search("emm".into())]
    );
    assert_eq!(app.update(key('j')), []);
    assert_eq!(app.library.cursor, 1);
    app.update(code(KeyCode::Esc));
    assert_eq!(app.library.len(), 6);
}

#[test]
fn idle_sleeps_and_playing_ticks_at_4hz() {
    let mut app = logged_in();
    app.update(Event::Tick(50_000));
    assert_eq!(app.next_wake(), None);
    let mut app = playing();
    app.update(Event::Tick(50_000));
    assert_eq!(app.next_wake(), Some(50_000 + PLAYING_TICK_MS));
    assert_eq!(commands(&app.update(key(' '))), [Command::Toggle]);
    heard(&mut app, "moby-2", 600.0, PlayState::Paused);
    app.update(Event::Tick(60_000));
    assert_eq!(app.next_wake(), None);
}

#[test]
fn bookmark_with_a_note() {
    let mut app = playing();
    app.update(key('b'));
    for c in "whale!".chars() {
        assert!(
            app.update(key(c)).is_empty(),
            "typing goes to the note, not the keymap"
        );
    }
    let fx = app.update(code(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::AddBookmark {
            book: BookId::new("moby"),
            chapter: ChapterId::new("moby-2"),
            position: 600.0,
            note: Some("whale!".into()),
        }]
    );
    assert!(!app.overlays.is_open());
}

#[test]
fn restart_needs_confirmation() {
    let mut app = book_open();
    assert!(app.update(key('R')).is_empty());
    assert!(
        app.update(key('n')).is_empty(),
        "any other key keeps the progress"
    );
    app.update(key('R'));
    let fx = app.update(key('y'));
    assert!(
        matches!(
            commands(&fx).as_slice(),
            [Command::Open {
                start: Start::Restart,
                ..
            }]
        ),
        "{fx:?}"
    );
}

/// The menu sends the choice; the session's owner counts, fades and
/// pauses (`domain::sleep`'s tests), and the bar shows what it publishes.
#[test]
fn the_sleep_menu_sends_the_choice_and_the_bar_shows_the_sessions_timer() {
    let mut app = playing();
    app.update(key('s')); // 5 minutes is first
    let fx = app.update(code(KeyCode::Enter));
    assert_eq!(commands(&fx), [Command::Sleep(SleepChoice::Minutes(5))]);
    assert!(!app.overlays.is_open());
    let mut s = app.snap.clone();
    s.sleep = Some(SleepTimer::Timed {
        left_ms: 300_000,
        since: Some(app.wall_now()),
    });
    session(&mut app, s.clone());
    assert!(render(&mut app, 80, 24).contains("sleep 5:00"));
    s.sleep = Some(SleepTimer::Fading {
        since: app.wall_now(),
        volume: 0.8,
    });
    session(&mut app, s);
    assert!(render(&mut app, 80, 24).contains("sleep: fading · z more"));
    said(&mut app, Said::Sleep(sleep::SleepNews::Slept));
    assert_eq!(toast(&app), "Sleep timer: paused (z adds 5 min)");
}

#[test]
fn license_block_stops_playback_keys() {
    let mut app = playing();
    news(
        &mut app,
        SessionEvent::Stopped(Stop::new(StopReason::License, "expired")),
    );
    assert!(app.update(key(' ')).is_empty());
    assert!(toast(&app).contains("license"));
    app.update(Event::Answer(Answer::License(LicenseStatus {
        state: LicenseState::Valid,
        valid: true,
        message: None,
    })));
    assert_eq!(commands(&app.update(key(' '))), [Command::Toggle]);
}

#[test]
fn conflict_prompt_must_be_answered() {
    let mut app = playing();
    news(
        &mut app,
        SessionEvent::Conflict {
            book: BookId::new("moby"),
            server: Place {
                chapter: ChapterId::new("moby-1"),
                position: 751.0,
            },
            local: Place {
                chapter: ChapterId::new("moby-3"),
                position: 190.0,
            },
        },
    );
    assert!(app.update(code(KeyCode::Esc)).is_empty());
    assert!(app.overlays.is_open());
    app.update(key('j'));
    assert_eq!(
        commands(&app.update(code(KeyCode::Enter))),
        [Command::Choose {
            book: BookId::new("moby"),
            keep: Keep::Local
        }]
    );
    assert_eq!(toast(&app), "Continuing at ch 3 3:10");
}

#[test]
fn favorites_filters_and_finished() {
    let mut app = logged_in();
    app.update(key('j')); // Emma
    assert_eq!(
        app.update(key('f')),
        [Effect::SetFavorite {
            book: BookId::new("emma"),
            favorite: true
        }]
    );
    app.update(key('t')); // favorites
    assert_eq!(app.library.filter, Filter::Favorites);
    assert_eq!(app.library.len(), 2);
    app.update(key('t'));
    app.update(key('t')); // finished
    assert_eq!(app.library.selected().unwrap().title, "Pride and Prejudice");
    assert_eq!(
        commands(&app.update(key('m'))),
        [Command::MarkFinished {
            book: BookId::new("pride"),
            finished: false
        }]
    );
}

#[test]
fn quitting_flushes_progress() {
    let mut app = playing();
    app.update(code(KeyCode::Esc)); // book -> library
    let fx = app.update(key('q'));
    assert_eq!(fx, [Effect::Session(Command::Flush), Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn playing_position_updates_wait_for_the_tick_but_paused_seeks_draw() {
    let mut app = playing();
    app.dirty = false;
    heard(&mut app, "moby-2", 601.0, PlayState::Playing);
    assert!(
        !app.dirty,
        "position-only while playing: drawn at the next tick"
    );
    app.update(Event::Tick(5_000));
    assert!(app.dirty);
    app.dirty = false;
    heard(&mut app, "moby-2", 601.0, PlayState::Paused);
    assert!(app.dirty);
    app.dirty = false;
    heard(&mut app, "moby-2", 640.0, PlayState::Paused);
    assert!(app.dirty, "a skip while paused shows at once");
}

#[test]
fn refused_changes_are_retried_or_dropped_after_a_yes() {
    let mut app = playing();
    // Nothing refused: the keys say so and do nothing.
    assert!(app.update(key('Y')).is_empty());
    let mut s = app.snap.clone();
    s.queue = Queue {
        refused: 2,
        ..Queue::default()
    };
    session(&mut app, s);
    assert!(app.update(key('Y')).contains(&Effect::RetryRefused));
    // Dropping asks first; anything but y keeps them.
    assert!(!app.update(key('X')).contains(&Effect::DiscardRefused));
    assert!(app.overlays.is_open());
    assert!(render(&mut app, 80, 24).contains("The server refused 2 changes five times"));
    assert!(!app.update(key('n')).contains(&Effect::DiscardRefused));
    assert!(!app.overlays.is_open());
    app.update(key('X'));
    assert!(app.update(key('y')).contains(&Effect::DiscardRefused));
    app.update(Event::Answer(Answer::RefusedDropped(2)));
    assert_eq!(toast(&app), "Dropped 2 refused changes.");
    app.update(Event::Answer(Answer::RefusedRetried(1)));
    assert_eq!(toast(&app), "Sending 1 refused change again.");
}

/// `m` on the session's book: its row says finished at once (sync tells
/// the new place of other books only), so a second `m` undoes it.
#[test]
fn m_twice_on_the_sessions_book_marks_it_finished_then_unfinished() {
    let mut app = playing();
    app.update(code(KeyCode::Esc)); // the library, on Moby Dick
    let mark = |finished| Command::MarkFinished {
        book: BookId::new("moby"),
        finished,
    };
    assert_eq!(commands(&app.update(key('m'))), [mark(true)]);
    let text = render(&mut app, 80, 24);
    let row = text.lines().find(|l| l.contains("Moby Dick")).unwrap();
    assert!(row.contains("finished"), "{row}");
    assert_eq!(commands(&app.update(key('m'))), [mark(false)]);
    let text = render(&mut app, 80, 24);
    let row = text.lines().find(|l| l.contains("Moby Dick")).unwrap();
    assert!(!row.contains("finished"), "{row}");
}

/// Enter on a chapter: a seek of a playing or paused book, and a play
/// (`App::play_at`); a book that ended (or failed) is opened there, since
/// a play after the end would open it again where the server says.
#[test]
fn enter_on_a_chapter_seeks_a_going_book_and_opens_an_ended_one_there() {
    let mut app = playing();
    heard(&mut app, "moby-2", 600.0, PlayState::Paused);
    app.update(key('g')); // chapter 1
    assert_eq!(
        commands(&app.update(code(KeyCode::Enter))),
        [
            Command::Seek {
                chapter: ChapterId::new("moby-1"),
                position: 0.0,
                cause: JumpCause::Chapter,
            },
            Command::Play
        ]
    );
    heard(&mut app, "moby-3", 1800.0, PlayState::Ended);
    app.update(key('g'));
    let fx = app.update(code(KeyCode::Enter));
    assert!(
        matches!(
            commands(&fx).as_slice(),
            [Command::Open {
                start: Start::At(c, p),
                ..
            }] if c.as_str() == "moby-1" && *p == 0.0
        ),
        "{fx:?}"
    );
}
