//! What this device remembers about listening, per profile, in one
//! append-only crash-safe log (`listening.journal` beside the outbox):
//! the place history of each book (the place before every jump, last 50
//! per book) and the time listened per day and per book, plus which books
//! were finished here. Facts are only added; the log is compacted on open.
//!
//! - the log is a `durable::RecordLog` (magic `EMLG`): a torn tail is
//!   cut, a damaged record skipped and counted ([`Listening::recovered`]),
//!   and a failed append is kept in memory and said once (`failed`);
//! - `stats`: the pure tally and summary;
//! - the place history's rule is `domain::push_place_mark` (the player's
//!   screen keeps the same list with the same rule).

pub mod stats;

use crate::domain::{
    BookId, EpochMillis, ListeningStats, PlaceMark, civil_date, push_place_mark, utc_offset_secs,
};
use crate::durable::{Fault, RecordLog, Recovery};
use serde::{Deserialize, Serialize};
use stats::Days;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Compact when the log holds this many more records than it needs.
const COMPACT_SLACK: usize = 512;
const MAGIC: [u8; 4] = *b"EMLG";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
enum Rec {
    #[serde(rename_all = "camelCase")]
    Mark { book: BookId, mark: PlaceMark },
    #[serde(rename_all = "camelCase")]
    Listened {
        book: BookId,
        day: i64,
        wall_ms: u64,
        media_ms: u64,
    },
    #[serde(rename_all = "camelCase")]
    Finished {
        book: BookId,
        finished: bool,
        at: EpochMillis,
    },
}

/// The log's path in a profile's sync directory.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("listening.journal")
}

#[derive(Default)]
struct Facts {
    marks: BTreeMap<BookId, Vec<PlaceMark>>,
    days: Days,
    finished: BTreeMap<BookId, bool>,
}

impl Facts {
    fn apply(&mut self, r: Rec) {
        match r {
            Rec::Mark { book, mark } => {
                push_place_mark(self.marks.entry(book).or_default(), mark);
            }
            Rec::Listened {
                book,
                day,
                wall_ms,
                media_ms,
            } => {
                let e = self.days.entry((day, book)).or_default();
                e.0 += wall_ms;
                e.1 += media_ms;
            }
            Rec::Finished { book, finished, .. } => {
                self.finished.insert(book, finished);
            }
        }
    }

    fn of(records: Vec<Rec>) -> Facts {
        let mut f = Facts::default();
        for r in records {
            f.apply(r);
        }
        f
    }

    /// The fewest records that say the same.
    fn compacted(&self) -> Vec<Rec> {
        let mut out: Vec<Rec> = Vec::new();
        for (book, marks) in &self.marks {
            out.extend(marks.iter().map(|m| Rec::Mark {
                book: book.clone(),
                mark: m.clone(),
            }));
        }
        for ((day, book), (w, m)) in &self.days {
            out.push(Rec::Listened {
                book: book.clone(),
                day: *day,
                wall_ms: *w,
                media_ms: *m,
            });
        }
        for (book, finished) in &self.finished {
            out.push(Rec::Finished {
                book: book.clone(),
                finished: *finished,
                at: 0,
            });
        }
        out
    }
}

/// The writer (the sync worker owns the only one per profile).
pub struct Listening {
    log: RecordLog<Rec>,
    facts: Facts,
    /// Set when a write failed: said once, then kept in memory.
    pub failed: Option<String>,
    /// A write failed and nothing was written since (said once).
    unsaved: bool,
    recovered: Recovery,
}

impl Listening {
    /// Opens the log; a log that cannot be opened is kept in memory (and
    /// `failed` says why).
    pub fn open(dir: &Path) -> Listening {
        let path = path_in(dir);
        match RecordLog::open(&path, MAGIC, false) {
            Ok((log, records, recovered)) => {
                if recovered.corrupt_skipped > 0 {
                    tracing::warn!(path = %path.display(), skipped = recovered.corrupt_skipped, "listening log: skipped damaged records");
                }
                let n = records.len();
                let facts = Facts::of(records);
                let mut me = Listening {
                    log,
                    facts,
                    failed: None,
                    unsaved: false,
                    recovered,
                };
                let needed = me.facts.compacted();
                if n > needed.len() + COMPACT_SLACK
                    && let Err(e) = me.log.rewrite(&needed)
                {
                    tracing::warn!("listening log: compaction failed: {e}");
                }
                me
            }
            Err(e) => {
                tracing::error!("listening log: {e}");
                Listening {
                    log: RecordLog::in_memory(e.fault.clone()),
                    facts: Facts::default(),
                    failed: Some(format!("the listening history cannot be saved ({e})")),
                    unsaved: true,
                    recovered: Recovery::default(),
                }
            }
        }
    }

    /// In `dir`, or in memory without one.
    pub fn open_in(dir: Option<&Path>) -> Listening {
        dir.map_or_else(Listening::in_memory, Listening::open)
    }

    pub fn in_memory() -> Listening {
        Listening {
            log: RecordLog::in_memory(Fault::Other("no data directory".into())),
            facts: Facts::default(),
            failed: None,
            unsaved: false,
            recovered: Recovery::default(),
        }
    }

    /// What opening the log found: whole records kept, damaged ones
    /// skipped, a torn tail cut off.
    pub fn recovered(&self) -> &Recovery {
        &self.recovered
    }

    /// Applies `r`, then appends it; when the file cannot take it, the fact
    /// stays in memory (the log is rewritten whole once it can).
    fn write(&mut self, r: Rec) {
        self.facts.apply(r.clone());
        let facts = &self.facts;
        match self.log.write(&r, || facts.compacted()) {
            Ok(()) => self.unsaved = false,
            Err(e) => {
                tracing::error!("listening log: {e}");
                if !self.unsaved {
                    self.unsaved = true;
                    self.failed = Some(format!("the listening history cannot be saved ({e})"));
                }
            }
        }
    }

    /// Records the place before a jump. False when it was folded into the
    /// previous mark (skips in a row) and nothing was written.
    pub fn mark(&mut self, book: BookId, mark: PlaceMark) -> bool {
        let mut probe = self.facts.marks.get(&book).cloned().unwrap_or_default();
        if !push_place_mark(&mut probe, mark.clone()) {
            return false;
        }
        self.write(Rec::Mark { book, mark });
        true
    }

    pub fn history(&self, book: &BookId) -> Vec<PlaceMark> {
        self.facts.marks.get(book).cloned().unwrap_or_default()
    }

    pub fn listened(&mut self, days: Days) {
        for ((day, book), (wall_ms, media_ms)) in days {
            if wall_ms > 0 {
                self.write(Rec::Listened {
                    book,
                    day,
                    wall_ms,
                    media_ms,
                });
            }
        }
    }

    pub fn finished(&mut self, book: BookId, finished: bool, at: EpochMillis) {
        if self.facts.finished.get(&book) != Some(&finished) {
            self.write(Rec::Finished { book, finished, at });
        }
    }

    pub fn stats(&self, today: i64) -> ListeningStats {
        stats::summarize(&self.facts.days, &self.facts.finished, today)
    }
}

/// Reads a profile's log without taking it (for `earmark history|stats`,
/// while a player may be running). Errors name the file.
fn read_facts(dir: &Path) -> Result<Facts, String> {
    let path = path_in(dir);
    let (records, recovered) = RecordLog::<Rec>::read(&path, MAGIC)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if recovered.corrupt_skipped > 0 {
        tracing::warn!(path = %path.display(), skipped = recovered.corrupt_skipped, "listening log: skipped damaged records");
    }
    Ok(Facts::of(records))
}

/// A book's place history on this device, oldest first.
pub fn read_history(dir: &Path, book: &BookId) -> Result<Vec<PlaceMark>, String> {
    Ok(read_facts(dir)?.marks.remove(book).unwrap_or_default())
}

/// This device's listening statistics.
pub fn read_stats(dir: &Path, now: EpochMillis) -> Result<ListeningStats, String> {
    let f = read_facts(dir)?;
    Ok(stats::summarize(&f.days, &f.finished, local_day(now)))
}

/// The local calendar day of a wall time, as days since 1970-01-01.
pub fn local_day(at: EpochMillis) -> i64 {
    let secs = at.div_euclid(1000);
    let offset = utc_offset_secs(secs);
    (secs + offset).div_euclid(86_400)
}

/// `YYYY-MM-DD` of a local day number.
pub fn day_name(day: i64) -> String {
    civil_date(day)
}

/// `YYYY-MM-DD HH:MM` of a wall time, local.
pub fn local_clock(at: EpochMillis) -> String {
    let secs = at.div_euclid(1000) + utc_offset_secs(at.div_euclid(1000));
    let (day, s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    format!("{} {:02}:{:02}", civil_date(day), s / 3600, (s / 60) % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ChapterId, JumpCause};

    fn mark(at: i64, pos: f64) -> PlaceMark {
        PlaceMark {
            at,
            chapter_id: ChapterId::new("c"),
            position: pos,
            cause: JumpCause::Seek,
        }
    }

    #[test]
    fn marks_and_listening_survive_a_restart_and_compaction_keeps_fifty() {
        let dir = tempfile::tempdir().unwrap();
        let b = BookId::new("b");
        {
            let mut l = Listening::open(dir.path());
            for i in 0..700 {
                l.mark(b.clone(), mark(i * 10_000, i as f64));
            }
            l.listened(Days::from([((3, b.clone()), (5_000, 10_000))]));
            l.finished(b.clone(), true, 1);
        }
        let l = Listening::open(dir.path());
        let h = l.history(&b);
        assert_eq!(h.len(), 50);
        assert_eq!(h.last().unwrap().position, 699.0);
        assert_eq!(l.stats(3).total_media_secs, 10.0);
        assert_eq!(l.stats(3).books_finished, 1);
        // Compacted on open: 50 marks, 1 day, 1 finished.
        assert_eq!(l.log.records_in_file(), 52);
        assert_eq!(read_history(dir.path(), &b).unwrap(), h);
    }

    #[test]
    fn local_days_advance_once_a_day() {
        let day = local_day(1_700_000_000_000);
        assert_eq!(local_day(1_700_000_000_000 + 86_400_000), day + 1);
    }
}
