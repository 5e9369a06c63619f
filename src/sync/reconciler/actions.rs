//! The listener's transport actions (play, pause, seek, chapter change,
//! the end) and explicit intents (restart, mark (un)finished): what each
//! reports, under the module's rules (`mod.rs`).

use super::*;

impl Reconciler {
    pub(super) fn on_action(&mut self, action: Action, now: EpochMillis, out: &mut Vec<Decision>) {
        let picked = matches!(action, Action::Seek(_));
        let cur = self.current.as_mut().expect("owned");
        match action {
            Action::Play => cur.playing = true,
            Action::Pause => {
                self.report_current(now, false, out);
                let cur = self.current.as_mut().expect("owned");
                cur.playing = false;
                // Another device may write while this one is paused.
                cur.checked_at = None;
            }
            Action::Stop | Action::Quit => {
                self.report_current(now, false, out);
                let cur = self.current.as_mut().expect("owned");
                cur.playing = false;
                cur.checked_at = None;
                if action == Action::Quit {
                    // Nothing from this playback may report after quitting.
                    cur.phase = Phase::Closed;
                }
            }
            Action::Seek(target) | Action::ChapterChange(target) => {
                // Report where the listener was, then wait for the engine to
                // land on the new place before reporting again.
                self.report_current(now, false, out);
                let cur = self.current.as_mut().expect("owned");
                if picked {
                    // The listener picked a place: theirs to report.
                    cur.server_unreadable = false;
                }
                if cur.manifest.position_of(&target.chapter).is_none() {
                    return;
                }
                if is_start(&cur.manifest, &target) {
                    // A user seek to the very start is an explicit intent.
                    cur.reset_pending = true;
                }
                if matches!(cur.phase, Phase::Live | Phase::Landing { .. }) {
                    cur.phase = Phase::Landing {
                        target: target.clone(),
                    };
                    if !cur.playing {
                        // Paused, the engine may never land (offline): the
                        // listener's own place is reported at once.
                        self.paused_seek(target, now, out);
                    }
                }
            }
            Action::Ended => {
                if cur.phase == Phase::Live
                    && let Some(pos) = cur.position.clone()
                {
                    cur.finished = true;
                    if cur.unconfirmed() {
                        cur.last_reported = None;
                        self.report_current(now, false, out);
                    } else {
                        let write = self.stamp(pos, true, false, now);
                        out.push(Decision::Report(write));
                    }
                }
                let cur = self.current.as_mut().expect("owned");
                cur.playing = false;
            }
        }
    }

    pub(super) fn on_intent(&mut self, intent: Intent, now: EpochMillis, out: &mut Vec<Decision>) {
        let cur = self.current.as_mut().expect("owned");
        cur.server_unreadable = false;
        match intent {
            Intent::RestartBook => {
                let target = start_of(&cur.manifest);
                cur.finished = false;
                cur.known = Some(target.clone());
                let load = cur.land(target.clone());
                cur.position = None;
                cur.reset_pending = false;
                let write = self.stamp(target, false, true, now);
                out.push(Decision::Report(write));
                out.push(load);
            }
            Intent::MarkFinished | Intent::MarkUnfinished => {
                let finished = intent == Intent::MarkFinished;
                let spot = cur
                    .position
                    .clone()
                    .or_else(|| cur.known.clone())
                    .unwrap_or_else(|| start_of(&cur.manifest));
                cur.finished = finished;
                let write = self.stamp(spot, finished, !finished, now);
                out.push(Decision::Report(write));
            }
        }
    }
}
