//! Toasts: short messages on the last line above the player bar, the
//! newest shown, each gone after a few seconds (an error stays longer).
//! Every sub-model's update says things through them ([`Out`]).

use super::msg::{Effect, Millis};
use crate::domain::session::Command;
use std::collections::VecDeque;

#[derive(Debug, Clone, PartialEq)]
pub struct Toast {
    pub text: String,
    pub error: bool,
    pub until: Millis,
}

/// The toasts on their way out, newest last.
#[derive(Debug, Clone, Default)]
pub struct Toasts {
    shown: VecDeque<Toast>,
    /// The loop's clock at the last tick: a toast lasts from then.
    now: Millis,
}

/// How many toasts are kept (only the newest is drawn).
const KEPT: usize = 3;

impl Toasts {
    pub fn say(&mut self, text: impl Into<String>) {
        self.push(text.into(), false);
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.push(text.into(), true);
    }

    pub fn push(&mut self, text: String, error: bool) {
        let until = self.now + if error { 6000 } else { 3000 };
        self.shown.push_back(Toast { text, error, until });
        while self.shown.len() > KEPT {
            self.shown.pop_front();
        }
    }

    /// The newest toast, the one on screen.
    pub fn back(&self) -> Option<&Toast> {
        self.shown.back()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Toast> {
        self.shown.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// When the oldest goes.
    pub fn next_change(&self) -> Option<Millis> {
        self.shown.front().map(|t| t.until)
    }

    /// The clock moved: true when a toast went.
    pub fn tick(&mut self, now: Millis) -> bool {
        self.now = now;
        let before = self.shown.len();
        while self.shown.front().is_some_and(|t| t.until <= now) {
            self.shown.pop_front();
        }
        self.shown.len() != before
    }
}

/// What a sub-model's update hands back besides its own state: effects
/// for the backends and words for the toasts.
pub struct Out<'a> {
    pub fx: &'a mut Vec<Effect>,
    pub toasts: &'a mut Toasts,
}

impl<'a> Out<'a> {
    pub fn new(fx: &'a mut Vec<Effect>, toasts: &'a mut Toasts) -> Out<'a> {
        Out { fx, toasts }
    }

    /// A command for the listening session.
    pub fn send(&mut self, c: Command) {
        self.fx.push(Effect::Session(c));
    }

    pub fn effect(&mut self, e: Effect) {
        self.fx.push(e);
    }

    pub fn say(&mut self, text: impl Into<String>) {
        self.toasts.say(text);
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.toasts.error(text);
    }
}
