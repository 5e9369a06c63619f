//! The durable outbox: every sync write is journaled on disk (and fsynced)
//! before the network call, and removed only when that very write succeeded.
//!
//! The journal is a [`RecordLog`] (`durable::log`: framing, torn-tail cut,
//! damaged records skipped and counted) with the magic `EMOB`, locked while
//! open. A record is a `Record`: `put` (an entry), `done` (a tombstone
//! naming the entry's sequence number) or `rejected`. Entries are coalesced
//! per (scope, book, slot): the latest wins. Compaction rewrites the live
//! entries atomically, so the file stays small.
//!
//! A change is always kept: when the journal cannot take it (a full disk,
//! a read-only file system) it is applied in memory all the same (same
//! rules, sent as usual) and the call says why it is not on the disk
//! ([`NotJournaled`]); the outbox then lives in memory
//! ([`Outbox::durability`]) until a later change finds room to rewrite the
//! journal whole.
//!
//! - `entry`: what an entry is ([`Entry`], [`Op`], [`Scope`], [`Slot`]).

mod entry;

pub use entry::*;

use crate::domain::{BookId, EpochMillis};
use crate::durable::{DiskError, Durability, Fault, RecordLog, Recovery};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAGIC: [u8; 4] = *b"EMOB";
/// Compact when the journal holds this many more records than live entries.
const COMPACT_SLACK: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Record {
    Put(Entry),
    Done {
        seq: u64,
    },
    /// The server's refusals of entry `seq` (`None`: cleared for a retry).
    Rejected {
        seq: u64,
        rejection: Option<Rejection>,
    },
}

/// What loading the journal found (whole records, damaged ones skipped,
/// a torn tail cut off).
pub type LoadReport = Recovery;

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("the sync outbox {0} is in use by another earmark process")]
    Locked(PathBuf),
    /// The journal cannot be opened or written: [`DiskError::fault`] says
    /// why (the disk is full, read-only, no permission).
    #[error("{0}")]
    Disk(DiskError),
    #[error("sync outbox {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl OutboxError {
    /// Why nothing can be journaled.
    pub fn fault(&self) -> Fault {
        match self {
            OutboxError::Locked(_) => Fault::Locked,
            OutboxError::Disk(e) => e.fault.clone(),
            OutboxError::Read { source, .. } => Fault::of(source),
        }
    }
}

impl From<DiskError> for OutboxError {
    fn from(e: DiskError) -> Self {
        match e.fault {
            Fault::Locked => OutboxError::Locked(e.path),
            _ => OutboxError::Disk(e),
        }
    }
}

/// A change applied in memory that the journal could not take: `value` is
/// what the call returns, `error` why it is not on the disk.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct NotJournaled<T: std::fmt::Debug> {
    pub value: T,
    pub error: OutboxError,
}

/// `Ok`: applied and journaled; `Err`: applied in memory only.
pub type Journaled<T> = Result<T, NotJournaled<T>>;

fn journaled<T: std::fmt::Debug>(value: T, r: Result<(), OutboxError>) -> Journaled<T> {
    match r {
        Ok(()) => Ok(value),
        Err(error) => Err(NotJournaled { value, error }),
    }
}

/// See the module docs. Holds an exclusive lock on the journal while open.
pub struct Outbox {
    log: RecordLog<Record>,
    /// Live entries by key (coalesced).
    live: BTreeMap<(Scope, BookId, Slot), Entry>,
    next_seq: u64,
    load: LoadReport,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("path", &self.log.path())
            .field("durability", &self.log.durability())
            .field("live", &self.live.len())
            .finish()
    }
}

impl Outbox {
    /// Opens (or creates) the journal at `path` and locks it.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, OutboxError> {
        let path = path.into();
        let (log, records, load) = RecordLog::open(&path, MAGIC, true)?;
        let mut me = Self {
            log,
            live: BTreeMap::new(),
            next_seq: 1,
            load: load.clone(),
        };
        for r in records {
            me.apply(r);
        }
        if load.corrupt_skipped > 0 {
            tracing::warn!(
                path = %path.display(),
                skipped = load.corrupt_skipped,
                "sync outbox: skipped corrupt records"
            );
            me.compact();
        }
        Ok(me)
    }

    /// A journal that lives in memory only, because of `why` (the file
    /// could not be opened): sync keeps one set of rules, not durable.
    pub fn in_memory(why: Fault) -> Self {
        Self {
            log: RecordLog::in_memory(why),
            live: BTreeMap::new(),
            next_seq: 1,
            load: LoadReport::default(),
        }
    }

    /// Whether the queued changes survive the process, and if not, why.
    pub fn durability(&self) -> Durability {
        self.log.durability()
    }

    /// False while the changes live in memory only.
    pub fn is_durable(&self) -> bool {
        self.durability() == Durability::Durable
    }

    /// Reads the journal without locking or changing it (`sync pending`).
    pub fn peek(path: &Path) -> Result<(Vec<Entry>, LoadReport), OutboxError> {
        let (records, load) =
            RecordLog::<Record>::read(path, MAGIC).map_err(|source| OutboxError::Read {
                path: path.to_owned(),
                source,
            })?;
        let mut live: BTreeMap<(Scope, BookId, Slot), Entry> = BTreeMap::new();
        for r in records {
            apply_to(&mut live, r);
        }
        let mut v: Vec<Entry> = live.into_values().collect();
        v.sort_by_key(|e| e.seq);
        Ok((v, load))
    }

    pub fn load_report(&self) -> &LoadReport {
        &self.load
    }

    fn apply(&mut self, r: Record) {
        match &r {
            Record::Put(e) => self.next_seq = self.next_seq.max(e.seq + 1),
            Record::Done { seq } | Record::Rejected { seq, .. } => {
                self.next_seq = self.next_seq.max(seq + 1)
            }
        }
        apply_to(&mut self.live, r);
    }

    /// Applies `r` in memory, then journals it (fsynced).
    fn record(&mut self, r: Record) -> Result<(), OutboxError> {
        apply_to(&mut self.live, r.clone());
        let live = &self.live;
        self.log
            .write(&r, || whole(live))
            .map_err(OutboxError::from)?;
        if self.log.records_in_file() > 2 * self.live.len() + COMPACT_SLACK {
            self.compact();
        }
        Ok(())
    }

    /// Queues a change (journaled, fsynced) and returns its sequence
    /// number. It replaces any queued change of the same scope, book and
    /// slot.
    pub fn push(&mut self, scope: Scope, book: BookId, op: Op, now: EpochMillis) -> Journaled<u64> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            seq,
            scope,
            book,
            op,
            queued_at: now,
            rejected: None,
        };
        journaled(seq, self.record(Record::Put(entry)))
    }

    /// Removes the entry `seq` after its own success (or a discard). A newer
    /// entry that replaced it stays. Returns whether it was still queued.
    pub fn complete(&mut self, seq: u64) -> Journaled<bool> {
        if !self.live.values().any(|e| e.seq == seq) {
            return Ok(false);
        }
        journaled(true, self.record(Record::Done { seq }))
    }

    /// Live entries, oldest first.
    pub fn entries(&self) -> Vec<&Entry> {
        let mut v: Vec<&Entry> = self.live.values().collect();
        v.sort_by_key(|e| e.seq);
        v
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Entries that belong to `scope`.
    pub fn in_scope(&self, scope: &Scope) -> Vec<&Entry> {
        self.entries()
            .into_iter()
            .filter(|e| &e.scope == scope)
            .collect()
    }

    /// Counts one refusal of entry `seq` by the server (journaled); returns
    /// the entry's refusals so far, or `None` when it is gone.
    pub fn reject(&mut self, seq: u64, message: String) -> Journaled<Option<u32>> {
        let Some(e) = self.live.values().find(|e| e.seq == seq) else {
            return Ok(None);
        };
        let count = e.rejected.as_ref().map_or(0, |r| r.count) + 1;
        let rejection = Some(Rejection { count, message });
        journaled(
            Some(count),
            self.record(Record::Rejected { seq, rejection }),
        )
    }

    /// Clears the refusals of the parked entries of `scope`, so they are
    /// sent again. Returns how many.
    pub fn unpark(&mut self, scope: &Scope) -> Journaled<usize> {
        let parked: Vec<u64> = self
            .in_scope(scope)
            .iter()
            .filter(|e| e.is_parked())
            .map(|e| e.seq)
            .collect();
        let mut failed = None;
        for &seq in &parked {
            let r = self.record(Record::Rejected {
                seq,
                rejection: None,
            });
            failed = failed.or(r.err());
        }
        journaled(parked.len(), failed.map_or(Ok(()), Err))
    }

    /// Entries held back because they belong to another scope.
    pub fn held(&self, scope: &Scope) -> Vec<&Entry> {
        self.entries()
            .into_iter()
            .filter(|e| &e.scope != scope)
            .collect()
    }

    /// Moves held entries to `scope` (the user chose to push them to the
    /// current server/account). Returns how many moved.
    pub fn adopt(&mut self, scope: &Scope, now: EpochMillis) -> Journaled<usize> {
        let held: Vec<Entry> = self.held(scope).into_iter().cloned().collect();
        let mut n = 0;
        let mut failed = None;
        for e in held {
            let key = (scope.clone(), e.book.clone(), e.op.slot());
            // An entry already queued for the new scope is newer: keep it.
            if self.live.get(&key).is_none_or(|cur| cur.seq < e.seq) {
                let r = self.push(scope.clone(), e.book.clone(), e.op.clone(), now);
                failed = failed.or(r.err().map(|n| n.error));
                n += 1;
            }
            let r = self.complete(e.seq);
            failed = failed.or(r.err().map(|n| n.error));
        }
        journaled(n, failed.map_or(Ok(()), Err))
    }

    /// Rewrites the journal with only the live entries (atomically: a
    /// crash at any point leaves the old or the new journal). A failure
    /// leaves the old journal, which says the same at more length.
    fn compact(&mut self) {
        if let Err(e) = self.log.rewrite(&whole(&self.live)) {
            tracing::warn!("sync outbox: compaction failed (the journal is kept as it was): {e}");
        }
    }
}

/// The records that say what `live` holds.
fn whole(live: &BTreeMap<(Scope, BookId, Slot), Entry>) -> Vec<Record> {
    let mut v: Vec<&Entry> = live.values().collect();
    v.sort_by_key(|e| e.seq);
    v.into_iter().map(|e| Record::Put(e.clone())).collect()
}

fn apply_to(live: &mut BTreeMap<(Scope, BookId, Slot), Entry>, r: Record) {
    match r {
        Record::Put(e) => {
            let key = e.key();
            if live.get(&key).is_none_or(|cur| cur.seq < e.seq) {
                live.insert(key, e);
            }
        }
        Record::Done { seq } => live.retain(|_, e| e.seq != seq),
        Record::Rejected { seq, rejection } => {
            if let Some(e) = live.values_mut().find(|e| e.seq == seq) {
                e.rejected = rejection;
            }
        }
    }
}

#[cfg(test)]
use crate::durable::HEADER;

#[cfg(test)]
mod tests;
