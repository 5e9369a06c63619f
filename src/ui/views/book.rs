//! The book screen: details, then the chapter list (current chapter marked)
//! or the bookmarks, and the book's progress.

use super::text::{fit, fit_pad, fit_right, put, width, wrap};
use crate::domain::clock::{ClockTimes, clock_of};
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
    let w = usize::from(r.width);
    let inner = w.saturating_sub(2);
    let title_line = Some(Position::new(r.x + 1, r.y));
    let Some(book) = app.library.get(&app.book.id) else {
        put(
            buf,
            r,
            r.x + 1,
            r.y,
            &fit("Loading the book…", inner),
            theme.dim,
        );
        return title_line;
    };
    let mut y = r.y;
    let fav = if book.favorite { " ♥" } else { "" };
    // The download's state (a gauge while it runs) at the title's right.
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
    put(
        buf,
        r,
        r.x + 1,
        y,
        &fit(&format!("{}{fav}", book.title), title_w),
        theme.title,
    );
    if !download.is_empty() {
        let x = r.x + 1 + (inner - width(&download)) as u16;
        put(buf, r, x, y, &download, theme.accent);
    }
    y += 1;
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
    put(
        buf,
        r,
        r.x + 1,
        y,
        &fit(&facts.join(" · "), inner),
        theme.dim,
    );
    y += 1;
    if let Some(links) = links {
        put(buf, r, r.x + 1, y, &fit(&links, inner), theme.dim);
        y += 1;
    }
    // Progress line: finished, or where the book stands.
    let playing = app.playing().filter(|p| p.book.id == book.id);
    let progress = if book.progress.as_ref().is_some_and(|p| p.finished) {
        "finished · m: mark unfinished".to_owned()
    } else if let Some(np) = playing {
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
    } else if let Some(f) = app.listened(book) {
        format!("{:.0}% listened · Space resumes · R restarts", f * 100.0)
    } else {
        "not started · Space plays".to_owned()
    };
    if show_progress {
        put(buf, r, r.x + 1, y, &fit(&progress, inner), theme.accent);
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
    let marks = app.history.of(&app.book.id);
    let (nb, nh) = (app.book.bookmarks.len(), marks.len());
    let tabs = match app.book.pane {
        BookPane::Chapters => format!("[Chapters]  Bookmarks ({nb})  History ({nh})"),
        BookPane::Bookmarks => format!(" Chapters  [Bookmarks ({nb})]  History ({nh})"),
        BookPane::History => format!(" Chapters  Bookmarks ({nb})  [History ({nh})]"),
    };
    put(
        buf,
        r,
        r.x + 1,
        y,
        &fit(&format!("{tabs}   Tab switches"), inner),
        theme.title,
    );
    y += 1;
    let rows = usize::from(r.bottom().saturating_sub(y));
    if rows == 0 {
        return title_line;
    }
    let current = playing.and_then(|np| np.chapter_index());
    let lines: Vec<(String, String)> = match app.book.pane {
        BookPane::Chapters => match &app.book.manifest {
            None if app.book.loading => vec![("Loading chapters…".into(), String::new())],
            // Why there is none, and when it comes.
            None if app.offline() => vec![
                (
                    "Offline, and this book is not downloaded:".into(),
                    String::new(),
                ),
                ("its chapters come with the server.".into(), String::new()),
            ],
            None => vec![("No chapter list (r tries again).".into(), String::new())],
            Some(m) => m
                .items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    // The accessible mode says "now" instead of the glyph.
                    let now = Some(i) == current;
                    let mark = match (now, app.settings.accessible) {
                        (true, false) => "▶",
                        _ => " ",
                    };
                    let dur = item.duration.map(fmt_time).unwrap_or_default();
                    let right = match (Some(i) == current, playing) {
                        (true, Some(np)) => {
                            let (pos, d) = np.chapter_progress();
                            let t = d.map(|d| ClockTimes::new(pos, d));
                            let left = t
                                .map(|t| {
                                    format!(" -{}", fmt_time(app.shown_left(t.remaining as f64)))
                                })
                                .unwrap_or_default();
                            let at = t.map_or_else(|| fmt_time(pos), |t| clock_of(t.elapsed));
                            let said = if app.settings.accessible { "now " } else { "" };
                            format!("{said}{at} / {dur}{left}")
                        }
                        _ => dur,
                    };
                    (format!("{mark}{:>3}  {}", i + 1, item.title), right)
                })
                .collect(),
        },
        BookPane::Bookmarks if app.book.bookmarks.is_empty() => {
            vec![(
                "No bookmarks. While playing, b adds one here.".into(),
                String::new(),
            )]
        }
        BookPane::Bookmarks => app
            .book
            .bookmarks
            .iter()
            .map(|b| {
                let ch = app
                    .book
                    .manifest
                    .as_ref()
                    .and_then(|m| m.position_of(&b.chapter_id));
                let at = match ch {
                    Some(i) => format!("ch {} {}", i + 1, fmt_time(b.position)),
                    None => fmt_time(b.position),
                };
                (
                    format!("  {at}  {}", b.note.as_deref().unwrap_or("")),
                    String::new(),
                )
            })
            .collect(),
        BookPane::History if marks.is_empty() => vec![(
            "No jumps yet. The place before each jump is kept here; u undoes the last.".into(),
            String::new(),
        )],
        BookPane::History => marks
            .iter()
            .rev()
            .map(|m| {
                let ch = app
                    .book
                    .manifest
                    .as_ref()
                    .and_then(|man| man.position_of(&m.chapter_id));
                let at = match ch {
                    Some(i) => format!("ch {} {}", i + 1, fmt_time(m.position)),
                    None => format!("{} {}", m.chapter_id, fmt_time(m.position)),
                };
                (
                    format!("  {at:<11} {}", m.cause.word()),
                    ago(app.wall_now(), m.at),
                )
            })
            .collect(),
    };
    let cursor = app.book.cursor.min(lines.len().saturating_sub(1));
    let offset = (cursor + 1).saturating_sub(rows);
    for (row, (left, right)) in lines.iter().enumerate().skip(offset).take(rows) {
        let yy = y + (row - offset) as u16;
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
    Some(Position::new(
        r.x + 1,
        y + cursor.saturating_sub(offset) as u16,
    ))
}
