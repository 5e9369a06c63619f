//! Rendering with ratatui: one pure function of the app state per screen.
//! Views never panic on small terminals; every write is clipped.
//!
//! Every frame places the terminal cursor where the user's attention is
//! (the selected row, the field or search line being typed in, the chosen
//! line of a box), so screen readers and braille displays follow the
//! selection. With `[ui] accessible` the views also leave out borders and
//! bars and say the player's state in words (`spoken`).

mod book;
mod book_links;
pub mod cover;
pub mod layout;
mod library;
mod login;
mod overlays;
mod player_bar;
pub mod spoken;
mod stats;
pub mod text;
mod up_next;

use crate::ui::state::{App, Screen};
use crate::ui::theme::Theme;
use layout::Areas;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use text::{clear_row, fit, fit_right, put, width};

/// Draws the whole frame and puts the terminal cursor where the user's
/// attention is (ratatui shows it there; with no position it hides it).
pub fn render(app: &mut App, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    let areas = Areas::compute(area.width, area.height);
    let buf = frame.buffer_mut();
    if area.width == 0 || area.height == 0 {
        return;
    }
    header(app, theme, buf, &areas);
    let on_screen = match app.screen {
        Screen::Login => login::render_login(app, theme, buf, areas.main),
        Screen::Library => library::render(app, theme, buf, &areas),
        Screen::Book => book::render(app, theme, buf, areas.main),
        Screen::License => login::render_license(app, theme, buf, areas.main),
        Screen::Stats => stats::render(app, theme, buf, areas.main),
        Screen::UpNext => up_next::render(app, theme, buf, areas.main),
    };
    player_bar::render(app, theme, buf, &areas);
    let in_box = overlays::render(app, theme, buf, &areas);
    // Nothing to select (or no room for it): the screen's first line.
    let fallback = Position::new(areas.main.x, areas.main.y);
    let at = in_box.or(on_screen).unwrap_or(fallback);
    frame.set_cursor_position(inside(at, area));
}

pub use crate::ui::state::count;

/// `text` as a sentence: a capital first letter, a full stop at the end.
fn sentence(text: &str) -> String {
    let t = text.trim();
    let mut c = t.chars();
    let mut s = match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect::<String>(),
        None => return String::new(),
    };
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    s
}

/// `at`, moved into `area` (its last cell when it is past an edge).
fn inside(at: Position, area: Rect) -> Position {
    Position::new(
        at.x.clamp(area.left(), area.right().saturating_sub(1)),
        at.y.clamp(area.top(), area.bottom().saturating_sub(1)),
    )
}

fn header(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) {
    let r = areas.header;
    if r.height == 0 {
        return;
    }
    if let Some(msg) = &app.license_block {
        clear_row(buf, r, r.y, theme.banner);
        // The advice first and whole (shorter when narrow): what is cut
        // is the end of the server's words.
        let advice = match r.width >= 97 {
            true => {
                " License required: playback and sync are stopped. Ask the administrator to renew it (i: status)."
            }
            false => " License required: playback and sync stopped. Ask the admin to renew it (i).",
        };
        let text = fit(
            &format!("{advice} {} ", sentence(msg)),
            usize::from(r.width),
        );
        put(buf, r, r.x, r.y, &text, theme.banner);
        return;
    }
    let left = match app.screen {
        Screen::Login => " earmark · log in".to_owned(),
        Screen::Library => {
            let l = &app.library;
            let mut s = format!(" earmark · library · {}", count(l.total(), "book"));
            if l.partial {
                s = " earmark · library · reading the cache…".to_owned();
            } else if l.from_cache {
                s.push_str(" (cached)");
            }
            s
        }
        Screen::Book => " earmark · book".to_owned(),
        Screen::License => " earmark · license".to_owned(),
        Screen::Stats => " earmark · listening statistics".to_owned(),
        Screen::UpNext => format!(" earmark · up next · {}", app.snap.up_next.list.len()),
    };
    // Not by colour alone: the word says it (the player bar says it too),
    // first, where a narrow screen keeps it.
    let left = match app.offline() && app.screen != Screen::Login {
        true => left.replacen(" earmark", " earmark · offline", 1),
        false => left,
    };
    let right = match &app.session {
        Some(s) => format!("{}@{} · ? help ", s.user, s.address),
        None => "? help ".to_owned(),
    };
    let shown = fit(&left, usize::from(r.width));
    put(buf, r, r.x, r.y, &shown, theme.title);
    let room = usize::from(r.width).saturating_sub(width(&left) + 1);
    if room > 6 {
        let right = fit_right(&right, room);
        let x = r.right().saturating_sub(width(&right) as u16);
        put(buf, r, x, r.y, &right, theme.dim);
    }
}
