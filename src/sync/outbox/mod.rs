//! The durable outbox: every sync write is journaled on disk (and fsynced)
//! before the network call, and removed only when that very write succeeded.
//!
//! Journal format (append-only, little endian), one record after another:
//!
//! ```text
//! magic "EMOB" (4 bytes) | payload length u32 | CRC32 of payload u32 | payload (JSON)
//! ```
//!
//! A payload is a `Record`: `put` (an entry) or `done` (a tombstone naming
//! the entry's sequence number). On load a torn tail (a crash mid-append) is
//! ignored and cut off; a corrupt record in the middle is skipped with a
//! counted warning, and reading resumes at the next magic. Entries are
//! coalesced per (scope, book, slot): the latest wins. Compaction rewrites
//! the live entries to a temporary file, fsyncs it and renames it over the
//! journal, so the file stays small.

use crate::domain::{BookId, EpochMillis, ServerId, UserId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 4] = b"EMOB";
const HEADER: usize = 12;
/// No single record is ever this large; a bigger length means corruption.
const MAX_PAYLOAD: usize = 1 << 20;
/// Compact when the journal holds this many more records than live entries.
const COMPACT_SLACK: usize = 64;

/// Who a write belongs to. Entries are only ever sent to their own scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Normalized base address (scheme, host, port, prefix, `/api/v1`).
    pub base: String,
    pub server_id: ServerId,
    pub user_id: UserId,
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (server {}, user {})",
            self.base, self.server_id, self.user_id
        )
    }
}

/// What an entry writes. One entry per (scope, book, slot) is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "slot", content = "id")]
pub enum Slot {
    Progress,
    PlaybackSettings,
    Favorite,
    /// A bookmark, by the client's idempotency key or the server's id.
    Bookmark(String),
}

/// A queued progress write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedProgress {
    pub chapter_id: crate::domain::ChapterId,
    pub position_sec: f64,
    pub finished: bool,
    pub reset: bool,
    pub client_updated_at: EpochMillis,
}

/// A queued playback-settings write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedSettings {
    pub speed: f32,
    pub volume: Option<f32>,
    pub client_updated_at: EpochMillis,
}

/// A queued change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum Op {
    ProgressWrite(QueuedProgress),
    ProgressDelete,
    SettingsWrite(QueuedSettings),
    SettingsDelete,
    #[serde(rename_all = "camelCase")]
    FavoriteSet {
        favorite: bool,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkCreate {
        client_id: String,
        chapter_id: crate::domain::ChapterId,
        position_sec: f64,
        note: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkDelete {
        bookmark_id: String,
    },
}

impl Op {
    pub fn slot(&self) -> Slot {
        match self {
            Op::ProgressWrite(_) | Op::ProgressDelete => Slot::Progress,
            Op::SettingsWrite(_) | Op::SettingsDelete => Slot::PlaybackSettings,
            Op::FavoriteSet { .. } => Slot::Favorite,
            Op::BookmarkCreate { client_id, .. } => Slot::Bookmark(client_id.clone()),
            Op::BookmarkDelete { bookmark_id } => Slot::Bookmark(bookmark_id.clone()),
        }
    }

    /// Short human description for `earmark sync pending`.
    pub fn describe(&self) -> String {
        match self {
            Op::ProgressWrite(p) => {
                let mut s = format!("progress {} at {}", p.chapter_id, clock(p.position_sec));
                if p.finished {
                    s.push_str(" (finished)");
                }
                if p.reset {
                    s.push_str(" (reset)");
                }
                s
            }
            Op::ProgressDelete => "delete progress".into(),
            Op::SettingsWrite(s) => match s.volume {
                Some(v) => format!("playback settings: speed {}x, volume {v}", s.speed),
                None => format!("playback settings: speed {}x", s.speed),
            },
            Op::SettingsDelete => "delete playback settings".into(),
            Op::FavoriteSet { favorite: true } => "add to favorites".into(),
            Op::FavoriteSet { favorite: false } => "remove from favorites".into(),
            Op::BookmarkCreate {
                chapter_id,
                position_sec,
                ..
            } => format!("bookmark {chapter_id} at {}", clock(*position_sec)),
            Op::BookmarkDelete { bookmark_id } => format!("delete bookmark {bookmark_id}"),
        }
    }
}

fn clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Unique, increasing; a tombstone names it.
    pub seq: u64,
    pub scope: Scope,
    pub book: BookId,
    pub op: Op,
    pub queued_at: EpochMillis,
    /// The server refused this write (not a network failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Rejection>,
}

/// How often the server refused an entry, and what it said last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub count: u32,
    pub message: String,
}

/// Refusals after which an entry is set aside until the user retries it.
pub const PARK_AFTER: u32 = 5;

impl Entry {
    /// Set aside: refused [`PARK_AFTER`] times; sent again only when the
    /// user asks (`earmark sync retry`).
    pub fn is_parked(&self) -> bool {
        self.rejected
            .as_ref()
            .is_some_and(|r| r.count >= PARK_AFTER)
    }
}

impl Entry {
    fn key(&self) -> (Scope, BookId, Slot) {
        (self.scope.clone(), self.book.clone(), self.op.slot())
    }
}

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

/// What loading the journal found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    pub records: usize,
    /// Damaged records in the middle that were skipped.
    pub corrupt_skipped: usize,
    /// Bytes of an incomplete last record that were cut off.
    pub torn_tail_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("the sync outbox {0} is in use by another earmark process")]
    Locked(PathBuf),
    #[error("sync outbox {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// See the module docs. Holds an exclusive lock on the journal while open.
#[derive(Debug)]
pub struct Outbox {
    path: PathBuf,
    /// `None`: an in-memory journal (the file could not be opened); the
    /// same rules apply, nothing survives the process.
    file: Option<File>,
    /// Live entries by key (coalesced).
    live: BTreeMap<(Scope, BookId, Slot), Entry>,
    next_seq: u64,
    records_in_file: usize,
    load: LoadReport,
}

impl Outbox {
    /// Opens (or creates) the journal at `path` and locks it.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, OutboxError> {
        let path = path.into();
        let io_err = |source| OutboxError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err)?;
        lock(&file).map_err(|e| {
            if e.kind() == io::ErrorKind::WouldBlock {
                OutboxError::Locked(path.clone())
            } else {
                io_err(e)
            }
        })?;
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        file.read_to_end(&mut bytes).map_err(io_err)?;
        let (records, load, good_len) = parse(&bytes);
        if load.torn_tail_bytes > 0 {
            // Cut the torn tail so new records follow whole ones.
            file.set_len(good_len as u64).map_err(io_err)?;
            file.sync_all().map_err(io_err)?;
        }
        let mut me = Self {
            path: path.clone(),
            file: Some(file),
            live: BTreeMap::new(),
            next_seq: 1,
            records_in_file: records.len(),
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
            me.compact()?;
        }
        Ok(me)
    }

    /// A journal that lives in memory only: used when the file cannot be
    /// opened, so sync keeps one set of rules (and says it is not durable).
    pub fn in_memory() -> Self {
        Self {
            path: PathBuf::from("(memory)"),
            file: None,
            live: BTreeMap::new(),
            next_seq: 1,
            records_in_file: 0,
            load: LoadReport::default(),
        }
    }

    /// False for the in-memory journal.
    pub fn is_durable(&self) -> bool {
        self.file.is_some()
    }

    /// Reads the journal without locking or changing it (`sync pending`).
    pub fn peek(path: &Path) -> Result<(Vec<Entry>, LoadReport), OutboxError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(OutboxError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let (records, load, _) = parse(&bytes);
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

    /// Journals a change (fsynced) and returns its sequence number. It
    /// replaces any queued change of the same scope, book and slot.
    pub fn push(
        &mut self,
        scope: Scope,
        book: BookId,
        op: Op,
        now: EpochMillis,
    ) -> Result<u64, OutboxError> {
        let entry = Entry {
            seq: self.next_seq,
            scope,
            book,
            op,
            queued_at: now,
            rejected: None,
        };
        self.append(&Record::Put(entry.clone()))?;
        self.next_seq += 1;
        let seq = entry.seq;
        self.live.insert(entry.key(), entry);
        self.maybe_compact()?;
        Ok(seq)
    }

    /// Removes the entry `seq` after its own success (or a discard). A newer
    /// entry that replaced it stays. Returns whether it was still queued.
    pub fn complete(&mut self, seq: u64) -> Result<bool, OutboxError> {
        let Some(key) = self
            .live
            .iter()
            .find(|(_, e)| e.seq == seq)
            .map(|(k, _)| k.clone())
        else {
            return Ok(false);
        };
        self.append(&Record::Done { seq })?;
        self.live.remove(&key);
        self.maybe_compact()?;
        Ok(true)
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
    pub fn reject(&mut self, seq: u64, message: String) -> Result<Option<u32>, OutboxError> {
        let Some(e) = self.live.values().find(|e| e.seq == seq) else {
            return Ok(None);
        };
        let count = e.rejected.as_ref().map_or(0, |r| r.count) + 1;
        let rejection = Some(Rejection { count, message });
        self.append(&Record::Rejected {
            seq,
            rejection: rejection.clone(),
        })?;
        apply_to(&mut self.live, Record::Rejected { seq, rejection });
        Ok(Some(count))
    }

    /// Clears the refusals of the parked entries of `scope`, so they are
    /// sent again. Returns how many.
    pub fn unpark(&mut self, scope: &Scope) -> Result<usize, OutboxError> {
        let parked: Vec<u64> = self
            .in_scope(scope)
            .iter()
            .filter(|e| e.is_parked())
            .map(|e| e.seq)
            .collect();
        for &seq in &parked {
            self.append(&Record::Rejected {
                seq,
                rejection: None,
            })?;
            apply_to(
                &mut self.live,
                Record::Rejected {
                    seq,
                    rejection: None,
                },
            );
        }
        Ok(parked.len())
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
    pub fn adopt(&mut self, scope: &Scope, now: EpochMillis) -> Result<usize, OutboxError> {
        let held: Vec<Entry> = self.held(scope).into_iter().cloned().collect();
        let mut n = 0;
        for e in held {
            let key = (scope.clone(), e.book.clone(), e.op.slot());
            // An entry already queued for the new scope is newer: keep it.
            if self.live.get(&key).is_none_or(|cur| cur.seq < e.seq) {
                self.push(scope.clone(), e.book.clone(), e.op.clone(), now)?;
                n += 1;
            }
            self.complete(e.seq)?;
        }
        Ok(n)
    }

    fn append(&mut self, r: &Record) -> Result<(), OutboxError> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let bytes = encode(r);
        let res = file.write_all(&bytes).and_then(|_| file.sync_data());
        res.map_err(|source| OutboxError::Io {
            path: self.path.clone(),
            source,
        })?;
        self.records_in_file += 1;
        Ok(())
    }

    fn maybe_compact(&mut self) -> Result<(), OutboxError> {
        if self.records_in_file > 2 * self.live.len() + COMPACT_SLACK {
            self.compact()?;
        }
        Ok(())
    }

    /// Rewrites the journal with only the live entries: temp file, fsync,
    /// rename, fsync of the directory. A crash at any point leaves either
    /// the old or the new journal.
    pub fn compact(&mut self) -> Result<(), OutboxError> {
        if self.file.is_none() {
            return Ok(());
        }
        let io_err = |source| OutboxError::Io {
            path: self.path.clone(),
            source,
        };
        let tmp = self.path.with_extension("compact.tmp");
        let mut buf = Vec::new();
        for e in self.entries() {
            buf.extend(encode(&Record::Put(e.clone())));
        }
        {
            let mut f = File::create(&tmp).map_err(io_err)?;
            f.write_all(&buf).map_err(io_err)?;
            f.sync_all().map_err(io_err)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(io_err)?;
        if let Some(dir) = self.path.parent()
            && let Ok(d) = File::open(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            })
        {
            let _ = d.sync_all();
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(io_err)?;
        lock(&file).map_err(io_err)?;
        self.file = Some(file);
        self.records_in_file = self.live.len();
        Ok(())
    }
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

fn encode(r: &Record) -> Vec<u8> {
    let payload = serde_json::to_vec(r).expect("outbox records always serialize");
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Parses a journal. Returns the whole records, what was skipped, and the
/// length of the prefix that ends with the last whole record.
fn parse(bytes: &[u8]) -> (Vec<Record>, LoadReport, usize) {
    let mut records = Vec::new();
    let mut report = LoadReport::default();
    let mut at = 0usize;
    let mut good_end = 0usize;
    let mut damaged = false;
    while at < bytes.len() {
        match decode_at(bytes, at) {
            Decoded::Record(r, next) => {
                if damaged {
                    report.corrupt_skipped += 1;
                    damaged = false;
                }
                records.push(*r);
                at = next;
                good_end = next;
            }
            Decoded::Incomplete => {
                // Maybe a torn tail, maybe a damaged length in the middle:
                // look for a later record before deciding.
                match find_magic(bytes, at + 1) {
                    Some(n) => {
                        damaged = true;
                        at = n;
                    }
                    None => break,
                }
            }
            Decoded::Bad => {
                damaged = true;
                match find_magic(bytes, at + 1) {
                    Some(n) => at = n,
                    None => break,
                }
            }
        }
    }
    report.records = records.len();
    report.torn_tail_bytes = (bytes.len() - good_end) as u64;
    (records, report, good_end)
}

enum Decoded {
    Record(Box<Record>, usize),
    Incomplete,
    Bad,
}

fn decode_at(bytes: &[u8], at: usize) -> Decoded {
    let rest = &bytes[at..];
    if rest.len() < HEADER {
        return if MAGIC.starts_with(&rest[..rest.len().min(4)]) {
            Decoded::Incomplete
        } else {
            Decoded::Bad
        };
    }
    if &rest[..4] != MAGIC {
        return Decoded::Bad;
    }
    let len = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes"));
    if len > MAX_PAYLOAD {
        return Decoded::Bad;
    }
    if rest.len() < HEADER + len {
        return Decoded::Incomplete;
    }
    let payload = &rest[HEADER..HEADER + len];
    if crc32fast::hash(payload) != crc {
        return Decoded::Bad;
    }
    match serde_json::from_slice::<Record>(payload) {
        Ok(r) => Decoded::Record(Box::new(r), at + HEADER + len),
        Err(_) => Decoded::Bad,
    }
}

fn find_magic(bytes: &[u8], from: usize) -> Option<usize> {
    if from >= bytes.len() {
        return None;
    }
    bytes[from..]
        .windows(4)
        .position(|w| w == MAGIC)
        .map(|p| p + from)
}

fn lock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a valid, owned descriptor; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests;
