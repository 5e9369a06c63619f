//! The book screen's cover box: at the left of the details when the
//! screen is wide and tall enough, hidden on small screens and with
//! `[ui] covers = "off"`. Its size is fixed, so the layout is the same
//! whether the cover is shown, loading, missing or unreadable (then the
//! box shows the title, dim, as a plain cover would).

use super::text::{fit, put, width, wrap};
use crate::ui::covers::{CoverMode, CoverState};
use crate::ui::state::App;
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// Cells the image is encoded for (inside the box's frame): about square
/// with the usual 1:2 cells.
pub const COVER_CELLS: (u16, u16) = (20, 10);
/// The smallest book screen (main area) that has the cover box.
pub const MIN_MAIN: (u16, u16) = (80, 14);

/// The cover box (frame included) and what is left for the details.
pub fn split(mode: CoverMode, main: Rect) -> (Option<Rect>, Rect) {
    if mode == CoverMode::Off || main.width < MIN_MAIN.0 || main.height < MIN_MAIN.1 {
        return (None, main);
    }
    let (w, h) = (COVER_CELLS.0 + 2, COVER_CELLS.1 + 2);
    let frame = Rect::new(main.x + 1, main.y, w, h);
    let used = w + 1;
    let rest = Rect::new(main.x + used, main.y, main.width - used, main.height);
    (Some(frame), rest)
}

pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, frame: Rect) {
    let (w, h) = (usize::from(frame.width), frame.height);
    if w < 2 || h < 2 {
        return;
    }
    // The accessible mode (covers asked for there) keeps the place, not
    // the frame.
    if !app.settings.accessible {
        frame_lines(theme, buf, frame);
    }
    let inner = Rect::new(frame.x + 1, frame.y + 1, frame.width - 2, frame.height - 2);
    image(app, theme, buf, inner);
}

/// The box's rounded frame.
fn frame_lines(theme: &Theme, buf: &mut Buffer, frame: Rect) {
    let line = "─".repeat(usize::from(frame.width) - 2);
    let top = format!("╭{line}╮");
    put(buf, frame, frame.x, frame.y, &top, theme.dim);
    for y in frame.y + 1..frame.bottom() - 1 {
        put(buf, frame, frame.x, y, "│", theme.dim);
        put(buf, frame, frame.right() - 1, y, "│", theme.dim);
    }
    let bottom = frame.bottom() - 1;
    put(buf, frame, frame.x, bottom, &format!("╰{line}╯"), theme.dim);
}

/// The cover, or its placeholder, inside the frame.
fn image(app: &App, theme: &Theme, buf: &mut Buffer, inner: Rect) {
    let CoverState::Shown(image) = &app.book.cover else {
        placeholder(app, theme, buf, inner);
        return;
    };
    let size = image.protocol().size();
    let (iw, ih) = (size.width.min(inner.width), size.height.min(inner.height));
    // Centred in the box (a portrait cover leaves room at the sides).
    let at = Rect::new(
        inner.x + (inner.width - iw) / 2,
        inner.y + (inner.height - ih) / 2,
        iw,
        ih,
    );
    ratatui_image::Image::new(image.protocol()).render(at.intersection(buf.area), buf);
}

/// The title, centred in the box: while the cover loads, and for a book
/// without one (or with one that could not be read).
fn placeholder(app: &App, theme: &Theme, buf: &mut Buffer, inner: Rect) {
    let Some(book) = app.library.get(&app.book.id) else {
        return;
    };
    let room = usize::from(inner.width.saturating_sub(2));
    let rows = usize::from(inner.height.saturating_sub(2));
    let mut lines = wrap(&book.title, room);
    if lines.len() > rows {
        lines.truncate(rows);
        if let Some(last) = lines.last_mut() {
            *last = format!("{}…", fit(last, room.saturating_sub(1)));
        }
    }
    let top = inner.y + (inner.height - lines.len() as u16) / 2;
    for (i, line) in lines.iter().enumerate() {
        let line = fit(line, room);
        let x = inner.x + (inner.width - width(&line) as u16) / 2;
        put(buf, inner, x, top + i as u16, &line, theme.dim);
    }
}
