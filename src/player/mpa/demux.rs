//! An MPEG audio demuxer that knows where its frames are: it counts frames
//! from the start, records exact (byte, frame) points in a shared
//! [`SeekMap`] as it goes, and seeks through that map, the Xing TOC or the
//! VBRI table. symphonia's own mp3 reader estimates a seek's byte offset
//! from the average bitrate, which lands far off in VBR files. A seek far
//! from every exact point counts the frames up to it first ([`Count`]),
//! and lands on an estimate only when that takes too long; the estimate
//! is then corrected where the count meets the audio played.

use super::bytes::{Cached, RangeReader};
use super::count::{COUNT_BYTES, Count, CountFrom};
use super::frame::{FrameHeader, VbrTag, find_frame, id3v2_len, parse_vbr_tag};
use super::lock;
use super::seek_map::{POINT_EVERY, Plan, SeekMap, toc_anchors, vbri_anchors};
use std::io::{self, Read, Seek};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod profile;

/// Bytes searched for a frame header after a jump.
const RESYNC_WINDOW: usize = 64 * 1024;
/// Points where a stream without a TOC has its bitrate measured.
const PROBES: u64 = 16;
/// Frame headers read at each of those points (at most).
const PROBE_FRAMES: u64 = 32;
/// Bytes read at each of those points: 32 frames up to 128 kb/s at
/// 44.1 kHz, fewer at higher bitrates.
const PROBE_BYTES: usize = 16 * 1024;
/// Estimated seeks land on a grid of this step and count frames from there.
const GRID_SECS: f64 = 10.0;
/// A seek walks frame headers from an exact point up to this far.
pub const WALK_SECS: f64 = 30.0;
/// How long a seek waits for the frames up to its target to be counted
/// before it lands on an estimate instead.
pub const COUNT_WAIT: Duration = Duration::from_millis(1500);
/// A length from elsewhere (the server) that differs more than this
/// fraction from the bitrate measured along the stream is not believed.
const HINT_TOLERANCE: f64 = 0.25;

/// One demuxed frame.
pub struct MpaPacket {
    /// Sample index (per channel) of the first decoded sample, delay
    /// included: negative for the encoder and decoder delay.
    pub pts: i64,
    pub data: Box<[u8]>,
}

pub type SharedSeekMap = Arc<Mutex<SeekMap>>;

pub struct MpaDemuxer<R> {
    src: Cached<R>,
    /// Bounded reads for the bitrate probes and counts (HTTP), when the
    /// source has them.
    ranges: Option<Arc<dyn RangeReader>>,
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
    /// Frames counted beside playback since the last estimated landing.
    count: Option<Count>,
    /// The stream's length came from a hint, not from the stream.
    hinted_end: bool,
    /// How far a seek may count frames ([`COUNT_BYTES`] unless set).
    count_limit: u64,
}

impl<R: Read + Seek> MpaDemuxer<R> {
    /// Find the first frame (after ID3v2 tags) and read its VBR tag.
    /// `maps` hands out the stream's shared seek map (kept across seeks);
    /// `duration_hint`: the stream's length in seconds when known from
    /// elsewhere (the server), for streams without a frame count.
    /// `ranges`: bounded reads of the same stream, for probes.
    pub fn open(
        r: R,
        len: Option<u64>,
        map_for: impl FnOnce(u64) -> SharedSeekMap,
        duration_hint: Option<f64>,
        ranges: Option<Arc<dyn RangeReader>>,
    ) -> io::Result<Self> {
        let mut src = Cached::new(r);
        let mut at = 0u64;
        loop {
            let skip = id3v2_len(src.get(at, 10)?);
            if skip == 0 {
                break;
            }
            at += skip;
        }
        let buf = src.get(at, RESYNC_WINDOW)?;
        let (i, h) = find_frame(buf, None)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no MPEG audio frame"))?;
        let tag_byte = at + i as u64;
        let tag = buf.get(i..i + h.size).and_then(|f| parse_vbr_tag(&h, f));
        let first = if tag.is_some() {
            tag_byte + h.size as u64
        } else {
            tag_byte
        };
        let map = map_for(first);
        let mut hinted_end = false;
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
                    hinted_end =
                        frames.is_some() && tag.as_ref().is_none_or(|t| t.frames.is_none());
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
        Ok(Self {
            src,
            ranges,
            len,
            reference: h,
            tag,
            next: first,
            next_frame: 0,
            exact: true,
            map,
            count: None,
            hinted_end,
            count_limit: COUNT_BYTES,
        })
    }

    /// How many bytes a seek may count frames through (0: never count;
    /// every far seek lands on an estimate).
    pub fn set_count_limit(&mut self, bytes: u64) {
        self.count_limit = bytes;
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
        self.tag.as_ref()?.valid_samples(self.reference.samples)
    }

    /// Valid samples in the stream as the stream itself says: its tag's
    /// frame count, or every frame counted (an index, a count, or playback
    /// that reached the end exactly). Never a hint or an estimate.
    pub fn measured_samples(&self) -> Option<u64> {
        self.total_samples().or_else(|| {
            let frames = lock(&self.map).counted_frames()?;
            let t = self.tag.as_ref();
            let trim = t.map_or(0, |t| u64::from(t.delay) + u64::from(t.padding));
            Some((frames * u64::from(self.reference.samples)).saturating_sub(trim))
        })
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
        let reference = self.reference;
        let h = loop {
            let head = self.src.get(self.next, 4)?;
            let Ok(head) = <[u8; 4]>::try_from(head) else {
                return Ok(self.ended());
            };
            match FrameHeader::parse(head).filter(|h| reference.same_stream(h)) {
                Some(h) => break h,
                // Junk between frames (or a trailing tag): look further.
                None => match self.resync(self.next + 1)? {
                    Some(_) => continue,
                    None => return Ok(self.ended()),
                },
            }
        };
        let data = self.src.get(self.next, h.size)?;
        if data.len() < h.size {
            return Ok(self.ended());
        }
        let data: Box<[u8]> = data.into();
        let byte = self.next;
        if !self.exact {
            self.meet_counted_point(byte);
        }
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

    /// The end of the stream: its frame count, when counted from a known
    /// point, is exact. Always `None` (no packet).
    fn ended(&mut self) -> Option<MpaPacket> {
        if self.exact && self.next_frame > 0 {
            lock(&self.map).set_counted_end(self.next, self.next_frame);
        }
        None
    }

    /// On an estimate: when `byte` (the frame about to be read) is an exact
    /// point (counted beside playback, or a complete index installed), the
    /// frame index is corrected to it and exact from here on (timestamps
    /// jump by the estimate's error, and the position with them). Else the
    /// count is asked to go on up to here.
    fn meet_counted_point(&mut self, byte: u64) {
        let known = lock(&self.map).exact_at(byte);
        let Some(frame) = known else {
            if let Some(c) = &self.count {
                c.extend_to(byte);
            }
            return;
        };
        if frame != self.next_frame {
            tracing::debug!(
                "mp3 estimate corrected at byte {byte}: frame {} is {frame}",
                self.next_frame
            );
        }
        self.go_to(byte, frame);
        self.count = None;
    }

    /// The next frame is `frame`, at `byte` (an exact point).
    fn go_to(&mut self, byte: u64, frame: u64) {
        self.next = byte;
        self.next_frame = frame;
        self.exact = true;
    }

    /// Find the next frame at or after `from`; positions the reader there.
    fn resync(&mut self, from: u64) -> io::Result<Option<u64>> {
        let reference = self.reference;
        let buf = self.src.get(from, RESYNC_WINDOW)?;
        Ok(find_frame(buf, Some(&reference)).map(|(i, _)| {
            self.next = from + i as u64;
            self.next
        }))
    }

    /// The header of the frame at `byte`, when one of this stream is there.
    fn header_at(&mut self, byte: u64) -> io::Result<Option<FrameHeader>> {
        let reference = self.reference;
        let head = self.src.get(byte, 4)?;
        Ok(<[u8; 4]>::try_from(head)
            .ok()
            .and_then(FrameHeader::parse)
            .filter(|h| reference.same_stream(h)))
    }

    /// Position so that the next packet is `preroll` frames before the one
    /// holding sample `target` (counted with the delay, like `pts`), or at
    /// the start. Returns the pts of the next packet.
    ///
    /// An estimated landing depends only on the target's grid cell, not on
    /// the pre-roll: every seek into a cell lands on the same estimate and
    /// counts frames from there, so a place reported while playing on from
    /// an approximate landing plays the same audio when it is sought again.
    pub fn seek(&mut self, target: i64, preroll: u64) -> io::Result<i64> {
        let spf = u64::from(self.reference.samples);
        let aim = ((target + i64::from(self.delay())).max(0) as u64) / spf;
        let want = aim.saturating_sub(preroll);
        let mut plan = lock(&self.map).plan(want);
        self.count = None;
        if let Plan::Estimate { byte } = plan
            && self.count_up_to(want, byte)
        {
            plan = lock(&self.map).plan(want);
        }
        match plan {
            Plan::Walk { byte, frame } => {
                self.go_to(byte, frame);
                self.count = None;
            }
            Plan::Estimate { .. } => {
                if !lock(&self.map).has_table() && !self.cbr() {
                    // No TOC: measure the bitrate along the stream first
                    // (an `Info` tag's constant bitrate needs no measure).
                    self.profile()?;
                }
                // The start of the 10 s cell holding the target.
                let per_cell = GRID_SECS * f64::from(self.reference.sample_rate) / spf as f64;
                let k = (aim as f64 / per_cell).floor();
                self.land(((k * per_cell).floor() as u64).min(aim), want)?;
            }
        }
        self.walk_to(want)?;
        if self.exact {
            self.count = None;
        }
        Ok((self.next_frame * spf) as i64 - i64::from(self.delay()))
    }

    /// Count the frames from the last exact point before frame `want` (its
    /// estimate at byte `estimate`) through range reads, waiting up to
    /// [`COUNT_WAIT`]; true when the count passed `want` (a seek there is
    /// then exact). A count that is not done goes on beside playback.
    /// Nothing is counted without range reads, in a CBR stream (its byte
    /// arithmetic is exact), or further than the count limit.
    fn count_up_to(&mut self, want: u64, estimate: u64) -> bool {
        let Some(ranges) = self.ranges.clone() else {
            return false;
        };
        if self.cbr() {
            return false;
        }
        let (byte, frame) = lock(&self.map).exact_before(want);
        if estimate.saturating_sub(byte) > self.count_limit {
            return false;
        }
        let from = CountFrom {
            reference: self.reference,
            byte,
            frame,
            len: self.len,
            limit: self.count_limit,
        };
        let Some(count) = Count::start(ranges, self.map.clone(), from, (estimate, want)) else {
            return false;
        };
        let passed = count.wait_past(want, COUNT_WAIT);
        self.count = Some(count);
        passed
    }

    /// Land on the estimate for frame `cell` (a grid point), then step back
    /// to frame `want` (before it, for the pre-roll) when that can be
    /// counted.
    fn land(&mut self, cell: u64, want: u64) -> io::Result<()> {
        let plan = lock(&self.map).plan(cell);
        let byte = match plan {
            Plan::Walk { byte, frame } => {
                self.go_to(byte, frame);
                return Ok(());
            }
            Plan::Estimate { byte } => byte,
        };
        let byte = self.len.map_or(byte, |l| byte.min(l.saturating_sub(4)));
        // One read for the landing and the pre-roll before it: the frames
        // back to `want` (and two for the rounding) come in the same
        // request as the landing, not in a second one after it.
        let back = (cell.saturating_sub(want) + 2) * self.max_frame_size() as u64;
        let from = byte.saturating_sub(back).max(lock(&self.map).first_byte());
        self.src.get(from, (byte - from) as usize + RESYNC_WINDOW)?;
        let Some(b) = self.resync(byte)? else {
            // Nothing decodable there: the end.
            self.next = self.len.unwrap_or(byte);
            self.next_frame = want;
            self.exact = false;
            return Ok(());
        };
        let f = lock(&self.map).frame_at(b).round().max(0.0) as u64;
        self.next_frame = f;
        // An `Info` tag vouches for a constant bitrate: the byte offset
        // then gives the frame exactly.
        self.exact = self.cbr() || lock(&self.map).exact_at(b) == Some(f);
        if want >= f {
            return Ok(());
        }
        // The pre-roll lies before the landing: count the frames between a
        // point a little before it and the landing.
        let back = (f - want) as usize * self.max_frame_size();
        let from = b
            .saturating_sub(back as u64)
            .max(lock(&self.map).first_byte());
        let Some(mut at) = self.resync(from)? else {
            self.next = b;
            return Ok(());
        };
        let mut frames = Vec::new();
        while at < b {
            let Some(h) = self.header_at(at)? else {
                break;
            };
            frames.push(at);
            at += h.size as u64;
        }
        let k = frames.len() as u64;
        if at == b && k > 0 && k <= f {
            let first = want.max(f - k);
            self.next = frames[(first - (f - k)) as usize];
            self.next_frame = first;
        } else {
            // Not a chain of frames up to the landing: no pre-roll.
            self.next = b;
        }
        Ok(())
    }

    /// The largest frame this stream's version, layer and rate allow.
    fn max_frame_size(&self) -> usize {
        let r = self.reference;
        let kbps = match (r.version, r.layer) {
            (1, 1) => 448,
            (1, 2) => 384,
            (1, _) => 320,
            (_, 1) => 256,
            _ => 160,
        };
        let slots = f64::from(r.samples) / 8.0 * f64::from(kbps) * 1000.0;
        (slots / f64::from(r.sample_rate)) as usize + 4
    }

    /// Walk every frame header from the first frame to the end, recording
    /// exact points, and set the exact end: a local file's whole index.
    pub fn index_to_end(&mut self) -> io::Result<()> {
        let first = lock(&self.map).first_byte();
        self.go_to(first, 0);
        self.walk_to(u64::MAX)?;
        lock(&self.map).set_counted_end(self.next, self.next_frame);
        Ok(())
    }

    /// Walk frame headers forward until the next frame is `want`.
    fn walk_to(&mut self, want: u64) -> io::Result<()> {
        while self.next_frame < want {
            match self.header_at(self.next)? {
                Some(h) => {
                    if self.exact && self.next_frame.is_multiple_of(POINT_EVERY) {
                        lock(&self.map).record(self.next, self.next_frame);
                    }
                    self.next += h.size as u64;
                    self.next_frame += 1;
                }
                None => {
                    if self.src.get(self.next, 4)?.len() < 4
                        || self.resync(self.next + 1)?.is_none()
                    {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}
