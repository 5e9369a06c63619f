//! The reducer's part for the book screen's cover: ask for it once the
//! book is known and the cover box is on screen; take the answer.

use super::*;
use crate::ui::covers::CoverState;
use crate::ui::views::{cover, layout::Areas};

impl App {
    /// Asks for the open book's cover when its box is shown and it was
    /// not asked for yet (a resize may show the box later).
    pub(super) fn want_cover(&mut self, fx: &mut Vec<Effect>) {
        if self.screen != Screen::Book || self.book.cover != CoverState::NotAsked {
            return;
        }
        let main = Areas::compute(self.size.0, self.size.1).main;
        if cover::split(self.settings.covers, main).0.is_none() {
            return;
        }
        let Some(book) = self.library.get(&self.book.id) else {
            return;
        };
        fx.push(Effect::LoadCover {
            book: book.id.clone(),
            url: book.cover_url.clone(),
        });
        self.book.cover = CoverState::Loading;
    }
}
