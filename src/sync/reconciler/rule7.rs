//! Contract rule 7 after a pause or a reconnect (`gate`): the server's
//! place is read before a resume or a paused seek is reported; a newer
//! place further than a few seconds asks; a write the server kept moves
//! the player; offline, the seek is queued and the place unconfirmed.

use super::gate::SAME_PLACE_SECS;
use super::tests::*;
use super::*;
use proptest::prelude::*;

fn server(r: &mut Reconciler, p: PlaybackId, at: Spot, stamp: i64, now: i64) -> Vec<Decision> {
    answer(
        r,
        p,
        Some(Progress {
            client_updated_at: Some(stamp),
            ..progress_at(&at)
        }),
        now,
    )
}

fn resume(r: &mut Reconciler, now: i64) -> Vec<Decision> {
    r.handle(Event::ResumeAsked { playback: P1 }, now)
}

fn resumes(d: &[Decision]) -> bool {
    d.contains(&Decision::Resume { playback: P1 })
}

fn fetches(d: &[Decision]) -> bool {
    d.iter()
        .any(|d| matches!(d, Decision::FlushThenFetch { .. }))
}

/// Playing at `at`, then paused there (reported); returns the pause's stamp.
fn paused_at(r: &mut Reconciler, at: Spot) -> i64 {
    live_at(r, P1, "a", at);
    let d = act(r, P1, Action::Pause, 6_000);
    reports(&d)[0].client_updated_at
}

#[test]
fn a_seek_while_paused_is_reported_once_the_server_was_read_again() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let mine = paused_at(&mut r, spot("a", 1, 110.0));
    // `n` while paused: the server's place is read first...
    let d = act(&mut r, P1, Action::ChapterChange(spot("a", 2, 0.0)), 60_000);
    assert!(fetches(&d) && reports(&d).is_empty(), "{d:?}");
    // ... it is this device's own: the new place goes out at once.
    let d = server(&mut r, P1, spot("a", 1, 110.0), mine, 60_100);
    assert_eq!(reports(&d).len(), 1, "{d:?}");
    assert_eq!(reports(&d)[0].spot, spot("a", 2, 0.0));
    // `l` right after: the read is fresh, its own place goes out at once
    // (not the one before it).
    let d = act(&mut r, P1, Action::Seek(spot("a", 2, 30.0)), 61_000);
    assert!(!fetches(&d), "{d:?}");
    assert_eq!(reports(&d).len(), 1, "{d:?}");
    assert_eq!(reports(&d)[0].spot, spot("a", 2, 30.0));
}

#[test]
fn a_resume_right_after_a_read_reads_again_and_asks_for_a_newer_place() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let mine = paused_at(&mut r, spot("a", 1, 110.0));
    // A paused seek reads the server (this device's place is there).
    act(&mut r, P1, Action::Seek(spot("a", 1, 100.0)), 60_000);
    server(&mut r, P1, spot("a", 1, 110.0), mine, 60_100);
    // Within a second another device writes; the resume reads again and
    // asks instead of playing over it.
    let d = r.handle(Event::ResumeAsked { playback: P1 }, 61_000);
    assert!(fetches(&d), "{d:?}");
    let d = server(&mut r, P1, spot("a", 2, 300.0), 60_900, 61_200);
    assert!(asks(&d), "the listener is asked: {d:?}");
}

#[test]
fn picking_the_place_the_server_has_carries_no_reset_into_a_later_report() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    // Paused at the book's start, reported.
    let mine = paused_at(&mut r, spot("a", 1, 0.0));
    // Enter on chapter 1 while paused: the server (read first) has it.
    let d = act(&mut r, P1, Action::Seek(spot("a", 1, 0.0)), 60_000);
    assert!(fetches(&d), "{d:?}");
    server(&mut r, P1, spot("a", 1, 0.0), mine, 60_100);
    pos(&mut r, P1, spot("a", 1, 0.0), true, 60_150);
    act(&mut r, P1, Action::Play, 60_200);
    pos(&mut r, P1, spot("a", 1, 30.0), true, 90_000);
    let d = act(&mut r, P1, Action::Pause, 90_100);
    let w = reports(&d);
    assert_eq!(w.len(), 1, "{d:?}");
    assert!(!w[0].reset, "a plain report, not a reset: {:?}", w[0]);
}

#[test]
fn a_resume_before_the_chosen_places_write_lands_does_not_ask_again() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let mine = paused_at(&mut r, spot("a", 1, 110.0));
    resume(&mut r, 60_000);
    // Another device's place, far: the listener is asked, and keeps this
    // device's.
    let d = server(&mut r, P1, spot("a", 2, 300.0), mine + 10, 60_100);
    assert!(asks(&d), "{d:?}");
    chose(&mut r, P1, Side::Local, 60_200);
    // Space at once: the read still finds the other device's place (the
    // chosen write has not landed), which is older than the choice.
    let d = resume(&mut r, 60_300);
    assert!(fetches(&d), "{d:?}");
    let d = server(&mut r, P1, spot("a", 2, 300.0), mine + 10, 60_400);
    assert!(!asks(&d), "{d:?}");
}

#[test]
fn a_seek_while_paused_and_offline_is_queued_and_unconfirmed() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    paused_at(&mut r, spot("a", 1, 110.0));
    r.handle(Event::Offline, 7_000);
    // ← twice: the engine cannot land offline; each place is reported.
    for (i, to) in [100.0, 90.0].into_iter().enumerate() {
        let d = act(&mut r, P1, Action::Seek(spot("a", 1, to)), 8_000 + i as i64);
        assert_eq!(reports(&d).len(), 1, "{d:?}");
        assert_eq!(reports(&d)[0].spot, spot("a", 1, to));
        assert!(unconfirmed(&d), "{d:?}");
    }
}

#[test]
fn losing_the_server_marks_the_place_unconfirmed_until_it_answers() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 1, 10.0));
    pos(&mut r, P1, spot("a", 1, 20.0), true, 5_000);
    let d = r.handle(Event::Offline, 6_000);
    assert!(unconfirmed(&d), "{d:?}");
    assert!(r.handle(Event::Offline, 6_100).is_empty(), "said once");
    r.handle(Event::Online, 9_000);
    let d = r.handle(
        Event::WriteAnswered {
            playback: P1,
            progress: progress("a", 1, 20.0),
            applied: true,
        },
        9_100,
    );
    assert!(d.iter().any(|d| matches!(
        d,
        Decision::Display {
            source: Source::Server,
            ..
        }
    )));
}

#[test]
fn resuming_after_a_pause_waits_for_the_servers_place() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let mine = paused_at(&mut r, spot("a", 1, 110.0));
    let d = resume(&mut r, 90_000);
    assert!(fetches(&d) && !resumes(&d), "{d:?}");
    // Its own place: play on.
    let d = server(&mut r, P1, spot("a", 1, 110.0), mine, 90_100);
    assert!(resumes(&d), "{d:?}");
    assert!(reports(&d).is_empty());
}

#[test]
fn a_newer_place_far_away_asks_before_resuming_and_nothing_is_written() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let mine = paused_at(&mut r, spot("a", 1, 10.0));
    resume(&mut r, 90_000);
    // Device B wrote ch 3 while this one was paused.
    let d = server(&mut r, P1, spot("a", 3, 500.0), mine + 1, 90_100);
    assert!(!resumes(&d) && reports(&d).is_empty(), "{d:?}");
    assert!(d.contains(&Decision::Choose {
        book: BookId::new("a"),
        server: spot("a", 3, 500.0),
        local: spot("a", 1, 10.0),
    }));
    // Nothing is written while the prompt waits.
    pos(&mut r, P1, spot("a", 1, 12.0), true, 91_000);
    act(&mut r, P1, Action::Play, 91_100);
    assert!(reports(&r.handle(Event::Tick, 200_000)).is_empty());
    let d = chose(&mut r, P1, Side::Server, 200_100);
    assert!(d.contains(&load(P1, spot("a", 3, 500.0))));
    assert!(resumes(&d), "the answer plays on: {d:?}");
}

#[test]
fn a_newer_place_close_by_or_an_older_one_resumes_without_asking() {
    for (at, newer) in [(spot("a", 1, 12.0), true), (spot("a", 3, 500.0), false)] {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        let mine = paused_at(&mut r, spot("a", 1, 10.0));
        resume(&mut r, 90_000);
        let stamp = if newer { mine + 1 } else { mine - 1 };
        let d = server(&mut r, P1, at, stamp, 90_100);
        assert!(resumes(&d), "{d:?}");
        assert!(!asks(&d));
    }
}

#[test]
fn a_record_without_a_stamp_is_this_devices_only_when_it_is_its_last_report() {
    for (at, want) in [(spot("a", 1, 10.0), false), (spot("a", 3, 500.0), true)] {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        paused_at(&mut r, spot("a", 1, 10.0));
        resume(&mut r, 90_000);
        let d = answer(
            &mut r,
            P1,
            Some(Progress {
                client_updated_at: None,
                ..progress_at(&at)
            }),
            90_100,
        );
        assert_eq!(asks(&d), want, "{at:?}: {d:?}");
        assert_eq!(resumes(&d), !want);
    }
}

#[test]
fn offline_a_resume_plays_on_from_an_unconfirmed_place() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    paused_at(&mut r, spot("a", 1, 10.0));
    r.handle(Event::Offline, 7_000);
    let d = resume(&mut r, 8_000);
    assert!(resumes(&d) && unconfirmed(&d) && !fetches(&d), "{d:?}");
    // The read failed instead (the server went away meanwhile): the same.
    let mut r = Reconciler::new(ReconcilerConfig::default());
    paused_at(&mut r, spot("a", 1, 10.0));
    resume(&mut r, 8_000);
    let d = r.handle(Event::ServerFetchFailed { playback: P1 }, 8_100);
    assert!(resumes(&d) && unconfirmed(&d), "{d:?}");
}

#[test]
fn a_reconnect_that_finds_a_newer_place_pauses_and_asks() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 1, 1.0));
    pos(&mut r, P1, spot("a", 1, 40.0), true, 40_000);
    r.handle(Event::Offline, 41_000);
    let d = r.handle(Event::Online, 50_000);
    assert!(fetches(&d));
    pos(&mut r, P1, spot("a", 1, 50.0), true, 50_000);
    let d = server(&mut r, P1, spot("a", 2, 900.0), 50_050, 50_100);
    assert_eq!(
        d[1..3],
        [
            Decision::Pause { playback: P1 },
            Decision::Choose {
                book: BookId::new("a"),
                server: spot("a", 2, 900.0),
                local: spot("a", 1, 50.0),
            }
        ]
    );
    // This device's place, chosen: it goes back to the server.
    let d = chose(&mut r, P1, Side::Local, 51_000);
    assert!(resumes(&d), "{d:?}");
    pos(&mut r, P1, spot("a", 1, 51.0), true, 52_000);
    let d = act(&mut r, P1, Action::Pause, 52_100);
    assert_eq!(reports(&d)[0].spot, spot("a", 1, 51.0));
}

#[test]
fn a_write_the_server_kept_moves_the_player_there_and_says_so() {
    let kept = |at: Spot, applied: bool| {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        paused_at(&mut r, spot("a", 1, 20.0));
        r.handle(
            Event::WriteAnswered {
                playback: P1,
                progress: progress_at(&at),
                applied,
            },
            9_000,
        )
    };
    let d = kept(spot("a", 3, 30.0), false);
    assert!(d.contains(&load(P1, spot("a", 3, 30.0))));
    assert!(d.contains(&Decision::Followed {
        book: BookId::new("a"),
        spot: spot("a", 3, 30.0)
    }));
    assert!(reports(&d).is_empty());
    // The same place (a retry the server had already): nothing moves.
    let d = kept(spot("a", 1, 22.0), false);
    assert!(
        !d.iter().any(|d| matches!(d, Decision::LoadAt { .. })),
        "{d:?}"
    );
    // Applied: the server holds this device's place.
    let d = kept(spot("a", 1, 20.0), true);
    assert_eq!(d.len(), 1, "{d:?}");
}

#[test]
fn headless_a_newer_place_is_followed_on_resume() {
    let mut r = Reconciler::new(ReconcilerConfig {
        headless: true,
        ..Default::default()
    });
    let mine = paused_at(&mut r, spot("a", 1, 10.0));
    resume(&mut r, 90_000);
    let d = server(&mut r, P1, spot("a", 3, 500.0), mine + 1, 90_100);
    assert!(d.contains(&load(P1, spot("a", 3, 500.0))));
    assert!(resumes(&d));
    assert!(!asks(&d));
}

fn any_spot() -> impl Strategy<Value = Spot> {
    (1u32..=3, 0.0f64..2000.0).prop_map(|(c, p)| spot("a", c, p))
}

proptest! {
    /// A paused seek always reaches the server at the place sought, once
    /// the server's place is known not to be newer (or cannot be read).
    #[test]
    fn a_paused_seek_is_reported_where_it_went(
        from in any_spot(),
        to in any_spot(),
        answer in 0u8..3,
    ) {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        let mine = paused_at(&mut r, from.clone());
        let mut d = act(&mut r, P1, Action::Seek(to.clone()), 60_000);
        d.extend(match answer {
            0 => server(&mut r, P1, from.clone(), mine, 60_100),
            1 => r.handle(Event::ServerFetchFailed { playback: P1 }, 60_100),
            _ => r.handle(Event::ServerProgress { playback: P1, progress: None }, 60_100),
        });
        let w = reports(&d);
        if to != from {
            prop_assert_eq!(w.len(), 1, "{:?}", d);
            prop_assert_eq!(&w[0].spot, &to);
            prop_assert_eq!(w[0].reset, is_start(&manifest("a"), &to));
        }
    }

    /// After a pause, a newer server place further than a few seconds is
    /// never written over, nor played away from, before the listener chose.
    #[test]
    fn a_newer_place_is_never_overwritten_without_a_choice(
        here in any_spot(),
        theirs in any_spot(),
        noise in proptest::collection::vec((0u8..5, any_spot()), 0..20),
    ) {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        let mine = paused_at(&mut r, here.clone());
        resume(&mut r, 90_000);
        let d = server(&mut r, P1, theirs.clone(), mine + 1, 90_100);
        let far = distance(&manifest("a"), &here, &theirs).unwrap() > SAME_PLACE_SECS;
        prop_assert_eq!(resumes(&d), !far, "{:?}", d);
        if !far {
            return Ok(());
        }
        let mut now = 90_100;
        for (op, s) in noise {
            now += 1_000;
            let d = match op {
                0 => pos(&mut r, P1, s, true, now),
                1 => act(&mut r, P1, Action::Seek(s), now),
                2 => act(&mut r, P1, Action::Pause, now),
                3 => resume(&mut r, now),
                _ => r.handle(Event::Tick, now),
            };
            prop_assert!(reports(&d).is_empty(), "written before a choice: {:?}", d);
            prop_assert!(!resumes(&d), "played before a choice: {:?}", d);
        }
    }

    /// A write the server kept moves the player exactly when its place is
    /// further than a few seconds from this device's.
    #[test]
    fn a_kept_write_moves_the_player_only_when_far(here in any_spot(), theirs in any_spot()) {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        paused_at(&mut r, here.clone());
        let d = r.handle(
            Event::WriteAnswered {
                playback: P1,
                progress: progress_at(&theirs),
                applied: false,
            },
            9_000,
        );
        let far = distance(&manifest("a"), &here, &theirs).unwrap() > SAME_PLACE_SECS;
        let moved = d.contains(&load(P1, theirs.clone()));
        prop_assert_eq!(moved, far, "{:?}", d);
        prop_assert!(reports(&d).is_empty());
    }
}
