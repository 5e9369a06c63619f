//! The audio engine as sync sees it: [`EngineLink`], its published states
//! and a way to ask it for what sync decides ([`EngineAsk`]; sync never
//! commands it), and [`EngineBridge`], which turns those states into
//! reconciler events: pure, so the mapping is testable without audio.
//! Only states of the engine playback that was loaded for *our* playback
//! are forwarded; a state from an earlier load (another book) is dropped
//! here, and again by the reconciler's ownership check.

use super::reconciler::{Action, Event, PlaybackId, Spot};
use crate::domain::{ChapterId, Manifest};
use crate::player::{PlaybackId as EngineId, PlayerState, Status};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::watch;

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

/// The audio engine as sync sees it: its published states, and a way to
/// ask it for what sync decides ([`EngineAsk`]). Clones share one count of
/// the loads asked for, which is how the engine numbers its playbacks, so
/// a state is attributed exactly.
#[derive(Clone)]
pub struct EngineLink {
    states: watch::Receiver<PlayerState>,
    ask: Arc<dyn Fn(EngineAsk) + Send + Sync>,
    loads: Arc<AtomicU64>,
}

impl EngineLink {
    /// `states` is the engine's published state; `ask` hands a request to
    /// whoever commands the engine. Every load the engine gets must be
    /// asked through this link.
    pub fn new(
        states: watch::Receiver<PlayerState>,
        ask: impl Fn(EngineAsk) + Send + Sync + 'static,
    ) -> Self {
        let loads = states.borrow().playback_id.0;
        Self {
            states,
            ask: Arc::new(ask),
            loads: Arc::new(AtomicU64::new(loads)),
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
        before: impl FnOnce(EngineId),
    ) -> EngineId {
        let id = EngineId(self.loads.fetch_add(1, Ordering::SeqCst) + 1);
        before(id);
        self.ask(EngineAsk::Load { manifest, start });
        id
    }

    pub(super) fn states(&self) -> watch::Receiver<PlayerState> {
        self.states.clone()
    }
}

/// How far a paused engine's place may drift (the output draining) before
/// a move counts as a seek.
const PAUSED_STILL: f64 = 0.5;

#[derive(Debug, Default)]
pub struct EngineBridge {
    /// Our playback, and the engine id its `Load` produced (once seen).
    ours: Option<(PlaybackId, Option<EngineId>)>,
    /// Engine ids up to this one belong to earlier loads.
    before: EngineId,
    last: Option<PlayerState>,
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
    pub fn loading_as(&mut self, ours: PlaybackId, engine_id: EngineId) {
        self.ours = Some((ours, Some(engine_id)));
        self.before = EngineId(engine_id.0.saturating_sub(1));
        self.last = None;
        self.last_unlanded = false;
    }

    /// Events for one published state (call on every change). A place the
    /// engine cannot vouch for (`approximate`: a far seek in a VBR mp3
    /// estimated from its table of contents) counts as not landed, so it is
    /// never reported as if it were exact.
    pub fn events(&mut self, s: &PlayerState) -> Vec<Event> {
        let mut out = Vec::new();
        let unlanded = !s.landed;
        let vouched;
        let s = if s.approximate && s.landed {
            vouched = PlayerState {
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
        if s.playback_id <= self.before {
            return out;
        }
        match engine_id {
            None => *engine_id = Some(s.playback_id),
            Some(id) if *id != s.playback_id => return out,
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
            .chapter_id
            .clone()
            .filter(|_| s.position.is_finite() && s.position >= 0.0)
            .map(|c| Spot::new(c, s.position));
        if let (Some(p), Some(spot)) = (&prev, &spot) {
            if p.chapter_id.as_ref() != Some(&spot.chapter) {
                out.push(action(Action::ChapterChange(spot.clone())));
            } else if p.landed && !s.landed {
                // A seek: the engine publishes the target until it lands.
                out.push(action(Action::Seek(spot.clone())));
            } else if was_unlanded && unlanded && p.position != spot.position {
                // Another seek before the last one landed (paused offline,
                // the engine cannot): a new target.
                out.push(action(Action::Seek(spot.clone())));
            } else if p.status == Status::Paused
                && s.status == Status::Paused
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
        let was = prev.as_ref().map(|p| &p.status);
        if was != Some(&s.status) {
            match &s.status {
                Status::Playing => out.push(action(Action::Play)),
                Status::Paused => out.push(action(Action::Pause)),
                Status::Ended => out.push(action(Action::Ended)),
                Status::Idle | Status::Error(_) => out.push(action(Action::Stop)),
                Status::Buffering | Status::Stalled => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ChapterId;

    fn state(id: u64, ch: &str, pos: f64, landed: bool, status: Status) -> PlayerState {
        PlayerState {
            playback_id: EngineId(id),
            chapter_id: Some(ChapterId::new(ch)),
            position: pos,
            landed,
            status,
            ..PlayerState::default()
        }
    }

    #[test]
    fn states_of_an_earlier_load_are_dropped() {
        let mut b = EngineBridge::new();
        assert!(
            b.events(&state(1, "a", 5.0, true, Status::Playing))
                .is_empty()
        );
        b.loading_as(PlaybackId(7), EngineId(2));
        assert!(
            b.events(&state(1, "a", 6.0, true, Status::Playing))
                .is_empty()
        );
        let e = b.events(&state(2, "b", 30.0, false, Status::Buffering));
        assert_eq!(
            e,
            vec![Event::EnginePosition {
                playback: PlaybackId(7),
                spot: Spot::new("b", 30.0),
                landed: false
            }]
        );
    }

    #[test]
    fn a_load_still_in_flight_is_not_taken_for_ours() {
        // A's load (engine id 2) was sent but the engine still publishes
        // id 1 when B's load (id 3) is sent: states of 2 are A's.
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(8), EngineId(3));
        assert!(
            b.events(&state(2, "a", 40.0, true, Status::Playing))
                .is_empty()
        );
        let e = b.events(&state(3, "b", 7.0, false, Status::Buffering));
        assert_eq!(
            e,
            vec![Event::EnginePosition {
                playback: PlaybackId(8),
                spot: Spot::new("b", 7.0),
                landed: false
            }]
        );
    }

    #[test]
    fn a_second_seek_before_the_first_landed_is_a_seek_too() {
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(1), EngineId(1));
        b.events(&state(1, "a", 30.0, true, Status::Paused));
        let seek = |to: f64| Event::Action {
            playback: PlaybackId(1),
            action: Action::Seek(Spot::new("a", to)),
        };
        // Paused and offline: the engine publishes each target, never lands.
        assert!(
            b.events(&state(1, "a", 20.0, false, Status::Paused))
                .contains(&seek(20.0))
        );
        assert!(
            b.events(&state(1, "a", 10.0, false, Status::Paused))
                .contains(&seek(10.0))
        );
        // The same target again is no new seek.
        let mut again = state(1, "a", 10.0, false, Status::Paused);
        again.version += 1;
        again.buffered_to = 12.0;
        assert!(!b.events(&again).contains(&seek(10.0)));
        // Landed at once, its target never seen: a paused move is a seek.
        b.events(&state(1, "a", 10.0, true, Status::Paused));
        assert!(
            b.events(&state(1, "a", 40.0, true, Status::Paused))
                .contains(&seek(40.0))
        );
    }

    #[test]
    fn an_approximate_place_never_lands() {
        let mut b = EngineBridge::new();
        b.loading_as(PlaybackId(1), EngineId(1));
        let mut s = state(1, "a", 4000.0, true, Status::Playing);
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
        b.loading_as(PlaybackId(1), EngineId(1));
        b.events(&state(1, "a", 30.0, false, Status::Buffering));
        let e = b.events(&state(1, "a", 30.0, true, Status::Playing));
        assert_eq!(
            e,
            vec![
                Event::EngineLanded {
                    playback: PlaybackId(1),
                    spot: Spot::new("a", 30.0)
                },
                Event::Action {
                    playback: PlaybackId(1),
                    action: Action::Play
                }
            ]
        );
        let e = b.events(&state(1, "a", 90.0, false, Status::Playing));
        assert_eq!(
            e[0],
            Event::Action {
                playback: PlaybackId(1),
                action: Action::Seek(Spot::new("a", 90.0))
            }
        );
        b.events(&state(1, "a", 90.0, true, Status::Playing));
        let e = b.events(&state(1, "b", 0.0, true, Status::Playing));
        assert_eq!(
            e[0],
            Event::Action {
                playback: PlaybackId(1),
                action: Action::ChapterChange(Spot::new("b", 0.0))
            }
        );
        let e = b.events(&state(1, "b", 1.0, true, Status::Paused));
        assert!(e.contains(&Event::Action {
            playback: PlaybackId(1),
            action: Action::Pause
        }));
    }
}
