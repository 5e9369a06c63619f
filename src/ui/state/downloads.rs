//! Downloaded books as the player shows them: a marker per book in the
//! library, a gauge while one downloads, and which books can play while
//! the server is away (only complete downloads).

use crate::domain::BookId;
use crate::domain::session::Downloaded;
use std::collections::{BTreeMap, HashMap};

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
                format!("downloading {} {:.0}%", gauge(f, bar), f * 100.0)
            }
        }
    }
}

/// `f` (0 to 1) of `cells` filled: "███░░░".
pub fn gauge(f: f64, cells: usize) -> String {
    let full = ((f * cells as f64).round() as usize).min(cells);
    format!("{}{}", "█".repeat(full), "░".repeat(cells - full))
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Downloads {
    /// What the session found on disk (also another earmark's downloads).
    disk: BTreeMap<BookId, Downloaded>,
    /// Downloads this player ran: their gauges, and how they ended until
    /// the disk's next look says it.
    here: HashMap<BookId, DownloadMark>,
}

impl Downloads {
    pub fn mark(&self, id: &BookId) -> Option<DownloadMark> {
        let here = self.here.get(id).copied();
        if let Some(m @ DownloadMark::Running { .. }) = here {
            return Some(m);
        }
        let disk = self.disk.get(id).map(|d| match d {
            Downloaded::Complete => DownloadMark::Complete,
            Downloaded::Partial => DownloadMark::Partial,
        });
        disk.or(here)
    }

    /// Plays without the server.
    pub fn is_complete(&self, id: &BookId) -> bool {
        self.mark(id) == Some(DownloadMark::Complete)
    }

    /// What the session found on disk; a download still running keeps
    /// its gauge.
    pub fn on_disk(&mut self, disk: &BTreeMap<BookId, Downloaded>) {
        if *disk != self.disk {
            self.disk = disk.clone();
            self.here
                .retain(|_, m| matches!(m, DownloadMark::Running { .. }));
        }
    }

    pub fn progress(&mut self, id: BookId, done: u64, total: u64) {
        self.here.insert(id, DownloadMark::Running { done, total });
    }

    /// A download ended (done or failed); what is on disk comes next.
    pub fn ended(&mut self, id: &BookId, complete: bool) {
        let m = if complete {
            DownloadMark::Complete
        } else {
            DownloadMark::Partial
        };
        self.here.insert(id.clone(), m);
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
        d.on_disk(&[(b.clone(), Downloaded::Complete)].into_iter().collect());
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
