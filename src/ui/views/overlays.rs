//! Boxes over the screen: help, sleep menu, bookmark note, confirmations,
//! the conflict prompt, the up next countdown; and toasts on the last line
//! above the player bar.
//! A box holds the cursor: on its chosen line, or after the typed text.
//! In the accessible mode a box has no border (its title line leads it)
//! and an error toast says "Error:" (not only its colour does).

use super::layout::Areas;
use super::text::{clear_row, fit, fit_pad, put, width, wrap};
use crate::domain::session::Place;
use crate::domain::{BookId, ChapterId};
use crate::ui::keymap::Action;
use crate::ui::state::{App, Overlay, SLEEP_CHOICES, choice_label};
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

/// A box's content: its title, its lines, the chosen line and the caret.
struct Shown {
    title: String,
    lines: Vec<(String, Style)>,
    cursor: Option<usize>,
    caret: Caret,
}

impl Shown {
    fn plain(title: &str, lines: Vec<(String, Style)>) -> Shown {
        Shown {
            title: title.to_owned(),
            lines,
            cursor: None,
            caret: Caret::on(0),
        }
    }
}

/// Draws the toasts and the open box; returns where the cursor goes when
/// a box is open.
pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) -> Option<Position> {
    toasts(app, theme, buf, areas);
    let framed = !app.settings.accessible;
    // The up next countdown comes first: the next key cancels it, so it
    // is what the screen shows.
    let shown = match super::up_next::countdown(app, theme) {
        Some((title, lines)) => Shown::plain(&title, lines),
        None => match app.overlays.open.as_ref()? {
            Overlay::Help { scroll } => help(app, theme, *scroll),
            Overlay::Sleep { cursor, typed } => sleep(app, theme, *cursor, typed),
            Overlay::BookmarkNote {
                chapter,
                position,
                note,
                ..
            } => bookmark_note(app, theme, chapter, *position, note),
            Overlay::ConfirmRestart { book } => confirm_restart(app, theme, book),
            Overlay::ConfirmDiscardRefused { count } => confirm_discard(theme, *count),
            Overlay::Conflict {
                server,
                local,
                cursor,
                ..
            } => conflict(app, theme, server, local, *cursor),
        },
    };
    boxed(buf, theme, areas.full, &shown, framed)
}

/// The drawn bar after typed text is for eyes; the accessible mode
/// leaves it to the terminal's cursor (a reader would say it).
fn typing_bar(app: &App) -> &'static str {
    if app.settings.accessible { "" } else { "▏" }
}

fn help(app: &App, theme: &Theme, scroll: usize) -> Shown {
    let mut lines = Vec::new();
    let key_w = Action::ALL
        .iter()
        .map(|a| width(&app.keymap.label(*a)))
        .max()
        .unwrap_or(8)
        .min(22);
    // Each group once, in the order it first comes, with all of its keys
    // (the keymap's order is not grouped).
    let mut groups: Vec<&str> = Vec::new();
    for a in Action::ALL {
        if !groups.contains(&a.group()) {
            groups.push(a.group());
        }
    }
    for group in groups {
        lines.push((format!("— {group} —"), theme.accent));
        for &a in Action::ALL.iter().filter(|a| a.group() == group) {
            let key = fit_pad(&app.keymap.label(a), key_w);
            lines.push((format!("{key}  {}", a.help()), theme.base));
        }
    }
    lines.push(("Ctrl+C  quit at once (always)".into(), theme.dim));
    let scroll = scroll.min(lines.len().saturating_sub(1));
    let lines = lines.split_off(scroll);
    Shown::plain("Keys (j/k scroll, any other key closes)", lines)
}

fn sleep(app: &App, theme: &Theme, cursor: usize, typed: &str) -> Shown {
    let mut lines: Vec<_> = SLEEP_CHOICES
        .iter()
        .map(|c| (choice_label(*c), theme.base))
        .collect();
    let caret = match typed.is_empty() {
        true => Caret::on(cursor),
        false => Caret {
            line: lines.len(),
            after: width(typed),
        },
    };
    lines.push(match typed.is_empty() {
        true => ("or type 25, 1:30, 3ch".to_owned(), theme.dim),
        false => (
            format!("{typed}{} Enter sets it", typing_bar(app)),
            theme.selected,
        ),
    });
    Shown {
        title: "Sleep timer (it fades out)".to_owned(),
        lines,
        cursor: Some(cursor),
        caret,
    }
}

fn bookmark_note(
    app: &App,
    theme: &Theme,
    chapter: &ChapterId,
    position: f64,
    note: &str,
) -> Shown {
    let at = app.describe_position(&Place {
        chapter: chapter.clone(),
        position,
    });
    Shown {
        title: format!("Bookmark at {at}"),
        lines: vec![
            ("Note (optional):".into(), theme.dim),
            (format!("{note}{}", typing_bar(app)), theme.selected),
            ("Enter saves · Esc cancels".into(), theme.dim),
        ],
        cursor: None,
        caret: Caret {
            line: 1,
            after: width(note),
        },
    }
}

fn confirm_restart(app: &App, theme: &Theme, book: &BookId) -> Shown {
    let title = app
        .library
        .get(book)
        .map_or(book.to_string(), |b| b.title.clone());
    Shown::plain(
        "Restart?",
        vec![
            (format!("Restart “{title}” from the beginning?"), theme.base),
            (
                "Your progress will be set to 0 on the server.".into(),
                theme.dim,
            ),
            ("y: restart · any other key: keep it".into(), theme.accent),
        ],
    )
}

fn confirm_discard(theme: &Theme, n: usize) -> Shown {
    let changes = crate::ui::state::count(n, "change");
    Shown::plain(
        "Drop refused changes?",
        vec![
            (
                format!("The server refused {changes} five times or more."),
                theme.base,
            ),
            (
                "`earmark sync pending` shows them with the server's message.".into(),
                theme.dim,
            ),
            (
                match n {
                    1 => "y: drop it · any other key: keep it",
                    _ => "y: drop them · any other key: keep them",
                }
                .into(),
                theme.accent,
            ),
        ],
    )
}

fn conflict(app: &App, theme: &Theme, server: &Place, local: &Place, cursor: usize) -> Shown {
    Shown {
        title: "Where do you want to continue?".into(),
        lines: vec![
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
        cursor: Some(cursor),
        caret: Caret::on(cursor),
    }
}

/// A centered box with a title, clipped to the screen: framed, or (the
/// accessible mode) the title line and the lines on a cleared block.
/// Returns the caret's cell, when the box is drawn.
fn boxed(
    buf: &mut Buffer,
    theme: &Theme,
    full: Rect,
    shown: &Shown,
    framed: bool,
) -> Option<Position> {
    let Shown {
        title,
        lines,
        cursor,
        caret,
    } = shown;
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
    let (title_x, title) = match framed {
        true => (x + 2, fit(&format!(" {title} "), inner.saturating_sub(2))),
        false => (x + 1, fit(&format!(" {title}"), inner)),
    };
    if framed {
        let top = format!("┌{}┐", "─".repeat(inner));
        put(buf, r, x, y, &top, theme.accent);
    }
    put(buf, r, title_x, y, &title, theme.title);
    let body_rows = usize::from(h).saturating_sub(2);
    for (i, (line, style)) in lines.iter().take(body_rows).enumerate() {
        let yy = y + 1 + i as u16;
        let style = if *cursor == Some(i) {
            theme.selected
        } else {
            *style
        };
        let line = fit_pad(&format!(" {line}"), inner);
        put(buf, r, x + 1, yy, &line, style);
        if framed {
            put(buf, r, x, yy, "│", theme.accent);
            put(buf, r, x + w - 1, yy, "│", theme.accent);
        }
    }
    if h >= 2 && framed {
        let bottom = format!("└{}┘", "─".repeat(inner));
        put(buf, r, x, y + h - 1, &bottom, theme.accent);
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

/// The newest toast, above the player bar: wrapped between words onto
/// as many lines as it needs (at most a third of the screen; a longer one
/// ends at a word, with `…`), never cut inside a word.
fn toasts(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) {
    let Some(t) = app.toasts.back() else {
        return;
    };
    let r = areas.main;
    if r.height == 0 {
        return;
    }
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
    let room = usize::from(r.width).saturating_sub(2);
    let most = usize::from((r.height / 3).max(1));
    let lines = toast_lines(&format!("{said}{}", t.text), room, most);
    let top = r.bottom() - lines.len() as u16;
    for (i, line) in lines.iter().enumerate() {
        let y = top + i as u16;
        // A toast of several lines reads alone: the rows it takes are its.
        if lines.len() > 1 {
            clear_row(buf, r, y, theme.base);
        }
        let text = format!(" {line} ");
        let x = r.x + (r.width.saturating_sub(width(&text) as u16)) / 2;
        put(buf, r, x, y, &text, style);
    }
}

/// `text` in lines of at most `room` cells, at most `most` of them: cut
/// only between words (a word longer than a line is cut where it must
/// be), the last line ending in `…` when words were left out.
pub fn toast_lines(text: &str, room: usize, most: usize) -> Vec<String> {
    let mut lines = wrap(text, room.max(1));
    if lines.len() > most.max(1) {
        lines.truncate(most.max(1));
        let last = lines.pop().unwrap_or_default();
        let mut words: Vec<&str> = last.split(' ').collect();
        while words.len() > 1 && width(&words.join(" ")) + 1 > room {
            words.pop();
        }
        let mut cut = words.join(" ");
        if width(&cut) + 1 > room {
            cut = fit(&cut, room);
        } else {
            cut.push('…');
        }
        lines.push(cut);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::toast_lines;

    #[test]
    fn a_toast_is_cut_only_between_words() {
        let text = "Could not load the library: cannot reach the server at http://127.0.0.1:8686/api/v1 (the connection failed)";
        let words: Vec<&str> = text.split(' ').collect();
        for room in [30, 38, 78] {
            for most in [1, 2, 3] {
                let lines = toast_lines(text, room, most);
                assert!(lines.len() <= most, "{room}/{most}: {lines:?}");
                for l in &lines {
                    assert!(super::width(l) <= room, "{room}: {l:?}");
                    for w in l.trim_end_matches('…').split(' ') {
                        assert!(words.contains(&w), "{room}/{most}: {w:?} cut in {lines:?}");
                    }
                }
                let whole = lines.join(" ");
                assert_eq!(whole == text, !whole.ends_with('…'), "{lines:?}");
            }
        }
    }
}
