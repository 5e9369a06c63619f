//! An append-only, crash-safe record log (the outbox's framing, for plain
//! facts that are never taken back): each record is
//! `magic "EMLG" | payload length u32 | CRC32 u32 | payload (JSON)`, written
//! and fsynced in one append. On load a torn tail is cut off, a damaged
//! record in the middle is skipped and counted, and a record of a kind this
//! version does not know is skipped too (a newer earmark wrote it).

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 4] = b"EMLG";
const HEADER: usize = 12;
const MAX_PAYLOAD: usize = 1 << 20;

/// What a read found besides the records.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    pub skipped: usize,
    pub torn_tail_bytes: usize,
}

pub struct Log<T> {
    path: PathBuf,
    /// `None`: kept in memory only (the file could not be opened).
    file: Option<File>,
    pub records_in_file: usize,
    _t: PhantomData<T>,
}

impl<T: Serialize + DeserializeOwned> Log<T> {
    /// Opens (or creates) the log and returns its whole records.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<(Self, Vec<T>, Damage)> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let (records, damage, good_end) = parse::<T>(&bytes);
        if damage.torn_tail_bytes > 0 {
            file.set_len(good_end as u64)?;
            file.sync_all()?;
        }
        let log = Log {
            path,
            file: Some(file),
            records_in_file: records.len(),
            _t: PhantomData,
        };
        Ok((log, records, damage))
    }

    pub fn in_memory() -> Self {
        Log {
            path: PathBuf::from("(memory)"),
            file: None,
            records_in_file: 0,
            _t: PhantomData,
        }
    }

    /// Reads a log without opening it for writing (another process may be
    /// appending: a half-written last record is simply not returned).
    pub fn read(path: &Path) -> io::Result<(Vec<T>, Damage)> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let (records, damage, _) = parse::<T>(&bytes);
        Ok((records, damage))
    }

    /// Appends one record and flushes it to the disk.
    pub fn append(&mut self, r: &T) -> io::Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        file.write_all(&encode(r))?;
        file.sync_data()?;
        self.records_in_file += 1;
        Ok(())
    }

    /// Replaces the log with `records`: temporary file, fsync, rename. A
    /// crash at any point leaves the old or the new log, whole.
    pub fn rewrite(&mut self, records: &[T]) -> io::Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        let tmp = self.path.with_extension("compact.tmp");
        let mut buf = Vec::new();
        for r in records {
            buf.extend(encode(r));
        }
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&buf)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        self.file = Some(
            OpenOptions::new()
                .read(true)
                .append(true)
                .open(&self.path)?,
        );
        self.records_in_file = records.len();
        Ok(())
    }
}

fn encode<T: Serialize>(r: &T) -> Vec<u8> {
    let payload = serde_json::to_vec(r).expect("log records always serialize");
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The whole records, the damage, and where the last whole record ends.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> (Vec<T>, Damage, usize) {
    let mut out = Vec::new();
    let mut damage = Damage::default();
    let (mut at, mut good_end) = (0usize, 0usize);
    while at < bytes.len() {
        let rest = &bytes[at..];
        let frame = (rest.len() >= HEADER && &rest[..4] == MAGIC).then(|| {
            let len = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
            let crc = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes"));
            (len, crc)
        });
        let whole = frame.and_then(|(len, crc)| {
            let payload = rest
                .get(HEADER..HEADER + len)
                .filter(|_| len <= MAX_PAYLOAD)?;
            (crc32fast::hash(payload) == crc).then_some((payload, len))
        });
        match whole {
            Some((payload, len)) => {
                match serde_json::from_slice::<T>(payload) {
                    Ok(r) => out.push(r),
                    Err(_) => damage.skipped += 1,
                }
                at += HEADER + len;
                good_end = at;
            }
            None => match next_magic(bytes, at + 1) {
                Some(n) => {
                    damage.skipped += 1;
                    at = n;
                }
                None => break,
            },
        }
    }
    damage.torn_tail_bytes = bytes.len() - good_end;
    (out, damage, good_end)
}

fn next_magic(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(4)
        .position(|w| w == MAGIC)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_tail_is_cut_and_whole_records_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, got, _) = Log::<u32>::open(&path).unwrap();
        assert!(got.is_empty());
        for i in 0..3 {
            log.append(&i).unwrap();
        }
        drop(log);
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = bytes.len();
        bytes.extend_from_slice(&encode(&99u32)[..7]);
        std::fs::write(&path, &bytes).unwrap();
        let (mut log, got, damage) = Log::<u32>::open(&path).unwrap();
        assert_eq!(got, vec![0, 1, 2]);
        assert_eq!(damage.torn_tail_bytes, 7);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, whole);
        log.append(&3).unwrap();
        assert_eq!(Log::<u32>::read(&path).unwrap().0, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_damaged_record_in_the_middle_is_skipped() {
        let mut bytes = encode(&1u32);
        let mut bad = encode(&2u32);
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        bytes.extend(bad);
        bytes.extend(encode(&3u32));
        let (got, damage, _) = parse::<u32>(&bytes);
        assert_eq!(got, vec![1, 3]);
        assert_eq!(damage.skipped, 1);
    }

    #[test]
    fn rewrite_replaces_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.journal");
        let (mut log, _, _) = Log::<u32>::open(&path).unwrap();
        log.append(&1).unwrap();
        log.rewrite(&[7, 8]).unwrap();
        log.append(&9).unwrap();
        assert_eq!(Log::<u32>::read(&path).unwrap().0, vec![7, 8, 9]);
    }
}
