//! Up next on screen: the play next list's screen (its order, what plays
//! after it), the countdown notice when a book ends, and the player bar's
//! "next: …".

use super::text::{fit, fit_pad, put};
use crate::domain::{NextFrom, Opening};
use crate::ui::keymap::Action;
use crate::ui::state::App;
use crate::ui::state::up_next::rule;
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;

/// The list screen; the cursor goes to the selected row.
pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    if r.height == 0 || r.width < 4 {
        return None;
    }
    let inner = usize::from(r.width).saturating_sub(2);
    let u = &app.snap.up_next;
    let mut y = r.y;
    let mut line = |y: &mut u16, text: &str, style: Style| {
        if *y < r.bottom() {
            put(buf, r, r.x + 1, *y, &fit(text, inner), style);
            *y += 1;
        }
    };
    line(&mut y, rule(u.mode), theme.dim);
    let keys = format!(
        "{} from a book or the library adds · {}/{} move · {} removes · Enter opens",
        app.keymap.first_label(Action::UpNextAdd),
        app.keymap.first_label(Action::MoveEarlier),
        app.keymap.first_label(Action::MoveLater),
        app.keymap.first_label(Action::Delete),
    );
    line(&mut y, &keys, theme.dim);
    if u.list.is_empty() {
        line(&mut y, "Nothing is queued.", theme.base);
        return Some(Position::new(r.x + 1, y.saturating_sub(1)));
    }
    let rows = usize::from(r.bottom().saturating_sub(y));
    if rows == 0 {
        return Some(Position::new(r.x + 1, r.y));
    }
    // The selected row stays in view.
    let cursor = app.up_next.cursor;
    let first = cursor.saturating_sub(rows.saturating_sub(1));
    let mut at = None;
    for (i, q) in u.list.iter().enumerate().skip(first).take(rows) {
        let book = app.library.get(&q.id);
        let title = book.map_or(q.title.as_str(), |b| b.title.as_str());
        let by = book
            .and_then(|b| b.authors.first())
            .map(|a| format!(" · {a}"))
            .unwrap_or_default();
        let series = book
            .and_then(|b| b.series.first())
            .map(|s| format!(" · {}", s.label()))
            .unwrap_or_default();
        // A finished book will start over: said, not coloured.
        let again = match Opening::of(book.and_then(|b| b.progress.as_ref())) {
            Opening::Restart => " · finished: from the start",
            Opening::Resume => "",
        };
        let text = format!("{:>2}. {title}{again}{by}{series}", i + 1);
        let style = if i == cursor {
            theme.selected
        } else {
            theme.base
        };
        put(buf, r, r.x + 1, y, &fit_pad(&text, inner), style);
        if i == cursor {
            at = Some(Position::new(r.x + 1, y));
        }
        y += 1;
    }
    at
}

/// The notice while a book's end counts down to the next one: its title
/// and lines, for the box the overlays draw.
pub fn countdown(app: &App, theme: &Theme) -> Option<(String, Vec<(String, Style)>)> {
    let c = app.snap.up_next.countdown.as_ref()?;
    let left = ((c.starts_at - app.wall_now()).max(0) as u64).div_ceil(1000);
    let when = if left == 0 {
        "starting…".to_owned()
    } else {
        format!("starts in {left} s")
    };
    let from = match &c.next.from {
        NextFrom::List => "the next book of your up next list".to_owned(),
        NextFrom::Series(s) => match app
            .library
            .get(&c.next.book)
            .and_then(|b| b.series.iter().find(|r| &r.name == s).map(|r| r.label()))
        {
            Some(label) => format!("next in the series: {label}"),
            None => format!("next in the series {s}"),
        },
    };
    let place = app
        .library
        .get(&c.next.book)
        .and_then(|b| b.progress.as_ref());
    // The library's copy guesses until the server's answer decides.
    let how = match c.opening.unwrap_or_else(|| Opening::of(place)) {
        Opening::Resume => "from where you left it",
        Opening::Restart => "from the beginning (you had finished it)",
    };
    let now_key = app.keymap.first_label(Action::NextChapter);
    Some((
        "Up next".to_owned(),
        vec![
            (format!("“{}” {when}", c.next.title), theme.title),
            (format!("{from}, {how}"), theme.dim),
            (
                format!("any key cancels ({now_key}: start now)"),
                theme.accent,
            ),
        ],
    ))
}

/// The player bar's "next: …" (what plays after this book), in at most
/// `room` cells.
pub fn bar_next(app: &App, room: usize) -> Option<String> {
    let next = app.snap.up_next.next.as_ref()?;
    (room >= 12).then(|| fit(&format!("next: {}", next.title), room))
}
