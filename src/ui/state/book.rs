//! The book screen's model: the open book's chapters, bookmarks and cover,
//! the pane shown (chapters, bookmarks, this device's place history) and
//! its selected row, and the place histories it lists. Enter picks a
//! place ([`Pick`]); the app plays it.

use super::history::Histories;
use super::msg::Effect;
use super::toasts::Out;
use crate::domain::session::Start;
use crate::domain::{BookId, Bookmark, BookmarkId, JumpCause, Manifest, PlaceMark};
use crate::ui::covers::{CoverImage, CoverState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BookPane {
    #[default]
    Chapters,
    Bookmarks,
    /// This device's place history of the book, newest first.
    History,
}

#[derive(Debug, Clone, Default)]
pub struct BookScreen {
    pub id: BookId,
    pub manifest: Option<Manifest>,
    pub bookmarks: Vec<Bookmark>,
    pub loading: bool,
    pub pane: BookPane,
    pub cursor: usize,
    pub cover: CoverState,
    /// Place history per book (this device), whichever book is open.
    pub history: Histories,
}

/// What Enter picked on the book screen.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Pick {
    /// A chapter's start or a bookmark's place.
    At(Start, JumpCause),
    /// A row of the history list.
    Mark(PlaceMark),
}

impl BookScreen {
    /// Opens `id` (a fresh screen unless it is open with its chapters).
    pub(super) fn show(&mut self, id: BookId) {
        if self.id != id || self.manifest.is_none() {
            let history = std::mem::take(&mut self.history);
            *self = BookScreen {
                id,
                loading: true,
                history,
                ..BookScreen::default()
            };
        }
    }

    /// The chapter list, on chapter `i` (the one playing).
    pub(super) fn land_on(&mut self, i: usize) {
        self.pane = BookPane::Chapters;
        self.cursor = i;
    }

    /// Rows of the pane shown.
    fn rows(&self) -> usize {
        match self.pane {
            BookPane::Chapters => self.manifest.as_ref().map_or(0, |m| m.items.len()),
            BookPane::Bookmarks => self.bookmarks.len(),
            BookPane::History => self.history.of(&self.id).len(),
        }
    }

    pub(super) fn move_by(&mut self, delta: isize) {
        let last = self.rows().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    /// Tab: chapters, bookmarks, history, and round again.
    pub(super) fn next_pane(&mut self) {
        self.show_pane(match self.pane {
            BookPane::Chapters => BookPane::Bookmarks,
            BookPane::Bookmarks => BookPane::History,
            BookPane::History => BookPane::Chapters,
        });
    }

    pub(super) fn show_pane(&mut self, pane: BookPane) {
        self.pane = pane;
        self.cursor = 0;
    }

    /// The place on the selected row.
    pub(super) fn picked(&self) -> Option<Pick> {
        match self.pane {
            BookPane::Chapters => {
                let item = self.manifest.as_ref()?.items.get(self.cursor)?;
                let start = Start::At(item.chapter_id.clone(), 0.0);
                Some(Pick::At(start, JumpCause::Chapter))
            }
            BookPane::Bookmarks => {
                let b = self.bookmarks.get(self.cursor)?;
                let start = Start::At(b.chapter_id.clone(), b.position);
                Some(Pick::At(start, JumpCause::Bookmark))
            }
            BookPane::History => self
                .history
                .row(&self.id, self.cursor)
                .cloned()
                .map(Pick::Mark),
        }
    }

    /// The book's details arrived (`manifest`: its chapters, when read).
    pub(super) fn loaded(&mut self, manifest: Option<Manifest>, bookmarks: Vec<Bookmark>) {
        self.loading = false;
        if manifest.is_some() {
            self.manifest = manifest;
        }
        self.bookmarks = bookmarks;
    }

    /// The selected bookmark, deleted on the server.
    pub(super) fn delete_bookmark(&self, out: &mut Out) {
        if self.pane == BookPane::Bookmarks
            && let Some(bm) = self.bookmarks.get(self.cursor)
        {
            out.effect(Effect::DeleteBookmark {
                book: bm.book_id.clone(),
                id: bm.id.clone(),
            });
        }
    }

    pub(super) fn bookmark_added(&mut self, bm: Bookmark) {
        if self.id == bm.book_id {
            self.bookmarks.push(bm);
        }
    }

    pub(super) fn bookmark_deleted(&mut self, book: &BookId, id: &BookmarkId) {
        if &self.id == book {
            self.bookmarks.retain(|b| &b.id != id);
            self.cursor = self.cursor.min(self.bookmarks.len().saturating_sub(1));
        }
    }

    pub(super) fn cover_arrived(&mut self, book: &BookId, image: Option<CoverImage>) {
        if &self.id == book {
            self.cover = image.map_or(CoverState::Missing, CoverState::Shown);
        }
    }
}
