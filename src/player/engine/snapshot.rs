//! What the engine publishes: its [`PlayerState`] snapshot, with each
//! chapter's length as its stream says once decoded (the manifest's
//! before) and whether the place playing is an estimate.

use super::{EngineLoop, manifest_length};
use crate::domain::locks::lock;
use crate::player::render::RenderStatus;
use crate::player::{PlaybackId, PlayerState, Status};

impl EngineLoop {
    /// Chapter `i`'s length: as its stream says once decoded, else as the
    /// manifest says.
    pub(super) fn length(&self, i: usize) -> Option<f64> {
        let item = self.item(i)?;
        let measured = lock(&self.lengths).get(&item.chapter_id).copied();
        measured.or_else(|| manifest_length(item))
    }

    /// Seconds from the book's start to `position` in chapter `i`, with
    /// the measured lengths of earlier chapters where known (the
    /// manifest's where not), when every earlier length is known.
    fn book_position(&self, i: usize, position: f64) -> Option<f64> {
        let before: Option<f64> = (0..i)
            .map(|j| {
                let item = self.item(j)?;
                lock(&self.lengths)
                    .get(&item.chapter_id)
                    .copied()
                    .or(item.duration)
            })
            .sum();
        Some(before? + position)
    }

    fn snapshot(&self) -> PlayerState {
        let r: RenderStatus = self.renderer.status();
        let same_gen = r.generation == self.generation;
        let played = if same_gen { r.position.clone() } else { None };
        let (chapter, position, landed) = match (&played, &self.target) {
            (Some((c, p)), _) => (Some(c.clone()), *p, true),
            (None, Some((c, p))) => (
                Some(c.clone()),
                *p,
                same_gen && r.buffered_to.is_some() && !self.playing,
            ),
            (None, None) => (None, 0.0, false),
        };
        let index = chapter
            .as_ref()
            .and_then(|c| self.manifest.as_ref().and_then(|m| m.position_of(c)));
        let duration = index.and_then(|i| self.length(i));
        let book_position = index.and_then(|i| self.book_position(i, position));
        let stalled = self.pipeline.as_ref().is_some_and(|p| p.stalled());
        // The audio playing says; before it plays, the landing does.
        let approximate = chapter.is_some()
            && same_gen
            && match &played {
                Some(_) => r.approximate,
                None => self.pipeline.as_ref().is_some_and(|p| p.approximate()),
            };
        let status = if let Some(e) =
            self.error
                .clone()
                .or(if same_gen { r.error.clone() } else { None })
        {
            Status::Error(e)
        } else if self.manifest.is_none() {
            Status::Idle
        } else if same_gen && r.ended {
            Status::Ended
        } else if !self.playing {
            Status::Paused
        } else if played.is_none() || r.underrun {
            if stalled {
                Status::Stalled
            } else {
                Status::Buffering
            }
        } else {
            Status::Playing
        };
        let buffered_to = r
            .buffered_to
            .filter(|_| same_gen)
            .map_or(position, |b| b.max(position));
        PlayerState {
            playback_id: PlaybackId(self.playback_id),
            version: self.version,
            status,
            chapter_id: chapter,
            position,
            book_position,
            duration,
            buffered_to,
            landed,
            approximate,
            speed: self.speed,
            volume: self.volume,
            sound: self.sound,
            silence_skipped: (r.silence_skipped - self.skipped_at_load).max(0.0),
            norm_gain_db: r.norm_gain_db,
        }
    }

    /// Publish the current snapshot; returns its status.
    pub(super) fn publish(&mut self) -> Status {
        let mut s = self.snapshot();
        let status = s.status.clone();
        let version = &mut self.version;
        self.tx.send_if_modified(|cur| {
            s.version = cur.version;
            if *cur == s {
                return false;
            }
            *version += 1;
            s.version = *version;
            *cur = s;
            true
        });
        status
    }
}
