//! Remote control (MPRIS: media keys, `playerctl`, desktop widgets): each
//! request goes through the same reducer path as the matching key, so
//! whatever follows the keys (sync, the place history, the license stop)
//! sees it too. Next and previous mean chapters (Next in the last one
//! goes on to the book up next); play/pause while the sleep timer fades or
//! just stopped extends it, as its key does.

use super::*;
use crate::domain::JumpCause;

impl App {
    pub(super) fn remote(&mut self, cmd: RemoteCmd, fx: &mut Vec<Effect>) {
        let playing = self.playing.as_ref().map(|p| p.is_playing());
        match cmd {
            RemoteCmd::PlayPause | RemoteCmd::Play if self.sleep_remote_play(fx) => {}
            RemoteCmd::PlayPause => self.action(Action::PlayPause, fx),
            RemoteCmd::Play if playing != Some(true) => self.action(Action::PlayPause, fx),
            RemoteCmd::Pause if playing == Some(true) => self.action(Action::PlayPause, fx),
            RemoteCmd::Play | RemoteCmd::Pause => {}
            // Next in the last chapter goes on to the book up next: the
            // key's own path decides it.
            RemoteCmd::NextChapter => self.action(Action::NextChapter, fx),
            RemoteCmd::PrevChapter => self.action(Action::PrevChapter, fx),
            // The license stop answers these as it answers the skip keys.
            RemoteCmd::SkipBy(_) | RemoteCmd::SeekTo { .. } if self.license_block.is_some() => {
                self.action(Action::SkipForwardShort, fx)
            }
            RemoteCmd::SkipBy(media) => {
                if playing.is_some() && media.is_finite() {
                    self.mark_here(JumpCause::Skip, fx);
                    fx.push(Effect::Engine(EngineCmd::SkipBy(media)));
                }
            }
            RemoteCmd::SeekTo { chapter, position } => {
                let here = self.playing.as_ref().and_then(|p| p.chapter_id());
                if here == Some(&chapter) && position.is_finite() && position >= 0.0 {
                    self.mark_here(JumpCause::Seek, fx);
                    fx.push(Effect::Engine(EngineCmd::Seek { chapter, position }));
                }
            }
        }
    }
}
