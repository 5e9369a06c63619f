//! Boxes over the screen: help, sleep menu, bookmark note, confirmations,
//! the conflict prompt, the up next countdown; and toasts on the last line
//! above the player bar.
//! A box holds the cursor: on its chosen line, or after the typed text.
//! In the accessible mode a box has no border (its title line leads it)
//! and an error toast says "Error:" (not only its colour does).

use super::layout::Areas;
use super::text::{clear_row, fit, fit_pad, put, width};
use crate::ui::keymap::Action;
use crate::ui::state::{App, Overlay, SLEEP_CHOICES};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;

/// Where the cursor stands in a box: on a line, after `after` cells of it.
#[derive(Clone, Copy)]
struct Caret {
    line: usize,
    after: usize,
}

impl Caret {
    fn on(line: usize) -> Caret {
        Caret { line, after: 0 }
    }
}

/// Draws the toasts and the open box; returns where the cursor goes when
/// a box is open.
pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) -> Option<Position> {
    toasts(app, theme, buf, areas);
    let framed = !app.settings.accessible;
    // The up next countdown comes first: the next key cancels it, so it
    // is what the screen shows.
    if let Some((title, lines)) = super::up_next::countdown(app, theme) {
        return boxed(
            buf,
            theme,
            areas.full,
            &title,
            &lines,
            None,
            framed,
            Caret::on(0),
        );
    }
    let overlay = app.overlay.as_ref()?;
    // The drawn bar after typed text is for eyes; the accessible mode
    // leaves it to the terminal's cursor (a reader would say it).
    let bar = if app.settings.accessible { "" } else { "▏" };
    let (title, lines, cursor, caret): (String, Vec<(String, Style)>, Option<usize>, Caret) =
        match overlay {
            Overlay::Help { scroll } => {
                let mut lines = Vec::new();
                let key_w = Action::ALL
                    .iter()
                    .map(|a| width(&app.keymap.label(*a)))
                    .max()
                    .unwrap_or(8)
                    .min(22);
                // Each group once, in the order it first comes, with all
                // of its keys (the keymap's order is not grouped).
                let mut groups: Vec<&str> = Vec::new();
                for a in Action::ALL {
                    if !groups.contains(&a.group()) {
                        groups.push(a.group());
                    }
                }
                for group in groups {
                    lines.push((format!("— {group} —"), theme.accent));
                    for &a in Action::ALL.iter().filter(|a| a.group() == group) {
                        lines.push((
                            format!("{}  {}", fit_pad(&app.keymap.label(a), key_w), a.help()),
                            theme.base,
                        ));
                    }
                }
                lines.push(("Ctrl+C  quit at once (always)".into(), theme.dim));
                let scroll = (*scroll).min(lines.len().saturating_sub(1));
                (
                    "Keys (j/k scroll, any other key closes)".into(),
                    lines.split_off(scroll),
                    None,
                    Caret::on(0),
                )
            }
            Overlay::Sleep { cursor, typed } => {
                let mut lines: Vec<_> = SLEEP_CHOICES
                    .iter()
                    .map(|c| (crate::ui::state::choice_label(*c), theme.base))
                    .collect();
                let caret = if typed.is_empty() {
                    Caret::on(*cursor)
                } else {
                    Caret {
                        line: lines.len(),
                        after: width(typed),
                    }
                };
                let typed_line = if typed.is_empty() {
                    ("or type 25, 1:30, 3ch".to_owned(), theme.dim)
                } else {
                    (format!("{typed}{bar} Enter sets it"), theme.selected)
                };
                lines.push(typed_line);
                (
                    "Sleep timer (it fades out)".to_owned(),
                    lines,
                    Some(*cursor),
                    caret,
                )
            }
            Overlay::BookmarkNote {
                chapter,
                position,
                note,
                ..
            } => {
                let at = app.describe_position(&crate::domain::session::Place {
                    chapter: chapter.clone(),
                    position: *position,
                });
                (
                    format!("Bookmark at {at}"),
                    vec![
                        ("Note (optional):".into(), theme.dim),
                        (format!("{note}{bar}"), theme.selected),
                        ("Enter saves · Esc cancels".into(), theme.dim),
                    ],
                    None,
                    Caret {
                        line: 1,
                        after: width(note),
                    },
                )
            }
            Overlay::ConfirmRestart { book } => {
                let title = app
                    .library
                    .get(book)
                    .map_or(book.to_string(), |b| b.title.clone());
                (
                    "Restart?".into(),
                    vec![
                        (format!("Restart “{title}” from the beginning?"), theme.base),
                        (
                            "Your progress will be set to 0 on the server.".into(),
                            theme.dim,
                        ),
                        ("y: restart · any other key: keep it".into(), theme.accent),
                    ],
                    None,
                    Caret::on(0),
                )
            }
            Overlay::ConfirmDiscardRefused { count } => (
                "Drop refused changes?".into(),
                vec![
                    (
                        format!("The server refused {count} change(s) five times or more."),
                        theme.base,
                    ),
                    (
                        "`earmark sync pending` shows them with the server's message.".into(),
                        theme.dim,
                    ),
                    (
                        "y: drop them · any other key: keep them".into(),
                        theme.accent,
                    ),
                ],
                None,
                Caret::on(0),
            ),
            Overlay::Conflict {
                server,
                local,
                cursor,
                ..
            } => (
                "Where do you want to continue?".into(),
                vec![
                    (
                        format!("server: {}", app.describe_position(server)),
                        theme.base,
                    ),
                    (
                        format!("this device: {}", app.describe_position(local)),
                        theme.base,
                    ),
                    ("j/k choose · Enter continue".into(), theme.dim),
                ],
                Some(*cursor),
                Caret::on(*cursor),
            ),
        };
    boxed(
        buf, theme, areas.full, &title, &lines, cursor, framed, caret,
    )
}

/// A centered box with a title, clipped to the screen: framed, or (the
/// accessible mode) the title line and the lines on a cleared block.
/// Returns the caret's cell, when the box is drawn.
#[allow(clippy::too_many_arguments)]
fn boxed(
    buf: &mut Buffer,
    theme: &Theme,
    full: Rect,
    title: &str,
    lines: &[(String, Style)],
    cursor: Option<usize>,
    framed: bool,
    caret: Caret,
) -> Option<Position> {
    let content_w = lines
        .iter()
        .map(|(l, _)| width(l))
        .chain([width(title)])
        .max()
        .unwrap_or(10);
    let w = (content_w + 6).min(usize::from(full.width)) as u16;
    let h = (lines.len() + 2).min(usize::from(full.height)) as u16;
    if w < 3 || h < 1 {
        return None;
    }
    // Unframed, the box takes whole lines: a reader reading a line meets
    // only the box, not the screen's text beside it.
    let (x, w) = match framed {
        true => (full.x + (full.width - w) / 2, w),
        false => (full.x, full.width),
    };
    let y = full.y + (full.height - h) / 2;
    let r = Rect::new(x, y, w, h);
    for yy in r.top()..r.bottom() {
        clear_row(buf, r, yy, theme.base);
    }
    let inner = usize::from(w).saturating_sub(2);
    if framed {
        let top = format!("┌{}┐", "─".repeat(inner));
        put(buf, r, x, y, &top, theme.accent);
        put(
            buf,
            r,
            x + 2,
            y,
            &fit(&format!(" {title} "), inner.saturating_sub(2)),
            theme.title,
        );
    } else {
        put(
            buf,
            r,
            x + 1,
            y,
            &fit(&format!(" {title}"), inner),
            theme.title,
        );
    }
    let body_rows = usize::from(h).saturating_sub(2);
    for (i, (line, style)) in lines.iter().take(body_rows).enumerate() {
        let yy = y + 1 + i as u16;
        let style = if cursor == Some(i) {
            theme.selected
        } else {
            *style
        };
        put(
            buf,
            r,
            x + 1,
            yy,
            &fit_pad(&format!(" {line}"), inner),
            style,
        );
        if framed {
            put(buf, r, x, yy, "│", theme.accent);
            put(buf, r, x + w - 1, yy, "│", theme.accent);
        }
    }
    if h >= 2 && framed {
        put(
            buf,
            r,
            x,
            y + h - 1,
            &format!("└{}┘", "─".repeat(inner)),
            theme.accent,
        );
    }
    // The line's text starts after the border (or its space) and one space.
    let line = caret.line.min(body_rows.saturating_sub(1));
    let after = (2 + caret.after).min(usize::from(w).saturating_sub(2));
    let at_y = if body_rows == 0 {
        y
    } else {
        y + 1 + line as u16
    };
    Some(Position::new(x + after as u16, at_y))
}

fn toasts(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) {
    let Some(t) = app.toasts.back() else {
        return;
    };
    let r = areas.main;
    if r.height == 0 {
        return;
    }
    let y = r.bottom() - 1;
    let style = if t.error {
        theme.banner
    } else {
        theme.selected
    };
    let said = if t.error && app.settings.accessible {
        "Error: "
    } else {
        ""
    };
    let text = fit(&format!(" {said}{} ", t.text), usize::from(r.width));
    let x = r.x + (r.width.saturating_sub(width(&text) as u16)) / 2;
    put(buf, r, x, y, &text, style);
}
