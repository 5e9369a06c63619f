//! Width-aware text helpers: every width is measured in terminal cells with
//! unicode-width, so CJK (2 cells) and combining marks (0 cells) line up.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthChar;

pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    if c.is_control() {
        0
    } else {
        c.width().unwrap_or(0)
    }
}

/// Cuts `s` to at most `max` cells, ending in `…` when something was cut.
/// Combining marks stay with their base character.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.chars().filter(|c| !c.is_control()).collect();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars().filter(|c| !c.is_control()) {
        let w = char_width(c);
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `fit`, then padded with spaces to exactly `cells` cells.
pub fn fit_pad(s: &str, cells: usize) -> String {
    let mut out = fit(s, cells);
    let w = width(&out);
    out.extend(std::iter::repeat_n(' ', cells.saturating_sub(w)));
    out
}

/// Right-aligned in `cells` cells.
pub fn fit_right(s: &str, cells: usize) -> String {
    let t = fit(s, cells);
    let w = width(&t);
    let mut out: String = std::iter::repeat_n(' ', cells.saturating_sub(w)).collect();
    out.push_str(&t);
    out
}

/// Writes `s` at (x, y) clipped to `area`; returns the x after the text.
/// Never writes outside the buffer, whatever the coordinates.
pub fn put(buf: &mut Buffer, area: Rect, x: u16, y: u16, s: &str, style: Style) -> u16 {
    let area = area.intersection(buf.area);
    if y < area.top() || y >= area.bottom() || x >= area.right() || x < area.left() {
        return x;
    }
    let max = usize::from(area.right() - x);
    buf.set_stringn(x, y, s, max, style).0
}

/// Fills a row of `area` with spaces in `style` (a background bar).
pub fn clear_row(buf: &mut Buffer, area: Rect, y: u16, style: Style) {
    let area = area.intersection(buf.area);
    if y < area.top() || y >= area.bottom() {
        return;
    }
    for x in area.left()..area.right() {
        buf[(x, y)].reset();
        buf[(x, y)].set_style(style);
    }
}

/// Splits `s` into lines of at most `cells` cells at spaces (hard cut for
/// words that are too long). Used for descriptions and overlays.
pub fn wrap(s: &str, cells: usize) -> Vec<String> {
    let cells = cells.max(1);
    let mut lines = Vec::new();
    for para in s.lines() {
        let mut line = String::new();
        let mut w = 0;
        for word in para.split_whitespace() {
            let ww = width(word);
            if w > 0 && w + 1 + ww > cells {
                lines.push(std::mem::take(&mut line));
                w = 0;
            }
            if ww > cells {
                for c in word.chars() {
                    let cw = char_width(c);
                    if w + cw > cells {
                        lines.push(std::mem::take(&mut line));
                        w = 0;
                    }
                    line.push(c);
                    w += cw;
                }
                continue;
            }
            if w > 0 {
                line.push(' ');
                w += 1;
            }
            line.push_str(word);
            w += ww;
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_cjk_and_combining() {
        assert_eq!(width("三体"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(fit("三体问题", 5), "三体…");
        assert_eq!(width(&fit("三体问题", 5)), 5);
        assert_eq!(fit("Cafe\u{301} noir", 5), "Cafe\u{301}…");
        assert_eq!(fit_pad("三", 4), "三  ");
        assert_eq!(fit_right("ab", 4), "  ab");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
    }

    #[test]
    fn put_never_writes_outside() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 5, 2));
        let area = buf.area;
        put(&mut buf, area, 3, 1, "三体问题", Style::default());
        put(&mut buf, area, 9, 9, "x", Style::default());
        put(
            &mut buf,
            Rect::new(0, 0, 50, 50),
            0,
            1,
            "abcdefgh",
            Style::default(),
        );
        assert_eq!(buf[(4, 1)].symbol(), "e");
    }
}
