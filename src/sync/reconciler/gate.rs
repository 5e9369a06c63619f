//! Contract rule 7 after a pause or a reconnect: this device does not
//! write over the server's place, nor play on, before it has read that
//! place again.
//!
//! - A resume after a pause, and a seek the listener makes while paused,
//!   wait for a fresh read of the server's place (one read serves both:
//!   smart rewind is a paused seek right before the resume).
//! - A server record stamped later than this device's place and further
//!   than [`SAME_PLACE_SECS`] from it is shown and the listener asked, as
//!   on start (headless: followed); the engine pauses while the prompt
//!   waits. Anything else: the seek is reported, playback goes on.
//! - Offline (or when the read fails), the seek is reported all the same
//!   (the worker queues it) and playback goes on, from a place marked
//!   unconfirmed until the server answers.
//! - A write the server kept its own record against (`applied: false`)
//!   moves the player to the server's place when it is further than
//!   [`SAME_PLACE_SECS`], and says so.

use super::*;

/// A paused seek this soon after a read of the server's place (the open's
/// restore, or the read of the seek before) is reported without another:
/// the listener picked it. A resume always reads again.
pub const FRESH_MS: i64 = 3_000;

/// Places closer than this are the same place: no prompt, no move.
pub const SAME_PLACE_SECS: f64 = 5.0;

/// What waits for the server's place to be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Waiting {
    /// Play on once it is known.
    resume: bool,
    /// A place the listener sought while paused, reported once it is known.
    seek: Option<Spot>,
}

impl Waiting {
    fn is_empty(&self) -> bool {
        !self.resume && self.seek.is_none()
    }
}

impl Current {
    fn fresh(&self, now: EpochMillis) -> bool {
        self.checked_at.is_some_and(|t| now - t <= FRESH_MS)
    }

    /// Where this device is: a seek waiting to be reported, else the landed
    /// place, else the best known one.
    fn here(&self) -> Option<Spot> {
        self.waiting
            .seek
            .clone()
            .or_else(|| match self.phase {
                Phase::Live => self.position.clone(),
                _ => None,
            })
            .or_else(|| self.known.clone())
    }

    /// Written after this device's place. A record without a stamp is
    /// another device's unless it is the place this device last reported.
    fn newer(&self, p: &Progress) -> bool {
        match p.client_updated_at {
            Some(t) => t > self.mine_at,
            None => {
                let s = Spot::new(p.chapter_id.clone(), p.position);
                self.last_reported
                    .as_ref()
                    .is_none_or(|(mine, _)| self.far(mine, &s))
            }
        }
    }

    fn far(&self, a: &Spot, b: &Spot) -> bool {
        self.apart(a, b, SAME_PLACE_SECS)
    }

    /// This device's place, shown as not confirmed by the server.
    pub(super) fn unconfirmed_display(&self) -> Option<Decision> {
        let spot = self.here()?;
        Some(Decision::Display {
            book: self.book.clone(),
            spot,
            finished: self.finished,
            source: Source::LocalUnconfirmed,
        })
    }
}

impl Reconciler {
    /// A resume or a paused seek waits for the server's place.
    pub fn waiting_on_server(&self) -> bool {
        self.current.as_ref().is_some_and(|c| !c.waiting.is_empty())
    }

    /// The listener asked to play on after a pause.
    pub(super) fn resume_asked(&mut self, _now: EpochMillis, out: &mut Vec<Decision>) {
        let online = self.online;
        let cur = self.current.as_mut().expect("owned");
        let playback = cur.playback;
        match &mut cur.phase {
            // Plays once the listener answered the prompt.
            Phase::Choosing { resume, .. } => {
                *resume = true;
                return;
            }
            // Not loaded yet (the load plays), or over.
            Phase::Restoring | Phase::Closed => return,
            Phase::Landing { .. } | Phase::Live => {}
        }
        // Every resume reads the server's place, however recent the last
        // read: another device may have written since (the 3-second hole
        // of issue 29). A smart rewind's seek and the resume share one read.
        if cur.playing {
            out.push(Decision::Resume { playback });
            return;
        }
        if !online {
            // The place taken offline: unconfirmed until the server answers.
            out.push(Decision::Resume { playback });
            out.extend(cur.unconfirmed_display());
            return;
        }
        if cur.waiting.is_empty() {
            out.push(Decision::FlushThenFetch {
                book: cur.book.clone(),
            });
        }
        cur.waiting.resume = true;
    }

    /// The listener sought `target` while paused (the phase is landing on
    /// it already).
    pub(super) fn paused_seek(&mut self, target: Spot, now: EpochMillis, out: &mut Vec<Decision>) {
        let online = self.online;
        let cur = self.current.as_mut().expect("owned");
        if cur.fresh(now) || !online {
            if !online {
                out.push(Decision::Display {
                    book: cur.book.clone(),
                    spot: target.clone(),
                    finished: cur.finished,
                    source: Source::LocalUnconfirmed,
                });
            }
            self.report_spot(target, now, false, out);
            return;
        }
        if cur.waiting.is_empty() {
            out.push(Decision::FlushThenFetch {
                book: cur.book.clone(),
            });
        }
        cur.waiting.seek = Some(target);
    }

    /// The server's place could not be read (offline, a failure, an
    /// unreadable answer): a restore loads without it; else what waited
    /// goes on from this device's place, marked unconfirmed.
    pub(super) fn unanswered(&mut self, now: EpochMillis, out: &mut Vec<Decision>) {
        let cur = self.current.as_mut().expect("owned");
        if cur.phase == Phase::Restoring {
            return out.push(cur.load_without_server());
        }
        cur.checked_at = None;
        if cur.waiting.is_empty() {
            return;
        }
        out.extend(cur.unconfirmed_display());
        self.release(now, out);
    }

    /// What waited goes on: the seek is reported, playback resumes.
    fn release(&mut self, now: EpochMillis, out: &mut Vec<Decision>) {
        let cur = self.current.as_mut().expect("owned");
        let waiting = std::mem::take(&mut cur.waiting);
        let playback = cur.playback;
        if let Some(seek) = waiting.seek {
            self.report_spot(seek, now, false, out);
        }
        if waiting.resume {
            out.push(Decision::Resume { playback });
        }
    }

    /// The server's place, read again while the book plays or is paused
    /// (after a reconnect, before a resume or a paused seek is reported).
    /// The caller has shown it.
    pub(super) fn server_place(
        &mut self,
        server: Option<Progress>,
        now: EpochMillis,
        out: &mut Vec<Decision>,
    ) {
        let headless = self.config.headless;
        let cur = self.current.as_mut().expect("owned");
        if let Phase::Choosing { resume, .. } = &mut cur.phase {
            // A prompt waits already: it decides.
            *resume |= std::mem::take(&mut cur.waiting).resume;
            return;
        }
        let Some(p) = server else {
            // No record: nothing newer than this device's place.
            return self.release(now, out);
        };
        let s = Spot::new(p.chapter_id.clone(), p.position);
        let moved_on = cur.newer(&p)
            && cur
                .here()
                .is_some_and(|here| cur.far(&s, &here) && !matches!(cur.phase, Phase::Closed));
        if !moved_on {
            cur.known = Some(s);
            cur.finished = p.finished;
            return self.release(now, out);
        }
        let here = cur.here().expect("checked above");
        let waiting = std::mem::take(&mut cur.waiting);
        cur.finished = p.finished;
        cur.known = Some(s.clone());
        let playback = cur.playback;
        if headless {
            // `earmark play` follows the server.
            out.push(cur.land(s.clone()));
            cur.position = None;
            out.push(Decision::Followed {
                book: cur.book.clone(),
                spot: s,
            });
            if waiting.resume {
                out.push(Decision::Resume { playback });
            }
            return;
        }
        // Nothing is written while the listener decides.
        if cur.playing {
            out.push(Decision::Pause { playback });
        }
        let resume = waiting.resume || cur.playing;
        out.push(cur.ask(s, here, resume));
    }

    /// The server answered one of this playback's writes.
    pub(super) fn write_answered(
        &mut self,
        p: Progress,
        applied: bool,
        now: EpochMillis,
        out: &mut Vec<Decision>,
    ) {
        let cur = self.current.as_mut().expect("owned");
        if cur.manifest.position_of(&p.chapter_id).is_none() {
            return;
        }
        let s = Spot::new(p.chapter_id.clone(), p.position);
        out.push(Decision::Display {
            book: cur.book.clone(),
            spot: s.clone(),
            finished: p.finished,
            source: Source::Server,
        });
        if matches!(
            cur.phase,
            Phase::Restoring | Phase::Choosing { .. } | Phase::Closed
        ) {
            // The restore or the prompt decides where playback goes.
            return;
        }
        cur.server_checked = true;
        let here = cur.here();
        cur.known = Some(s.clone());
        cur.finished = p.finished;
        if applied {
            // The server holds this device's place now.
            return;
        }
        cur.checked_at = Some(now);
        if here.is_none_or(|h| !cur.far(&s, &h)) {
            return;
        }
        // The server kept a newer place (another device's): follow it.
        out.push(cur.land(s.clone()));
        cur.position = None;
        cur.waiting.seek = None;
        out.push(Decision::Followed {
            book: cur.book.clone(),
            spot: s,
        });
    }
}
