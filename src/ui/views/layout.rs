//! Where things go for a given terminal size. Shared by the views and the
//! reducer (page size, mouse hit-testing), so both agree.

use ratatui::layout::Rect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub full: Rect,
    /// One line: screen name, counts, connection state.
    pub header: Rect,
    /// The screen's own area.
    pub main: Rect,
    /// The player bar, at the bottom, always there.
    pub bar: Rect,
}

impl Areas {
    pub fn compute(w: u16, h: u16) -> Areas {
        let full = Rect::new(0, 0, w, h);
        let bar_h = match h {
            0..=4 => h.min(1),
            5..=7 => 1,
            8..=13 => 3,
            _ => 4,
        };
        let header_h = u16::from(h >= 3);
        let main_h = h.saturating_sub(bar_h + header_h);
        Areas {
            full,
            header: Rect::new(0, 0, w, header_h),
            main: Rect::new(0, header_h, w, main_h),
            bar: Rect::new(0, header_h + main_h, w, bar_h),
        }
    }

    /// Library: the first main line is the search/filter line.
    pub fn list(&self) -> Rect {
        let m = self.main;
        Rect::new(
            m.x,
            m.y + 1.min(m.height),
            m.width,
            m.height.saturating_sub(1),
        )
    }

    pub fn list_rows(&self) -> usize {
        usize::from(self.list().height)
    }

    /// The row of the library list at screen line `y`.
    pub fn list_row(&self, y: u16) -> Option<usize> {
        let l = self.list();
        (y >= l.top() && y < l.bottom()).then(|| usize::from(y - l.top()))
    }

    /// The whole-book progress bar's cells (last bar line, after its label).
    pub fn book_bar(&self) -> Option<Rect> {
        if self.bar.height < 3 {
            return None;
        }
        let y = self.bar.bottom() - 1;
        let (label, times) = bar_margins(self.bar.width);
        let width = self.bar.width.saturating_sub(label + times);
        (width >= 4).then(|| Rect::new(self.bar.x + label, y, width, 1))
    }

    /// Where in the book (0..=1) a click at (x, y) on the book bar points.
    pub fn book_bar_fraction(&self, x: u16, y: u16) -> Option<f64> {
        let r = self.book_bar()?;
        (y == r.y && x >= r.x && x < r.right())
            .then(|| f64::from(x - r.x) / f64::from(r.width.saturating_sub(1).max(1)))
    }
}

/// Cells before a progress bar (its label) and after it (the times).
pub fn bar_margins(width: u16) -> (u16, u16) {
    if width >= 60 {
        (9, 22)
    } else if width >= 30 {
        (3, 15)
    } else {
        (0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_fit_every_size() {
        for w in 0..100 {
            for h in 0..40 {
                let a = Areas::compute(w, h);
                assert!(a.header.height + a.main.height + a.bar.height <= h);
                assert!(a.bar.bottom() <= h);
                assert!(a.list().bottom() <= a.main.bottom().max(a.list().y));
            }
        }
        let a = Areas::compute(80, 24);
        assert_eq!((a.main.height, a.bar.height, a.list_rows()), (19, 4, 18));
    }
}
