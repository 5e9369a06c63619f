//! How the demuxer reads bytes: through a read-ahead cache over the stream
//! (one read of the source per [`CHUNK`], not two per frame: every read of
//! an HTTP stream takes its lock and may wake its download task), and
//! through bounded range reads for probes far from where playback goes.

use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read from the source at a time.
pub const CHUNK: usize = 32 * 1024;

/// Reads small byte ranges anywhere in a stream without moving its reader.
/// Over HTTP: bounded `Range: bytes=a-b` requests, sent together, so a
/// probe 10 h into a file costs the bytes it asks for and nothing more.
pub trait RangeReader: Send + Sync {
    /// The bytes of each `(start, len)` range, fewer at the end of the
    /// stream. A range that could not be read is an error on its own; the
    /// caller then reads it through the stream.
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Vec<io::Result<Vec<u8>>>;
}

pub fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            // Interrupted after some bytes: read on (before any, say so).
            Err(e) if e.kind() == io::ErrorKind::Interrupted && n > 0 => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A window of the stream's bytes, refilled [`CHUNK`] (or more) at a time.
pub struct Cached<R> {
    r: R,
    start: u64,
    data: Vec<u8>,
}

impl<R: Read + Seek> Cached<R> {
    pub fn new(r: R) -> Self {
        Self {
            r,
            start: 0,
            data: Vec::with_capacity(CHUNK),
        }
    }

    /// Up to `len` bytes at `at`; fewer only at the end of the stream.
    pub fn get(&mut self, at: u64, len: usize) -> io::Result<&[u8]> {
        let end = self.start + self.data.len() as u64;
        if at < self.start || at + len as u64 > end {
            self.r.seek(SeekFrom::Start(at))?;
            self.data.resize(len.max(CHUNK), 0);
            let n = read_full(&mut self.r, &mut self.data).inspect_err(|_| self.data.clear())?;
            self.data.truncate(n);
            self.start = at;
        }
        let off = ((at - self.start) as usize).min(self.data.len());
        let n = len.min(self.data.len() - off);
        Ok(&self.data[off..off + n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_source_holds_at_any_offset() {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut c = Cached::new(io::Cursor::new(bytes.clone()));
        for (at, len) in [
            (0, 4),
            (3, 400),
            (40_000, 4),
            (39_990, 70_000),
            (99_998, 10),
        ] {
            let got = c.get(at, len).unwrap().to_vec();
            let end = (at as usize + len).min(bytes.len());
            assert_eq!(got, bytes[at as usize..end], "{at} {len}");
        }
        assert!(c.get(200_000, 4).unwrap().is_empty());
        assert_eq!(c.get(5, 1).unwrap(), &bytes[5..6]);
    }
}
