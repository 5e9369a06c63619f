//! The server's answer for the playing book: where a restore lands (the
//! server's place, this device's, a prompt when they are far apart), and
//! how a place held while the server was unknown is settled. The rules
//! are the module's (see `mod.rs`); this is where the answer arrives.

use super::*;

impl Reconciler {
    pub(super) fn on_server_progress(
        &mut self,
        phase: Phase,
        progress: Option<Progress>,
        now: EpochMillis,
        out: &mut Vec<Decision>,
    ) {
        let threshold = self.config.prompt_threshold_secs;
        let headless = self.config.headless;
        let cur = self.current.as_mut().expect("owned");
        let was_unconfirmed = cur.unconfirmed();
        cur.server_checked = true;
        cur.checked_at = Some(now);
        cur.server_unreadable = false;
        // A record naming a chapter outside the manifest cannot be restored.
        let server = progress.filter(|p| cur.manifest.position_of(&p.chapter_id).is_some());
        if let Some(p) = &server {
            out.push(Decision::Display {
                book: cur.book.clone(),
                spot: Spot::new(p.chapter_id.clone(), p.position),
                finished: p.finished,
                source: Source::Server,
            });
        }
        if phase != Phase::Restoring {
            if was_unconfirmed && matches!(phase, Phase::Live | Phase::Landing { .. }) {
                // The first answer after an offline open from a guess: the
                // held place is this device's side of a restore.
                self.settle_unconfirmed(server, now, out);
                // What waited for it goes on, or waits for the prompt.
                return self.server_place(None, now, out);
            }
            // After a reconnect, before a resume or a paused seek: the
            // server's answer (shown above) against this device's place.
            return self.server_place(server, now, out);
        }
        let server_spot = server
            .as_ref()
            .map(|p| Spot::new(p.chapter_id.clone(), p.position));
        let local_spot = cur
            .local
            .as_ref()
            .map(|l| l.spot.clone())
            .filter(|s| cur.manifest.position_of(&s.chapter).is_some());
        if let Some(p) = &server {
            cur.finished = p.finished;
        }
        let target = match (server_spot, local_spot) {
            (Some(s), Some(l)) => {
                let far = cur.apart(&s, &l, threshold);
                if far && !headless {
                    return out.push(cur.ask(s, l, false));
                }
                if far {
                    // Headless: the server's newer place wins; say so
                    // (this device's went to the place history).
                    out.push(Decision::Followed {
                        book: cur.book.clone(),
                        spot: s.clone(),
                    });
                }
                // Close enough, or headless: the server owns the merge.
                s
            }
            (Some(s), None) => s,
            (None, Some(l)) => l,
            (None, None) => start_of(&cur.manifest),
        };
        cur.known = Some(target.clone());
        out.push(cur.land(target));
    }

    /// The server answered for a playback that started offline from a
    /// guess. Its record wins unless there is none: far apart, the user is
    /// asked (headless: the engine is sent to the server's place and
    /// nothing else is reported); close, the held place is reported and the
    /// server merges; no record, the held place is reported now.
    pub(super) fn settle_unconfirmed(
        &mut self,
        server: Option<Progress>,
        now: EpochMillis,
        out: &mut Vec<Decision>,
    ) {
        let threshold = self.config.prompt_threshold_secs;
        let headless = self.config.headless;
        let cur = self.current.as_mut().expect("owned");
        let Some(p) = server else {
            if cur.position.is_some() {
                cur.last_reported = None;
                self.report_current(now, false, out);
            }
            return;
        };
        let s = Spot::new(p.chapter_id.clone(), p.position);
        cur.finished = p.finished;
        let here = match (&cur.phase, cur.position.clone()) {
            (Phase::Live, Some(here)) => Some(here),
            _ => None,
        };
        let far = here.as_ref().is_none_or(|h| cur.apart(&s, h, threshold));
        cur.known = Some(s.clone());
        match here {
            Some(here) if far && !headless => out.push(cur.ask(s, here, false)),
            Some(_) if !far => {
                // Close: the held place goes out; the server merges.
                cur.last_reported = None;
            }
            _ => {
                // Not landed yet, or headless: follow the server.
                out.push(cur.land(s));
                cur.position = None;
            }
        }
    }
}
