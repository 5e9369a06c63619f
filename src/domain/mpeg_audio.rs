//! MPEG audio frame headers, the first frame's Xing/Info, LAME and VBRI
//! tags, and walking a stream's frames ([`FrameWalker`]): pure parsing, no
//! I/O. Here because the player (seeks) and the reference server (exact
//! durations) must count frames the same way and may not import each other.

/// A parsed 4-byte MPEG audio frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// 1 = MPEG-1, 2 = MPEG-2, 25 = MPEG-2.5.
    pub version: u8,
    /// 1, 2 or 3.
    pub layer: u8,
    pub sample_rate: u32,
    pub bitrate_kbps: u32,
    pub mono: bool,
    pub crc: bool,
    /// Whole frame, header included.
    pub size: usize,
    /// Audio frames (samples per channel) the frame decodes to.
    pub samples: u32,
}

const BITRATES_V1: [[u32; 15]; 3] = [
    [
        0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448,
    ],
    [
        0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384,
    ],
    [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
    ],
];
const BITRATES_V2: [[u32; 15]; 2] = [
    [
        0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256,
    ],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
];

impl FrameHeader {
    /// Parse a header word; `None` for anything that is not a valid
    /// (non-free-format) frame header.
    pub fn parse(b: [u8; 4]) -> Option<Self> {
        let w = u32::from_be_bytes(b);
        if w >> 21 != 0x7ff {
            return None;
        }
        let version = match (w >> 19) & 3 {
            0 => 25,
            2 => 2,
            3 => 1,
            _ => return None,
        };
        let layer = match (w >> 17) & 3 {
            1 => 3,
            2 => 2,
            3 => 1,
            _ => return None,
        };
        let crc = (w >> 16) & 1 == 0;
        let br_idx = ((w >> 12) & 0xf) as usize;
        let sr_idx = ((w >> 10) & 3) as usize;
        if br_idx == 0 || br_idx == 15 || sr_idx == 3 || w & 3 == 2 {
            return None;
        }
        let padding = (w >> 9) & 1;
        let mono = (w >> 6) & 3 == 3;
        let bitrate_kbps = if version == 1 {
            BITRATES_V1[layer as usize - 1][br_idx]
        } else {
            BITRATES_V2[usize::from(layer != 1)][br_idx]
        };
        let sample_rate = [44100, 48000, 32000][sr_idx]
            / match version {
                1 => 1,
                2 => 2,
                _ => 4,
            };
        let br = bitrate_kbps * 1000;
        let (size, samples) = match (layer, version) {
            (1, _) => ((12 * br / sample_rate + padding) * 4, 384),
            (2, _) => (144 * br / sample_rate + padding, 1152),
            (_, 1) => (144 * br / sample_rate + padding, 1152),
            _ => (72 * br / sample_rate + padding, 576),
        };
        Some(Self {
            version,
            layer,
            sample_rate,
            bitrate_kbps,
            mono,
            crc,
            size: size as usize,
            samples,
        })
    }

    /// Average bytes a frame at this bitrate (padding included).
    pub fn mean_size(&self) -> f64 {
        let slots = f64::from(self.samples) / 8.0 * f64::from(self.bitrate_kbps) * 1000.0;
        slots / f64::from(self.sample_rate)
    }

    /// Frames of one stream share version, layer and sample rate.
    pub fn same_stream(&self, other: &FrameHeader) -> bool {
        self.version == other.version
            && self.layer == other.layer
            && self.sample_rate == other.sample_rate
    }

    /// Bytes of layer III side information after the header (and CRC).
    fn side_info_len(&self) -> usize {
        match (self.version == 1, self.mono) {
            (true, false) => 32,
            (true, true) => 17,
            (false, false) => 17,
            (false, true) => 9,
        }
    }
}

/// What the first frame's Xing/Info (+ LAME) or VBRI tag says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VbrTag {
    /// MPEG frames in the stream (the tag frame excluded).
    pub frames: Option<u64>,
    /// Bytes of audio from the tag frame on.
    pub bytes: Option<u64>,
    /// Time → byte table: `toc[i]` is the byte offset at `i`% of the
    /// duration, in 1/256ths of `bytes`.
    pub toc: Option<Vec<u8>>,
    /// VBRI table: byte sizes of consecutive equal-time segments.
    pub vbri: Option<VbriTable>,
    /// Samples to drop at the start (encoder delay + decoder delay, 529).
    pub delay: u32,
    /// Samples to drop at the end.
    pub padding: u32,
    /// An `Info` tag: LAME's mark of a constant-bitrate stream.
    pub cbr: bool,
}

impl VbrTag {
    /// The stream's valid samples (per channel) when the tag counts its
    /// frames: `samples_per_frame` each (1152 for MPEG-1 layer II/III, 576
    /// for MPEG-2/2.5 layer III), less the encoder delay and padding.
    pub fn valid_samples(&self, samples_per_frame: u32) -> Option<u64> {
        let n = self.frames? * u64::from(samples_per_frame);
        Some(n.saturating_sub(u64::from(self.delay) + u64::from(self.padding)))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct VbriTable {
    /// MPEG frames per table entry.
    pub frames_per_entry: u64,
    /// Byte size of each segment, in order.
    pub sizes: Vec<u64>,
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, x| (a << 8) | u64::from(*x))
}

/// Read a Xing/Info or VBRI tag from the first frame (`frame` is the whole
/// frame, header included). `None` when it is an ordinary audio frame.
pub fn parse_vbr_tag(h: &FrameHeader, frame: &[u8]) -> Option<VbrTag> {
    if h.layer != 3 {
        return None;
    }
    let off = 4 + usize::from(h.crc) * 2 + h.side_info_len();
    let id = frame.get(off..off + 4)?;
    if id == b"Xing" || id == b"Info" {
        return parse_xing(frame, off + 4).map(|t| VbrTag {
            cbr: id == b"Info",
            ..t
        });
    }
    if frame.get(36..40)? == b"VBRI" {
        return parse_vbri(frame);
    }
    None
}

fn parse_xing(f: &[u8], mut at: usize) -> Option<VbrTag> {
    let flags = be(f.get(at..at + 4)?);
    at += 4;
    let mut tag = VbrTag::default();
    if flags & 1 != 0 {
        tag.frames = Some(be(f.get(at..at + 4)?));
        at += 4;
    }
    if flags & 2 != 0 {
        tag.bytes = Some(be(f.get(at..at + 4)?));
        at += 4;
    }
    if flags & 4 != 0 {
        let toc = f.get(at..at + 100)?.to_vec();
        // A table that goes backwards is damaged: ignore it.
        if toc.windows(2).all(|w| w[0] <= w[1]) {
            tag.toc = Some(toc);
        }
        at += 100;
    }
    if flags & 8 != 0 {
        at += 4;
    }
    // LAME extension: encoder string (9), then delay/padding at +21.
    if let Some(enc) = f.get(at..at + 4)
        && (enc == b"LAME" || enc == b"Lavf" || enc == b"Lavc")
        && let Some(dp) = f.get(at + 21..at + 24)
    {
        let v = be(dp) as u32;
        tag.delay = (v >> 12) + 529;
        tag.padding = (v & 0xfff).saturating_sub(529);
    }
    Some(tag)
}

fn parse_vbri(f: &[u8]) -> Option<VbrTag> {
    let at = 36 + 4;
    if be(f.get(at..at + 2)?) != 1 {
        return None;
    }
    let bytes = be(f.get(at + 6..at + 10)?);
    let frames = be(f.get(at + 10..at + 14)?);
    let entries = be(f.get(at + 14..at + 16)?) as usize;
    let scale = be(f.get(at + 16..at + 18)?);
    let entry_size = be(f.get(at + 18..at + 20)?) as usize;
    let frames_per_entry = be(f.get(at + 20..at + 22)?);
    let mut sizes = Vec::with_capacity(entries);
    let mut p = at + 22;
    let table = (1..=4).contains(&entry_size) && frames_per_entry > 0;
    if table {
        for _ in 0..entries {
            let Some(v) = f.get(p..p + entry_size) else {
                break;
            };
            sizes.push(be(v) * scale.max(1));
            p += entry_size;
        }
    }
    Some(VbrTag {
        frames: Some(frames),
        bytes: Some(bytes),
        vbri: (table && sizes.len() == entries && entries > 0).then_some(VbriTable {
            frames_per_entry,
            sizes,
        }),
        ..Default::default()
    })
}

/// Total size of the ID3v2 tag starting at `b` (header, body, footer), or
/// 0 when `b` does not start with one.
pub fn id3v2_len(b: &[u8]) -> u64 {
    if b.len() < 10 || &b[..3] != b"ID3" {
        return 0;
    }
    let size = b[6..10]
        .iter()
        .fold(0u64, |a, x| (a << 7) | u64::from(x & 0x7f));
    let footer = if b[5] & 0x10 != 0 { 10 } else { 0 };
    10 + size + footer
}

/// The first offset in `buf` where a frame of `reference`'s stream (any
/// stream when `None`) starts and the next frame starts right after it;
/// a frame whose successor lies past `buf` is accepted (the last frame, or
/// one cut by the window).
pub fn find_frame(buf: &[u8], reference: Option<&FrameHeader>) -> Option<(usize, FrameHeader)> {
    (0..buf.len().saturating_sub(3)).find_map(|i| match chained(buf, i, reference) {
        Chain::Yes(h) | Chain::Unknown(h) => Some((i, h)),
        Chain::No => None,
    })
}

enum Chain {
    /// A frame starts here and another right after it.
    Yes(FrameHeader),
    /// A frame starts here; its successor lies past the bytes at hand.
    Unknown(FrameHeader),
    No,
}

fn chained(buf: &[u8], i: usize, reference: Option<&FrameHeader>) -> Chain {
    let header = |at: usize| {
        buf.get(at..at + 4)
            .and_then(|b| FrameHeader::parse(b.try_into().ok()?))
    };
    let Some(h) = header(i).filter(|h| reference.is_none_or(|r| r.same_stream(h))) else {
        return Chain::No;
    };
    match buf.get(i + h.size..i + h.size + 4) {
        Some(_) => match header(i + h.size) {
            Some(n) if h.same_stream(&n) => Chain::Yes(h),
            _ => Chain::No,
        },
        None => Chain::Unknown(h),
    }
}

/// Walks the frames of one stream header by header (each frame's size
/// gives where the next starts), over its bytes handed over in consecutive
/// pieces: a file read in chunks, or ranges of a download. Junk between
/// frames is skipped as the demuxer skips it (a frame counts only where
/// the next one follows it). Only headers are read: counting a stream's
/// frames is exact without decoding it.
#[derive(Debug, Clone)]
pub struct FrameWalker {
    reference: FrameHeader,
    /// Where the next frame starts, or where to look for one.
    next: u64,
    /// Index of the next frame.
    frames: u64,
    /// The bytes at `next` were not a frame: looking for the next one.
    lost: bool,
}

impl FrameWalker {
    /// A walk from frame `frame` of `reference`'s stream, at byte `at`.
    pub fn new(reference: FrameHeader, at: u64, frame: u64) -> Self {
        Self {
            reference,
            next: at,
            frames: frame,
            lost: false,
        }
    }

    /// Where the walk needs the stream's bytes from next.
    pub fn next_byte(&self) -> u64 {
        self.next
    }

    /// Frames walked (the index of the next frame).
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Walk every frame whose header lies in `buf`, the stream's bytes
    /// from `at` (which must not start after [`next_byte`](Self::next_byte));
    /// `on_frame(byte, index)` is called at each. `eof`: `buf` runs to the
    /// stream's end. Returns where the walk needs bytes from next (at the
    /// end of the stream: where it ended).
    pub fn walk(
        &mut self,
        at: u64,
        buf: &[u8],
        eof: bool,
        mut on_frame: impl FnMut(u64, u64),
    ) -> u64 {
        let end = at + buf.len() as u64;
        while self.next >= at && self.next + 4 <= end {
            let off = (self.next - at) as usize;
            if !self.lost {
                let head = buf[off..off + 4].try_into().ok();
                match head
                    .and_then(FrameHeader::parse)
                    .filter(|h| self.reference.same_stream(h))
                {
                    Some(h) => {
                        on_frame(self.next, self.frames);
                        self.next += h.size as u64;
                        self.frames += 1;
                        continue;
                    }
                    None => {
                        self.lost = true;
                        self.next += 1;
                        continue;
                    }
                }
            }
            // Look for a frame whose successor follows it (or the last one).
            let found = (off..buf.len().saturating_sub(3)).find_map(|i| {
                match chained(buf, i, Some(&self.reference)) {
                    Chain::Yes(_) => Some((i, true)),
                    Chain::Unknown(_) => Some((i, eof)),
                    Chain::No => None,
                }
            });
            match found {
                Some((i, true)) => {
                    self.next = at + i as u64;
                    self.lost = false;
                }
                // Its successor is in the next piece: decide there.
                Some((i, false)) => {
                    self.next = at + i as u64;
                    return self.next;
                }
                None => {
                    self.next = end.saturating_sub(3).max(self.next);
                    break;
                }
            }
        }
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_headers() {
        // MPEG-1 layer III, 128 kb/s, 44.1 kHz, no padding, joint stereo.
        let h = FrameHeader::parse([0xff, 0xfb, 0x90, 0x64]).unwrap();
        assert_eq!((h.version, h.layer, h.sample_rate), (1, 3, 44100));
        assert_eq!((h.bitrate_kbps, h.size, h.samples), (128, 417, 1152));
        // MPEG-2 layer III, 32 kb/s, 22.05 kHz, mono, padded.
        let h = FrameHeader::parse([0xff, 0xf3, 0x42, 0xc4]).unwrap();
        assert_eq!((h.version, h.sample_rate, h.samples), (2, 22050, 576));
        assert_eq!(h.size, 72 * 32000 / 22050 + 1);
        assert!(h.mono);
        assert!(FrameHeader::parse([0xff, 0xfb, 0xf0, 0x64]).is_none());
        assert!(FrameHeader::parse([0x49, 0x44, 0x33, 0x04]).is_none());
    }

    #[test]
    fn id3v2_size_is_syncsafe() {
        let b = [b'I', b'D', b'3', 4, 0, 0, 0, 0, 2, 1];
        assert_eq!(id3v2_len(&b), 10 + 257);
        assert_eq!(id3v2_len(b"\xff\xfb\x90\x64xxxxxx"), 0);
    }

    /// A layer III header: `version_bits` 3 (MPEG-1), 2 (MPEG-2) or 0
    /// (MPEG-2.5), mono, no CRC.
    fn header(version_bits: u32, br_idx: u32, sr_idx: u32, padding: u32) -> [u8; 4] {
        let w = 0xffe0_0000
            | version_bits << 19
            | 1 << 17
            | 1 << 16
            | br_idx << 12
            | sr_idx << 10
            | padding << 9
            | 3 << 6;
        w.to_be_bytes()
    }

    #[test]
    fn mpeg_2_and_2_5_layer_iii_frames_hold_576_samples() {
        for (bits, version, rate) in [(3, 1, 44100), (2, 2, 22050), (0, 25, 11025)] {
            let h = FrameHeader::parse(header(bits, 5, 0, 0)).unwrap();
            assert_eq!((h.version, h.sample_rate), (version, rate));
            assert_eq!(h.samples, if version == 1 { 1152 } else { 576 });
            // A frame's bytes are its duration times its bitrate.
            let secs = f64::from(h.samples) / f64::from(rate);
            let bytes = secs * f64::from(h.bitrate_kbps) * 1000.0 / 8.0;
            assert!((h.size as f64 - bytes).abs() < 1.0, "{h:?}");
        }
    }

    /// A stream of `frames` (bitrate index, padding) of one version, with
    /// `junk` bytes (never a sync word) before the frames at their index
    /// (the first run at an index only); and where each frame starts.
    fn stream(bits: u32, frames: &[(u32, u32)], junk: &[(usize, usize)]) -> (Vec<u8>, Vec<u64>) {
        let (mut out, mut starts) = (Vec::new(), Vec::new());
        for (i, (br, pad)) in frames.iter().enumerate() {
            if let Some((_, len)) = junk.iter().find(|(at, _)| *at == i) {
                out.extend((0..*len).map(|k| (k % 0x7f) as u8));
            }
            let h = header(bits, *br, 1, *pad);
            let size = FrameHeader::parse(h).unwrap().size;
            starts.push(out.len() as u64);
            out.extend_from_slice(&h);
            out.resize(out.len() + size - 4, 0);
        }
        (out, starts)
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_walk_in_pieces_finds_every_frame_and_nothing_else(
            bits in proptest::sample::select(vec![3u32, 2, 0]),
            frames in proptest::collection::vec((1u32..15, 0u32..2), 2..120),
            // Junk before frames 3 or more apart: a frame between two runs
            // of junk is not believed (no frame follows it), as in the demuxer.
            junk in proptest::collection::vec((1usize..40, 1usize..3000), 0..4)
                .prop_map(|j| j.into_iter().map(|(k, len)| (3 * k, len)).collect::<Vec<_>>()),
            piece in 5usize..5000,
        ) {
            let (bytes, starts) = stream(bits, &frames, &junk);
            let first = FrameHeader::parse(bytes[..4].try_into().unwrap()).unwrap();
            let mut walk = FrameWalker::new(first, 0, 0);
            let mut seen = Vec::new();
            let (mut at, mut len) = (0u64, piece);
            loop {
                let from = at as usize;
                let to = (from + len).min(bytes.len());
                let eof = to == bytes.len();
                let need = walk.walk(at, &bytes[from..to], eof, |b, i| seen.push((b, i)));
                if eof {
                    break;
                }
                prop_assert!(need >= at);
                // No progress: the next frame's successor lies further on.
                len = if need == at { len * 2 } else { piece };
                at = need;
            }
            let want: Vec<(u64, u64)> = starts.iter().copied().zip(0..).collect();
            prop_assert_eq!(seen, want);
            prop_assert_eq!(walk.frames(), frames.len() as u64);
        }
    }
}
