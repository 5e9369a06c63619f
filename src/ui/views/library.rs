//! The library list: a search/filter line, then only the visible rows.

use super::layout::Areas;
use super::text::{clusters, fit, fit_pad, fit_right, put, width};
use crate::domain::Book;
use crate::ui::state::library::{Facet, Focus, sequence_in};
use crate::ui::state::{App, DownloadMark, Downloads, Library, fmt_time, listened};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;

/// Draws the library; returns where the cursor goes: the end of the search
/// line while it is typed in, else the selected row (or the message that
/// stands for an empty list).
pub fn render(app: &mut App, theme: &Theme, buf: &mut Buffer, areas: &Areas) -> Option<Position> {
    let main = areas.main;
    if main.height == 0 {
        return None;
    }
    let caret = top_line(app, theme, buf, main);
    let list = areas.list();
    // The server is away: only complete downloads can play.
    let offline = app.offline();
    let playing = app.snap.listening.as_ref();
    let lib = &mut app.library;
    lib.scroll_into_view(usize::from(list.height));
    let typing = lib.search_focus && lib.search.is_some();
    let selected_row = (lib.cursor >= lib.offset
        && lib.cursor - lib.offset < usize::from(list.height))
    .then(|| Position::new(list.x, list.y + (lib.cursor - lib.offset) as u16));
    let at = if typing { caret } else { selected_row };
    if lib.showing_groups() && !lib.is_empty() {
        group_rows(lib, theme, buf, list);
        return at;
    }
    if lib.is_empty() {
        let failed = lib.arrival.as_ref().and_then(|a| a.failed.as_deref());
        let failed_msg;
        let msg = if let (false, Some(why)) = (lib.loaded, failed) {
            failed_msg = format!("{why} (r retries)");
            failed_msg.as_str()
        } else if !lib.loaded {
            "Loading the library…"
        } else if lib.search.is_some() {
            "No book matches. Enter asks the server too; Esc clears."
        } else if lib.total() == 0 {
            "The library is empty."
        } else {
            "No book matches this filter (t: filter, c: category)."
        };
        let msg = fit(msg, usize::from(list.width).saturating_sub(1));
        put(buf, list, list.x + 1, list.y, &msg, theme.dim);
        let on_message = (list.height > 0).then(|| Position::new(list.x + 1, list.y));
        return if typing { caret } else { on_message };
    }
    // In a series, each book's place in it comes before the title.
    let series = match &lib.focus {
        Some(Focus {
            facet: Facet::Series,
            name: Some(n),
        }) => Some(n.clone()),
        _ => None,
    };
    for row in 0..usize::from(list.height) {
        let i = lib.offset + row;
        let Some(book) = lib.row(i).cloned() else {
            break;
        };
        let matches = lib.title_matches(&book);
        let y = list.y + row as u16;
        let selected = i == lib.cursor;
        let r = Rect::new(list.x, y, list.width, 1);
        let place = series.as_deref().map(|s| match sequence_in(&book, s) {
            Some(seq) => format!("#{} ", seq.shown()),
            None => "#? ".to_owned(),
        });
        // Its place in the up next list comes first, in signs or words.
        let queued = app.snap.up_next.list.iter().position(|q| q.id == book.id);
        let lead = match queued {
            None => place,
            Some(n) => {
                Some(queued_mark(n + 1, app.settings.accessible) + &place.unwrap_or_default())
            }
        };
        let bars = !app.settings.accessible;
        // The playing book's place is the player bar's.
        let done = listened(&book, playing);
        book_row(
            &book,
            done,
            lead.as_deref(),
            &matches,
            selected,
            bars,
            theme,
            buf,
            r,
        );
        offline_mark(&app.downloads, offline, &book, selected, theme, buf, r);
    }
    at
}

/// "»2 " before the title of the book second up next ("next 2: " in the
/// accessible mode, where a sign would be read as noise).
pub fn queued_mark(position: usize, accessible: bool) -> String {
    if accessible {
        format!("next {position}: ")
    } else {
        format!("»{position} ")
    }
}

/// The filter line, or the search line; returns the end of the typed
/// search text.
fn top_line(app: &App, theme: &Theme, buf: &mut Buffer, main: Rect) -> Option<Position> {
    let lib = &app.library;
    let w = usize::from(main.width);
    if let Some(search) = &lib.search {
        // The terminal's cursor stands at the end; the drawn bar is for
        // eyes (left out in the accessible mode, where it would be read).
        let bar = app.library.search_focus && !app.settings.accessible;
        let typed = format!(" / {}", search.query);
        let caret = Position::new(main.x + width(&typed).min(w) as u16, main.y);
        let s = format!("{typed}{}", if bar { "▏" } else { "" });
        let x = put(buf, main, main.x, main.y, &fit(&s, w), theme.accent);
        // While pages arrive, say that the search covers only them.
        let info = match lib.arrival.as_ref().filter(|a| a.shown) {
            Some(a) if w < 60 => format!("  {} in {}", lib.len(), a.count()),
            Some(a) if a.failed.is_some() => {
                format!("  {} found in the {} loaded", lib.len(), a.count())
            }
            Some(a) => format!("  {} found, searching {} loaded", lib.len(), a.count()),
            None if lib.searching() => format!("  {} found, searching…", lib.len()),
            None => format!("  {} found", lib.len()),
        };
        put(buf, main, x, main.y, &info, theme.dim);
        return Some(caret);
    }
    // The count of an arriving list comes first: it matters most then.
    let arriving = lib
        .arrival
        .as_ref()
        .map(|a| format!(" {} ", a.status(w < 60)))
        .unwrap_or_default();
    // What the list is narrowed or grouped to comes first: it matters most.
    let browse = match (&lib.focus, lib.group) {
        (Some(f), _) => format!(" {} ({}) · Esc back ", f.describe(), lib.len()),
        (None, Some(g)) => format!(" by {} ({}) ", g.label(), lib.len()),
        (None, None) => String::new(),
    };
    let mut s = format!(
        "{arriving}{browse} filter: {}  sort: {}",
        lib.filter.label(),
        lib.sort.label()
    );
    if let Some(c) = lib.category_name() {
        s.push_str(&format!("  category: {c}"));
    }
    s.push_str("   / search");
    put(buf, main, main.x, main.y, &fit(&s, w), theme.dim);
    None
}

/// The group list: one row per author, narrator or series, with its count.
fn group_rows(lib: &Library, theme: &Theme, buf: &mut Buffer, list: Rect) {
    let (Some(facet), w) = (lib.group, usize::from(list.width)) else {
        return;
    };
    for (row, g) in lib
        .groups()
        .iter()
        .enumerate()
        .skip(lib.offset)
        .take(usize::from(list.height))
    {
        let y = list.y + (row - lib.offset) as u16;
        let style = if row == lib.cursor {
            theme.selected
        } else {
            theme.base
        };
        let count = if w >= 40 {
            crate::ui::state::count(g.books, "book")
        } else {
            g.books.to_string()
        };
        let name = g.name.as_deref().unwrap_or(facet.none_label());
        let name_w = w.saturating_sub(width(&count) + 3);
        let text = format!("  {} {count}", fit_pad(name, name_w));
        put(buf, list, list.x, y, &fit_pad(&text, w), style);
    }
}

/// One book: mark, its place up next and in the series shown (`»1 #2 `),
/// title (matched letters highlighted), author, duration, progress (a bar
/// beside the percentage when `bars` and there is room).
#[allow(clippy::too_many_arguments)]
fn book_row(
    book: &Book,
    done: Option<f64>,
    place: Option<&str>,
    matches: &[u32],
    selected: bool,
    bars: bool,
    theme: &Theme,
    buf: &mut Buffer,
    r: Rect,
) {
    let w = usize::from(r.width);
    let base = if selected { theme.selected } else { theme.base };
    // The selected row is in one style; others set parts apart.
    let part = |style: Style| if selected { base } else { style };
    // Paint the row's background first.
    put(buf, r, r.x, r.y, &" ".repeat(w), base);
    let fav = if book.favorite { "♥ " } else { "  " };
    let mut x = put(buf, r, r.x, r.y, fav, part(theme.favorite));
    let dur = book.duration.map(fmt_time).unwrap_or_default();
    let prog = progress_text(book, done, if w >= 70 && bars { 10 } else { 0 });
    let (dur_w, prog_w) = if w >= 70 {
        (9, 16)
    } else if w >= 50 {
        (9, 9)
    } else if w >= 30 {
        (0, 5)
    } else {
        (0, 0)
    };
    let rest = w.saturating_sub(2 + dur_w + prog_w);
    let author_w = if w >= 60 { rest * 2 / 5 } else { 0 };
    let mut title_w = rest.saturating_sub(author_w);
    if let Some(p) = place.filter(|p| width(p) < title_w / 2) {
        x = put(buf, r, x, r.y, p, part(theme.accent));
        title_w -= width(p);
    }
    x = title(book, matches, title_w, base, theme, buf, r, x);
    if author_w > 0 {
        let a = fit_pad(&format!(" {}", book.authors.join(", ")), author_w);
        x = put(buf, r, x, r.y, &a, part(theme.dim));
    }
    if dur_w > 0 {
        x = put(buf, r, x, r.y, &fit_right(&dur, dur_w), base);
    }
    if prog_w > 0 {
        let p = match w >= 50 {
            true if prog == "done" => "finished".to_owned(),
            true => prog,
            false => progress_text(book, done, 0),
        };
        put(buf, r, x, r.y, &fit_right(&p, prog_w), part(theme.accent));
    }
}

/// The download marker beside the favorite mark; with the server away,
/// a book that is not downloaded is dimmed and says "unavailable".
fn offline_mark(
    downloads: &Downloads,
    offline: bool,
    book: &Book,
    selected: bool,
    theme: &Theme,
    buf: &mut Buffer,
    r: Rect,
) {
    let mark = downloads.mark(&book.id);
    if let Some(m) = mark {
        let style = if selected {
            theme.selected
        } else {
            theme.accent
        };
        put(buf, r, r.x + 1, r.y, m.symbol(), style);
    }
    if !offline || mark == Some(DownloadMark::Complete) {
        return;
    }
    for x in r.x + 2..r.right() {
        if let Some(cell) = buf.cell_mut((x, r.y)) {
            cell.set_style(theme.dim);
        }
    }
    let w = usize::from(r.width);
    let note = if w >= 50 { "unavailable" } else { "n/a" };
    let cells = width(note) as u16 + 1;
    if r.width > cells + 4 {
        let note = fit_right(note, usize::from(cells));
        put(buf, r, r.right() - cells, r.y, &note, theme.dim);
    }
}

#[allow(clippy::too_many_arguments)]
fn title(
    book: &Book,
    matches: &[u32],
    cells: usize,
    base: Style,
    theme: &Theme,
    buf: &mut Buffer,
    r: Rect,
    x: u16,
) -> u16 {
    let shown = fit_pad(&book.title, cells);
    if matches.is_empty() {
        return put(buf, r, x, r.y, &shown, base);
    }
    // nucleo numbers the title's grapheme clusters, as `clusters` splits it.
    let clip = Rect::new(x, r.y, (cells as u16).min(r.right().saturating_sub(x)), 1);
    let mut x = x;
    for (g, (cluster, _)) in clusters(&shown).enumerate() {
        let style = if matches.binary_search(&(g as u32)).is_ok() {
            base.patch(theme.matched)
        } else {
            base
        };
        x = put(buf, clip, x, r.y, cluster, style);
    }
    clip.right()
}

/// "████░░ 42%" of `done`, "finished", or "" when nothing is known.
fn progress_text(book: &Book, done: Option<f64>, bar: usize) -> String {
    if book.progress.as_ref().is_some_and(|p| p.finished) {
        return if bar == 0 {
            "done".into()
        } else {
            "finished".into()
        };
    }
    let Some(f) = done else {
        return String::new();
    };
    let pct = format!("{:>3.0}%", f * 100.0);
    if bar == 0 {
        return pct;
    }
    format!("{} {pct}", crate::ui::state::downloads::gauge(f, bar))
}
