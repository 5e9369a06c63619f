//! MPEG audio frame headers and the first frame's Xing/Info, LAME and VBRI
//! tags: pure parsing, no I/O.

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
}
