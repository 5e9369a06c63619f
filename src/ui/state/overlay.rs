//! Overlays that sit on top of a screen and take the keys while open:
//! help, sleep menu, bookmark note, confirmations, the conflict prompt.

use super::App;
use super::msg::Effect;
use crate::domain::session::{Command, Keep, Place as Position};
use crate::domain::sleep::{SLEEP_CHOICES, parse_sleep};
use crate::domain::{BookId, ChapterId};
use crate::ui::keymap::{Action, Key, KeyCode};

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help {
        scroll: usize,
    },
    Sleep {
        cursor: usize,
        /// A typed time (`25`, `1:30`, `3ch`); Enter uses it when not empty.
        typed: String,
    },
    BookmarkNote {
        book: BookId,
        chapter: ChapterId,
        position: f64,
        note: String,
    },
    ConfirmRestart {
        book: BookId,
    },
    /// Drop the changes the server refused?
    ConfirmDiscardRefused {
        count: usize,
    },
    Conflict {
        book: BookId,
        server: Position,
        local: Position,
        /// 0: server, 1: this device.
        cursor: usize,
    },
}

impl App {
    pub(super) fn overlay_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let action = self.keymap.action(key);
        let Some(overlay) = self.overlay.as_mut() else {
            return;
        };
        let close = match overlay {
            Overlay::Help { scroll } => match action {
                Some(Action::Down) => {
                    *scroll += 1;
                    false
                }
                Some(Action::Up) => {
                    *scroll = scroll.saturating_sub(1);
                    false
                }
                Some(Action::PageDown) => {
                    *scroll += 10;
                    false
                }
                Some(Action::PageUp) => {
                    *scroll = scroll.saturating_sub(10);
                    false
                }
                _ => true,
            },
            Overlay::Sleep { typed, .. } if matches!(key.code, KeyCode::Char(c) if !key.ctrl && !key.alt && (c.is_ascii_digit() || ":hHmMcC".contains(c))) =>
            {
                if let KeyCode::Char(c) = key.code
                    && typed.len() < 8
                {
                    typed.push(c);
                }
                false
            }
            Overlay::Sleep { typed, .. } if key.code == KeyCode::Backspace => {
                typed.pop();
                false
            }
            Overlay::Sleep { typed, .. } if key.code == KeyCode::Enter && !typed.is_empty() => {
                match parse_sleep(typed) {
                    Ok(choice) => {
                        self.set_sleep(choice, fx);
                        true
                    }
                    Err(e) => {
                        typed.clear();
                        self.toast(e, true);
                        false
                    }
                }
            }
            Overlay::Sleep { cursor, .. } => match action {
                Some(Action::Down) => {
                    *cursor = (*cursor + 1).min(SLEEP_CHOICES.len() - 1);
                    false
                }
                Some(Action::Up) => {
                    *cursor = cursor.saturating_sub(1);
                    false
                }
                Some(Action::Open) => {
                    let choice = SLEEP_CHOICES[*cursor];
                    self.set_sleep(choice, fx);
                    true
                }
                Some(Action::Back | Action::SleepTimer) => true,
                _ => false,
            },
            Overlay::BookmarkNote { note, .. } => match key.code {
                KeyCode::Esc => true,
                KeyCode::Enter => {
                    if let Some(Overlay::BookmarkNote {
                        book,
                        chapter,
                        position,
                        note,
                    }) = self.overlay.take()
                    {
                        let note = note.trim().to_owned();
                        fx.push(Effect::AddBookmark {
                            book,
                            chapter,
                            position,
                            note: (!note.is_empty()).then_some(note),
                        });
                    }
                    true
                }
                KeyCode::Backspace => {
                    note.pop();
                    false
                }
                KeyCode::Char(c) if !key.ctrl && !key.alt => {
                    if note.chars().count() < 500 {
                        note.push(c);
                    }
                    false
                }
                _ => false,
            },
            Overlay::ConfirmRestart { book } => {
                if matches!(key.code, KeyCode::Char('y' | 'Y')) {
                    let book = book.clone();
                    self.restart(book, fx);
                }
                true
            }
            Overlay::ConfirmDiscardRefused { .. } => {
                if matches!(key.code, KeyCode::Char('y' | 'Y')) {
                    fx.push(Effect::DiscardRefused);
                }
                true
            }
            Overlay::Conflict {
                book,
                cursor,
                server,
                local,
            } => match (action, key.code) {
                (Some(Action::Down | Action::Up), _) | (_, KeyCode::Tab) => {
                    *cursor = 1 - *cursor;
                    false
                }
                (_, KeyCode::Char('s')) => {
                    *cursor = 0;
                    false
                }
                (_, KeyCode::Char('d')) => {
                    *cursor = 1;
                    false
                }
                (Some(Action::Open), _) => {
                    let keep = if *cursor == 0 {
                        Keep::Server
                    } else {
                        Keep::Local
                    };
                    let (book, at) = (
                        book.clone(),
                        if *cursor == 0 {
                            server.clone()
                        } else {
                            local.clone()
                        },
                    );
                    fx.push(Effect::Session(Command::Choose { book, keep }));
                    self.toast(
                        format!("Continuing at {}", self.describe_position(&at)),
                        false,
                    );
                    true
                }
                // The choice cannot be skipped: it decides where we play.
                _ => false,
            },
        };
        if close {
            self.overlay = None;
        }
    }

    /// "ch 7 12:31", with the chapter's number in the playing manifest.
    pub fn describe_position(&self, p: &Position) -> String {
        let n = self
            .playing()
            .and_then(|np| np.manifest.position_of(&p.chapter))
            .or_else(|| {
                self.book
                    .manifest
                    .as_ref()
                    .and_then(|m| m.position_of(&p.chapter))
            });
        match n {
            Some(i) => format!("ch {} {}", i + 1, super::fmt_time(p.position)),
            None => format!("{} {}", p.chapter, super::fmt_time(p.position)),
        }
    }
}
