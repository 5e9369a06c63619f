//! An MPEG audio demuxer that knows where its frames are: it counts frames
//! from the start, records exact (byte, frame) points in a shared
//! [`SeekMap`] as it goes, and seeks through that map, the Xing TOC or the
//! VBRI table. symphonia's own mp3 reader estimates a seek's byte offset
//! from the average bitrate, which lands far off in VBR files.

use super::frame::{FrameHeader, VbrTag, id3v2_len, parse_vbr_tag};
use super::seek_map::{POINT_EVERY, Plan, SeekMap, toc_anchors, vbri_anchors};
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes searched for a frame header after a jump.
const RESYNC_WINDOW: usize = 64 * 1024;
/// Points where a stream without a TOC has its bitrate measured.
const PROBES: u64 = 16;
/// Frame headers read at each of those points.
const PROBE_FRAMES: u64 = 32;
/// Estimated seeks land on a grid of this step and count frames from there.
const GRID_SECS: f64 = 10.0;
/// A seek walks frame headers from an exact point up to this far.
pub const WALK_SECS: f64 = 30.0;

/// One demuxed frame.
pub struct MpaPacket {
    /// Sample index (per channel) of the first decoded sample, delay
    /// included: negative for the encoder and decoder delay.
    pub pts: i64,
    pub data: Vec<u8>,
}

pub type SharedSeekMap = Arc<Mutex<SeekMap>>;

pub struct MpaDemuxer<R> {
    r: R,
    len: Option<u64>,
    /// The stream's first audio frame (version, layer, rate).
    reference: FrameHeader,
    tag: Option<VbrTag>,
    /// Byte of the next frame.
    next: u64,
    /// Index of the next frame (an estimate unless `exact`).
    next_frame: u64,
    exact: bool,
    map: SharedSeekMap,
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted && n == 0 => return Err(e),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The first offset in `buf` where a frame of `reference`'s stream starts
/// and the next frame (when it fits in `buf`) starts right after it.
fn find_frame(buf: &[u8], reference: Option<&FrameHeader>) -> Option<(usize, FrameHeader)> {
    let fits = |h: &FrameHeader| reference.is_none_or(|r| r.same_stream(h));
    (0..buf.len().saturating_sub(3)).find_map(|i| {
        let h = FrameHeader::parse(buf[i..i + 4].try_into().ok()?)?;
        if !fits(&h) {
            return None;
        }
        let j = i + h.size;
        match buf.get(j..j + 4) {
            Some(b) => {
                let n = FrameHeader::parse(b.try_into().ok()?)?;
                h.same_stream(&n).then_some((i, h))
            }
            // The last frame of the file, or cut by the window: accept.
            None => Some((i, h)),
        }
    })
}

impl<R: Read + Seek> MpaDemuxer<R> {
    /// Find the first frame (after ID3v2 tags) and read its VBR tag.
    /// `maps` hands out the stream's shared seek map (kept across seeks);
    /// `duration_hint`: the stream's length in seconds when known from
    /// elsewhere (the server), for streams without a frame count.
    pub fn open(
        mut r: R,
        len: Option<u64>,
        map_for: impl FnOnce(u64) -> SharedSeekMap,
        duration_hint: Option<f64>,
    ) -> io::Result<Self> {
        let mut at = 0u64;
        loop {
            r.seek(SeekFrom::Start(at))?;
            let mut head = [0u8; 10];
            let n = read_full(&mut r, &mut head)?;
            let skip = id3v2_len(&head[..n]);
            if skip == 0 {
                break;
            }
            at += skip;
        }
        r.seek(SeekFrom::Start(at))?;
        let mut buf = vec![0u8; RESYNC_WINDOW];
        let n = read_full(&mut r, &mut buf)?;
        let (i, h) = find_frame(&buf[..n], None)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no MPEG audio frame"))?;
        let tag_byte = at + i as u64;
        let tag = buf.get(i..i + h.size).and_then(|f| parse_vbr_tag(&h, f));
        let first = if tag.is_some() {
            tag_byte + h.size as u64
        } else {
            tag_byte
        };
        let map = map_for(first);
        {
            let mut m = lock(&map);
            if m.first_byte() != first {
                *m = SeekMap::new(first, 0);
            }
            let walk = (WALK_SECS * h.sample_rate as f64 / h.samples as f64) as u64;
            let fresh = m.exact_points() <= 1;
            if fresh {
                *m = SeekMap::new(first, walk);
                let delay = tag.as_ref().map_or(0, |t| t.delay) as f64;
                let frames = tag
                    .as_ref()
                    .and_then(|t| t.frames)
                    .map(|f| f as f64)
                    .or_else(|| {
                        duration_hint
                            .filter(|d| *d > 0.0)
                            .map(|d| (d * h.sample_rate as f64 + delay) / h.samples as f64)
                    });
                let end_byte = tag
                    .as_ref()
                    .and_then(|t| t.bytes)
                    .map(|b| tag_byte + b)
                    .filter(|b| len.is_none_or(|l| *b <= l))
                    .or(len);
                if let Some(end) = end_byte {
                    // Without a count: as if every frame had the first's bitrate.
                    let frames =
                        frames.unwrap_or((end.saturating_sub(first)) as f64 / h.mean_size());
                    m.set_end(end, frames);
                    // A CBR stream's table adds only its rounding.
                    if let Some(t) = &tag
                        && !t.cbr
                        && let Some(toc) = &t.toc
                        && let (Some(bytes), Some(count)) =
                            (t.bytes.or(Some(end - tag_byte)), t.frames)
                    {
                        m.set_table(toc_anchors(toc, tag_byte, bytes, count));
                    }
                    if let Some(t) = &tag
                        && let Some(v) = &t.vbri
                    {
                        m.set_table(vbri_anchors(first, &v.sizes, v.frames_per_entry));
                    }
                }
            }
        }
        r.seek(SeekFrom::Start(first))?;
        Ok(Self {
            r,
            len,
            reference: h,
            tag,
            next: first,
            next_frame: 0,
            exact: true,
            map,
        })
    }

    pub fn sample_rate(&self) -> u32 {
        self.reference.sample_rate
    }

    pub fn samples_per_frame(&self) -> u32 {
        self.reference.samples
    }

    /// Samples to drop at the start (encoder + decoder delay).
    pub fn delay(&self) -> u32 {
        self.tag.as_ref().map_or(0, |t| t.delay)
    }

    /// Valid samples in the stream when the tag counts its frames.
    pub fn total_samples(&self) -> Option<u64> {
        let t = self.tag.as_ref()?;
        let n = t.frames? * u64::from(self.reference.samples);
        Some(n.saturating_sub(u64::from(t.delay) + u64::from(t.padding)))
    }

    /// The estimated number of valid samples (tag, hint or bitrate guess).
    pub fn estimated_samples(&self) -> Option<f64> {
        if let Some(n) = self.total_samples() {
            return Some(n as f64);
        }
        let (_, frames) = lock(&self.map).end()?;
        Some(frames * self.reference.samples as f64 - self.delay() as f64)
    }

    fn cbr(&self) -> bool {
        self.tag
            .as_ref()
            .is_some_and(|t| t.cbr && t.frames.is_some())
    }

    /// True while frame indices come from counting frames from a known point.
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_packet(&mut self) -> io::Result<Option<MpaPacket>> {
        let mut head = [0u8; 4];
        let h = loop {
            self.r.seek(SeekFrom::Start(self.next))?;
            if read_full(&mut self.r, &mut head)? < 4 {
                return Ok(None);
            }
            match FrameHeader::parse(head).filter(|h| self.reference.same_stream(h)) {
                Some(h) => break h,
                // Junk between frames (or a trailing tag): look further.
                None => match self.resync(self.next + 1)? {
                    Some(_) => continue,
                    None => return Ok(None),
                },
            }
        };
        let mut data = vec![0u8; h.size];
        data[..4].copy_from_slice(&head);
        if read_full(&mut self.r, &mut data[4..])? < h.size - 4 {
            return Ok(None);
        }
        let byte = self.next;
        // An estimated landing stays an estimate until the next seek, even
        // when it runs into indexed audio: a jump in the timestamps would
        // be a jump in the published position.
        let frame = self.next_frame;
        if self.exact && frame.is_multiple_of(POINT_EVERY) {
            lock(&self.map).record(byte, frame);
        }
        self.next += h.size as u64;
        self.next_frame += 1;
        Ok(Some(MpaPacket {
            pts: (frame * u64::from(h.samples)) as i64 - i64::from(self.delay()),
            data,
        }))
    }

    /// Find the next frame at or after `from`; positions the reader there.
    fn resync(&mut self, from: u64) -> io::Result<Option<u64>> {
        self.r.seek(SeekFrom::Start(from))?;
        let mut buf = vec![0u8; RESYNC_WINDOW];
        let n = read_full(&mut self.r, &mut buf)?;
        match find_frame(&buf[..n], Some(&self.reference)) {
            Some((i, _)) => {
                self.next = from + i as u64;
                Ok(Some(self.next))
            }
            None => Ok(None),
        }
    }

    /// Build a table of estimated anchors for a stream without one: the
    /// mean frame size at [`PROBES`] points (a short read of frame headers
    /// at each), integrated between them and scaled to the frame count.
    /// Deterministic, so every run estimates the same places.
    fn profile(&mut self) -> io::Result<()> {
        let (first, end) = {
            let m = lock(&self.map);
            (m.first_byte(), m.end())
        };
        let Some((end_byte, frames)) = end else {
            return Ok(());
        };
        let span = end_byte.saturating_sub(first);
        let mut probes: Vec<(u64, f64)> = Vec::new();
        let mut head = [0u8; 4];
        for i in 0..PROBES {
            let at = first + span * (2 * i + 1) / (2 * PROBES);
            let Some(mut pos) = self.resync(at)? else {
                continue;
            };
            let (mut n, mut bytes) = (0u64, 0u64);
            while n < PROBE_FRAMES {
                self.r.seek(SeekFrom::Start(pos))?;
                if read_full(&mut self.r, &mut head)? < 4 {
                    break;
                }
                let Some(h) = FrameHeader::parse(head).filter(|h| self.reference.same_stream(h))
                else {
                    break;
                };
                bytes += h.size as u64;
                pos += h.size as u64;
                n += 1;
            }
            if n > 0 {
                probes.push((at, bytes as f64 / n as f64));
            }
        }
        if probes.len() < 2 {
            lock(&self.map).set_table(vec![(first, 0.0), (end_byte, frames)]);
            return Ok(());
        }
        // Segment j spans the bytes nearest probe j.
        let mut edges = vec![first];
        edges.extend(probes.windows(2).map(|w| (w[0].0 + w[1].0) / 2));
        edges.push(end_byte);
        let est: Vec<f64> = probes
            .iter()
            .enumerate()
            .map(|(j, p)| (edges[j + 1] - edges[j]) as f64 / p.1)
            .collect();
        let scale = frames / est.iter().sum::<f64>();
        let mut cum = 0.0;
        let mut anchors = vec![(first, 0.0)];
        for (j, e) in est.iter().enumerate() {
            cum += e * scale;
            anchors.push((edges[j + 1], cum));
        }
        lock(&self.map).set_table(anchors);
        Ok(())
    }

    /// Position so that the next packet holds sample `target` (counted
    /// with the delay, like `pts`). Returns the pts of the next packet.
    pub fn seek(&mut self, target: i64) -> io::Result<i64> {
        let spf = u64::from(self.reference.samples);
        let want = ((target + i64::from(self.delay())).max(0) as u64) / spf;
        let mut plan = lock(&self.map).plan(want);
        if matches!(plan, Plan::Estimate { .. }) && !lock(&self.map).has_table() {
            // No TOC: measure the bitrate along the stream first.
            self.profile()?;
        }
        if matches!(plan, Plan::Estimate { .. }) {
            // Estimate the start of the target's grid cell, then count
            // frames to the target: every seek into a cell lands on the
            // same estimate, so a place reported while playing on from an
            // approximate landing is found again after a restart.
            let cell = (GRID_SECS * f64::from(self.reference.sample_rate) / spf as f64) as u64;
            plan = lock(&self.map).plan(want / cell.max(1) * cell.max(1));
        }
        match plan {
            Plan::Walk { byte, frame } => {
                self.next = byte;
                self.next_frame = frame;
                self.exact = true;
            }
            Plan::Estimate { byte } => {
                let byte = self.len.map_or(byte, |l| byte.min(l.saturating_sub(4)));
                match self.resync(byte)? {
                    Some(b) => {
                        let f = lock(&self.map).frame_at(b).round().max(0.0) as u64;
                        self.next_frame = f;
                        // An `Info` tag vouches for a constant bitrate: the
                        // byte offset then gives the frame exactly.
                        self.exact = self.cbr() || lock(&self.map).exact_at(b) == Some(f);
                    }
                    None => {
                        // Nothing decodable there: the end.
                        self.next = self.len.unwrap_or(byte);
                        self.next_frame = want;
                        self.exact = false;
                    }
                }
            }
        }
        // Walk headers forward to the frame holding the target.
        let mut head = [0u8; 4];
        while self.next_frame < want {
            self.r.seek(SeekFrom::Start(self.next))?;
            if read_full(&mut self.r, &mut head)? < 4 {
                break;
            }
            match FrameHeader::parse(head).filter(|h| self.reference.same_stream(h)) {
                Some(h) => {
                    if self.exact && self.next_frame.is_multiple_of(POINT_EVERY) {
                        lock(&self.map).record(self.next, self.next_frame);
                    }
                    self.next += h.size as u64;
                    self.next_frame += 1;
                }
                None => {
                    if self.resync(self.next + 1)?.is_none() {
                        break;
                    }
                }
            }
        }
        self.r.seek(SeekFrom::Start(self.next))?;
        Ok((self.next_frame * spf) as i64 - i64::from(self.delay()))
    }
}

fn lock(m: &SharedSeekMap) -> MutexGuard<'_, SeekMap> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
