//! Overlays that sit on top of a screen and take the keys while open:
//! help, sleep menu, bookmark note, confirmations, the conflict prompt.

use super::msg::Effect;
use super::toasts::Out;
use crate::domain::session::{Command, Keep, Place};
use crate::domain::sleep::{SLEEP_CHOICES, SleepChoice, parse_sleep};
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
        server: Place,
        local: Place,
        /// 0: server, 1: this device.
        cursor: usize,
    },
}

/// The box open over the screen, if any.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    pub open: Option<Overlay>,
}

/// What a closed box leaves to the app.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Closed {
    Nothing,
    /// Yes to restarting this book.
    Restart(BookId),
    /// The place chosen in the conflict prompt (the session was told).
    Continue(Place),
}

/// The keys a box keeps open on: true closes it.
type Done = bool;

impl Overlays {
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    pub fn show(&mut self, o: Overlay) {
        self.open = Some(o);
    }

    /// The sleep menu, on its first choice.
    pub(super) fn sleep_menu(&mut self) {
        self.show(Overlay::Sleep {
            cursor: 0,
            typed: String::new(),
        });
    }

    /// A key for the open box.
    pub(super) fn key(&mut self, key: Key, action: Option<Action>, out: &mut Out) -> Closed {
        let Some(open) = self.open.as_mut() else {
            return Closed::Nothing;
        };
        let mut closed = Closed::Nothing;
        let yes = matches!(key.code, KeyCode::Char('y' | 'Y'));
        let done = match open {
            Overlay::Help { scroll } => help_key(scroll, action),
            Overlay::Sleep { cursor, typed } => sleep_key(cursor, typed, key, action, out),
            Overlay::BookmarkNote { note, .. } => match key.code {
                KeyCode::Enter => {
                    self.save_bookmark(out);
                    true
                }
                _ => note_key(note, key),
            },
            Overlay::ConfirmRestart { book } => {
                if yes {
                    closed = Closed::Restart(book.clone());
                }
                true
            }
            Overlay::ConfirmDiscardRefused { .. } => {
                if yes {
                    out.effect(Effect::DiscardRefused);
                }
                true
            }
            Overlay::Conflict {
                book,
                server,
                local,
                cursor,
            } => match conflict_key(cursor, key, action) {
                Some(keep) => {
                    let book = book.clone();
                    out.send(Command::Choose { book, keep });
                    closed = Closed::Continue(match keep {
                        Keep::Server => server.clone(),
                        Keep::Local => local.clone(),
                    });
                    true
                }
                None => false,
            },
        };
        if done {
            self.open = None;
        }
        closed
    }

    fn save_bookmark(&mut self, out: &mut Out) {
        if let Some(Overlay::BookmarkNote {
            book,
            chapter,
            position,
            note,
        }) = self.open.take()
        {
            let note = note.trim().to_owned();
            out.effect(Effect::AddBookmark {
                book,
                chapter,
                position,
                note: (!note.is_empty()).then_some(note),
            });
        }
    }
}

fn help_key(scroll: &mut usize, action: Option<Action>) -> Done {
    match action {
        Some(Action::Down) => *scroll += 1,
        Some(Action::Up) => *scroll = scroll.saturating_sub(1),
        Some(Action::PageDown) => *scroll += 10,
        Some(Action::PageUp) => *scroll = scroll.saturating_sub(10),
        _ => return true,
    }
    false
}

fn sleep_key(
    cursor: &mut usize,
    typed: &mut String,
    key: Key,
    action: Option<Action>,
    out: &mut Out,
) -> Done {
    let set = |choice: SleepChoice, out: &mut Out| out.send(Command::Sleep(choice));
    match key.code {
        KeyCode::Char(c)
            if !key.ctrl && !key.alt && (c.is_ascii_digit() || ":hHmMcC".contains(c)) =>
        {
            if typed.len() < 8 {
                typed.push(c);
            }
            return false;
        }
        KeyCode::Backspace => {
            typed.pop();
            return false;
        }
        KeyCode::Enter if !typed.is_empty() => {
            return match parse_sleep(typed) {
                Ok(choice) => {
                    set(choice, out);
                    true
                }
                Err(e) => {
                    typed.clear();
                    out.error(e);
                    false
                }
            };
        }
        _ => {}
    }
    match action {
        Some(Action::Down) => *cursor = (*cursor + 1).min(SLEEP_CHOICES.len() - 1),
        Some(Action::Up) => *cursor = cursor.saturating_sub(1),
        Some(Action::Open) => {
            set(SLEEP_CHOICES[*cursor], out);
            return true;
        }
        Some(Action::Back | Action::SleepTimer) => return true,
        _ => {}
    }
    false
}

fn note_key(note: &mut String, key: Key) -> Done {
    match key.code {
        KeyCode::Esc => return true,
        KeyCode::Backspace => {
            note.pop();
        }
        KeyCode::Char(c) if !key.ctrl && !key.alt && note.chars().count() < 500 => note.push(c),
        _ => {}
    }
    false
}

/// The conflict prompt's keys: the side chosen with Enter (it cannot be
/// skipped: it decides where playback goes on).
fn conflict_key(cursor: &mut usize, key: Key, action: Option<Action>) -> Option<Keep> {
    match (action, key.code) {
        (Some(Action::Down | Action::Up), _) | (_, KeyCode::Tab) => *cursor = 1 - *cursor,
        (_, KeyCode::Char('s')) => *cursor = 0,
        (_, KeyCode::Char('d')) => *cursor = 1,
        (Some(Action::Open), _) => {
            return Some(match *cursor {
                0 => Keep::Server,
                _ => Keep::Local,
            });
        }
        _ => {}
    }
    None
}
