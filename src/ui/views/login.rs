//! The login form and the license screen.

use super::text::{fit, fit_pad, put, width, wrap};
use crate::domain::LicenseState;
use crate::ui::state::{App, LoginField, LoginForm};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

/// Draws the login form; returns where the cursor goes: the end of the
/// focused field's text (the profile switch: its start).
pub fn render_login(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    if r.height == 0 {
        return None;
    }
    let mut caret = None;
    let form = &app.login;
    let w = usize::from(r.width).min(70);
    let x = r.x + (r.width.saturating_sub(w as u16)) / 2;
    let label_w = if w >= 40 { 10 } else { 5 };
    let field_w = w.saturating_sub(label_w + 2);
    let mut y = r.y + u16::from(r.height >= 12);
    let title = fit("Log in to your audiobook server", w);
    put(buf, r, x, y, &title, theme.title);
    y += 1 + u16::from(r.height >= 10);
    let masked = "•".repeat(form.password.expose().chars().count());
    let profile = match (&form.profile, form.profiles.len(), app.settings.accessible) {
        (_, 0, _) => "(none yet: saved after login)".to_owned(),
        (Some(p), n, false) => format!("◀ {p} ▶  ({n})"),
        (None, n, false) => format!("◀ new ▶  ({n})"),
        (p, n, true) => format!(
            "{} (of {n}; left and right arrows switch)",
            p.as_deref().unwrap_or("new")
        ),
    };
    for (i, field) in LoginForm::FIELDS.iter().enumerate() {
        let (label, value) = match field {
            LoginField::Address => (["Server", "Srv"], form.address.as_str()),
            LoginField::User => (["User", "User"], form.user.as_str()),
            LoginField::Password => (["Password", "Pass"], masked.as_str()),
            LoginField::Profile => (["Profile", "Prof"], profile.as_str()),
        };
        let label = if label_w >= 10 { label[0] } else { label[1] };
        let focused = i == form.focus;
        let (label_style, value_style) = match focused {
            true => (theme.accent, theme.selected),
            false => (theme.dim, theme.base),
        };
        put(buf, r, x, y, &fit_pad(label, label_w), label_style);
        let typed = focused && *field != LoginField::Profile;
        // The terminal's cursor stands at the end; the drawn bar is for
        // eyes (left out in the accessible mode, where it would be read).
        let cursor = if typed && !app.settings.accessible {
            "▏"
        } else {
            ""
        };
        if focused {
            let after = if typed { width(value).min(field_w) } else { 0 };
            caret = Some(Position::new(x + (label_w + after) as u16, y));
        }
        let shown = fit_pad(&format!("{value}{cursor}"), field_w);
        put(buf, r, x + label_w as u16, y, &shown, value_style);
        y += 1;
    }
    y += u16::from(r.height >= 10);
    // The error first: it matters more than the hint when space is short.
    if let Some(err) = &form.error {
        for line in wrap(err, w) {
            put(buf, r, x, y, &line, theme.error);
            y += 1;
        }
    }
    let hint = if form.busy {
        "Logging in…"
    } else {
        "Enter: log in · Tab: next field · ←/→: profile · Esc: quit"
    };
    put(buf, r, x, y, &fit(hint, w), theme.dim);
    if r.height >= 14 {
        let note = "The password is sent once and never stored; the session token is.";
        put(buf, r, x, r.bottom() - 1, &fit(note, w), theme.dim);
    }
    caret
}

/// Draws the license screen; the cursor goes to its first line.
pub fn render_license(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    let w = usize::from(r.width).saturating_sub(2);
    let mut y = r.y;
    put(buf, r, r.x + 1, y, &fit("Server license", w), theme.title);
    y += 1;
    let mut lines = Vec::new();
    match &app.license {
        None => lines.push(("Asking the server…".to_owned(), theme.dim)),
        Some(s) => {
            let state = match s.state {
                LicenseState::Valid => "valid",
                LicenseState::Expired => "expired",
                LicenseState::Missing => "missing",
                LicenseState::Invalid => "not valid",
            };
            let style = if s.valid { theme.accent } else { theme.error };
            lines.push((format!("Status: {state}"), style));
            if let Some(m) = &s.message {
                lines.push((m.clone(), theme.base));
            }
        }
    }
    if let Some(msg) = &app.license_block {
        lines.push((format!("Playback and sync are stopped: {msg}"), theme.error));
        lines.push((
            "To resolve it, ask the server's administrator to renew the license (reference server: earmark serve license set valid). Browsing still works. Press r to check again.".into(),
            theme.base,
        ));
    }
    lines.push(("Esc: back".into(), theme.dim));
    for (text, style) in lines {
        for l in wrap(&text, w) {
            put(buf, r, r.x + 1, y, &l, style);
            y += 1;
        }
    }
    Some(Position::new(r.x + 1, r.y))
}
