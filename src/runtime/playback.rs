//! What is playing now, in the player's words: the playback owner's
//! published [`Now`] becomes `Answer::Engine` views of the book it plays
//! (at most ~5 per second unless something other than the position
//! changed), `Answer::Sound` for the book's sound, and `Answer::Resumed`
//! (when a resumed book's place was last saved) before its first view.
//! Progress is not reported here: sync follows the engine itself.

use super::shared::Shared;
use crate::playback::{Now, SoundNow};
use crate::player::{PlaybackId, PlayerState, Status};
use crate::ui::state::{Answer, EngineView, PlayState, SoundView};
use std::sync::Arc;
use tokio::sync::watch;

fn play_state(s: &Status) -> PlayState {
    match s {
        Status::Idle => PlayState::Loading,
        Status::Playing => PlayState::Playing,
        Status::Paused => PlayState::Paused,
        Status::Buffering => PlayState::Buffering,
        Status::Stalled => PlayState::Stalled,
        Status::Ended => PlayState::Ended,
        // The chapter is the bar's title: its opaque id would only crowd.
        Status::Error(e) => PlayState::Error(e.message.clone()),
    }
}

fn sound_view(book: &crate::domain::BookId, s: &SoundNow) -> SoundView {
    SoundView {
        book: Some(book.clone()),
        settings: s.settings,
        norm_gain_db: s.norm_gain_db,
        saved_book: s.saved_book,
        saved_total: s.saved_total,
    }
}

/// Worth a new `Answer::Sound`: settings, a second saved, the gain moved.
fn sound_worth(old: Option<&SoundView>, new: &SoundView) -> bool {
    old.is_none_or(|old| {
        old.book != new.book
            || old.settings != new.settings
            || (old.saved_book - new.saved_book).abs() >= 1.0
            || match (old.norm_gain_db, new.norm_gain_db) {
                (Some(a), Some(b)) => (a - b).abs() >= 0.1,
                (a, b) => a.is_some() != b.is_some(),
            }
    })
}

/// Until the owner stops publishing.
pub(super) async fn forward(sh: Arc<Shared>, mut rx: watch::Receiver<Now>) {
    let mut last_sent: Option<PlayerState> = None;
    let mut last_sound: Option<SoundView> = None;
    let mut resumed: Option<PlaybackId> = None;
    loop {
        if rx.changed().await.is_err() {
            return;
        }
        let now = rx.borrow_and_update().clone();
        if let Some((book, sound)) = &now.sound {
            let view = sound_view(book, sound);
            if sound_worth(last_sound.as_ref(), &view) {
                sh.ui.send(Answer::Sound(view.clone()));
                last_sound = Some(view);
            }
        }
        let (Some(book), Some(s)) = (now.book, now.state) else {
            continue;
        };
        if resumed != Some(s.playback_id) {
            resumed = Some(s.playback_id);
            if let Some(saved_at) = now.saved_at {
                sh.ui.send(Answer::Resumed {
                    book: book.clone(),
                    saved_at,
                });
            }
        }
        let important = last_sent.as_ref().is_none_or(|l| {
            l.status != s.status
                || l.chapter_id != s.chapter_id
                || l.playback_id != s.playback_id
                || l.speed != s.speed
                || l.volume != s.volume
                || l.approximate != s.approximate
        });
        let moved = last_sent
            .as_ref()
            .is_none_or(|l| (l.position - s.position).abs() >= 0.2);
        if (important || moved)
            && let Some(chapter) = s.chapter_id.clone()
        {
            sh.ui.send(Answer::Engine(EngineView {
                playback_id: s.playback_id.0,
                book,
                chapter,
                position: s.position,
                state: play_state(&s.status),
                speed: s.speed,
                volume: s.volume,
                approximate: s.approximate && s.landed,
            }));
            last_sent = Some(s);
        }
    }
}
