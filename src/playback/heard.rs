//! The engine's states, followed by the owner alone: each goes to sync as
//! what was [`Heard`] (sync never watches the engine), the session's load
//! drives the sleep timer, smart rewind, up next at the book's end and
//! each book's sound, and the [`Snapshot`] every client draws is built
//! here from it, sync's status and the session's own state.

use super::owner::Owner;
use super::{Stop, engine, stop};
use crate::domain::rewind::{Flow, Rewound};
use crate::domain::session::{
    Landing, LengthFrom, Link, Listening, PlayState, Queue, Said, Snapshot,
};
use crate::domain::sleep::{Playing, SleepAct, minute_of_day};
use crate::domain::{ChapterId, JumpCause, now_millis, utc_offset_secs};
use crate::player::{ErrorKind, PlaybackError, PlayerState, Status};
use crate::sync::{Heard, LoadId};

pub(super) fn play_state(s: &Status) -> PlayState {
    match s {
        Status::Idle => PlayState::Loading,
        Status::Playing => PlayState::Playing,
        Status::Paused => PlayState::Paused,
        Status::Buffering => PlayState::Buffering,
        Status::Stalled => PlayState::Stalled,
        Status::Ended => PlayState::Ended,
        Status::Error(e) => PlayState::Error(e.message.clone()),
    }
}

/// What sync needs of one engine state.
fn heard(s: &PlayerState) -> Heard {
    Heard {
        load: LoadId(s.playback_id.0),
        version: s.version,
        state: play_state(&s.status),
        chapter: s.chapter_id.clone(),
        position: s.position,
        landed: s.landed,
        approximate: s.approximate,
        speed: s.speed,
        volume: s.volume,
    }
}

fn flow(s: &Status) -> Flow {
    match s {
        Status::Playing => Flow::Playing,
        Status::Paused => Flow::Paused,
        Status::Stalled | Status::Error(_) => Flow::Interrupted,
        _ => Flow::Other,
    }
}

impl Owner {
    /// One published engine state.
    pub(super) fn engine_state(&mut self, s: PlayerState) {
        // Every state reaches sync; it drops other loads' itself.
        self.sync().heard(heard(&s));
        let ours = self
            .playing
            .as_ref()
            .is_some_and(|p| p.engine.0 == s.playback_id.0);
        if !ours {
            return;
        }
        let before = self.heard.replace(s.clone());
        let was = before.as_ref().map(|b| &b.status);
        if was != Some(&s.status) {
            if let Status::Error(e) = &s.status {
                self.engine_failed(e);
            }
            if let (Status::Buffering | Status::Stalled, Some(e)) = (&s.status, &self.engine) {
                self.follow.waiting(e, &self.client, &s);
            }
            if s.status == Status::Playing {
                self.want_details();
            }
        }
        if let Some(book) = self.book_id() {
            self.sound = self.sounds.follow(self.engine.as_ref(), &book, &s);
            let r = self
                .rewind
                .follow(&book, flow(&s.status), s.position, now_millis());
            if let (Some(r), Some(chapter)) = (r, s.chapter_id.clone()) {
                self.rewind_by(r, chapter, s.position);
            }
        }
        // Started: a load's first audio, or a play after a pause; not a
        // seek's or a stall's return.
        let playing = s.status == Status::Playing;
        let started =
            playing && (!self.load_played || !was.is_some_and(|w| play_state(w).is_playing()));
        self.load_played |= playing;
        let chapter_changed = before
            .as_ref()
            .and_then(|b| b.chapter_id.as_ref())
            .is_some_and(|c| Some(c) != s.chapter_id.as_ref());
        self.look_at_sleep(started, chapter_changed);
        if s.status == Status::Ended && was != Some(&Status::Ended) {
            self.book_ended();
        }
    }

    fn engine_failed(&mut self, e: &PlaybackError) {
        let reason = stop::of_engine(e.kind);
        match e.kind {
            ErrorKind::LicenseRequired => {
                self.sync().stream_refused(true, e.message.clone());
                self.stop(Stop::new(reason, e.message.clone()), true)
            }
            // Sync reads the license status and says which stop it is.
            ErrorKind::Forbidden => self.sync().stream_refused(false, e.to_string()),
            _ => {
                if reason == super::StopReason::Network {
                    // The stream found the server away: sync shows it offline.
                    self.sync().server_lost(e.to_string());
                }
                self.stop(Stop::new(reason, e.to_string()), false)
            }
        }
    }

    /// What the sleep timer needs of playback now.
    pub(super) fn look(&self, started: bool, chapter_changed: bool) -> Playing {
        let s = self.heard.as_ref();
        let now = now_millis();
        let chapter_left = s.and_then(|s| {
            let d = s.duration?;
            Some((d - s.position).max(0.0) / f64::from(s.speed.max(0.1)))
        });
        Playing {
            now,
            playing: s.is_some_and(|s| s.status == Status::Playing),
            started,
            chapter_changed,
            chapter_left,
            volume: self.volume,
            minute: minute_of_day(now, utc_offset_secs(now / 1000)),
        }
    }

    pub(super) fn look_at_sleep(&mut self, started: bool, chapter_changed: bool) {
        let acts = self.sleep.follow(&self.look(started, chapter_changed));
        self.sleep_acts(acts);
    }

    pub(super) fn sleep_acts(&mut self, acts: Vec<SleepAct>) {
        for a in acts {
            match a {
                SleepAct::Fade(v) => {
                    if let Some(e) = &self.engine {
                        engine::fade(e, v);
                    }
                }
                SleepAct::Pause => {
                    self.mark_here(JumpCause::Sleep);
                    if let Some(e) = &self.engine {
                        e.send(crate::player::Command::Pause);
                    }
                    self.sync().flush();
                }
                SleepAct::Play => self.sync().resume(),
                SleepAct::Said(n) => self.say(Said::Sleep(n)),
            }
        }
    }

    /// Smart rewind: a seek the listener could have made.
    pub(super) fn rewind_by(&mut self, r: Rewound, chapter: ChapterId, position: f64) {
        self.mark_here(JumpCause::Rewind);
        let c = match r.past_chapter_start {
            true => crate::player::Command::SkipBy(-r.back),
            false => crate::player::Command::Seek {
                chapter,
                position: position - r.back,
            },
        };
        if let Some(e) = &self.engine {
            e.send(c);
        }
        self.say(Said::Rewound {
            back: r.back,
            after: r.after,
        });
    }

    /// The session's book as clients see it.
    fn listening(&self) -> Option<Listening> {
        let b = self.book.as_ref()?;
        let h = self.heard.as_ref();
        let shown = self
            .sync_status
            .shown
            .as_ref()
            .filter(|x| x.book == b.info.id);
        let place = h
            .and_then(|h| Some((h.chapter_id.clone()?, h.position)))
            .or_else(|| shown.map(|x| (x.spot.chapter.clone(), x.spot.position)))
            .or_else(|| b.ready_at.clone())
            .or_else(|| Some((b.manifest.items.first()?.chapter_id.clone(), 0.0)))?;
        let item = b.manifest.items.iter().find(|i| i.chapter_id == place.0);
        let server_length = item.and_then(|i| i.duration);
        let measured = h
            .and_then(|h| h.duration)
            .filter(|d| Some(*d) != server_length);
        Some(Listening {
            book: b.info.clone(),
            manifest: b.manifest.clone(),
            chapter: place.0,
            position: place.1,
            duration: measured.or(server_length),
            duration_from: match measured {
                Some(_) => LengthFrom::Measured,
                None => LengthFrom::Server,
            },
            book_position: h.and_then(|h| h.book_position),
            state: match (b.opened, h) {
                (false, _) => PlayState::Ready,
                (true, Some(h)) => play_state(&h.status),
                (true, None) => PlayState::Loading,
            },
            landed: match h {
                Some(h) if !h.landed => Landing::Pending,
                Some(h) if h.approximate => Landing::Approximate,
                Some(_) => Landing::Exact,
                None => Landing::Pending,
            },
            confirmed: shown.is_some_and(|x| x.source == crate::sync::Source::Server),
            speed: h.map_or(1.0, |h| h.speed),
            volume: self.volume,
            sound: crate::domain::session::SoundNow {
                skipped_now: h.map_or(0.0, |h| h.silence_skipped),
                ..self.sound
            },
            load: self.playing.as_ref().map_or(0, |p| p.engine.0),
            from_download: b.from_download,
        })
    }

    /// Publishes the snapshot when anything in it changed.
    pub(super) fn publish(&mut self) {
        let s = &self.sync_status;
        let link = match &s.link {
            crate::sync::Link::Online => Link::Online,
            crate::sync::Link::Offline => Link::Offline,
            crate::sync::Link::Throttled(t) => Link::Throttled(t.slowdown()),
            crate::sync::Link::NeedsLogin { .. } => Link::NeedsLogin,
            crate::sync::Link::LicenseBlocked { .. } => Link::LicenseStopped,
        };
        let next = Snapshot {
            listening: self.listening(),
            link,
            queue: Queue {
                queued: s.queued,
                refused: s.refused,
                held: s.held,
                not_durable: s.in_memory(),
            },
            sleep: self.sleep.timer,
            up_next: self.up_next.now(),
            downloads: self.downloads.marks(),
            stop: self.stopped.get(&super::StopReason::License).cloned(),
            no_audio: self.snap.borrow().no_audio.clone(),
        };
        self.snap.send_if_modified(|old| {
            let changed = *old != next;
            if changed {
                *old = next;
            }
            changed
        });
    }
}
