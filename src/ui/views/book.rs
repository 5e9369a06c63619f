//! The book screen: details, then the chapter list (current chapter marked)
//! or the bookmarks, and the book's progress.

use super::text::{fit, fit_pad, fit_right, put, width, wrap};
use crate::domain::clock::{ClockTimes, clock_of};
use crate::domain::{Book, ChapterId};
use crate::ui::state::{App, BookPane, fmt_time, history::ago};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

/// Draws the book screen; returns where the cursor goes: the selected row
/// of the chapters, bookmarks or history (else the title line).
pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    if r.height == 0 || r.width == 0 {
        return None;
    }
    let (cover_box, r) = super::cover::split(app.settings.covers, r);
    if let Some(frame) = cover_box {
        super::cover::render(app, theme, buf, frame);
    }
    let inner = usize::from(r.width).saturating_sub(2);
    let title_line = Some(Position::new(r.x + 1, r.y));
    let Some(book) = app.library.get(&app.book.id) else {
        let loading = fit("Loading the book…", inner);
        put(buf, r, r.x + 1, r.y, &loading, theme.dim);
        return title_line;
    };
    title(app, book, theme, buf, r);
    let mut y = r.y + 1;
    let mut facts = facts(app, book);
    // Description: up to a quarter of the screen.
    let desc_max = usize::from(r.height / 4);
    let desc = book
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(|d| wrap(d, inner))
        .unwrap_or_default();
    let show_progress = r.height >= 8;
    // The links line only when the chapter list keeps 3 rows below it
    // (facts, links, progress, description, tabs); else the series goes
    // into the facts line.
    const MIN_LIST_ROWS: usize = 3;
    let below = usize::from(show_progress) + desc.len().min(desc_max) + 1 + MIN_LIST_ROWS;
    let links_fit = usize::from(r.bottom().saturating_sub(y)) >= 2 + below;
    let links = super::book_links::line(book, &app.keymap).filter(|_| links_fit);
    if links.is_none() && !book.series.is_empty() {
        let series: Vec<String> = book.series.iter().map(|s| s.label()).collect();
        facts.insert(0, series.join(", "));
    }
    let facts = fit(&facts.join(" · "), inner);
    put(buf, r, r.x + 1, y, &facts, theme.dim);
    y += 1;
    if let Some(links) = links {
        put(buf, r, r.x + 1, y, &fit(&links, inner), theme.dim);
        y += 1;
    }
    if show_progress {
        let progress = fit(&progress(app, book), inner);
        put(buf, r, r.x + 1, y, &progress, theme.accent);
        y += 1;
    }
    for (i, line) in desc.iter().take(desc_max).enumerate() {
        let line = if i + 1 == desc_max && desc.len() > desc_max {
            format!("{}…", fit(line, inner.saturating_sub(1)))
        } else {
            line.clone()
        };
        put(buf, r, r.x + 1, y, &fit(&line, inner), theme.base);
        y += 1;
    }
    if y >= r.bottom() {
        return title_line;
    }
    tabs(app, theme, buf, r, y);
    y += 1;
    if r.bottom() <= y {
        return title_line;
    }
    list(app, theme, buf, Rect::new(r.x, y, r.width, r.bottom() - y))
}

/// The title (♥ for a favorite), the download's state (a gauge while it
/// runs) at its right.
fn title(app: &App, book: &Book, theme: &Theme, buf: &mut Buffer, r: Rect) {
    let w = usize::from(r.width);
    let inner = w.saturating_sub(2);
    let fav = if book.favorite { " ♥" } else { "" };
    let download = app
        .downloads
        .mark(&book.id)
        .map(|m| match (app.settings.accessible, w >= 60) {
            (true, _) => m.describe(0).replace("  ", " "),
            (false, wide) => m.describe(if wide { 10 } else { 5 }),
        })
        .filter(|d| width(d) + 12 <= inner)
        .unwrap_or_default();
    let title_w = inner.saturating_sub(width(&download) + usize::from(!download.is_empty()));
    let title = fit(&format!("{}{fav}", book.title), title_w);
    put(buf, r, r.x + 1, r.y, &title, theme.title);
    if !download.is_empty() {
        let x = r.x + 1 + (inner - width(&download)) as u16;
        put(buf, r, x, r.y, &download, theme.accent);
    }
}

/// Authors, narrators, length, chapters.
fn facts(app: &App, book: &Book) -> Vec<String> {
    let mut facts = Vec::new();
    if !book.authors.is_empty() {
        facts.push(format!("by {}", book.authors.join(", ")));
    }
    if !book.narrators.is_empty() {
        facts.push(format!("read by {}", book.narrators.join(", ")));
    }
    if let Some(d) = book.duration {
        facts.push(fmt_time(d));
    }
    let chapters = app.book.manifest.as_ref().map(|m| m.items.len());
    if let Some(n) = chapters.or(book.chapter_count.map(|c| c as usize)) {
        facts.push(super::count(n, "chapter"));
    }
    facts
}

/// Finished, or where the book stands.
fn progress(app: &App, book: &Book) -> String {
    let playing = app.playing().filter(|p| p.book.id == book.id);
    if book.progress.as_ref().is_some_and(|p| p.finished) {
        return "finished · m: mark unfinished".to_owned();
    }
    let Some(np) = playing else {
        return match app.listened(book) {
            Some(f) => format!("{:.0}% listened · Space resumes · R restarts", f * 100.0),
            None => "not started · Space plays".to_owned(),
        };
    };
    let (bp, bd) = np.book_progress();
    let ch = np
        .chapter_index()
        .map(|i| format!("ch {}/{}", i + 1, np.manifest.items.len()));
    let mut s = ch.unwrap_or_default();
    if let (Some(p), Some(d)) = (bp, bd) {
        let t = ClockTimes::new(p, d);
        s.push_str(&format!(
            " · {} of {} ({:.0}%) · {} left",
            clock_of(t.elapsed),
            clock_of(t.length),
            p / d.max(0.001) * 100.0,
            fmt_time(app.shown_left(t.remaining as f64))
        ));
    }
    if app.unconfirmed() {
        // Taken offline: the server has not seen this place yet.
        s.push_str(" · unconfirmed");
    }
    s
}

fn tabs(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect, y: u16) {
    let nb = app.book.bookmarks.len();
    let nh = app.book.history.of(&app.book.id).len();
    let tabs = match app.book.pane {
        BookPane::Chapters => format!("[Chapters]  Bookmarks ({nb})  History ({nh})"),
        BookPane::Bookmarks => format!(" Chapters  [Bookmarks ({nb})]  History ({nh})"),
        BookPane::History => format!(" Chapters  Bookmarks ({nb})  [History ({nh})]"),
    };
    let inner = usize::from(r.width).saturating_sub(2);
    let line = fit(&format!("{tabs}   Tab switches"), inner);
    put(buf, r, r.x + 1, y, &line, theme.title);
}

/// The pane's rows in `r`, the selected one in view; the cursor's cell.
fn list(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    let lines = match app.book.pane {
        BookPane::Chapters => chapter_rows(app),
        BookPane::Bookmarks => bookmark_rows(app),
        BookPane::History => history_rows(app),
    };
    let rows = usize::from(r.height);
    let inner = usize::from(r.width).saturating_sub(2);
    let cursor = app.book.cursor.min(lines.len().saturating_sub(1));
    let offset = (cursor + 1).saturating_sub(rows);
    for (row, (left, right)) in lines.iter().enumerate().skip(offset).take(rows) {
        let yy = r.y + (row - offset) as u16;
        let style = if row == cursor {
            theme.selected
        } else {
            theme.base
        };
        let right_w = width(right).min(inner / 2);
        let left_w = inner.saturating_sub(right_w + usize::from(right_w > 0));
        let mut text = fit_pad(left, left_w);
        if right_w > 0 {
            text.push(' ');
            text.push_str(&fit_right(right, right_w));
        }
        put(buf, r, r.x + 1, yy, &text, style);
    }
    let y = r.y + cursor.saturating_sub(offset) as u16;
    Some(Position::new(r.x + 1, y))
}

/// A row: its text, and what goes at the right.
type Row = (String, String);

fn note(text: &str) -> Vec<Row> {
    vec![(text.to_owned(), String::new())]
}

fn chapter_rows(app: &App) -> Vec<Row> {
    let Some(m) = &app.book.manifest else {
        if app.book.loading {
            return note("Loading chapters…");
        }
        if app.offline() {
            // Why there is none, and when it comes.
            let mut rows = note("Offline, and this book is not downloaded:");
            rows.extend(note("its chapters come with the server."));
            return rows;
        }
        return note("No chapter list (r tries again).");
    };
    let playing = app.playing().filter(|p| p.book.id == app.book.id);
    let current = playing.and_then(|np| np.chapter_index());
    let said = app.settings.accessible;
    m.items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            // The accessible mode says "now" instead of the glyph.
            let now = Some(i) == current;
            let mark = if now && !said { "▶" } else { " " };
            let dur = item.duration.map(fmt_time).unwrap_or_default();
            let right = match (now, playing) {
                (true, Some(np)) => {
                    let (pos, d) = np.chapter_progress();
                    let t = d.map(|d| ClockTimes::new(pos, d));
                    let left = t
                        .map(|t| format!(" -{}", fmt_time(app.shown_left(t.remaining as f64))))
                        .unwrap_or_default();
                    let at = t.map_or_else(|| fmt_time(pos), |t| clock_of(t.elapsed));
                    let word = if said { "now " } else { "" };
                    format!("{word}{at} / {dur}{left}")
                }
                _ => dur,
            };
            (format!("{mark}{:>3}  {}", i + 1, item.title), right)
        })
        .collect()
}

/// "ch 7 12:31" in the open book's chapters (else the chapter's id).
fn at(app: &App, chapter: &ChapterId, position: f64, id_if_gone: bool) -> String {
    let ch = app
        .book
        .manifest
        .as_ref()
        .and_then(|m| m.position_of(chapter));
    match (ch, id_if_gone) {
        (Some(i), _) => format!("ch {} {}", i + 1, fmt_time(position)),
        (None, true) => format!("{chapter} {}", fmt_time(position)),
        (None, false) => fmt_time(position),
    }
}

fn bookmark_rows(app: &App) -> Vec<Row> {
    if app.book.bookmarks.is_empty() {
        return note("No bookmarks. While playing, b adds one here.");
    }
    app.book
        .bookmarks
        .iter()
        .map(|b| {
            let at = at(app, &b.chapter_id, b.position, false);
            let text = format!("  {at}  {}", b.note.as_deref().unwrap_or(""));
            (text, String::new())
        })
        .collect()
}

fn history_rows(app: &App) -> Vec<Row> {
    let marks = app.book.history.of(&app.book.id);
    if marks.is_empty() {
        return note("No jumps yet. The place before each jump is kept here; u undoes the last.");
    }
    marks
        .iter()
        .rev()
        .map(|m| {
            let at = at(app, &m.chapter_id, m.position, true);
            let text = format!("  {at:<11} {}", m.cause.word());
            (text, ago(app.wall_now(), m.at))
        })
        .collect()
}
