//! The length of a stream from its first bytes and its size, as earmark
//! measures it itself to read a server's number that names no unit
//! (`domain::unit_of`). Pure: bytes in, a [`Measure`] out.
//!
//! Counted where the format says how many samples there are (a WAV data
//! chunk, FLAC's STREAMINFO, an MP3 Xing/Info or VBRI frame, an MP4
//! `mvhd`, the granule of an Ogg stream's last page); estimated from the
//! size and the first frames' bit rate for an MP3 without one. Any other
//! stream tells nothing: `Unknown`.

use crate::domain::Measure;
use crate::domain::mpeg_audio::{FrameHeader, id3v2_len};

/// What the bytes read so far say about a stream's length.
#[derive(Debug, Clone, PartialEq)]
pub enum HeadSays {
    Length(Measure),
    /// The length sits further on: read `len` bytes from `from` and ask
    /// [`more_bytes`] with `then`.
    NeedsBytes {
        from: u64,
        len: u64,
        then: Then,
    },
    /// Not a stream earmark can measure from its head (said why).
    Unknown(&'static str),
}

/// What to look for in the further bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Then {
    /// The top-level MP4 box that starts there (`moov` after `mdat`).
    Mp4Box,
    /// The last Ogg page's granule, counted at `rate` after `pre_skip`.
    OggEnd { rate: u32, pre_skip: u64 },
    /// The audio after an ID3v2 tag longer than the head (cover art).
    AfterTag,
}

/// How many bytes of a stream's head to read for [`stream_length`].
pub const HEAD_BYTES: u64 = 64 * 1024;

/// The whole size in a `Content-Range` (`bytes 0-65535/1234567`); `None`
/// for `*` or a value that does not read.
pub fn content_range_total(v: &str) -> Option<u64> {
    let (unit, rest) = v.trim().split_once(' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    rest.rsplit_once('/')?.1.trim().parse().ok()
}

/// The length of a stream of `total` bytes (`None`: its size is not known)
/// from its first bytes.
pub fn stream_length(head: &[u8], total: Option<u64>) -> HeadSays {
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WAVE") {
        return wav(head, total);
    }
    if head.starts_with(b"OggS") {
        return ogg(head, total);
    }
    if head.get(4..8).is_some_and(|t| t == b"ftyp") {
        return mp4(head, 0, total);
    }
    let start = id3v2_len(head) as usize;
    if start + 4 > head.len() && start > 0 {
        return HeadSays::NeedsBytes {
            from: start as u64,
            len: HEAD_BYTES,
            then: Then::AfterTag,
        };
    }
    after_tag(&head[start.min(head.len())..], start as u64, total)
}

/// FLAC or MPEG audio read at `from` (past any ID3v2 tag).
fn after_tag(b: &[u8], from: u64, total: Option<u64>) -> HeadSays {
    if b.starts_with(b"fLaC") {
        return flac(b);
    }
    mp3(b, from, total)
}

/// The length from further bytes, read at `from` as [`HeadSays::NeedsBytes`]
/// asked.
pub fn more_bytes(bytes: &[u8], from: u64, then: Then, total: Option<u64>) -> HeadSays {
    match then {
        Then::Mp4Box => mp4(bytes, from, total),
        Then::OggEnd { rate, pre_skip } => ogg_end(bytes, rate, pre_skip),
        Then::AfterTag => after_tag(bytes, from, total),
    }
}

fn counted(secs: f64) -> HeadSays {
    if secs.is_finite() && secs > 0.0 {
        HeadSays::Length(Measure { secs, exact: true })
    } else {
        HeadSays::Unknown("a header that counts no samples")
    }
}

fn u16_le(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_le(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u32_be(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_be(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

// ---------------------------------------------------------------- WAV

fn wav(b: &[u8], total: Option<u64>) -> HeadSays {
    let mut at = 12usize;
    let mut byte_rate = None;
    while let (Some(id), Some(size)) = (b.get(at..at + 4), u32_le(b, at + 4)) {
        let body = at + 8;
        match id {
            b"fmt " => byte_rate = u32_le(b, body + 8).filter(|r| *r > 0),
            b"data" => {
                let Some(rate) = byte_rate else {
                    return HeadSays::Unknown("a WAV data chunk before its format");
                };
                // A streamed WAV may say 0 or 0xFFFFFFFF: the rest of the file.
                let rest = total.map(|t| t.saturating_sub(body as u64));
                let size = match (size, rest) {
                    (0 | u32::MAX, Some(r)) => r,
                    (s, Some(r)) => u64::from(s).min(r),
                    (s, None) => u64::from(s),
                };
                return counted(size as f64 / f64::from(rate));
            }
            _ => {}
        }
        at = body + size as usize + (size as usize & 1);
    }
    HeadSays::Unknown("a WAV file without a data chunk in its head")
}

// ---------------------------------------------------------------- FLAC

fn flac(b: &[u8]) -> HeadSays {
    // STREAMINFO is the first metadata block: 4 bytes of header, then
    // 10 bytes of block and frame sizes, then rate (20 bits), channels (3),
    // bits (5) and the total samples (36).
    let Some(info) = b.get(8..8 + 18).filter(|_| b[4] & 0x7f == 0) else {
        return HeadSays::Unknown("a FLAC file without STREAMINFO");
    };
    let x = u64::from_be_bytes(info[10..18].try_into().unwrap_or_default());
    let rate = x >> 44;
    let samples = x & 0xF_FFFF_FFFF;
    if rate == 0 || samples == 0 {
        return HeadSays::Unknown("a FLAC file that does not count its samples");
    }
    counted(samples as f64 / rate as f64)
}

// ---------------------------------------------------------------- MP3

/// The MPEG audio frame header at `at`, as the player reads one.
fn frame_at(b: &[u8], at: usize) -> Option<FrameHeader> {
    FrameHeader::parse(b.get(at..at + 4)?.try_into().ok()?)
}

/// The first frame from `from` on that another frame follows (a sync
/// word inside a tag or the data is not a frame).
fn first_frame(b: &[u8], from: usize) -> Option<(usize, FrameHeader)> {
    let end = b.len().saturating_sub(4).min(from + 16 * 1024);
    (from..end).find_map(|at| {
        let f = frame_at(b, at)?;
        let next = frame_at(b, at + f.size);
        let ends_here = at + f.size >= b.len();
        let chained = next.is_some_and(|n| n.sample_rate == f.sample_rate);
        (f.size >= 4 && (ends_here || chained)).then_some((at, f))
    })
}

/// MPEG audio in bytes read at `from`.
fn mp3(b: &[u8], from: u64, total: Option<u64>) -> HeadSays {
    let Some((at, first)) = first_frame(b, 0) else {
        return HeadSays::Unknown("no MPEG audio frame in the stream's head");
    };
    // Xing/Info sits after the side information; VBRI 32 bytes in.
    let side = match (first.version == 1, first.mono) {
        (true, false) => 32,
        (true, true) | (false, false) => 17,
        (false, true) => 9,
    };
    let x = at + 4 + side;
    if matches!(b.get(x..x + 4), Some(b"Xing" | b"Info"))
        && let Some(flags) = u32_be(b, x + 4)
        && flags & 1 != 0
        && let Some(frames) = u32_be(b, x + 8)
    {
        return counted(
            f64::from(frames) * f64::from(first.samples) / f64::from(first.sample_rate),
        );
    }
    if b.get(at + 36..at + 40) == Some(b"VBRI")
        && let Some(frames) = u32_be(b, at + 36 + 14)
    {
        return counted(
            f64::from(frames) * f64::from(first.samples) / f64::from(first.sample_rate),
        );
    }
    let Some(total) = total else {
        return HeadSays::Unknown("an MP3 stream of unknown size without a Xing or VBRI header");
    };
    // The bit rate of the frames in the head, over the rest of the file.
    let (mut pos, mut bytes, mut samples) = (at, 0u64, 0u64);
    let same = |f: &FrameHeader| f.sample_rate == first.sample_rate;
    while let Some(f) = frame_at(b, pos).filter(|f| same(f) && pos + f.size <= b.len()) {
        bytes += f.size as u64;
        samples += u64::from(f.samples);
        pos += f.size;
    }
    if bytes == 0 || samples == 0 {
        return HeadSays::Unknown("no whole MPEG audio frame in the stream's head");
    }
    let bytes_per_sec = bytes as f64 * f64::from(first.sample_rate) / samples as f64;
    let audio = total.saturating_sub(from + at as u64);
    HeadSays::Length(Measure {
        secs: audio as f64 / bytes_per_sec,
        exact: false,
    })
}

// ---------------------------------------------------------------- MP4

/// Walk the top-level boxes of bytes read at `from`: the `mvhd` inside
/// `moov`, or the offset of the next box past what was read.
fn mp4(b: &[u8], from: u64, total: Option<u64>) -> HeadSays {
    let mut at = 0usize;
    while let (Some(size), Some(kind)) = (u32_be(b, at), b.get(at + 4..at + 8)) {
        let (size, header) = match size {
            1 => match u64_be(b, at + 8) {
                Some(s) => (s, 16),
                None => break,
            },
            0 => match total {
                Some(t) => (t.saturating_sub(from + at as u64), 8),
                None => break,
            },
            s => (u64::from(s), 8),
        };
        if size < header {
            return HeadSays::Unknown("an MP4 box shorter than its header");
        }
        if kind == b"moov" {
            let inner = b.get(at + header as usize..).unwrap_or_default();
            return mvhd(inner);
        }
        let next = at as u64 + size;
        if next + 8 > b.len() as u64 {
            let from = from + next;
            return match total {
                Some(t) if from + 8 > t => HeadSays::Unknown("an MP4 file without a moov box"),
                _ => HeadSays::NeedsBytes {
                    from,
                    len: 4096,
                    then: Then::Mp4Box,
                },
            };
        }
        at = next as usize;
    }
    HeadSays::Unknown("an MP4 file whose boxes cannot be read")
}

fn mvhd(moov: &[u8]) -> HeadSays {
    let mut at = 0usize;
    while let (Some(size), Some(kind)) = (u32_be(moov, at), moov.get(at + 4..at + 8)) {
        if kind == b"mvhd" {
            let v = at + 8;
            let (scale, duration) = match moov.get(v) {
                Some(0) => (u32_be(moov, v + 12), u32_be(moov, v + 16).map(u64::from)),
                Some(1) => (u32_be(moov, v + 20), u64_be(moov, v + 24)),
                _ => (None, None),
            };
            return match (scale, duration) {
                (Some(s), Some(d)) if s > 0 && d != u64::from(u32::MAX) && d != u64::MAX => {
                    counted(d as f64 / f64::from(s))
                }
                _ => HeadSays::Unknown("an MP4 mvhd without a duration"),
            };
        }
        if size < 8 {
            break;
        }
        at += size as usize;
    }
    HeadSays::Unknown("an MP4 moov box without mvhd in the bytes read")
}

// ---------------------------------------------------------------- Ogg

fn ogg(b: &[u8], total: Option<u64>) -> HeadSays {
    // The first page holds the identification header after its segment table.
    let segments = usize::from(*b.get(26).unwrap_or(&0));
    let packet = b.get(27 + segments..).unwrap_or_default();
    let then = if packet.starts_with(b"\x01vorbis") {
        match u32_le(packet, 12) {
            Some(rate) if rate > 0 => Then::OggEnd { rate, pre_skip: 0 },
            _ => return HeadSays::Unknown("a Vorbis header without a sample rate"),
        }
    } else if packet.starts_with(b"OpusHead") {
        let pre_skip = u16_le(packet, 10).map_or(0, u64::from);
        // Opus granules always count 48 kHz samples.
        Then::OggEnd {
            rate: 48_000,
            pre_skip,
        }
    } else {
        return HeadSays::Unknown("an Ogg stream that is neither Vorbis nor Opus");
    };
    let Some(total) = total else {
        return HeadSays::Unknown("an Ogg stream of unknown size");
    };
    let len = total.min(HEAD_BYTES);
    HeadSays::NeedsBytes {
        from: total - len,
        len,
        then,
    }
}

fn ogg_end(b: &[u8], rate: u32, pre_skip: u64) -> HeadSays {
    // The last page whose header reads: capture pattern, version 0.
    let last = (0..b.len().saturating_sub(27))
        .rev()
        .find(|&i| b[i..].starts_with(b"OggS") && b[i + 4] == 0);
    let Some(i) = last else {
        return HeadSays::Unknown("no Ogg page in the stream's end");
    };
    let granule = i64::from_le_bytes(b[i + 6..i + 14].try_into().unwrap_or_default());
    if granule <= 0 || rate == 0 {
        return HeadSays::Unknown("an Ogg page without a granule position");
    }
    counted((granule as u64).saturating_sub(pre_skip) as f64 / f64::from(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}{name}")).unwrap()
    }

    /// The length of a whole file as the client measures it: the head,
    /// then the further bytes it asks for.
    fn measure(file: &[u8]) -> HeadSays {
        let total = Some(file.len() as u64);
        let head = &file[..file.len().min(HEAD_BYTES as usize)];
        let mut says = stream_length(head, total);
        for _ in 0..3 {
            let HeadSays::NeedsBytes { from, len, then } = says else {
                break;
            };
            let from_i = (from as usize).min(file.len());
            let end = (from_i + len as usize).min(file.len());
            says = more_bytes(&file[from_i..end], from, then, total);
        }
        says
    }

    fn secs(says: HeadSays) -> (f64, bool) {
        match says {
            HeadSays::Length(m) => ((m.secs * 1000.0).round() / 1000.0, m.exact),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_fixture_format_is_counted() {
        // ffprobe: mp3 3.056 (Info header, LAME's padding included), opus
        // 3.0065 (its granule less pre-skip), the rest 3.000.
        for (name, want) in [
            ("tone.wav", 3.0),
            ("tone.flac", 3.0),
            ("tone.m4a", 3.0),
            ("tone.m4b", 3.0),
            ("tone.ogg", 3.0),
            ("tone.opus", 3.0),
            ("tone.mp3", 3.056),
        ] {
            let (got, exact) = secs(measure(&fixture(name)));
            assert!(exact, "{name}");
            assert!((got - want).abs() < 0.03, "{name}: {got} s, want {want}");
        }
    }

    #[test]
    fn an_mp3_without_xing_is_estimated_from_its_bit_rate() {
        let file = fixture("tone.mp3");
        let start = id3v2_len(&file) as usize;
        let (at, info) = first_frame(&file, start).unwrap();
        // The file without its Info frame: a bare CBR stream.
        let bare: Vec<u8> = [&file[..at], &file[at + info.size..]].concat();
        let (got, exact) = secs(measure(&bare));
        assert!(!exact);
        assert!((got - 3.056).abs() < 0.1, "{got}");
        // Its size unknown: nothing to estimate from.
        assert!(matches!(stream_length(&bare, None), HeadSays::Unknown(_)));
    }

    #[test]
    fn an_mp4_with_moov_first_is_read_from_its_head() {
        let file = fixture("tone.m4a");
        // ftyp (28), free (8), mdat, moov: moov moved before mdat.
        let mdat_at = 36;
        let mdat_len = u32_be(&file, mdat_at).unwrap() as usize;
        let moov = &file[mdat_at + mdat_len..];
        let fast: Vec<u8> = [&file[..mdat_at], moov, &file[mdat_at..mdat_at + mdat_len]].concat();
        let says = stream_length(&fast[..4096.min(fast.len())], Some(fast.len() as u64));
        assert!(
            matches!(says, HeadSays::Length(Measure { exact: true, .. })),
            "{says:?}"
        );
        // moov at the end: the client is asked for the bytes after mdat.
        let says = stream_length(&file[..4096], Some(file.len() as u64));
        assert_eq!(
            says,
            HeadSays::NeedsBytes {
                from: (mdat_at + mdat_len) as u64,
                len: 4096,
                then: Then::Mp4Box
            }
        );
    }

    #[test]
    fn a_wav_that_streams_its_size_is_counted_to_its_end() {
        let mut file = fixture("tone.wav");
        let data = file.windows(4).position(|w| w == b"data").unwrap();
        file[data + 4..data + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        let (got, _) = secs(measure(&file));
        assert!((got - 3.0).abs() < 0.01, "{got}");
    }

    #[test]
    fn content_range_totals() {
        assert_eq!(
            content_range_total("bytes 0-65535/1234567"),
            Some(1_234_567)
        );
        assert_eq!(content_range_total("bytes 0-9/*"), None);
        assert_eq!(content_range_total("bytes */100"), Some(100));
        assert_eq!(content_range_total("items 0-9/100"), None);
    }

    #[test]
    fn what_is_not_audio_is_unknown() {
        for bytes in [
            fixture("garbage.mp3"),
            b"<html>not audio</html>".to_vec(),
            Vec::new(),
            b"RIFF\0\0\0\0WAVE".to_vec(),
            b"fLaC\x80\0\0\x22".to_vec(),
            b"OggS".to_vec(),
            b"\0\0\0\x08ftyp".to_vec(),
        ] {
            let says = measure(&bytes);
            assert!(matches!(says, HeadSays::Unknown(_)), "{says:?}");
        }
    }

    proptest::proptest! {
        /// No bytes make the measure panic.
        #[test]
        fn any_bytes_are_measured_or_unknown(
            head in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
            total in proptest::option::of(0u64..1 << 40),
            prefix in proptest::sample::select(vec![&b""[..], b"RIFF\0\0\0\0WAVE", b"OggS", b"ID3\x04\0\0\0\0\0\x01", b"\0\0\0\x10ftyp", b"fLaC"]),
        ) {
            let bytes = [prefix, &head[..]].concat();
            let _ = stream_length(&bytes, total);
            for then in [Then::Mp4Box, Then::OggEnd { rate: 48_000, pre_skip: 312 }] {
                let _ = more_bytes(&bytes, 1 << 20, then, total);
            }
        }
    }
}
