use super::*;
use crate::domain::{ManifestItem, Progress};
use proptest::prelude::*;
use std::collections::HashMap;

fn manifest(book: &str) -> Manifest {
    Manifest {
        book_id: BookId::new(book),
        items: (1..=3)
            .map(|i| ManifestItem {
                chapter_id: ChapterId::new(format!("{book}_c{i}")),
                title: format!("Chapter {i}"),
                duration: Some(2000.0),
                url: None,
                mime_type: None,
                size_bytes: None,
                start: 0.0,
                end: None,
            })
            .collect(),
    }
}

fn ch(book: &str, i: u32) -> ChapterId {
    ChapterId::new(format!("{book}_c{i}"))
}

fn spot(book: &str, i: u32, pos: f64) -> Spot {
    Spot::new(ch(book, i), pos)
}

fn progress(book: &str, i: u32, pos: f64) -> Progress {
    Progress {
        chapter_id: ch(book, i),
        position: pos,
        book_position: None,
        finished: false,
        client_updated_at: Some(1),
        server_updated_at: None,
    }
}

fn local(book: &str, i: u32, pos: f64) -> LocalProgress {
    LocalProgress {
        spot: spot(book, i, pos),
        finished: false,
        updated_at: 1,
    }
}

const P1: PlaybackId = PlaybackId(1);
const P2: PlaybackId = PlaybackId(2);

fn open(r: &mut Reconciler, p: PlaybackId, book: &str, l: Option<LocalProgress>) -> Vec<Decision> {
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

fn reports(d: &[Decision]) -> Vec<&ProgressWrite> {
    d.iter()
        .filter_map(|d| match d {
            Decision::Report(w) => Some(w),
            _ => None,
        })
        .collect()
}

fn pos(r: &mut Reconciler, p: PlaybackId, s: Spot, landed: bool, now: i64) -> Vec<Decision> {
    r.handle(
        Event::EnginePosition {
            playback: p,
            spot: s,
            landed,
        },
        now,
    )
}

fn act(r: &mut Reconciler, p: PlaybackId, a: Action, now: i64) -> Vec<Decision> {
    r.handle(
        Event::Action {
            playback: p,
            action: a,
        },
        now,
    )
}

/// Opens `book`, gets the server's answer and lands on `at`.
fn live_at(r: &mut Reconciler, p: PlaybackId, book: &str, at: Spot) {
    open(r, p, book, None);
    let prog = Progress {
        chapter_id: at.chapter.clone(),
        position: at.position,
        ..progress(book, 1, 0.0)
    };
    let d = r.handle(
        Event::ServerProgress {
            playback: p,
            progress: Some(prog),
        },
        1100,
    );
    assert!(d.contains(&Decision::LoadAt {
        playback: p,
        spot: at.clone()
    }));
    pos(r, p, at, true, 1200);
    assert!(r.is_live());
    act(r, p, Action::Play, 1200);
}

#[test]
fn restore_reports_nothing_before_landing_and_never_the_transient_zero() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: Some(progress("a", 1, 1234.0)),
        },
        1100,
    );
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
fn periodic_reports_follow_the_interval_and_only_on_change() {
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
fn pause_stop_sleep_seek_and_chapter_change_report() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    pos(&mut r, P1, spot("a", 2, 101.0), true, 2000);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 2001)).len(), 1);
    pos(&mut r, P1, spot("a", 2, 102.0), true, 3000);
    assert_eq!(reports(&act(&mut r, P1, Action::Sleep, 3001)).len(), 1);
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
fn timestamps_strictly_increase() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 2, 100.0));
    pos(&mut r, P1, spot("a", 2, 101.0), true, 2000);
    let a = reports(&act(&mut r, P1, Action::Pause, 2000))[0].client_updated_at;
    pos(&mut r, P1, spot("a", 2, 102.0), true, 2000);
    let b = reports(&act(&mut r, P1, Action::Stop, 2000))[0].client_updated_at;
    assert!(b > a);
}

#[test]
fn transient_zero_while_live_is_ignored_but_explicit_seek_to_zero_writes_it() {
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
fn restart_and_mark_unfinished_are_resets() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    live_at(&mut r, P1, "a", spot("a", 3, 700.0));
    let d = r.handle(
        Event::Intent {
            playback: P1,
            intent: Intent::RestartBook,
        },
        3000,
    );
    let w = reports(&d);
    assert_eq!(w[0].spot, spot("a", 1, 0.0));
    assert!(w[0].reset && !w[0].finished);
    assert!(d.contains(&Decision::LoadAt {
        playback: P1,
        spot: spot("a", 1, 0.0)
    }));
    let d = r.handle(
        Event::Intent {
            playback: P1,
            intent: Intent::MarkFinished,
        },
        3100,
    );
    assert!(reports(&d)[0].finished && !reports(&d)[0].reset);
    let d = r.handle(
        Event::Intent {
            playback: P1,
            intent: Intent::MarkUnfinished,
        },
        3200,
    );
    assert!(!reports(&d)[0].finished && reports(&d)[0].reset);
}

#[test]
fn only_the_current_playback_reports() {
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
fn large_disagreement_asks_the_user() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    let d = open(&mut r, P1, "a", Some(local("a", 3, 190.0)));
    assert!(matches!(
        d[0],
        Decision::Display {
            source: Source::LocalUnconfirmed,
            ..
        }
    ));
    let d = r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: Some(progress("a", 2, 751.0)),
        },
        1100,
    );
    assert!(d.contains(&Decision::Choose {
        book: BookId::new("a"),
        server: spot("a", 2, 751.0),
        local: spot("a", 3, 190.0),
    }));
    assert!(!d.iter().any(|d| matches!(d, Decision::LoadAt { .. })));
    let d = r.handle(
        Event::Chose {
            playback: P1,
            side: Side::Local,
        },
        1200,
    );
    assert!(d.contains(&Decision::LoadAt {
        playback: P1,
        spot: spot("a", 3, 190.0)
    }));
    pos(&mut r, P1, spot("a", 3, 191.0), true, 1300);
    let w = act(&mut r, P1, Action::Pause, 1400);
    assert_eq!(reports(&w)[0].spot, spot("a", 3, 191.0));
}

#[test]
fn small_disagreement_follows_the_server_and_headless_never_asks() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", Some(local("a", 2, 700.0)));
    let d = r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: Some(progress("a", 2, 730.0)),
        },
        1100,
    );
    assert!(d.contains(&Decision::LoadAt {
        playback: P1,
        spot: spot("a", 2, 730.0)
    }));

    let mut r = Reconciler::new(ReconcilerConfig {
        headless: true,
        ..Default::default()
    });
    open(&mut r, P1, "a", Some(local("a", 3, 1900.0)));
    let d = r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: Some(progress("a", 1, 10.0)),
        },
        1100,
    );
    assert!(!d.iter().any(|d| matches!(d, Decision::Choose { .. })));
    assert!(d.contains(&Decision::LoadAt {
        playback: P1,
        spot: spot("a", 1, 10.0)
    }));
}

#[test]
fn offline_open_restores_local_and_reconnect_flushes_then_fetches() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", Some(local("a", 2, 300.0)));
    let d = r.handle(Event::ServerFetchFailed { playback: P1 }, 1100);
    assert!(d.contains(&Decision::LoadAt {
        playback: P1,
        spot: spot("a", 2, 300.0)
    }));
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
    let d = r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: Some(progress("a", 2, 900.0)),
        },
        12_100,
    );
    assert!(d.contains(&Decision::Display {
        book: BookId::new("a"),
        spot: spot("a", 2, 900.0),
        finished: false,
        source: Source::Server,
    }));
}

#[test]
fn fresh_book_offline_never_reports_the_start() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    r.handle(Event::ServerFetchFailed { playback: P1 }, 1100);
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 1, 0.5), true, 1700);
    assert!(reports(&act(&mut r, P1, Action::Pause, 1800)).is_empty());
    act(&mut r, P1, Action::Play, 1900);
    pos(&mut r, P1, spot("a", 1, 12.0), true, 13_000);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 13_100)).len(), 1);
}

#[test]
fn a_fresh_book_confirmed_empty_may_report_its_start() {
    let mut r = Reconciler::new(ReconcilerConfig::default());
    open(&mut r, P1, "a", None);
    r.handle(
        Event::ServerProgress {
            playback: P1,
            progress: None,
        },
        1100,
    );
    pos(&mut r, P1, spot("a", 1, 0.0), true, 1200);
    act(&mut r, P1, Action::Play, 1200);
    pos(&mut r, P1, spot("a", 1, 0.6), true, 1800);
    assert_eq!(reports(&act(&mut r, P1, Action::Pause, 1900)).len(), 1);
}

// ---- property tests ----

#[derive(Debug, Clone)]
enum Op {
    Open {
        book: u8,
        local: Option<(u32, f64)>,
    },
    Server {
        stale: bool,
        progress: Option<(u32, f64)>,
    },
    FetchFailed {
        stale: bool,
    },
    Position {
        stale: bool,
        ch: u32,
        pos: f64,
        landed: bool,
    },
    Landed {
        stale: bool,
        ch: u32,
        pos: f64,
    },
    Act {
        stale: bool,
        action: u8,
        ch: u32,
        pos: f64,
    },
    Intent {
        stale: bool,
        intent: u8,
        ch: u32,
    },
    Chose {
        server: bool,
    },
    Tick,
    Online,
    Offline,
    Wait(i64),
}

fn any_pos() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        Just(0.0),
        Just(0.4),
        0.0..2000.0f64,
        Just(1234.0),
        Just(1235.0)
    ]
}

fn any_op() -> impl Strategy<Value = Op> {
    let spot = (1u32..=3, any_pos());
    prop_oneof![
        (0u8..2, proptest::option::of(spot.clone()))
            .prop_map(|(book, local)| Op::Open { book, local }),
        (any::<bool>(), proptest::option::of(spot.clone()))
            .prop_map(|(stale, progress)| Op::Server { stale, progress }),
        any::<bool>().prop_map(|stale| Op::FetchFailed { stale }),
        (any::<bool>(), 1u32..=3, any_pos(), any::<bool>()).prop_map(|(stale, ch, pos, landed)| {
            Op::Position {
                stale,
                ch,
                pos,
                landed,
            }
        }),
        (any::<bool>(), 1u32..=3, any_pos()).prop_map(|(stale, ch, pos)| Op::Landed {
            stale,
            ch,
            pos
        }),
        (any::<bool>(), 0u8..8, 1u32..=3, any_pos()).prop_map(|(stale, action, ch, pos)| {
            Op::Act {
                stale,
                action,
                ch,
                pos,
            }
        }),
        (any::<bool>(), 0u8..4, 1u32..=3).prop_map(|(stale, intent, ch)| Op::Intent {
            stale,
            intent,
            ch
        }),
        any::<bool>().prop_map(|server| Op::Chose { server }),
        Just(Op::Tick),
        Just(Op::Online),
        Just(Op::Offline),
        (0i64..20_000).prop_map(Op::Wait),
    ]
}

/// What the harness knows independently of the reconciler.
#[derive(Default)]
struct Model {
    playbacks: Vec<String>,
    /// Landed positions the engine published, per playback.
    landed: HashMap<u64, Vec<Spot>>,
    /// A non-start progress (local, server or engine) was seen, per playback.
    valid: HashMap<u64, bool>,
    server_answered: HashMap<u64, bool>,
    /// An explicit intent happened since the last report, per playback.
    intent: HashMap<u64, bool>,
}

fn run(ops: Vec<Op>, headless: bool) -> Result<(), TestCaseError> {
    let mut r = Reconciler::new(ReconcilerConfig {
        headless,
        ..Default::default()
    });
    let mut m = Model::default();
    let mut now = 1_000_i64;
    let books = ["a", "b"];
    for op in ops {
        let cur = m.playbacks.len() as u64;
        let book = m.playbacks.last().cloned().unwrap_or_else(|| "a".into());
        let pick = |stale: bool| PlaybackId(if stale { cur.saturating_sub(1) } else { cur });
        // Which playback (and so which book) an event is attributed to.
        let (event, target) = match op {
            Op::Open { book: b, local: l } => {
                let name = books[b as usize].to_string();
                m.playbacks.push(name.clone());
                let p = m.playbacks.len() as u64;
                let lp = l.map(|(c, x)| local(&name, c, x));
                let valid = lp
                    .as_ref()
                    .is_some_and(|l| !is_start(&manifest(&name), &l.spot));
                m.valid.insert(p, valid);
                (
                    Event::BookOpened {
                        playback: PlaybackId(p),
                        book: BookId::new(name.as_str()),
                        manifest: manifest(&name),
                        local: lp,
                    },
                    p,
                )
            }
            Op::Server {
                stale,
                progress: pr,
            } => {
                let p = pick(stale);
                let b = m.playbacks.get(p.0.wrapping_sub(1) as usize).cloned();
                let pr = pr.map(|(c, x)| progress(b.as_deref().unwrap_or("a"), c, x));
                if let Some(b) = &b {
                    m.server_answered.insert(p.0, true);
                    if pr.as_ref().is_some_and(|x| {
                        !is_start(&manifest(b), &Spot::new(x.chapter_id.clone(), x.position))
                    }) {
                        m.valid.insert(p.0, true);
                    }
                }
                (
                    Event::ServerProgress {
                        playback: p,
                        progress: pr,
                    },
                    p.0,
                )
            }
            Op::FetchFailed { stale } => {
                let p = pick(stale);
                (Event::ServerFetchFailed { playback: p }, p.0)
            }
            Op::Position {
                stale,
                ch,
                pos,
                landed,
            } => {
                let p = pick(stale);
                let b = m.playbacks.get(p.0.wrapping_sub(1) as usize).cloned();
                let s = spot(b.as_deref().unwrap_or("a"), ch, pos);
                if landed {
                    m.landed.entry(p.0).or_default().push(s.clone());
                }
                (
                    Event::EnginePosition {
                        playback: p,
                        spot: s,
                        landed,
                    },
                    p.0,
                )
            }
            Op::Landed { stale, ch, pos } => {
                let p = pick(stale);
                let b = m.playbacks.get(p.0.wrapping_sub(1) as usize).cloned();
                let s = spot(b.as_deref().unwrap_or("a"), ch, pos);
                m.landed.entry(p.0).or_default().push(s.clone());
                (
                    Event::EngineLanded {
                        playback: p,
                        spot: s,
                    },
                    p.0,
                )
            }
            Op::Act {
                stale,
                action,
                ch,
                pos,
            } => {
                let p = pick(stale);
                let s = spot(&book, ch, pos);
                let a = match action {
                    0 => Action::Play,
                    1 => Action::Pause,
                    2 => Action::Stop,
                    3 => Action::Seek(s.clone()),
                    4 => Action::ChapterChange(s.clone()),
                    5 => Action::Sleep,
                    6 => Action::Quit,
                    _ => Action::Ended,
                };
                if matches!(a, Action::Seek(_) | Action::ChapterChange(_))
                    && is_start(&manifest(&book), &s)
                    && p.0 == cur
                {
                    // Marked after the action's own report (of the old place).
                    (
                        Event::Action {
                            playback: p,
                            action: a,
                        },
                        u64::MAX,
                    )
                } else {
                    (
                        Event::Action {
                            playback: p,
                            action: a,
                        },
                        p.0,
                    )
                }
            }
            Op::Intent {
                stale,
                intent,
                ch: chapter,
            } => {
                let p = pick(stale);
                let i = match intent {
                    0 => Intent::RestartBook,
                    1 => Intent::SeekToZero(ch(&book, chapter)),
                    2 => Intent::MarkFinished,
                    _ => Intent::MarkUnfinished,
                };
                (
                    Event::Intent {
                        playback: p,
                        intent: i,
                    },
                    p.0,
                )
            }
            Op::Chose { server } => (
                Event::Chose {
                    playback: PlaybackId(cur),
                    side: if server { Side::Server } else { Side::Local },
                },
                cur,
            ),
            Op::Tick => (Event::Tick, cur),
            Op::Online => (Event::Online, cur),
            Op::Offline => (Event::Offline, cur),
            Op::Wait(ms) => {
                now += ms;
                continue;
            }
        };
        let is_intent = matches!(event, Event::Intent { .. });
        let moved_to_start = target == u64::MAX
            || (target == cur
                && matches!(
                    event,
                    Event::Intent {
                        intent: Intent::RestartBook | Intent::SeekToZero(_),
                        ..
                    }
                ));
        let chose_local = matches!(
            event,
            Event::Chose {
                side: Side::Local,
                ..
            }
        );
        let event_playback = match &event {
            Event::Intent { playback, .. } | Event::Action { playback, .. } => Some(*playback),
            _ => None,
        };
        // Opening a book lets the replaced playback report its last place.
        let reporter = if matches!(event, Event::BookOpened { .. }) {
            cur
        } else {
            m.playbacks.len() as u64
        };
        let decisions = r.handle(event, now);
        for w in reports(&decisions) {
            // Only the current playback reports, and only its own book.
            prop_assert!(reporter > 0, "a report without an open book");
            let owner = m.playbacks[reporter as usize - 1].clone();
            prop_assert_eq!(w.book.as_str(), owner.as_str(), "write crossed books");
            if let Some(p) = event_playback {
                prop_assert_eq!(p.0, reporter, "stale playback reported");
            }
            let p = reporter;
            let mf = manifest(&owner);
            prop_assert!(mf.position_of(&w.spot.chapter).is_some());
            if is_intent {
                continue;
            }
            // Non-intent writes carry a position the engine landed on.
            prop_assert!(
                m.landed.get(&p).is_some_and(|v| v.contains(&w.spot)),
                "reported a position the engine never landed on: {:?}",
                w
            );
            if is_start(&mf, &w.spot) && !w.finished {
                let explicit = m.intent.get(&p).copied().unwrap_or(false);
                if !explicit {
                    prop_assert!(!w.reset, "reset without an explicit intent");
                    prop_assert!(
                        m.server_answered.get(&p).copied().unwrap_or(false),
                        "start reported before the server was checked"
                    );
                    prop_assert!(
                        !m.valid.get(&p).copied().unwrap_or(false),
                        "start replaced valid progress: {:?}",
                        w
                    );
                }
            }
            if !is_start(&mf, &w.spot) {
                m.valid.insert(p, true);
            }
            m.intent.insert(p, false);
        }
        if w_is_reset_source(is_intent, chose_local, target, cur) {
            m.intent.insert(cur, true);
        }
        if moved_to_start {
            // The listener explicitly went back to the start.
            m.valid.insert(cur, false);
        }
    }
    Ok(())
}

fn w_is_reset_source(is_intent: bool, chose_local: bool, target: u64, cur: u64) -> bool {
    (is_intent && target == cur) || chose_local || target == u64::MAX
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn no_zero_over_valid_progress_and_no_cross_book_writes(
        ops in proptest::collection::vec(any_op(), 1..80),
        headless in any::<bool>(),
    ) {
        run(ops, headless)?;
    }

    /// Landing-focused: a restore, then engine noise including zeros.
    #[test]
    fn restored_progress_never_reported_as_zero(
        target in 2.0..2000.0f64,
        noise in proptest::collection::vec((any::<bool>(), 0u8..4, 0i64..15_000), 0..60),
    ) {
        let mut r = Reconciler::new(ReconcilerConfig::default());
        open(&mut r, P1, "a", None);
        r.handle(Event::ServerProgress { playback: P1, progress: Some(progress("a", 1, target)) }, 1000);
        let mut now = 1000;
        for (landed, kind, dt) in noise {
            now += dt;
            let d = match kind {
                0 => pos(&mut r, P1, spot("a", 1, 0.0), landed, now),
                1 => act(&mut r, P1, Action::Play, now),
                2 => act(&mut r, P1, Action::Pause, now),
                _ => r.handle(Event::Tick, now),
            };
            for w in reports(&d) {
                prop_assert!(w.spot.position >= 1.0, "zero reported: {:?}", w);
            }
        }
    }
}
