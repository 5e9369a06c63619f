//! Width-aware text helpers. Text is cut only between grapheme clusters
//! (a base letter with its combining marks, an emoji with its modifiers and
//! joiners, a flag's two letters stay whole), and every width is measured
//! in terminal cells the way ratatui's buffer will draw the cluster
//! (`CellWidth`, unicode-width underneath): CJK takes two cells, combining
//! marks none, so columns line up in every script.

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_segmentation::UnicodeSegmentation;

/// The grapheme clusters of `s` that are drawn, with their widths in
/// cells. Clusters holding a control character are not drawn (the buffer
/// drops them too), nor are stray zero-width ones.
pub fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true)
        .filter(|g| !g.contains(char::is_control))
        .map(|g| (g, usize::from(g.cell_width())))
        .filter(|(_, w)| *w > 0)
}

pub fn width(s: &str) -> usize {
    clusters(s).map(|(_, w)| w).sum()
}

/// Cuts `s` to at most `max` cells, ending in `…` when something was cut.
/// Never splits a grapheme cluster; a wide one that does not fit whole is
/// left out.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return clusters(s).map(|(g, _)| g).collect();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for (g, w) in clusters(s) {
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('…');
    out
}

/// `fit`, then padded with spaces to exactly `cells` cells.
pub fn fit_pad(s: &str, cells: usize) -> String {
    let t = fit(s, cells);
    format!("{t}{}", " ".repeat(cells.saturating_sub(width(&t))))
}

/// Right-aligned in `cells` cells.
pub fn fit_right(s: &str, cells: usize) -> String {
    let t = fit(s, cells);
    format!("{}{t}", " ".repeat(cells.saturating_sub(width(&t))))
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
                for (g, gw) in clusters(word) {
                    if w > 0 && w + gw > cells {
                        lines.push(std::mem::take(&mut line));
                        w = 0;
                    }
                    line.push_str(g);
                    w += gw;
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
    fn never_splits_a_grapheme_cluster() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"; // 👨‍👩‍👧
        let flag = "\u{1F1E9}\u{1F1EA}"; // 🇩🇪
        let heart = "\u{2764}\u{FE0F}"; // ❤️ (emoji presentation)
        for g in [family, flag, heart, "\u{1F44D}\u{1F3FD}"] {
            assert_eq!(width(g), 2, "{g:?}");
        }
        assert_eq!(width(&format!("a{family}b")), 4);
        // A cut in the middle of the cluster's code points would leave a
        // lone man or a lone regional indicator: the whole cluster goes.
        assert_eq!(fit(&format!("ab{family}cd"), 4), "ab…");
        assert_eq!(fit(&format!("ab{family}cd"), 5), format!("ab{family}…"));
        assert_eq!(
            fit(&format!("{flag}{flag}{flag}"), 5),
            format!("{flag}{flag}…")
        );
        // Several combining marks stay on their letter.
        let e = "e\u{301}\u{323}";
        assert_eq!(width(e), 1);
        assert_eq!(fit(&format!("{e}{e}{e}{e}"), 3), format!("{e}{e}…"));
        assert_eq!(fit_pad(&format!("{family}x"), 4), format!("{family}x "));
        assert_eq!(wrap(&format!("{flag}{flag}{flag}"), 3), [flag, flag, flag]);
        // Control characters are not drawn and take no cell.
        assert_eq!(fit("a\tb\nc", 9), "abc");
    }

    #[test]
    fn widths_are_what_the_buffer_draws() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        for s in ["三体 · x", "Cafe\u{301}", family, "🇯🇵 東京", "ｶﾞ"] {
            let mut buf = Buffer::empty(Rect::new(0, 0, 20, 1));
            let area = buf.area;
            let end = put(&mut buf, area, 0, 0, s, Style::default());
            assert_eq!(usize::from(end), width(s), "{s:?}");
        }
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
