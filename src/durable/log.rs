//! The one crash-safe record log. Each record is one frame, written and
//! fsynced in one append:
//!
//! ```text
//! magic (4 bytes, the log's own) | payload length u32 LE | CRC32 of payload u32 LE | payload (JSON)
//! ```
//!
//! Reading keeps every whole record. A torn last frame (a crash or a full
//! disk mid-append) is cut off when the log is opened for writing; a
//! damaged stretch in the middle is skipped and reading resumes at the
//! next magic; a whole frame whose payload this version cannot read (a
//! newer earmark wrote it) is skipped too. Both are counted in
//! [`Recovery`], for the caller to show.
//!
//! When an append fails (the disk is full, the file system turned
//! read-only) the partial frame is cut off again and the log goes to
//! memory ([`Durability::Memory`]): its owner keeps the records in memory,
//! and each later write first tries to rewrite the file whole from them,
//! which makes the log durable again once the disk has room.

use super::atomic::replace;
use super::fault::{DiskError, Fault};
use super::lock::{Wait, lock};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// Magic, length, CRC.
pub const HEADER: usize = 12;
/// No record is ever this large; a bigger length means damage.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// What reading a log found besides its records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Whole records read.
    pub records: usize,
    /// Damaged stretches (or unreadable records) skipped in the middle.
    pub corrupt_skipped: usize,
    /// Bytes of an incomplete last record (cut off when opened to write).
    pub torn_tail_bytes: u64,
}

impl Recovery {
    /// Nothing was damaged.
    pub fn is_clean(&self) -> bool {
        self.corrupt_skipped == 0 && self.torn_tail_bytes == 0
    }
}

/// Whether what a log holds survives the process.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every record is on the disk (fsynced).
    #[default]
    Durable,
    /// Records are kept in memory only, and why.
    Memory(Fault),
}

/// One frame around `payload`.
pub fn encode(magic: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payloads of the whole frames in `bytes`, what was damaged, and the
/// length of the prefix that ends with the last whole frame. A damaged
/// stretch counts once, when a whole frame follows it; one at the end is
/// the torn tail.
pub fn frames<'a>(magic: &[u8; 4], bytes: &'a [u8]) -> (Vec<&'a [u8]>, Recovery, usize) {
    let mut out = Vec::new();
    let mut report = Recovery::default();
    let (mut at, mut good_end, mut damaged) = (0usize, 0usize, false);
    while at < bytes.len() {
        match frame_at(magic, &bytes[at..]) {
            Some(payload) => {
                if damaged {
                    report.corrupt_skipped += 1;
                    damaged = false;
                }
                out.push(payload);
                at += HEADER + payload.len();
                good_end = at;
            }
            None => match next_magic(magic, bytes, at + 1) {
                Some(n) => {
                    damaged = true;
                    at = n;
                }
                None => break,
            },
        }
    }
    report.records = out.len();
    report.torn_tail_bytes = (bytes.len() - good_end) as u64;
    (out, report, good_end)
}

fn frame_at<'a>(magic: &[u8; 4], rest: &'a [u8]) -> Option<&'a [u8]> {
    if rest.len() < HEADER || &rest[..4] != magic {
        return None;
    }
    let len = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes"));
    let payload = rest
        .get(HEADER..HEADER + len)
        .filter(|_| len <= MAX_PAYLOAD)?;
    (crc32fast::hash(payload) == crc).then_some(payload)
}

fn next_magic(magic: &[u8; 4], bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(4)
        .position(|w| w == magic)
        .map(|p| p + from)
}

/// The records of `bytes`; a whole frame that does not decode counts as
/// skipped (its place in the file is still good).
fn decode<T: DeserializeOwned>(magic: &[u8; 4], bytes: &[u8]) -> (Vec<T>, Recovery, usize) {
    let (payloads, mut report, good_end) = frames(magic, bytes);
    let mut out = Vec::with_capacity(payloads.len());
    for p in payloads {
        match serde_json::from_slice(p) {
            Ok(r) => out.push(r),
            Err(_) => report.corrupt_skipped += 1,
        }
    }
    report.records = out.len();
    (out, report, good_end)
}

enum State {
    /// Appends go to the file; `len` ends with the last whole record.
    Durable { file: File, len: u64 },
    /// An append failed: the file (and its lock) is kept, and the next
    /// write tries to rewrite it whole.
    Lost { file: File, why: Fault },
    /// There never was a file (why): nothing is written, nothing retried.
    Memory(Fault),
}

/// A record log of `T` (see the module docs).
pub struct RecordLog<T> {
    magic: [u8; 4],
    path: PathBuf,
    /// Held exclusively (`flock`) while open.
    locked: bool,
    state: State,
    records_in_file: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> RecordLog<T> {
    /// Opens (or creates) the log at `path` and returns its whole records;
    /// a torn tail is cut off. `locked`: hold it exclusively, or fail with
    /// [`Fault::Locked`] when another process does.
    pub fn open(
        path: impl Into<PathBuf>,
        magic: [u8; 4],
        locked: bool,
    ) -> Result<(Self, Vec<T>, Recovery), DiskError> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| DiskError::new(dir, e))?;
        }
        let err = |e| DiskError::new(&path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(err)?;
        if locked {
            lock(&file, Wait::No).map_err(err)?;
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(err)?;
        let (records, report, good_end) = decode::<T>(&magic, &bytes);
        if report.torn_tail_bytes > 0 {
            // New records must follow whole ones.
            file.set_len(good_end as u64).map_err(err)?;
            file.sync_all().map_err(err)?;
        }
        let log = RecordLog {
            magic,
            path: path.clone(),
            locked,
            state: State::Durable {
                file,
                len: good_end as u64,
            },
            records_in_file: records.len(),
            _t: PhantomData,
        };
        Ok((log, records, report))
    }

    /// A log without a file, because of `why`: writes do nothing.
    pub fn in_memory(why: Fault) -> Self {
        RecordLog {
            magic: [0; 4],
            path: PathBuf::from("(memory)"),
            locked: false,
            state: State::Memory(why),
            records_in_file: 0,
            _t: PhantomData,
        }
    }

    /// Reads a log without opening it for writing or locking it (another
    /// process may be appending: a half-written last record is simply not
    /// returned). A missing file is empty.
    pub fn read(path: &Path, magic: [u8; 4]) -> io::Result<(Vec<T>, Recovery)> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let (records, report, _) = decode::<T>(&magic, &bytes);
        Ok((records, report))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn durability(&self) -> Durability {
        match &self.state {
            State::Durable { .. } => Durability::Durable,
            State::Lost { why, .. } | State::Memory(why) => Durability::Memory(why.clone()),
        }
    }

    /// Records the file holds (live or not): the owner compacts by it.
    pub fn records_in_file(&self) -> usize {
        self.records_in_file
    }

    /// Journals `r`, fsynced. When an earlier write failed, the file is
    /// first rewritten whole from `whole()`: every record the log must
    /// hold, `r`'s effect included. An error means `r` is not on the disk
    /// (the owner keeps it in memory) and the log stays in memory. A log
    /// that never had a file writes nothing and says Ok.
    pub fn write(&mut self, r: &T, whole: impl FnOnce() -> Vec<T>) -> Result<(), DiskError> {
        let frame = encode(&self.magic, &payload(r));
        match &mut self.state {
            State::Memory(_) => Ok(()),
            State::Lost { .. } => self.rewrite(&whole()),
            State::Durable { file, len } => {
                match file.write_all(&frame).and_then(|()| file.sync_data()) {
                    Ok(()) => {
                        *len += frame.len() as u64;
                        self.records_in_file += 1;
                        Ok(())
                    }
                    Err(e) => {
                        let e = DiskError::new(&self.path, e);
                        // Cut what part of the frame got in (a full disk
                        // takes some bytes of it); best effort.
                        let _ = file.set_len(*len).and_then(|()| file.sync_data());
                        self.lose(e.fault.clone());
                        Err(e)
                    }
                }
            }
        }
    }

    /// Replaces the file with `records` (atomically: a crash or a failed
    /// write leaves the old file or the new one, whole). A log in memory
    /// after a failed append is durable again when this succeeds with
    /// records; a durable log stays durable when it fails (the old file is
    /// whole).
    pub fn rewrite(&mut self, records: &[T]) -> Result<(), DiskError> {
        if matches!(self.state, State::Memory(_)) {
            return Ok(());
        }
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend(encode(&self.magic, &payload(r)));
        }
        let locked = self.locked;
        let result = replace(&self.path, &bytes, |f| {
            if locked { lock(f, Wait::No) } else { Ok(()) }
        });
        match result {
            Ok(file) => {
                let before = std::mem::replace(&mut self.state, State::Memory(Fault::DiskFull));
                self.state = match before {
                    // An empty file proves no room: the log stays in memory
                    // until records fit again (else a full disk would come
                    // and go with every change sent and completed).
                    State::Lost { why, .. } if records.is_empty() => State::Lost { file, why },
                    _ => State::Durable {
                        file,
                        len: bytes.len() as u64,
                    },
                };
                self.records_in_file = records.len();
                Ok(())
            }
            Err(e) => {
                if let State::Lost { why, .. } = &mut self.state {
                    *why = e.fault.clone();
                }
                Err(e)
            }
        }
    }

    fn lose(&mut self, why: Fault) {
        let state = std::mem::replace(&mut self.state, State::Memory(Fault::DiskFull));
        self.state = match state {
            State::Durable { file, .. } | State::Lost { file, .. } => State::Lost { file, why },
            State::Memory(w) => State::Memory(w),
        };
    }
}

fn payload<T: Serialize>(r: &T) -> Vec<u8> {
    serde_json::to_vec(r).expect("log records always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: [u8; 4] = *b"TEST";

    fn open(path: &Path) -> (RecordLog<u32>, Vec<u32>, Recovery) {
        RecordLog::open(path, MAGIC, false).unwrap()
    }

    fn read(path: &Path) -> Vec<u32> {
        RecordLog::<u32>::read(path, MAGIC).unwrap().0
    }

    #[test]
    fn a_torn_tail_is_cut_and_whole_records_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, got, _) = open(&path);
        assert!(got.is_empty());
        for i in 0..3u32 {
            log.write(&i, Vec::new).unwrap();
        }
        drop(log);
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = bytes.len();
        bytes.extend_from_slice(&encode(&MAGIC, b"99")[..7]);
        std::fs::write(&path, &bytes).unwrap();
        let (mut log, got, report) = open(&path);
        assert_eq!(got, vec![0, 1, 2]);
        assert_eq!(report.torn_tail_bytes, 7);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, whole);
        log.write(&3, Vec::new).unwrap();
        assert_eq!(read(&path), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_damaged_record_in_the_middle_is_skipped_and_counted() {
        let mut bytes = encode(&MAGIC, b"1");
        let mut bad = encode(&MAGIC, b"2");
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        bytes.extend(bad);
        bytes.extend(encode(&MAGIC, b"3"));
        let (got, report, _) = decode::<u32>(&MAGIC, &bytes);
        assert_eq!(got, vec![1, 3]);
        assert_eq!(report.corrupt_skipped, 1);
        assert_eq!(report.torn_tail_bytes, 0);
    }

    #[test]
    fn a_record_this_version_cannot_read_is_skipped_and_counted() {
        let mut bytes = encode(&MAGIC, b"1");
        bytes.extend(encode(&MAGIC, b"\"a newer kind\""));
        bytes.extend(encode(&MAGIC, b"3"));
        let (got, report, end) = decode::<u32>(&MAGIC, &bytes);
        assert_eq!(got, vec![1, 3]);
        assert_eq!(report.corrupt_skipped, 1);
        assert_eq!(end, bytes.len());
    }

    #[test]
    fn every_truncation_and_every_bit_flip_keeps_each_intact_record() {
        let records: Vec<u32> = (100..110).collect();
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for r in &records {
            bytes.extend(encode(&MAGIC, &payload(r)));
            ends.push(bytes.len());
        }
        for cut in 0..=bytes.len() {
            let (got, report, _) = decode::<u32>(&MAGIC, &bytes[..cut]);
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(got, records[..whole], "cut at {cut}");
            assert_eq!(report.corrupt_skipped, 0, "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[at] ^= 1 << bit;
                let (got, report, _) = decode::<u32>(&MAGIC, &b);
                let hit = ends.iter().position(|&e| at < e).unwrap();
                let mut want = records.clone();
                want.remove(hit);
                // The flipped record alone is gone (a flip that still
                // decodes to a number would need a CRC collision).
                assert_eq!(got, want, "bit {bit} of byte {at}");
                if hit + 1 < records.len() {
                    assert_eq!(report.corrupt_skipped, 1, "bit {bit} of byte {at}");
                } else {
                    assert!(report.torn_tail_bytes > 0, "bit {bit} of byte {at}");
                }
            }
        }
    }

    #[test]
    fn rewrite_replaces_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, _, _) = open(&path);
        log.write(&1, Vec::new).unwrap();
        log.rewrite(&[7, 8]).unwrap();
        log.write(&9, Vec::new).unwrap();
        assert_eq!(read(&path), vec![7, 8, 9]);
        assert_eq!(log.records_in_file(), 3);
    }

    #[test]
    fn a_log_whose_append_failed_is_in_memory_until_a_rewrite_with_records_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, _, _) = open(&path);
        log.write(&1, Vec::new).unwrap();
        log.lose(Fault::DiskFull);
        assert_eq!(log.durability(), Durability::Memory(Fault::DiskFull));
        log.write(&2, Vec::new).unwrap();
        assert_eq!(
            log.durability(),
            Durability::Memory(Fault::DiskFull),
            "an empty file proves nothing"
        );
        log.write(&3, || vec![1, 3]).unwrap();
        assert_eq!(log.durability(), Durability::Durable);
        log.write(&4, Vec::new).unwrap();
        assert_eq!(read(&path), vec![1, 3, 4]);
    }

    #[test]
    fn a_locked_log_refuses_a_second_writer_and_keeps_its_lock_across_rewrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, _, _) = RecordLog::<u32>::open(&path, MAGIC, true).unwrap();
        log.rewrite(&[1]).unwrap();
        let e = RecordLog::<u32>::open(&path, MAGIC, true).err().unwrap();
        assert_eq!(e.fault, Fault::Locked);
        drop(log);
        RecordLog::<u32>::open(&path, MAGIC, true).unwrap();
    }
}
