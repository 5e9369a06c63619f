//! The reducer's behaviour, driven by events as the loop would send them.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::keymap::{Key, KeyCode};
use earmark::ui::state::*;

fn engine_fx(fx: &[Effect]) -> Vec<EngineCmd> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Engine(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn skips_are_listened_time() {
    let mut app = playing(); // 1.25×
    assert_eq!(
        engine_fx(&app.update(code(KeyCode::Left))),
        [EngineCmd::SkipBy(-12.5)]
    );
    assert_eq!(
        engine_fx(&app.update(Event::Key(Key::shift(KeyCode::Right)))),
        [EngineCmd::SkipBy(37.5)]
    );
    assert_eq!(engine_fx(&app.update(key('h'))), [EngineCmd::SkipBy(-37.5)]);
}

#[test]
fn speed_steps_and_limits() {
    let mut app = playing();
    assert_eq!(engine_fx(&app.update(key(']'))), [EngineCmd::SetSpeed(1.3)]);
    assert_eq!(
        engine_fx(&app.update(key('{'))),
        [EngineCmd::SetSpeed(1.05)]
    );
    for _ in 0..20 {
        app.update(key('}'));
    }
    assert_eq!(app.speed, 3.0);
    for _ in 0..60 {
        app.update(key('['));
    }
    assert_eq!(app.speed, 0.5);
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
    app.update(key(' '));
    app.update(Event::Answer(Answer::Engine(EngineView {
        playback_id: 1,
        book: BookId::new("moby"),
        chapter: ChapterId::new("moby-2"),
        position: 600.0,
        state: PlayState::Paused,
        speed: 1.25,
        volume: 0.8,
        approximate: false,
    })));
    app.update(Event::Tick(60_000));
    assert_eq!(app.next_wake(), None);
}

#[test]
fn bookmark_with_a_note() {
    let mut app = playing();
    app.update(key('b'));
    for c in "whale!".chars() {
        assert!(
            engine_fx(&app.update(key(c))).is_empty(),
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
    assert!(app.overlay.is_none());
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
            fx.as_slice(),
            [Effect::Play {
                start: StartAt::Restart,
                ..
            }]
        ),
        "{fx:?}"
    );
}

#[test]
fn sleep_timer_fades_out_then_pauses_and_writes_progress() {
    let mut app = playing();
    app.update(Event::Tick(1_000));
    app.update(key('s')); // 5 minutes is first
    app.update(code(KeyCode::Enter));
    assert_eq!(
        app.sleep,
        Some(SleepTimer::Timed {
            left_ms: 300_000,
            since: Some(1_000)
        })
    );
    assert!(app.update(Event::Tick(200_000)).is_empty());
    app.update(Event::Tick(301_000));
    assert!(matches!(app.sleep, Some(SleepTimer::Fading { .. })));
    let fx = app.update(Event::Tick(306_000));
    assert_eq!(engine_fx(&fx), [EngineCmd::FadeVolume(0.4)]);
    let fx = app.update(Event::Tick(311_500));
    assert_eq!(
        engine_fx(&fx),
        [EngineCmd::Pause, EngineCmd::FadeVolume(0.8)]
    );
    assert!(fx.contains(&Effect::FlushProgress));
    assert_eq!(app.sleep, Some(SleepTimer::Stopped { at: 311_500 }));
}

#[test]
fn license_block_stops_playback_keys() {
    let mut app = playing();
    app.update(Event::Answer(Answer::Stopped(Stop::new(
        StopReason::License,
        "expired",
    ))));
    assert!(app.update(key(' ')).is_empty());
    assert!(app.toasts.back().unwrap().text.contains("license"));
    app.update(Event::Answer(Answer::License(LicenseStatus {
        state: LicenseState::Valid,
        valid: true,
        message: None,
    })));
    assert_eq!(engine_fx(&app.update(key(' '))), [EngineCmd::Toggle]);
}

#[test]
fn another_books_engine_state_is_ignored() {
    let mut app = playing();
    app.update(Event::Answer(Answer::Engine(EngineView {
        playback_id: 9,
        book: BookId::new("emma"),
        chapter: ChapterId::new("emma-1"),
        position: 0.0,
        state: PlayState::Playing,
        speed: 1.0,
        volume: 1.0,
        approximate: false,
    })));
    let np = app.playing.as_ref().unwrap();
    assert_eq!(np.engine.as_ref().unwrap().position, 600.0);
}

#[test]
fn conflict_prompt_must_be_answered() {
    let mut app = playing();
    app.update(Event::Answer(Answer::Conflict {
        book: BookId::new("moby"),
        server: Position {
            chapter: ChapterId::new("moby-1"),
            position: 751.0,
        },
        local: Position {
            chapter: ChapterId::new("moby-3"),
            position: 190.0,
        },
    }));
    assert!(app.update(code(KeyCode::Esc)).is_empty());
    assert!(app.overlay.is_some());
    app.update(key('j'));
    assert_eq!(
        app.update(code(KeyCode::Enter)),
        [Effect::ResolveConflict {
            book: BookId::new("moby"),
            choice: ConflictChoice::Local
        }]
    );
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
        app.update(key('m')),
        [Effect::SetFinished {
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
    assert_eq!(fx, [Effect::FlushProgress, Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn playing_position_updates_wait_for_the_tick_but_paused_seeks_draw() {
    let mut app = playing();
    app.dirty = false;
    let mut view = EngineView {
        playback_id: 1,
        book: BookId::new("moby"),
        chapter: ChapterId::new("moby-2"),
        position: 601.0,
        state: PlayState::Playing,
        speed: 1.25,
        volume: 0.8,
        approximate: false,
    };
    app.update(Event::Answer(Answer::Engine(view.clone())));
    assert!(
        !app.dirty,
        "position-only while playing: drawn at the next tick"
    );
    app.update(Event::Tick(5_000));
    assert!(app.dirty);
    app.dirty = false;
    view.state = PlayState::Paused;
    app.update(Event::Answer(Answer::Engine(view.clone())));
    assert!(app.dirty);
    app.dirty = false;
    view.position = 640.0;
    app.update(Event::Answer(Answer::Engine(view)));
    assert!(app.dirty, "a skip while paused shows at once");
}

#[test]
fn refused_changes_are_retried_or_dropped_after_a_yes() {
    let mut app = playing();
    // Nothing refused: the keys say so and do nothing.
    assert!(app.update(key('Y')).is_empty());
    app.update(Event::Answer(Answer::Sync(SyncView {
        refused: 2,
        ..SyncView::default()
    })));
    assert!(app.update(key('Y')).contains(&Effect::RetryRefused));
    // Dropping asks first; anything but y keeps them.
    assert!(!app.update(key('X')).contains(&Effect::DiscardRefused));
    assert!(app.overlay.is_some());
    assert!(!app.update(key('n')).contains(&Effect::DiscardRefused));
    assert!(app.overlay.is_none());
    app.update(key('X'));
    assert!(app.update(key('y')).contains(&Effect::DiscardRefused));
}

fn remote(app: &mut App, cmd: RemoteCmd) -> Vec<EngineCmd> {
    engine_fx(&app.update(Event::Answer(Answer::Remote(cmd))))
}

#[test]
fn remote_requests_take_the_keys_path() {
    let mut app = playing(); // chapter moby-2, playing
    assert_eq!(remote(&mut app, RemoteCmd::Play), []);
    assert_eq!(remote(&mut app, RemoteCmd::Pause), [EngineCmd::Toggle]);
    assert_eq!(remote(&mut app, RemoteCmd::PlayPause), [EngineCmd::Toggle]);
    assert_eq!(
        remote(&mut app, RemoteCmd::NextChapter),
        [EngineCmd::NextChapter]
    );
    assert_eq!(
        remote(&mut app, RemoteCmd::PrevChapter),
        [EngineCmd::PrevChapter]
    );
    // MPRIS offsets are media time already: no speed conversion.
    assert_eq!(
        remote(&mut app, RemoteCmd::SkipBy(-15.0)),
        [EngineCmd::SkipBy(-15.0)]
    );
    let seek = |chapter: &str, position| RemoteCmd::SeekTo {
        chapter: ChapterId::new(chapter),
        position,
    };
    assert_eq!(
        remote(&mut app, seek("moby-2", 42.0)),
        [EngineCmd::Seek {
            chapter: ChapterId::new("moby-2"),
            position: 42.0
        }]
    );
    // A stale track id, or a nonsense position, changes nothing.
    assert_eq!(remote(&mut app, seek("moby-1", 42.0)), []);
    assert_eq!(remote(&mut app, seek("moby-2", f64::NAN)), []);
    assert_eq!(remote(&mut app, RemoteCmd::SkipBy(f64::INFINITY)), []);
}

#[test]
fn remote_requests_stop_at_the_license_block() {
    let mut app = playing();
    app.update(Event::Answer(Answer::Stopped(Stop::new(
        StopReason::License,
        "expired",
    ))));
    for cmd in [
        RemoteCmd::PlayPause,
        RemoteCmd::NextChapter,
        RemoteCmd::SkipBy(30.0),
    ] {
        assert_eq!(remote(&mut app, cmd), []);
    }
    assert!(app.toasts.back().unwrap().text.contains("license"));
}

#[test]
fn remote_seeks_and_skips_record_the_place_before_them_in_the_history() {
    let mut app = playing(); // chapter moby-2, playing
    let marks = |fx: &[Effect]| -> Vec<JumpCause> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::MarkPlace { mark, .. } => Some(mark.cause),
                _ => None,
            })
            .collect()
    };
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::SeekTo {
        chapter: ChapterId::new("moby-2"),
        position: 42.0,
    })));
    assert_eq!(marks(&fx), [JumpCause::Seek]);
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::SkipBy(-600.0))));
    assert_eq!(marks(&fx), [JumpCause::Skip]);
}
