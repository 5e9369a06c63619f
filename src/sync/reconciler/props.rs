//! Property tests: for any sequence of events, no write replaces valid
//! progress with 0 unless an explicit user intent came first, no write
//! crosses books, and only landed positions are reported.

use super::tests::*;
use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

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
    },
    Chose {
        server: bool,
    },
    /// The listener asks to play on after a pause.
    Resume,
    /// The server answered a write of the current playback.
    Answered {
        applied: bool,
        ch: u32,
        pos: f64,
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
        (any::<bool>(), 0u8..7, 1u32..=3, any_pos()).prop_map(|(stale, action, ch, pos)| {
            Op::Act {
                stale,
                action,
                ch,
                pos,
            }
        }),
        (any::<bool>(), 0u8..3).prop_map(|(stale, intent)| Op::Intent { stale, intent }),
        any::<bool>().prop_map(|server| Op::Chose { server }),
        Just(Op::Resume),
        (any::<bool>(), 1u32..=3, any_pos()).prop_map(|(applied, ch, pos)| Op::Answered {
            applied,
            ch,
            pos
        }),
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
    /// The playback opened with a place cached on this device.
    had_local: HashMap<u64, bool>,
    /// An explicit intent happened since the last report, per playback.
    intent: HashMap<u64, bool>,
    /// The restore is over (the server answered or could not be read).
    restored: HashMap<u64, bool>,
    /// A prompt waits for the listener.
    choosing: HashMap<u64, bool>,
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
        let mut sought: Option<Spot> = None;
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
                m.had_local.insert(p, lp.is_some());
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
                    m.restored.insert(p.0, true);
                    if let Some(x) = &pr {
                        // The server's latest record is what is valid now
                        // (another device may have restarted the book).
                        let at_start =
                            is_start(&manifest(b), &Spot::new(x.chapter_id.clone(), x.position));
                        m.valid.insert(p.0, !at_start);
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
                m.restored.insert(p.0, true);
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
                    5 => Action::Quit,
                    _ => Action::Ended,
                };
                if matches!(a, Action::Seek(_) | Action::ChapterChange(_)) && p.0 == cur {
                    // The place the listener sought is theirs: reported at
                    // once while paused, even before the engine landed.
                    m.landed.entry(cur).or_default().push(s.clone());
                    sought = Some(s.clone());
                }
                // A move to the start is marked after the action's own
                // report (of the old place).
                let to_start = matches!(a, Action::Seek(_) | Action::ChapterChange(_))
                    && is_start(&manifest(&book), &s)
                    && p.0 == cur;
                let target = if to_start { u64::MAX } else { p.0 };
                (
                    Event::Action {
                        playback: p,
                        action: a,
                    },
                    target,
                )
            }
            Op::Intent { stale, intent } => {
                let p = pick(stale);
                let i = match intent {
                    0 => Intent::RestartBook,
                    1 => Intent::MarkFinished,
                    _ => Intent::MarkUnfinished,
                };
                if i == Intent::RestartBook {
                    // The restart loads the book: the restore is over.
                    m.restored.insert(p.0, true);
                }
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
            Op::Resume => (
                Event::ResumeAsked {
                    playback: PlaybackId(cur),
                },
                cur,
            ),
            Op::Answered { applied, ch, pos } => {
                // The server holds this record now (valid unless the start).
                let pr = progress(&book, ch, pos);
                let at_start = is_start(
                    &manifest(&book),
                    &Spot::new(pr.chapter_id.clone(), pr.position),
                );
                // Taken only after the restore and outside a prompt (they
                // decide where playback goes).
                let taken = m.restored.get(&cur).copied().unwrap_or(false)
                    && !m.choosing.get(&cur).copied().unwrap_or(false);
                if taken {
                    m.server_answered.insert(cur, true);
                    m.valid.insert(cur, !at_start);
                }
                (
                    Event::WriteAnswered {
                        playback: PlaybackId(cur),
                        progress: pr,
                        applied,
                    },
                    cur,
                )
            }
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
                        intent: Intent::RestartBook,
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
        let chose = matches!(event, Event::Chose { .. });
        let decisions = r.handle(event, now);
        if chose {
            m.choosing.insert(cur, false);
        }
        if asks(&decisions) {
            m.choosing.insert(cur, true);
        }
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
            // Opened offline with nothing on this device: the engine plays
            // a guess, which must not reach the server before it answered.
            prop_assert!(
                w.reset
                    || m.had_local.get(&p).copied().unwrap_or(false)
                    || m.server_answered.get(&p).copied().unwrap_or(false),
                "reported a guess before the server answered: {:?}",
                w
            );
            // Non-intent writes carry a position the engine landed on.
            prop_assert!(
                m.landed.get(&p).is_some_and(|v| v.contains(&w.spot)),
                "reported a position the engine never landed on: {:?}",
                w
            );
            if is_start(&mf, &w.spot) && !w.finished {
                // A seek to the start, reported at once while paused.
                let explicit = m.intent.get(&p).copied().unwrap_or(false)
                    || (target == u64::MAX && sought.as_ref() == Some(&w.spot));
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
