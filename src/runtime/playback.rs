//! The engine as the player shows it: UI engine commands become engine
//! commands, and the engine's published state becomes `Answer::Engine`
//! views of the book sync says it is playing. Progress is not reported
//! here: sync follows the engine itself.

use super::live::Shared;
use crate::player::{Command, EngineHandle, PlayerState, Status};
use crate::ui::state::{Answer, EngineCmd, EngineView, PlayState};
use std::sync::Arc;

pub(super) fn to_command(cmd: EngineCmd) -> Command {
    match cmd {
        EngineCmd::Toggle => Command::Toggle,
        EngineCmd::Pause => Command::Pause,
        EngineCmd::SkipBy(s) => Command::SkipBy(s),
        EngineCmd::NextChapter => Command::NextChapter,
        EngineCmd::PrevChapter => Command::PrevChapter,
        EngineCmd::Seek { chapter, position } => Command::Seek { chapter, position },
        EngineCmd::SetSpeed(s) => Command::SetSpeed(s),
        EngineCmd::SetVolume(v) | EngineCmd::FadeVolume(v) => Command::SetVolume(v),
        EngineCmd::SetSound(s) => Command::SetSound(s),
    }
}

fn play_state(s: &Status) -> PlayState {
    match s {
        Status::Idle => PlayState::Loading,
        Status::Playing => PlayState::Playing,
        Status::Paused => PlayState::Paused,
        Status::Buffering => PlayState::Buffering,
        Status::Stalled => PlayState::Stalled,
        Status::Ended => PlayState::Ended,
        Status::Error(e) => PlayState::Error(e.to_string()),
    }
}

/// Forwards the engine's published state to the UI: at most ~5 per second
/// unless something other than the position changed.
pub(super) async fn forward(sh: Arc<Shared>, engine: EngineHandle) {
    let mut rx = engine.subscribe();
    let mut last_sent: Option<PlayerState> = None;
    let mut sound = super::sound::Follower::default();
    loop {
        if rx.changed().await.is_err() {
            return;
        }
        let s = rx.borrow_and_update().clone();
        let Some(playing) = sh.sync().status().playing else {
            continue;
        };
        if s.playback_id != playing.engine {
            continue;
        }
        sound.update(&sh, &playing.book, &s);
        let important = last_sent.as_ref().is_none_or(|l| {
            l.status != s.status
                || l.chapter_id != s.chapter_id
                || l.playback_id != s.playback_id
                || l.speed != s.speed
                || l.volume != s.volume
        });
        let moved = last_sent
            .as_ref()
            .is_none_or(|l| (l.position - s.position).abs() >= 0.2);
        if (important || moved)
            && let Some(chapter) = s.chapter_id.clone()
        {
            sh.ui.send(Answer::Engine(EngineView {
                playback_id: s.playback_id.0,
                book: playing.book,
                chapter,
                position: s.position,
                state: play_state(&s.status),
                speed: s.speed,
                volume: s.volume,
            }));
            last_sent = Some(s);
        }
    }
}
