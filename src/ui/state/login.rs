//! The login form: its fields, the profiles to switch between, and the
//! keys typed into it (it owns every key while the login screen shows).

use super::msg::{Effect, LoginError, Password};
use crate::ui::keymap::{Key, KeyCode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginField {
    Address,
    User,
    Password,
    Profile,
}

#[derive(Debug, Clone, Default)]
pub struct LoginForm {
    pub address: String,
    pub user: String,
    pub password: Password,
    pub focus: usize,
    pub error: Option<String>,
    pub busy: bool,
    pub profiles: Vec<String>,
    pub profile: Option<String>,
}

/// What Esc on the form asks of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leave {
    Stay,
    /// Logged in already: back to the library.
    Back,
}

impl LoginForm {
    pub const FIELDS: [LoginField; 4] = [
        LoginField::Address,
        LoginField::User,
        LoginField::Password,
        LoginField::Profile,
    ];

    pub fn field(&self) -> LoginField {
        Self::FIELDS[self.focus % Self::FIELDS.len()]
    }

    /// A login failed: the form says why and goes to the field to fix.
    pub(super) fn failed(&mut self, e: LoginError) {
        self.busy = false;
        self.focus = match e {
            LoginError::BadCredentials => 2,
            _ => 0,
        };
        self.error = Some(e.to_string());
    }

    pub(super) fn key(&mut self, key: Key, logged_in: bool, fx: &mut Vec<Effect>) -> Leave {
        let n = Self::FIELDS.len();
        match key.code {
            KeyCode::Esc if logged_in => return Leave::Back,
            KeyCode::Esc => fx.push(Effect::Quit),
            KeyCode::Tab | KeyCode::Down => self.focus = (self.focus + 1) % n,
            KeyCode::BackTab | KeyCode::Up => self.focus = (self.focus + n - 1) % n,
            KeyCode::Left | KeyCode::Right
                if self.field() == LoginField::Profile && !self.profiles.is_empty() =>
            {
                self.switch_profile(key.code == KeyCode::Right, fx)
            }
            KeyCode::Enter => self.submit(fx),
            KeyCode::Backspace => self.edit(|s| {
                s.pop();
            }),
            KeyCode::Char(c) if !key.ctrl && !key.alt => self.edit(|s| s.push(c)),
            _ => {}
        }
        Leave::Stay
    }

    fn switch_profile(&mut self, forward: bool, fx: &mut Vec<Effect>) {
        let n = self.profiles.len();
        let cur = self
            .profile
            .as_ref()
            .and_then(|p| self.profiles.iter().position(|x| x == p));
        let next = match (cur, forward) {
            (None, _) => 0,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        let name = self.profiles[next].clone();
        self.profile = Some(name.clone());
        fx.push(Effect::SwitchProfile(name));
    }

    fn submit(&mut self, fx: &mut Vec<Effect>) {
        if self.address.trim().is_empty() {
            self.error = Some("Enter the server address.".into());
            self.focus = 0;
        } else if self.user.trim().is_empty() {
            self.error = Some("Enter your user name.".into());
            self.focus = 1;
        } else if self.field() != LoginField::Password && self.password.expose().is_empty() {
            self.focus = 2;
        } else {
            self.error = None;
            self.busy = true;
            // The password leaves the form here and is not kept.
            let password = std::mem::take(&mut self.password);
            fx.push(Effect::Login {
                address: self.address.trim().to_owned(),
                user: self.user.trim().to_owned(),
                password,
                profile: self.profile.clone(),
            });
        }
    }

    /// Changes the focused text field (the profile field takes no text).
    fn edit(&mut self, f: impl FnOnce(&mut String)) {
        match self.field() {
            LoginField::Address => f(&mut self.address),
            LoginField::User => f(&mut self.user),
            LoginField::Password => {
                let mut p = self.password.expose().to_owned();
                f(&mut p);
                self.password = Password::new(p);
            }
            LoginField::Profile => {}
        }
    }
}
