//! Downloaded books as the player shows them: a marker per book in the
//! library, a gauge while one downloads, and which books can play while
//! the server is away (only complete downloads).

use crate::domain::BookId;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadMark {
    /// Every file is on disk: plays without the server.
    Complete,
    /// Started, not finished: the download key resumes it.
    Partial,
    /// Downloading now.
    Running { done: u64, total: u64 },
}

impl DownloadMark {
    /// The library's one-cell marker.
    pub fn symbol(self) -> &'static str {
        match self {
            DownloadMark::Complete => "↓",
            DownloadMark::Partial | DownloadMark::Running { .. } => "⇣",
        }
    }

    /// "downloaded", "downloading ███░░░ 42%", "partly downloaded".
    pub fn describe(self, bar: usize) -> String {
        match self {
            DownloadMark::Complete => "downloaded".into(),
            DownloadMark::Partial => "partly downloaded (D resumes)".into(),
            DownloadMark::Running { done, total } => {
                let f = if total == 0 {
                    0.0
                } else {
                    (done as f64 / total as f64).clamp(0.0, 1.0)
                };
                let full = ((f * bar as f64).round() as usize).min(bar);
                format!(
                    "downloading {}{} {:.0}%",
                    "█".repeat(full),
                    "░".repeat(bar - full),
                    f * 100.0
                )
            }
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Downloads {
    marks: HashMap<BookId, DownloadMark>,
}

impl Downloads {
    pub fn mark(&self, id: &BookId) -> Option<DownloadMark> {
        self.marks.get(id).copied()
    }

    /// Plays without the server.
    pub fn is_complete(&self, id: &BookId) -> bool {
        self.mark(id) == Some(DownloadMark::Complete)
    }

    /// What is on disk now; a download still running keeps its gauge.
    pub fn set_all(&mut self, marks: Vec<(BookId, DownloadMark)>) {
        let running: Vec<(BookId, DownloadMark)> = self
            .marks
            .iter()
            .filter(|(_, m)| matches!(m, DownloadMark::Running { .. }))
            .map(|(b, m)| (b.clone(), *m))
            .collect();
        self.marks = marks.into_iter().collect();
        for (b, m) in running {
            if self.marks.get(&b) != Some(&DownloadMark::Complete) {
                self.marks.insert(b, m);
            }
        }
    }

    pub fn progress(&mut self, id: BookId, done: u64, total: u64) {
        self.marks.insert(id, DownloadMark::Running { done, total });
    }

    /// A download ended (done or failed); what is on disk comes next.
    pub fn ended(&mut self, id: &BookId, complete: bool) {
        let m = if complete {
            DownloadMark::Complete
        } else {
            DownloadMark::Partial
        };
        self.marks.insert(id.clone(), m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_download_keeps_its_gauge_when_the_disk_list_arrives() {
        let mut d = Downloads::default();
        let (a, b) = (BookId::new("a"), BookId::new("b"));
        d.progress(a.clone(), 5, 10);
        d.set_all(vec![(b.clone(), DownloadMark::Complete)]);
        assert_eq!(
            d.mark(&a),
            Some(DownloadMark::Running { done: 5, total: 10 })
        );
        assert!(d.is_complete(&b));
        d.ended(&a, true);
        assert!(d.is_complete(&a));
        assert_eq!(
            DownloadMark::Running { done: 1, total: 4 }.describe(4),
            "downloading █░░░ 25%"
        );
    }
}
