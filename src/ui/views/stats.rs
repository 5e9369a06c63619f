//! The listening statistics screen: the last 30 days as a bar chart (a
//! sparkline on narrow terminals), totals, streaks, books finished, and
//! the most listened books.

use super::text::{fit, fit_pad, fit_right, put, width};
use crate::domain::ListeningStats;
use crate::ui::state::{App, fmt_time};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::widgets::{Bar, BarChart, BarGroup, Sparkline, Widget};

/// Hours and minutes for totals: "12 h 05 min", "25 min".
pub fn fmt_hours(secs: f64) -> String {
    let m = (secs.max(0.0) / 60.0).round() as u64;
    if m >= 60 {
        format!("{} h {:02} min", m / 60, m % 60)
    } else {
        format!("{m} min")
    }
}

/// Draws the statistics; the cursor goes to their first line.
pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect) -> Option<Position> {
    if r.height == 0 || r.width < 4 {
        return None;
    }
    let first = Some(Position::new(r.x + 1, r.y));
    let inner = usize::from(r.width).saturating_sub(2);
    let Some(s) = &app.stats else {
        let reading = fit("Reading the statistics…", inner);
        put(buf, r, r.x + 1, r.y, &reading, theme.dim);
        return first;
    };
    let mut y = r.y;
    let today = s.last_30.last().map_or(0.0, |d| d.wall_secs);
    let lines = [
        (
            format!(
                "Today {} · streak {} d (longest {} d) · {} finished",
                fmt_hours(today),
                s.current_streak_days,
                s.longest_streak_days,
                s.books_finished
            ),
            theme.title,
        ),
        (
            format!(
                "In all {} listened · {} of books at your speeds",
                fmt_hours(s.total_wall_secs),
                fmt_hours(s.total_media_secs)
            ),
            theme.dim,
        ),
    ];
    for (text, style) in lines {
        if y < r.bottom() {
            put(buf, r, r.x + 1, y, &fit(&text, inner), style);
            y += 1;
        }
    }
    let books_rows = usize::from(r.height / 4).min(s.books.len());
    let chart_h = r
        .bottom()
        .saturating_sub(y + 1 + books_rows as u16 + u16::from(books_rows > 0));
    if chart_h >= 2 {
        let area = Rect::new(r.x + 1, y, r.width.saturating_sub(2), chart_h + 1);
        match app.settings.accessible {
            true => days_in_words(s, theme, buf, area),
            false => chart(s, theme, buf, area),
        }
        y += chart_h + 1;
    }
    let books = Rect::new(r.x, y, r.width, r.bottom().saturating_sub(y));
    most_listened(app, s, theme, buf, books, books_rows);
    first
}

/// The days in words instead of bars: newest first, those listened.
fn days_in_words(s: &ListeningStats, theme: &Theme, buf: &mut Buffer, r: Rect) {
    let days = s
        .last_30
        .iter()
        .rev()
        .enumerate()
        .filter(|(_, d)| d.wall_secs > 0.0);
    for (i, (ago, d)) in days.take(usize::from(r.height)).enumerate() {
        let when = match ago {
            0 => "today".to_owned(),
            1 => "yesterday".to_owned(),
            n => format!("{n} days ago"),
        };
        let line = fit(
            &format!("{when}: {}", fmt_hours(d.wall_secs)),
            usize::from(r.width),
        );
        put(buf, r, r.x, r.y + i as u16, &line, theme.base);
    }
}

/// The last 30 days' minutes as bars (a sparkline when narrow), and the
/// axis below them (the last row of `r`).
fn chart(s: &ListeningStats, theme: &Theme, buf: &mut Buffer, r: Rect) {
    let area = Rect::new(r.x, r.y, r.width, r.height.saturating_sub(1));
    let minutes: Vec<u64> = s
        .last_30
        .iter()
        .map(|d| (d.wall_secs / 60.0).round() as u64)
        .collect();
    if area.width >= 60 {
        let bars: Vec<Bar> = minutes
            .iter()
            .map(|m| Bar::default().value(*m).text_value(String::new()))
            .collect();
        BarChart::default()
            .data(BarGroup::default().bars(&bars))
            .bar_width(1)
            .bar_gap(1)
            .bar_style(theme.bar_done)
            .render(area, buf);
    } else {
        let w = usize::from(area.width).min(minutes.len());
        Sparkline::default()
            .data(&minutes[minutes.len() - w..])
            .style(theme.bar_done)
            .render(area, buf);
    }
    let inner = usize::from(r.width);
    let most = minutes.iter().max().copied().unwrap_or(0);
    let axis_w = if area.width >= 60 { 60 } else { inner.min(30) };
    let left = match axis_w >= 60 {
        true => "30 days ago",
        false => "days ago",
    };
    let right = format!("today (top {most} min)");
    let gap = axis_w.saturating_sub(width(left) + width(&right));
    let axis = format!("{left}{}{right}", " ".repeat(gap));
    put(buf, r, r.x, area.bottom(), &fit(&axis, inner), theme.dim);
}

/// The most listened books, `rows` of them.
fn most_listened(
    app: &App,
    s: &ListeningStats,
    theme: &Theme,
    buf: &mut Buffer,
    r: Rect,
    rows: usize,
) {
    let inner = usize::from(r.width).saturating_sub(2);
    for (i, b) in s
        .books
        .iter()
        .take(rows.min(usize::from(r.height)))
        .enumerate()
    {
        let title = app
            .library
            .get(&b.book_id)
            .map_or_else(|| b.book_id.to_string(), |book| book.title.clone());
        let right = format!(
            "{}{}",
            fmt_time(b.wall_secs),
            match (b.finished, app.settings.accessible) {
                (true, false) => " ✓",
                (true, true) => " finished",
                (false, _) => "",
            }
        );
        let right_w = width(&right).min(inner / 2);
        let text = format!(
            "{} {}",
            fit_pad(&title, inner.saturating_sub(right_w + 1)),
            fit_right(&right, right_w)
        );
        put(buf, r, r.x + 1, r.y + i as u16, &text, theme.base);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hours_read_naturally() {
        assert_eq!(super::fmt_hours(0.0), "0 min");
        assert_eq!(super::fmt_hours(25.0 * 60.0), "25 min");
        assert_eq!(super::fmt_hours(3600.0 * 12.0 + 300.0), "12 h 05 min");
    }
}
