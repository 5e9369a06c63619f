use super::*;
use crate::domain::{ManifestItem, Progress};

pub(super) fn manifest(book: &str) -> Manifest {
    Manifest {
        book_id: BookId::new(book),
        items: (1..=3)
            .map(|i| {
                ManifestItem::whole(format!("{book}_c{i}"), format!("Chapter {i}"), Some(2000.0))
            })
            .collect(),
    }
}

pub(super) fn ch(book: &str, i: u32) -> ChapterId {
    ChapterId::new(format!("{book}_c{i}"))
}

pub(super) fn spot(book: &str, i: u32, pos: f64) -> Spot {
    Spot::new(ch(book, i), pos)
}

pub(super) fn progress(book: &str, i: u32, pos: f64) -> Progress {
    progress_at(&spot(book, i, pos))
}

pub(super) fn progress_at(at: &Spot) -> Progress {
    Progress {
        chapter_id: at.chapter.clone(),
        position: at.position,
        book_position: None,
        finished: false,
        client_updated_at: Some(1),
        server_updated_at: None,
    }
}

pub(super) fn local(book: &str, i: u32, pos: f64) -> LocalProgress {
    LocalProgress {
        spot: spot(book, i, pos),
        finished: false,
        updated_at: 1,
    }
}

pub(super) const P1: PlaybackId = PlaybackId(1);
pub(super) const P2: PlaybackId = PlaybackId(2);

pub(super) fn open(
    r: &mut Reconciler,
    p: PlaybackId,
    book: &str,
    l: Option<LocalProgress>,
) -> Vec<Decision> {
    r.handle(
        Event::BookOpened {
            playback: p,
            book: BookId::new(book),
            manifest: manifest(book),
            local: l,
        },
        1000,
    )
}

pub(super) fn reports(d: &[Decision]) -> Vec<&ProgressWrite> {
    d.iter()
        .filter_map(|d| match d {
            Decision::Report(w) => Some(w),
            _ => None,
        })
        .collect()
}

pub(super) fn pos(
    r: &mut Reconciler,
    p: PlaybackId,
    s: Spot,
    landed: bool,
    now: i64,
) -> Vec<Decision> {
    r.handle(
        Event::EnginePosition {
            playback: p,
            spot: s,
            landed,
        },
        now,
    )
}

pub(super) fn act(r: &mut Reconciler, p: PlaybackId, a: Action, now: i64) -> Vec<Decision> {
    r.handle(
        Event::Action {
            playback: p,
            action: a,
        },
        now,
    )
}

pub(super) fn answer(
    r: &mut Reconciler,
    p: PlaybackId,
    progress: Option<Progress>,
    now: i64,
) -> Vec<Decision> {
    r.handle(
        Event::ServerProgress {
            playback: p,
            progress,
        },
        now,
    )
}

pub(super) fn chose(r: &mut Reconciler, p: PlaybackId, side: Side, now: i64) -> Vec<Decision> {
    r.handle(Event::Chose { playback: p, side }, now)
}

pub(super) fn intent(r: &mut Reconciler, p: PlaybackId, intent: Intent, now: i64) -> Vec<Decision> {
    r.handle(
        Event::Intent {
            playback: p,
            intent,
        },
        now,
    )
}

/// This device's place is shown, not confirmed by the server.
pub(super) fn unconfirmed(d: &[Decision]) -> bool {
    d.iter().any(|d| {
        matches!(
            d,
            Decision::Display {
                source: Source::LocalUnconfirmed,
                ..
            }
        )
    })
}

pub(super) fn asks(d: &[Decision]) -> bool {
    d.iter().any(|d| matches!(d, Decision::Choose { .. }))
}

pub(super) fn load(playback: PlaybackId, spot: Spot) -> Decision {
    Decision::LoadAt { playback, spot }
}

/// Opens `book`, gets the server's answer and lands on `at`.
pub(super) fn live_at(r: &mut Reconciler, p: PlaybackId, book: &str, at: Spot) {
    open(r, p, book, None);
    let d = answer(r, p, Some(progress_at(&at)), 1100);
    assert!(d.contains(&load(p, at.clone())));
    pos(r, p, at, true, 1200);
    assert!(r.is_live());
    act(r, p, Action::Play, 1200);
}

#[test]
pub(super) fn restore_reports_nothing_before_landing_and_never_the_transient_zero() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    answer(&mut r, P1, Some(progress("a", 1, 1234.0)), 1100);
    act(&mut r, P1, Action::Play, 1100);
    // The engine reads 0 while loading, even claims to be landed at 0.
    assert!(reports(&pos(&mut r, P1, spot("a", 1, 0.0), false, 2000)).is_empty());
    assert!(reports(&pos(&mut r, P1, spot("a", 1, 0.0), true, 3000)).is_empty());
    assert!(reports(&r.handle(Event::Tick, 20_000)).is_empty());
    assert!(reports(&act(&mut r, P1, Action::Pause, 20_001)).is_empty());
    act(&mut r, P1, Action::Play, 20_002);
    pos(&mut r, P1, spot("a", 1, 1234.2), true, 21_000);
    pos(&mut r, P1, spot("a", 1, 1240.0), true, 27_000);
    let d = r.handle(Event::Tick, 32_000);
    let w = reports(&d);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].spot, spot("a", 1, 1240.0));
    assert!(!w[0].reset);
}

#[test]
pub(super) fn periodic_reports_follow_the_interval_and_only_on_change() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    pos(&mut r, P1, spot("a", 2, 105.0), true, 5000);
    assert_eq!(reports(&r.handle(Event::Tick, 5000)).len(), 1);
    pos(&mut r, P1, spot("a", 2, 110.0), true, 10_000);
    assert!(
        reports(&r.handle(Event::Tick, 10_000)).is_empty(),
        "too early"
    );
    assert_eq!(reports(&r.handle(Event::Tick, 15_000)).len(), 1);
    assert!(
        reports(&r.handle(Event::Tick, 26_000)).is_empty(),
        "unchanged"
    );
}

#[test]
pub(super) fn pause_stop_seek_and_chapter_change_report() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    pos(&mut r, P1, spot("a", 2, 101.0), true, 2000);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 2001)).len(), 1);
    pos(&mut r, P1, spot("a", 2, 102.0), true, 3000);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 3001)).len(), 1);
    pos(&mut r, P1, spot("a", 2, 103.0), true, 4000);
    let d = act(&mut r, P1, Action::Seek(spot("a", 2, 500.0)), 4001);
    assert_eq!(reports(&d)[0].spot, spot("a", 2, 103.0));
    // Stale landed reading from before the seek: not adopted.
    pos(&mut r, P1, spot("a", 2, 103.5), true, 4100);
    assert!(reports(&act(&mut r, P1, Action::Stop, 4200)).is_empty());
    pos(&mut r, P1, spot("a", 2, 500.1), true, 4300);
    let d = act(&mut r, P1, Action::ChapterChange(spot("a", 3, 0.0)), 4400);
    assert_eq!(reports(&d)[0].spot, spot("a", 2, 500.1));
    pos(&mut r, P1, spot("a", 3, 0.2), true, 4500);
    let d = act(&mut r, P1, Action::Quit, 4600);
    assert_eq!(reports(&d)[0].spot, spot("a", 3, 0.2));
    // After quitting, nothing reports.
    pos(&mut r, P1, spot("a", 3, 9.0), true, 4700);
    assert!(reports(&r.handle(Event::Tick, 99_000)).is_empty());
}

#[test]
pub(super) fn timestamps_strictly_increase() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    pos(&mut r, P1, spot("a", 2, 101.0), true, 2000);
    let a = reports(&act(&mut r, P1, Action::Pause, 2000))[0].client_updated_at;
    pos(&mut r, P1, spot("a", 2, 102.0), true, 2000);
    let b = reports(&act(&mut r, P1, Action::Stop, 2000))[0].client_updated_at;
    assert!(b > a);
}

#[test]
pub(super) fn transient_zero_while_live_is_ignored_but_explicit_seek_to_zero_writes_it() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 1, 700.0));
    pos(&mut r, P1, spot("a", 1, 0.0), true, 2000);
    let d = act(&mut r, P1, Action::Pause, 2001);
    assert_eq!(
        reports(&d)[0].spot,
        spot("a", 1, 700.0),
        "the glitch is ignored"
    );
    // The user seeks to 0: explicit.
    act(&mut r, P1, Action::Play, 2002);
    act(&mut r, P1, Action::Seek(spot("a", 1, 0.0)), 2003);
    pos(&mut r, P1, spot("a", 1, 0.3), true, 2100);
    let d = act(&mut r, P1, Action::Pause, 2200);
    let w = reports(&d);
    assert_eq!(w.len(), 1);
    assert!(w[0].reset);
    assert_eq!(w[0].spot, spot("a", 1, 0.3));
}

#[test]
pub(super) fn restart_and_mark_unfinished_are_resets() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 3, 700.0));
    let d = intent(&mut r, P1, Intent::RestartBook, 3000);
    let w = reports(&d);
    assert_eq!(w[0].spot, spot("a", 1, 0.0));
    assert!(w[0].reset && !w[0].finished);
    assert!(d.contains(&load(P1, spot("a", 1, 0.0))));
    let d = intent(&mut r, P1, Intent::MarkFinished, 3100);
    assert!(reports(&d)[0].finished && !reports(&d)[0].reset);
    let d = intent(&mut r, P1, Intent::MarkUnfinished, 3200);
    assert!(!reports(&d)[0].finished && reports(&d)[0].reset);
}

#[test]
pub(super) fn only_the_current_playback_reports() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    live_at(&mut r, P2, "b", spot("b", 2, 50.0));
    // A late position of book a's playback arrives: ignored.
    pos(&mut r, P1, spot("a", 2, 130.0), true, 3000);
    assert!(reports(&act(&mut r, P1, Action::Pause, 3001)).is_empty());
    // Book b's own position, with a chapter of book a: not in b's manifest.
    pos(&mut r, P2, spot("a", 2, 131.0), true, 3002);
    pos(&mut r, P2, spot("b", 2, 55.0), true, 3003);
    let d = act(&mut r, P2, Action::Pause, 3004);
    let w = reports(&d);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].book, BookId::new("b"));
    assert_eq!(w[0].spot, spot("b", 2, 55.0));
}

#[test]
pub(super) fn large_disagreement_asks_the_user() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let d = open(&mut r, P1, "a", Some(local("a", 3, 190.0)));
    assert!(unconfirmed(&d[..1]));
    let d = answer(&mut r, P1, Some(progress("a", 2, 751.0)), 1100);
    assert!(d.contains(&Decision::Choose {
        book: BookId::new("a"),
        server: spot("a", 2, 751.0),
        local: spot("a", 3, 190.0),
    }));
    assert!(!d.iter().any(|d| matches!(d, Decision::LoadAt { .. })));
    let d = chose(&mut r, P1, Side::Local, 1200);
    assert!(d.contains(&load(P1, spot("a", 3, 190.0))));
    pos(&mut r, P1, spot("a", 3, 191.0), true, 1300);
    let w = act(&mut r, P1, Action::Pause, 1400);
    assert_eq!(reports(&w)[0].spot, spot("a", 3, 191.0));
}

#[test]
pub(super) fn small_disagreement_follows_the_server_and_headless_never_asks() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", Some(local("a", 2, 700.0)));
    let d = answer(&mut r, P1, Some(progress("a", 2, 730.0)), 1100);
    assert!(d.contains(&load(P1, spot("a", 2, 730.0))));

    let mut r = Reconciler::new(ReconcilerConfig {
        headless: true,
        ..Default::default()
    });
    open(&mut r, P1, "a", Some(local("a", 3, 1900.0)));
    let d = answer(&mut r, P1, Some(progress("a", 1, 10.0)), 1100);
    assert!(!asks(&d));
    assert!(d.contains(&load(P1, spot("a", 1, 10.0))));
}

#[test]
pub(super) fn offline_open_restores_local_and_reconnect_flushes_then_fetches() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", Some(local("a", 2, 300.0)));
    let d = r.handle(Event::ServerFetchFailed { playback: P1 }, 1100);
    assert!(d.contains(&load(P1, spot("a", 2, 300.0))));
    assert!(!r.is_online());
    pos(&mut r, P1, spot("a", 2, 300.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 2, 310.0), true, 11_200);
    // Offline reports are still produced: the worker queues them.
    assert_eq!(reports(&r.handle(Event::Tick, 11_200)).len(), 1);
    let d = r.handle(Event::Online, 12_000);
    assert_eq!(
        d,
        vec![Decision::FlushThenFetch {
            book: BookId::new("a")
        }]
    );
    let d = answer(&mut r, P1, Some(progress("a", 2, 900.0)), 12_100);
    assert!(d.contains(&Decision::Display {
        book: BookId::new("a"),
        spot: spot("a", 2, 900.0),
        finished: false,
        source: Source::Server,
    }));
}

#[test]
pub(super) fn fresh_book_offline_never_reports_the_start() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    r.handle(Event::ServerFetchFailed { playback: P1 }, 1100);
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 1, 0.5), true, 1700);
    assert!(reports(&act(&mut r, P1, Action::Pause, 1800)).is_empty());
    act(&mut r, P1, Action::Play, 1900);
    pos(&mut r, P1, spot("a", 1, 12.0), true, 13_000);
    // Past the start, but the server's progress is still unknown: held.
    let d = act(&mut r, P1, Action::Pause, 13_100);
    assert!(reports(&d).is_empty(), "{d:?}");
    assert!(matches!(d.as_slice(), [Decision::Hold(w)] if w.spot == spot("a", 1, 12.0)));
}

/// Opened offline with nothing on this device, played from the start to
/// 300 s, then the server answers (issue 5: never flush the guess first).
pub(super) fn offline_guess_then_server(
    headless: bool,
    server: Option<Progress>,
) -> (Reconciler, Vec<Decision>) {
    let mut r = Reconciler::new(ReconcilerConfig {
        headless,
        ..Default::default()
    });
    open(&mut r, P1, "a", None);
    r.handle(Event::ServerFetchFailed { playback: P1 }, 1100);
    assert_eq!(r.awaiting_server().map(|(p, _)| p), Some(P1));
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    let mut now = 1200;
    for i in 1..=30 {
        now += 10_000;
        pos(&mut r, P1, spot("a", 1, 10.0 * i as f64), true, now);
        let d = r.handle(Event::Tick, now);
        assert!(
            reports(&d).is_empty(),
            "reported before the server answered: {d:?}"
        );
    }
    let d = act(&mut r, P1, Action::Pause, now + 1);
    assert!(reports(&d).is_empty());
    assert!(
        r.handle(Event::Online, now + 2)
            .iter()
            .all(|d| !matches!(d, Decision::Report(_)))
    );
    let d = answer(&mut r, P1, server, now + 3);
    assert!(r.awaiting_server().is_none());
    (r, d)
}

#[test]
pub(super) fn offline_guess_far_from_the_server_asks_instead_of_overwriting() {
    let (mut r, d) = offline_guess_then_server(false, Some(progress("a", 2, 900.0)));
    assert!(reports(&d).is_empty());
    assert!(d.contains(&Decision::Choose {
        book: BookId::new("a"),
        server: spot("a", 2, 900.0),
        local: spot("a", 1, 300.0),
    }));
    // Nothing is written while the prompt waits.
    pos(&mut r, P1, spot("a", 1, 305.0), true, 999_000);
    assert!(reports(&act(&mut r, P1, Action::Pause, 999_001)).is_empty());
    let d = chose(&mut r, P1, Side::Server, 999_002);
    assert!(d.contains(&load(P1, spot("a", 2, 900.0))));
}

#[test]
pub(super) fn offline_guess_headless_follows_the_server_and_never_writes_the_guess() {
    let (mut r, d) = offline_guess_then_server(true, Some(progress("a", 2, 900.0)));
    assert!(d.contains(&load(P1, spot("a", 2, 900.0))));
    // A player that cannot move keeps playing from its guess: not reported.
    act(&mut r, P1, Action::Play, 999_000);
    pos(&mut r, P1, spot("a", 1, 310.0), true, 999_000);
    assert!(reports(&r.handle(Event::Tick, 999_000)).is_empty());
    assert!(reports(&act(&mut r, P1, Action::Quit, 999_100)).is_empty());
}

#[test]
pub(super) fn offline_guess_close_to_the_server_or_with_no_record_is_reported() {
    let (mut r, d) = offline_guess_then_server(false, Some(progress("a", 1, 280.0)));
    assert!(!asks(&d));
    let w = act(&mut r, P1, Action::Play, 999_000);
    assert!(reports(&w).is_empty());
    let d = act(&mut r, P1, Action::Pause, 999_100);
    assert_eq!(reports(&d)[0].spot, spot("a", 1, 300.0));
    let (_, d) = offline_guess_then_server(false, None);
    assert_eq!(reports(&d)[0].spot, spot("a", 1, 300.0));
}

#[test]
pub(super) fn a_fresh_book_confirmed_empty_may_report_its_start() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    answer(&mut r, P1, None, 1100);
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 1, 0.6), true, 1800);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 1900)).len(), 1);
}

#[test]
fn an_unreadable_server_place_reports_nothing_until_the_listener_picks_a_place() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    let d = r.handle(Event::ServerUnreadable { playback: P1 }, 1000);
    assert!(
        d.iter().any(|d| matches!(d, Decision::LoadAt { .. })),
        "playback may start: {d:?}"
    );
    assert!(
        r.awaiting_server().is_none(),
        "the same answer would come again"
    );
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1100);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 2, 30.0), true, 40_000);
    for (i, a) in [Action::Pause, Action::Stop].into_iter().enumerate() {
        let d = act(&mut r, P1, a, 40_100 + i as i64);
        assert!(
            reports(&d).is_empty(),
            "an unknown place was overwritten: {d:?}"
        );
    }
    let d = r.handle(Event::Tick, 90_000);
    assert!(reports(&d).is_empty());
    // The listener picks a place: that one is theirs to report.
    act(&mut r, P1, Action::Play, 91_000);
    act(&mut r, P1, Action::Seek(spot("a", 3, 100.0)), 91_100);
    pos(&mut r, P1, spot("a", 3, 100.0), true, 91_200);
    pos(&mut r, P1, spot("a", 3, 105.0), true, 96_000);
    let d = act(&mut r, P1, Action::Pause, 96_100);
    let w = reports(&d);
    assert_eq!(w.len(), 1, "{d:?}");
    assert_eq!(w[0].spot, spot("a", 3, 105.0));
}
