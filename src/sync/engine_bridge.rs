//! The audio engine as sync sees it: never the engine itself. The session
//! owner (`crate::playback`) tells sync what it [`Heard`] from the engine,
//! and sync asks the owner for what it decides ([`EngineAsk`], through an
//! [`EngineLink`]). [`EngineBridge`] turns what was heard into reconciler
//! events: pure, so the mapping is testable without audio. Only states of
//! the engine load that was made for *our* playback are forwarded; a
//! state of an earlier load (another book) is dropped here, and again by
//! the reconciler's ownership check.

use super::reconciler::{Action, Event, PlaybackId, Spot};
use crate::domain::session::PlayState;
use crate::domain::{ChapterId, Manifest};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The engine's number of one load (each `Load` gets the next).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LoadId(pub u64);

/// One state of the engine, as the owner heard it and sync needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Heard {
    pub load: LoadId,
    /// Bumped on every change the engine published.
    pub version: u64,
    pub state: PlayState,
    pub chapter: Option<ChapterId>,
    /// Seconds into the chapter.
    pub position: f64,
    /// The last load or seek target is being played.
    pub landed: bool,
    /// The place is an estimate the engine cannot vouch for.
    pub approximate: bool,
    pub speed: f32,
    pub volume: f32,
}

impl Default for Heard {
    fn default() -> Self {
        Heard {
            load: LoadId(0),
            version: 0,
            state: PlayState::Loading,
            chapter: None,
            position: 0.0,
            landed: false,
            approximate: false,
            speed: 1.0,
            volume: 1.0,
        }
    }
}

/// What sync asks of the audio engine. Sync never commands the engine:
/// the playback owner (`crate::playback`) turns each ask into an engine
/// command, so every command the engine gets is built in one place.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineAsk {
    /// Load `manifest` at `start` and play (creates a new engine load).
    Load {
        manifest: Manifest,
        start: (ChapterId, f64),
    },
    /// Move the loaded book to this place (a conflict choice, a restore
    /// after an offline open).
    Seek { chapter: ChapterId, position: f64 },
    /// The opened book's speed (the user's, or the one saved for it).
    Speed(f32),
    /// The opened book's volume (the user's, or the one saved for it).
    Volume(f32),
    /// Play on: a resume the server's place did not stop.
    Play,
    /// Pause: a prompt about the place waits for the listener.
    Pause,
}

/// How sync asks the owner for what it decides ([`EngineAsk`]). Clones
/// share one count of the loads asked for, which is how the engine
/// numbers its loads, so a state is attributed exactly.
#[derive(Clone)]
pub struct EngineLink {
    ask: Arc<dyn Fn(EngineAsk) + Send + Sync>,
    loads: Arc<AtomicU64>,
}

impl EngineLink {
    /// `loads`: the engine's last load number now; `ask` hands a request
    /// to the owner. Every load the engine gets must be asked through
    /// this link.
    pub fn new(loads: LoadId, ask: impl Fn(EngineAsk) + Send + Sync + 'static) -> Self {
        Self {
            ask: Arc::new(ask),
            loads: Arc::new(AtomicU64::new(loads.0)),
        }
    }

    pub(super) fn ask(&self, ask: EngineAsk) {
        (self.ask)(ask)
    }

    /// Asks for a load and returns the engine playback id it creates;
    /// `before` runs with that id first.
    pub(super) fn load(
        &self,
        manifest: Manifest,
        start: (ChapterId, f64),
        before: impl FnOnce(LoadId),
    ) -> LoadId {
        let id = LoadId(self.loads.fetch_add(1, Ordering::SeqCst) + 1);
        before(id);
        self.ask(EngineAsk::Load { manifest, start });
        id
    }
}

/// How far a paused engine's place may drift (the output draining) before
/// a move counts as a seek.
const PAUSED_STILL: f64 = 0.5;

#[derive(Debug, Default)]
pub struct EngineBridge {
    /// Our playback, and the engine id its `Load` produced (once seen).
    ours: Option<(PlaybackId, Option<LoadId>)>,
    /// Engine ids up to this one belong to earlier loads.
    before: LoadId,
    last: Option<Heard>,
    /// The last state had not landed, as the engine said (before an
    /// approximate place was counted as not landed).
    last_unlanded: bool,
}

impl EngineBridge {
    pub fn new() -> Self {
        Self::default()
    }

    /// Call right before sending the engine's `Load` for playback `ours`,
    /// when the caller knows the engine id that load creates (it counts
    /// the loads it sends): exact even while an earlier load is in flight.
    pub fn loading_as(&mut self, ours: PlaybackId, engine_id: LoadId) {
        self.ours = Some((ours, Some(engine_id)));
        self.before = LoadId(engine_id.0.saturating_sub(1));
        self.last = None;
        self.last_unlanded = false;
    }

    /// Events for one published state (call on every change). A place the
    /// engine cannot vouch for (`approximate`: a far seek in a VBR mp3
    /// estimated from its table of contents) counts as not landed, so it is
    /// never reported as if it were exact.
    pub fn events(&mut self, s: &Heard) -> Vec<Event> {
        let mut out = Vec::new();
        let unlanded = !s.landed;
        let vouched;
        let s = if s.approximate && s.landed {
            vouched = Heard {
                landed: false,
                ..s.clone()
            };
            &vouched
        } else {
            s
        };
        let Some((playback, engine_id)) = self.ours.as_mut() else {
            return out;
        };
        if s.load <= self.before {
            return out;
        }
        match engine_id {
            None => *engine_id = Some(s.load),
            Some(id) if *id != s.load => return out,
            Some(_) => {}
        }
        let playback = *playback;
        if self
            .last
            .as_ref()
            .is_some_and(|l| l.version == s.version && l == s)
        {
            return out;
        }
        let prev = self.last.replace(s.clone());
        let was_unlanded = std::mem::replace(&mut self.last_unlanded, unlanded);
        let action = |a| Event::Action {
            playback,
            action: a,
        };
        let spot = s
            .chapter
            .clone()
            .filter(|_| s.position.is_finite() && s.position >= 0.0)
            .map(|c| Spot::new(c, s.position));
        if let (Some(p), Some(spot)) = (&prev, &spot) {
            // A chapter first heard (none before) is where the load is,
            // not a move.
            if p.chapter.as_ref().is_some_and(|c| *c != spot.chapter) {
                out.push(action(Action::ChapterChange(spot.clone())));
            } else if p.landed && !s.landed {
                // A seek: the engine publishes the target until it lands.
                out.push(action(Action::Seek(spot.clone())));
            } else if was_unlanded && unlanded && p.position != spot.position {
                // Another seek before the last one landed (paused offline,
                // the engine cannot): a new target.
                out.push(action(Action::Seek(spot.clone())));
            } else if p.state == PlayState::Paused
                && s.state == PlayState::Paused
                && (p.position - spot.position).abs() > PAUSED_STILL
            {
                // A paused engine does not move: this is a seek whose
                // target was not seen (it landed before this was read).
                out.push(action(Action::Seek(spot.clone())));
            }
        }
        if let Some(spot) = spot.clone() {
            let newly_landed = s.landed && prev.as_ref().is_none_or(|p| !p.landed);
            if newly_landed {
                out.push(Event::EngineLanded { playback, spot });
            } else {
                out.push(Event::EnginePosition {
                    playback,
                    spot,
                    landed: s.landed,
                });
            }
        }
        let was = prev.as_ref().map(|p| &p.state);
        if was != Some(&s.state) {
            match &s.state {
                PlayState::Playing => out.push(action(Action::Play)),
                PlayState::Paused => out.push(action(Action::Pause)),
                PlayState::Ended => out.push(action(Action::Ended)),
                PlayState::Ready | PlayState::Loading | PlayState::Error(_) => {
                    out.push(action(Action::Stop))
                }
                PlayState::Buffering | PlayState::Stalled => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ChapterId;

    fn state(id: u64, ch: &str, pos: f64, landed: bool, state: PlayState) -> Heard {
        Heard {
            load: LoadId(id),
            chapter: Some(ChapterId::new(ch)),
            position: pos,
            landed,
            state,
            ..Heard::default()
        }
    }

    impl EngineBridge {
        fn heard(&mut self, id: u64, ch: &str, pos: f64, landed: bool, s: PlayState) -> Vec<Event> {
            self.events(&state(id, ch, pos, landed, s))
        }
    }

    fn act(p: u64, action: Action) -> Event {
        Event::Action {
            playback: PlaybackId(p),
            action,
        }
    }

    fn moved(p: u64, ch: &str, pos: f64) -> Vec<Event> {
        vec![Event::EnginePosition {
            playback: PlaybackId(p),
            spot: Spot::new(ch, pos),
            landed: false,
        }]
    }

    #[test]
    fn states_of_an_earlier_load_are_dropped() {
        let mut b = EngineBridge::new();
        assert!(b.heard(1, "a", 5.0, true, PlayState::Playing).is_empty());
        b.loading_as(PlaybackId(7), LoadId(2));
        assert!(b.heard(1, "a", 6.0, true, PlayState::Playing).is_empty());
        let e = b.heard(2, "b", 30.0, false, PlayState::Buffering);
        assert_eq!(e, moved(7, "b", 30.0));
    }

    #[test]
    fn a_load_still_in_flight_is_not_taken_for_ours() {
        // A's load (engine id 2) was sent but the engine still publishes
        // id 1 when B's load (id 3) is sent: states of 2 are A's.
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(8), LoadId(3));
        assert!(b.heard(2, "a", 40.0, true, PlayState::Playing).is_empty());
        let e = b.heard(3, "b", 7.0, false, PlayState::Buffering);
        assert_eq!(e, moved(8, "b", 7.0));
    }

    #[test]
    fn a_second_seek_before_the_first_landed_is_a_seek_too() {
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(1), LoadId(1));
        b.heard(1, "a", 30.0, true, PlayState::Paused);
        let seek = |to: f64| act(1, Action::Seek(Spot::new("a", to)));
        // Paused and offline: the engine publishes each target, never lands.
        assert!(
            b.heard(1, "a", 20.0, false, PlayState::Paused)
                .contains(&seek(20.0))
        );
        assert!(
            b.heard(1, "a", 10.0, false, PlayState::Paused)
                .contains(&seek(10.0))
        );
        // The same target again is no new seek.
        let mut again = state(1, "a", 10.0, false, PlayState::Paused);
        again.version += 1;
        assert!(!b.events(&again).contains(&seek(10.0)));
        // Landed at once, its target never seen: a paused move is a seek.
        b.heard(1, "a", 10.0, true, PlayState::Paused);
        assert!(
            b.heard(1, "a", 40.0, true, PlayState::Paused)
                .contains(&seek(40.0))
        );
    }

    #[test]
    fn an_approximate_place_never_lands() {
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(1), LoadId(1));
        let mut s = state(1, "a", 4000.0, true, PlayState::Playing);
        s.approximate = true;
        let e = b.events(&s);
        assert!(
            e.iter().all(|e| !matches!(
                e,
                Event::EngineLanded { .. } | Event::EnginePosition { landed: true, .. }
            )),
            "{e:?}"
        );
        // Exact again (a seek that landed on a counted frame): it lands.
        s.approximate = false;
        s.position = 10.0;
        s.version += 1;
        let e = b.events(&s);
        assert!(
            e.iter().any(|e| matches!(e, Event::EngineLanded { .. })),
            "{e:?}"
        );
    }

    #[test]
    fn landing_seek_chapter_change_and_status_become_events() {
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(1), LoadId(1));
        b.heard(1, "a", 30.0, false, PlayState::Buffering);
        let e = b.heard(1, "a", 30.0, true, PlayState::Playing);
        assert_eq!(
            e,
            vec![
                Event::EngineLanded {
                    playback: PlaybackId(1),
                    spot: Spot::new("a", 30.0)
                },
                act(1, Action::Play)
            ]
        );
        let e = b.heard(1, "a", 90.0, false, PlayState::Playing);
        assert_eq!(e[0], act(1, Action::Seek(Spot::new("a", 90.0))));
        b.heard(1, "a", 90.0, true, PlayState::Playing);
        let e = b.heard(1, "b", 0.0, true, PlayState::Playing);
        assert_eq!(e[0], act(1, Action::ChapterChange(Spot::new("b", 0.0))));
        let e = b.heard(1, "b", 1.0, true, PlayState::Paused);
        assert!(e.contains(&act(1, Action::Pause)));
    }
}
