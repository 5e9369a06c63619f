//! The progress reconciler: pure logic deciding what gets reported to the
//! server and what gets displayed. No I/O, no clocks: every event carries
//! `now`, and decisions come back as values the worker carries out.
//!
//! The rules it enforces (see docs/sync.md):
//! - nothing is reported before the engine has landed on the restored (or
//!   sought) position, so a pre-landing 0 never reaches the server;
//! - a position at the very start of the book never replaces valid progress
//!   unless an explicit user intent (restart, seek to 0, mark unfinished)
//!   asked for it;
//! - after a pause or a reconnect, nothing is written and playback does not
//!   resume before the server's place was read again: a newer place further
//!   than a few seconds away is shown and the listener asked (`gate`);
//! - only the current playback reports, so book X never gets book Y's
//!   position;
//! - progress is `(chapterId, position)`, never a list index.
//!
//! - `types`: events in, decisions out;
//! - `actions`: the listener's transport actions and explicit intents;
//! - `server`: the server's answer (restore, prompt, settling a held place);
//! - `gate`: the server's place read again before a resume or a paused
//!   seek is reported, a write the server kept, the place taken offline.

use crate::domain::{BookId, ChapterId, EpochMillis, Manifest, Progress};

/// Positions below this many seconds in the first chapter count as "the
/// start of the book", the value a transient reset produces.
pub const START_EPSILON: f64 = 1.0;
/// How close a landed engine position must be to the requested target.
pub const LAND_TOLERANCE: f64 = 3.0;

mod actions;
mod gate;
mod server;
mod types;
pub use types::*;

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Waiting for the server's progress (or its failure).
    Restoring,
    /// Waiting for the user's answer; `resume`: play once answered.
    Choosing {
        server: Spot,
        local: Spot,
        resume: bool,
    },
    /// The engine was told to go to `target`; waiting for it to land.
    Landing { target: Spot },
    /// Positions from the engine are real and reportable.
    Live,
    /// The playback quit: it never reports again.
    Closed,
}

#[derive(Debug, Clone)]
struct Current {
    playback: PlaybackId,
    book: BookId,
    manifest: Manifest,
    local: Option<LocalProgress>,
    phase: Phase,
    /// Latest landed engine position.
    position: Option<Spot>,
    /// Best known valid progress (server's, local, or last reported).
    known: Option<Spot>,
    finished: bool,
    playing: bool,
    /// The next report carries `reset: true` (explicit intent came first).
    reset_pending: bool,
    /// The server answered for this playback: we know whether it holds
    /// progress. Until then a start-of-book position is never reported.
    server_checked: bool,
    /// This device had a restorable place for the book when it opened.
    had_local: bool,
    /// The server answered in a shape that could not be read: its place is
    /// unknown (not "none"), so nothing is reported until the listener
    /// picks a place (a seek or an intent) or a readable answer comes.
    server_unreadable: bool,
    last_reported: Option<(Spot, bool)>,
    last_report_at: Option<EpochMillis>,
    /// When this device's place of the book was last stamped (its cached
    /// place, then each report): a server record stamped later is newer.
    mine_at: EpochMillis,
    /// When the server's place was last read (or took ours); cleared by a
    /// pause and by going offline (`gate`).
    checked_at: Option<EpochMillis>,
    /// What waits for the server's place to be read (`gate`).
    waiting: gate::Waiting,
}

impl Current {
    /// Restoring without the server's place: this device's, else the
    /// start; the engine goes there and nothing reports before it lands.
    fn load_without_server(&mut self) -> Decision {
        let target = self
            .known
            .clone()
            .unwrap_or_else(|| start_of(&self.manifest));
        self.land(target)
    }

    /// The engine goes to `target`; nothing reports before it lands.
    fn land(&mut self, target: Spot) -> Decision {
        self.phase = Phase::Landing {
            target: target.clone(),
        };
        Decision::LoadAt {
            playback: self.playback,
            spot: target,
        }
    }

    /// The listener is asked which place wins; `resume`: play on after.
    fn ask(&mut self, server: Spot, local: Spot, resume: bool) -> Decision {
        self.phase = Phase::Choosing {
            server: server.clone(),
            local: local.clone(),
            resume,
        };
        Decision::Choose {
            book: self.book.clone(),
            server,
            local,
        }
    }

    /// Further apart than `limit` seconds (another chapter, when unknown).
    fn apart(&self, a: &Spot, b: &Spot, limit: f64) -> bool {
        match distance(&self.manifest, a, b) {
            Some(d) => d > limit,
            None => a.chapter != b.chapter,
        }
    }

    /// Opened with no local place and no answer from the server yet: the
    /// engine started from a guess (the start), so what it plays may be
    /// behind the server's progress. Reports are held on this device until
    /// the server answers; then the usual restore rules decide.
    fn unconfirmed(&self) -> bool {
        !self.server_checked && !self.had_local
    }

    /// A start-of-book place would replace progress that is further along,
    /// or progress we have not been able to check with the server.
    fn start_would_clobber(&self, spot: &Spot) -> bool {
        is_start(&self.manifest, spot)
            && (!self.server_checked
                || self
                    .known
                    .as_ref()
                    .is_some_and(|k| !is_start(&self.manifest, k)))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Reconciler {
    config: ReconcilerConfig,
    current: Option<Current>,
    online: bool,
    last_stamp: EpochMillis,
}

impl Reconciler {
    pub fn new(config: ReconcilerConfig) -> Self {
        Self {
            config,
            current: None,
            online: true,
            last_stamp: 0,
        }
    }

    /// The reconciler's own view of the link (a failed read of the
    /// server's place sets it offline).
    pub fn is_online(&self) -> bool {
        self.online
    }

    /// The playback that currently owns reporting.
    pub fn current_playback(&self) -> Option<(PlaybackId, &BookId)> {
        self.current.as_ref().map(|c| (c.playback, &c.book))
    }

    /// True once the engine has landed and positions are reportable.
    #[cfg(test)]
    pub fn is_live(&self) -> bool {
        matches!(self.current.as_ref().map(|c| &c.phase), Some(Phase::Live))
    }

    pub fn handle(&mut self, event: Event, now: EpochMillis) -> Vec<Decision> {
        let mut out = Vec::new();
        match event {
            Event::BookOpened {
                playback,
                book,
                manifest,
                local,
            } => {
                // The playback being replaced reports where it was, as its
                // own book; after this it owns nothing.
                if self
                    .current
                    .as_ref()
                    .is_some_and(|c| c.playback != playback)
                {
                    self.report_current(now, false, &mut out);
                }
                if let Some(l) = &local {
                    out.push(Decision::Display {
                        book: book.clone(),
                        spot: l.spot.clone(),
                        finished: l.finished,
                        source: Source::LocalUnconfirmed,
                    });
                }
                let known = local
                    .as_ref()
                    .filter(|l| manifest.position_of(&l.spot.chapter).is_some())
                    .map(|l| l.spot.clone());
                let mine_at = local.as_ref().map_or(0, |l| l.updated_at);
                self.current = Some(Current {
                    had_local: known.is_some(),
                    playback,
                    book,
                    manifest,
                    finished: local.as_ref().is_some_and(|l| l.finished),
                    local,
                    phase: Phase::Restoring,
                    position: None,
                    known,
                    playing: false,
                    reset_pending: false,
                    server_checked: false,
                    server_unreadable: false,
                    last_reported: None,
                    last_report_at: None,
                    mine_at,
                    checked_at: None,
                    waiting: Default::default(),
                });
            }
            Event::ServerProgress { playback, progress } => {
                if let Some(cur) = self.owned(playback) {
                    let phase = cur.phase.clone();
                    self.online = true;
                    self.on_server_progress(phase, progress, now, &mut out);
                }
            }
            Event::ServerUnreadable { playback } => {
                if let Some(cur) = self.current.as_mut().filter(|c| c.playback == playback) {
                    cur.server_unreadable = true;
                    // It answered: asking again gives the same shape.
                    cur.server_checked = true;
                    self.unanswered(now, &mut out);
                }
            }
            Event::ServerFetchFailed { playback } => {
                if self.owned(playback).is_some() {
                    self.online = false;
                    self.unanswered(now, &mut out);
                }
            }
            Event::ResumeAsked { playback } => {
                if self.owned(playback).is_some() {
                    self.resume_asked(now, &mut out);
                }
            }
            Event::WriteAnswered {
                playback,
                progress,
                applied,
            } => {
                if self.owned(playback).is_some() {
                    self.online = true;
                    self.write_answered(progress, applied, now, &mut out);
                }
            }
            Event::EnginePosition {
                playback,
                spot,
                landed,
            } => {
                if landed && self.owned(playback).is_some() {
                    self.on_landed_position(spot, false);
                }
            }
            Event::EngineLanded { playback, spot } => {
                if self.owned(playback).is_some() {
                    self.on_landed_position(spot, true);
                }
            }
            Event::Action { playback, action } => {
                if self.owned(playback).is_some() {
                    self.on_action(action, now, &mut out);
                }
            }
            Event::Intent { playback, intent } => {
                if self.owned(playback).is_some() {
                    self.on_intent(intent, now, &mut out);
                }
            }
            Event::Chose { playback, side } => {
                if let Some(cur) = self.current.as_mut()
                    && cur.playback == playback
                    && let Phase::Choosing {
                        server,
                        local,
                        resume,
                    } = cur.phase.clone()
                {
                    let target = match side {
                        Side::Server => server,
                        Side::Local => local,
                    };
                    cur.known = Some(target.clone());
                    out.push(cur.land(target));
                    // The listener answered: the server's place is settled.
                    cur.checked_at = Some(now);
                    if resume {
                        out.push(Decision::Resume { playback });
                    }
                    if side == Side::Local {
                        // Picking this device's place is an explicit choice:
                        // it may move the server backwards, and whatever the
                        // server held when it was made is older than it (a
                        // resume before its write lands does not ask again).
                        cur.reset_pending = true;
                        cur.last_reported = None;
                        cur.mine_at = cur.mine_at.max(now);
                    }
                }
            }
            Event::Tick => {
                let due = self.current.as_ref().is_some_and(|c| {
                    c.playing
                        && c.last_report_at
                            .is_none_or(|t| now - t >= self.config.report_interval_ms)
                });
                if due {
                    self.report_current(now, false, &mut out);
                }
            }
            Event::Online => {
                if !self.online {
                    self.online = true;
                    if let Some(c) = &self.current {
                        out.push(Decision::FlushThenFetch {
                            book: c.book.clone(),
                        });
                    }
                }
            }
            Event::Offline => {
                let was_online = std::mem::replace(&mut self.online, false);
                if let Some(c) = self.current.as_mut() {
                    // What is played from now on is unconfirmed.
                    c.checked_at = None;
                    if was_online && c.phase == Phase::Live {
                        out.extend(c.unconfirmed_display());
                    }
                }
            }
        }
        out
    }

    fn owned(&self, playback: PlaybackId) -> Option<&Current> {
        self.current.as_ref().filter(|c| c.playback == playback)
    }

    fn on_landed_position(&mut self, spot: Spot, explicit: bool) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        if !spot.position.is_finite() || spot.position < 0.0 {
            return;
        }
        if cur.manifest.position_of(&spot.chapter).is_none() {
            return;
        }
        match &cur.phase {
            Phase::Restoring | Phase::Choosing { .. } | Phase::Closed => {}
            Phase::Landing { target } => {
                let near = spot.chapter == target.chapter
                    && (spot.position - target.position).abs() <= LAND_TOLERANCE;
                if near || explicit {
                    cur.phase = Phase::Live;
                    cur.position = Some(spot.clone());
                    if cur.known.is_none() {
                        cur.known = Some(spot);
                    }
                }
            }
            Phase::Live => {
                // A landed reading at the very start while valid progress is
                // further along is a transient reset, not the listener.
                if !cur.reset_pending && cur.start_would_clobber(&spot) {
                    return;
                }
                cur.position = Some(spot);
            }
        }
    }

    /// Reports the current landed position if it is reportable and changed.
    fn report_current(&mut self, now: EpochMillis, force: bool, out: &mut Vec<Decision>) {
        let Some(cur) = self.current.as_ref() else {
            return;
        };
        if cur.phase != Phase::Live {
            return;
        }
        let Some(spot) = cur.position.clone() else {
            return;
        };
        self.report_spot(spot, now, force, out);
    }

    /// Reports `spot` (a landed position, or the target of a seek the
    /// listener made while paused) if it is reportable and changed.
    fn report_spot(&mut self, spot: Spot, now: EpochMillis, force: bool, out: &mut Vec<Decision>) {
        let Some(cur) = self.current.as_ref() else {
            return;
        };
        let unchanged = cur
            .last_reported
            .as_ref()
            .is_some_and(|(s, f)| *s == spot && *f == cur.finished);
        if unchanged && !force {
            // The server has this very place already: an explicit move to
            // it is done, and never carried into a later report.
            if let Some(cur) = self.current.as_mut() {
                cur.reset_pending = false;
            }
            return;
        }
        let reset = cur.reset_pending;
        if !reset && cur.start_would_clobber(&spot) {
            return;
        }
        let finished = cur.finished;
        if !reset && (cur.unconfirmed() || cur.server_unreadable) {
            // Kept on this device only until the server has answered.
            let book = cur.book.clone();
            let at = now.max(self.last_stamp + 1);
            let cur = self.current.as_mut().expect("owned");
            cur.last_report_at = Some(now);
            cur.mine_at = cur.mine_at.max(at);
            out.push(Decision::Hold(ProgressWrite {
                book,
                spot,
                finished,
                reset: false,
                client_updated_at: at,
            }));
            return;
        }
        let write = self.stamp(spot, finished, reset, now);
        out.push(Decision::Report(write));
    }

    /// True while the current playback plays (its reports are periodic).
    pub fn playing(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.playing)
    }

    /// The current playback, while its server progress is still unknown
    /// (the worker keeps asking until the server answers).
    pub fn awaiting_server(&self) -> Option<(PlaybackId, &BookId)> {
        self.current
            .as_ref()
            .filter(|c| !c.server_checked && c.phase != Phase::Closed)
            .map(|c| (c.playback, &c.book))
    }

    /// Builds a write with a strictly increasing timestamp (the server keeps
    /// the stored record on equal timestamps) and records it as reported.
    fn stamp(
        &mut self,
        spot: Spot,
        finished: bool,
        reset: bool,
        now: EpochMillis,
    ) -> ProgressWrite {
        let ts = now.max(self.last_stamp + 1);
        self.last_stamp = ts;
        let cur = self.current.as_mut().expect("owned");
        cur.last_reported = Some((spot.clone(), finished));
        cur.last_report_at = Some(now);
        cur.mine_at = cur.mine_at.max(ts);
        cur.known = Some(spot.clone());
        cur.reset_pending = false;
        ProgressWrite {
            book: cur.book.clone(),
            spot,
            finished,
            reset,
            client_updated_at: ts,
        }
    }
}

/// The first chapter at 0 s.
pub fn start_of(manifest: &Manifest) -> Spot {
    match manifest.items.first() {
        Some(i) => Spot::new(i.chapter_id.clone(), 0.0),
        None => Spot::new(ChapterId::new(""), 0.0),
    }
}

/// True for a place at the very start of the book.
pub fn is_start(manifest: &Manifest, spot: &Spot) -> bool {
    spot.position < START_EPSILON
        && manifest
            .items
            .first()
            .is_some_and(|i| i.chapter_id == spot.chapter)
}

/// Seconds between two places, when the chapter durations are known.
fn distance(manifest: &Manifest, a: &Spot, b: &Spot) -> Option<f64> {
    if a.chapter == b.chapter {
        return Some((a.position - b.position).abs());
    }
    let pa = manifest.book_position(&a.chapter, a.position)?;
    let pb = manifest.book_position(&b.chapter, b.position)?;
    Some((pa - pb).abs())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;

#[cfg(test)]
mod jumps;

#[cfg(test)]
mod rule7;
