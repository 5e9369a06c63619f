//! Reads what the scanner needs from one audio file: duration, tags,
//! embedded chapters and cover art. mp4ameta for MP4 (m4b chapters live in
//! `chpl` or a chapter track, which symphonia does not expose), symphonia
//! for everything else (ID3 CHAP through `FormatReader::chapters`). An mp3's
//! duration is exact: its Xing/VBRI frame count, or else a count of its
//! frames (the scanner caches the result by path, size and mtime).

use anyhow::Context;
use std::fs::File;
use std::path::Path;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::{ChapterGroup, ChapterGroupItem, MetadataOptions, StandardTag, Tag};

/// Audio file extensions the scanner serves, with their MIME types.
pub fn mime_for(path: &Path) -> Option<&'static str> {
    Some(match ext(path).as_str() {
        "mp3" => "audio/mpeg",
        "m4a" | "m4b" | "mp4" | "aac" => "audio/mp4",
        "flac" => "audio/flac",
        "ogg" | "oga" | "opus" => "audio/ogg",
        "wav" => "audio/wav",
        _ => return None,
    })
}

/// Files that may carry embedded chapters.
pub fn may_have_chapters(path: &Path) -> bool {
    matches!(ext(path).as_str(), "m4b" | "m4a" | "mp3" | "mp4")
}

fn ext(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Tags {
    pub title: Option<String>,
    pub album: Option<String>,
    pub artist: Option<String>,
    pub album_artist: Option<String>,
    pub composer: Option<String>,
    pub description: Option<String>,
    /// `SERIES` (a Vorbis comment, an ID3 `TXXX` or an MP4 freeform atom)
    /// or the movement name; and `SERIES-PART` or the movement number.
    pub series: Option<String>,
    pub series_part: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EmbeddedChapter {
    pub title: Option<String>,
    pub start_sec: f64,
    pub end_sec: Option<f64>,
}

/// What a probe found. Cached in the database (without the cover bytes:
/// those are extracted again only when a cover file must be written).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Probed {
    pub duration_sec: f64,
    pub tags: Tags,
    pub chapters: Vec<EmbeddedChapter>,
    pub has_cover: bool,
    /// (bytes, file extension)
    #[serde(skip)]
    pub cover: Option<(Vec<u8>, &'static str)>,
}

/// Probes one file. `want_chapters` skips chapter reading for files of a
/// folder book (each file is a chapter there).
pub fn probe(path: &Path, want_chapters: bool) -> anyhow::Result<Probed> {
    let is_mp4 = matches!(ext(path).as_str(), "m4b" | "m4a" | "mp4");
    let mut probed = probe_symphonia(path, want_chapters && !is_mp4)
        .with_context(|| format!("cannot read audio file {}", path.display()))?;
    if is_mp4 {
        match mp4ameta::Tag::read_from_path(path) {
            Ok(tag) => merge_mp4(&mut probed, &tag, want_chapters),
            Err(err) => tracing::warn!("no MP4 tags in {}: {err}", path.display()),
        }
    }
    probed.has_cover = probed.cover.is_some();
    // Chapters in time order, each ending where the next starts at the latest.
    probed
        .chapters
        .sort_by(|a, b| a.start_sec.total_cmp(&b.start_sec));
    probed
        .chapters
        .dedup_by(|b, a| (b.start_sec - a.start_sec).abs() < 0.001);
    let starts: Vec<f64> = probed.chapters.iter().map(|c| c.start_sec).collect();
    for (c, next) in probed.chapters.iter_mut().zip(starts.iter().skip(1)) {
        c.end_sec = Some(c.end_sec.map_or(*next, |e| e.min(*next)));
    }
    if let Some(last) = probed.chapters.last_mut()
        && last.end_sec.is_none_or(|e| e > probed.duration_sec)
    {
        last.end_sec = None;
    }
    Ok(probed)
}

fn merge_mp4(probed: &mut Probed, tag: &mp4ameta::Tag, want_chapters: bool) {
    let set = |slot: &mut Option<String>, v: Option<&str>| {
        if let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) {
            *slot = Some(v.to_owned());
        }
    };
    let t = &mut probed.tags;
    set(&mut t.title, tag.title());
    set(&mut t.album, tag.album());
    set(&mut t.artist, tag.artist());
    set(&mut t.album_artist, tag.album_artist());
    set(&mut t.composer, tag.composer());
    set(&mut t.description, tag.description().or(tag.comment()));
    let freeform = |name: &str| {
        let ident = mp4ameta::FreeformIdent::new_borrowed("com.apple.iTunes", name);
        tag.strings_of(&ident).next().map(str::to_owned)
    };
    set(
        &mut t.series,
        freeform("SERIES").as_deref().or(tag.movement()),
    );
    let index = tag.movement_index().map(|i| i.to_string());
    set(
        &mut t.series_part,
        freeform("SERIES-PART").as_deref().or(index.as_deref()),
    );
    if probed.duration_sec <= 0.0 {
        probed.duration_sec = tag.duration().as_secs_f64();
    }
    if probed.cover.is_none()
        && let Some(img) = tag.artwork()
    {
        let ext = match img.fmt {
            mp4ameta::ImgFmt::Png => "png",
            mp4ameta::ImgFmt::Bmp => "bmp",
            _ => "jpg",
        };
        probed.cover = Some((img.data.to_vec(), ext));
    }
    if want_chapters {
        let chapters = tag.chapters();
        probed.chapters = chapters
            .iter()
            .enumerate()
            .map(|(i, c)| EmbeddedChapter {
                title: Some(c.title.trim().to_owned()).filter(|t| !t.is_empty()),
                start_sec: c.start.as_secs_f64(),
                end_sec: chapters.get(i + 1).map(|n| n.start.as_secs_f64()),
            })
            .collect();
    }
}

fn probe_symphonia(path: &Path, want_chapters: bool) -> anyhow::Result<Probed> {
    let file = File::open(path)?;
    let mss = MediaSourceStream::new(Box::new(file), MediaSourceStreamOptions::default());
    let mut hint = Hint::new();
    hint.with_extension(&ext(path));
    let mut format = symphonia::default::get_probe().probe(
        &hint,
        mss,
        FormatOptions::default(),
        MetadataOptions::default(),
    )?;
    let mut probed = Probed::default();
    if let Some(rev) = format.metadata().skip_to_latest() {
        read_tags(&rev.media.tags, &mut probed.tags);
        if let Some(v) = rev.media.visuals.first() {
            let ext = match v.media_type.as_deref() {
                Some("image/png") => "png",
                _ => "jpg",
            };
            probed.cover = Some((v.data.to_vec(), ext));
        }
    }
    if want_chapters && let Some(group) = format.chapters() {
        flatten_chapters(group, &mut probed.chapters);
    }
    probed.duration_sec = if ext(path) == "mp3" {
        // symphonia's figure is a guess from the first frame's bitrate
        // without a frame count (1,645 s for a 1,200 s file), and its own
        // count of the frames is off too: count them ourselves.
        mp3_duration(path)?
    } else {
        duration_sec(format.as_mut())?
    };
    Ok(probed)
}

/// Bytes searched for an mp3's first frame after its ID3v2 tags.
const FIRST_FRAME_WINDOW: usize = 64 * 1024;
/// Bytes after the audio a Xing tag counts that may still be tags (ID3v1,
/// APE, Lyrics3), not more audio; more is walked (always right, only
/// slower).
const TAIL_TAGS: u64 = 16 * 1024;
/// Bytes read at a time when an mp3's frames are walked.
const WALK_CHUNK: usize = 256 * 1024;

/// An mp3's exact duration, MPEG-1, 2 or 2.5, any layer: its Xing/Info or
/// VBRI frame count when it has one (and the file holds the bytes the tag
/// counts), else a walk of every frame header (no decoding), each frame
/// holding its header's samples (1152, or 576 for MPEG-2/2.5 layer III).
fn mp3_duration(path: &Path) -> anyhow::Result<f64> {
    use crate::domain::mpeg_audio::{FrameWalker, find_frame, id3v2_len, parse_vbr_tag};
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut at = 0u64;
    loop {
        let head = read_at(&mut file, at, 10)?;
        match id3v2_len(&head) {
            0 => break,
            skip => at += skip,
        }
    }
    let window = read_at(&mut file, at, FIRST_FRAME_WINDOW)?;
    let (i, h) = find_frame(&window, None).context("no MPEG audio frame")?;
    let tag_byte = at + i as u64;
    let tag = window.get(i..i + h.size).and_then(|f| parse_vbr_tag(&h, f));
    let rate = f64::from(h.sample_rate);
    // The tag describes the whole file: not one cut short (fewer frames
    // than it counts), nor files joined after it was written (more).
    let whole = tag
        .as_ref()
        .and_then(|t| t.bytes)
        .is_none_or(|b| tag_byte + b <= len && len - (tag_byte + b) <= TAIL_TAGS);
    if let Some(t) = &tag
        && let Some(samples) = t.valid_samples(h.samples)
        && whole
    {
        return Ok(samples as f64 / rate);
    }
    // The tag's own frame is no audio.
    let first = tag_byte + if tag.is_some() { h.size as u64 } else { 0 };
    let mut walk = FrameWalker::new(h, first, 0);
    let (mut pos, mut chunk) = (first, WALK_CHUNK);
    loop {
        let buf = read_at(&mut file, pos, chunk)?;
        let eof = pos + buf.len() as u64 >= len;
        let need = walk.walk(pos, &buf, eof, |_, _| {});
        if eof || buf.is_empty() {
            break;
        }
        // No progress: a frame after junk whose successor lies further on.
        chunk = if need == pos { chunk * 2 } else { WALK_CHUNK };
        pos = need;
    }
    anyhow::ensure!(walk.frames() > 0, "no MPEG audio frames");
    // The encoder's delay; its padding only where the end is there.
    let trim = tag.map_or(0, |t| {
        u64::from(t.delay) + if whole { u64::from(t.padding) } else { 0 }
    });
    let samples = (walk.frames() * u64::from(h.samples)).saturating_sub(trim);
    Ok(samples as f64 / rate)
}

/// Up to `len` bytes of `file` at `at` (fewer at its end).
pub(super) fn read_at(file: &mut File, at: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(at))?;
    let mut buf = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

fn flatten_chapters(group: &ChapterGroup, out: &mut Vec<EmbeddedChapter>) {
    for item in &group.items {
        match item {
            ChapterGroupItem::Group(g) => flatten_chapters(g, out),
            ChapterGroupItem::Chapter(c) => out.push(EmbeddedChapter {
                title: c.tags.iter().find_map(tag_title),
                start_sec: c.start_time.as_secs_f64(),
                end_sec: c.end_time.map(|t| t.as_secs_f64()),
            }),
        }
    }
}

fn tag_title(tag: &Tag) -> Option<String> {
    match &tag.std {
        Some(StandardTag::TrackTitle(s)) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        _ if tag.raw.key.eq_ignore_ascii_case("TIT2") => Some(tag.raw.value.to_string()),
        _ => None,
    }
}

fn read_tags(tags: &[Tag], out: &mut Tags) {
    // The user tags SERIES / SERIES-PART, and iTunes' movement name and
    // number: two sources, kept apart so a name never gets the other's number.
    let mut custom = SeriesTags::default();
    let mut movement = SeriesTags::default();
    for tag in tags {
        let slot = match custom_key(tag).to_ascii_uppercase().as_str() {
            "SERIES" => &mut custom.name,
            "SERIES-PART" | "SERIES_PART" | "SERIESPART" => &mut custom.part,
            _ => continue,
        };
        let value = match &tag.raw.value {
            symphonia::core::meta::RawValue::String(v) => Some(v.as_str()),
            symphonia::core::meta::RawValue::StringList(l) => l.first().map(String::as_str),
            _ => None,
        };
        if let Some(v) = value.map(str::trim).filter(|v| !v.is_empty())
            && slot.is_none()
        {
            *slot = Some(v.to_owned());
        }
    }
    for tag in tags {
        let Some(std) = &tag.std else { continue };
        let (slot, value) = match std {
            StandardTag::TrackTitle(v) => (&mut out.title, v),
            StandardTag::Album(v) => (&mut out.album, v),
            StandardTag::Artist(v) => (&mut out.artist, v),
            StandardTag::AlbumArtist(v) => (&mut out.album_artist, v),
            StandardTag::Composer(v) => (&mut out.composer, v),
            StandardTag::Description(v) | StandardTag::Comment(v) => (&mut out.description, v),
            StandardTag::MovementName(v) => (&mut movement.name, v),
            StandardTag::MovementNumber(n) => {
                if movement.part.is_none() {
                    movement.part = Some(n.to_string());
                }
                continue;
            }
            _ => continue,
        };
        let value = value.trim();
        if slot.is_none() && !value.is_empty() {
            *slot = Some(value.to_owned());
        }
    }
    let series = custom.or(movement);
    out.series = series.name;
    out.series_part = series.part;
}

/// A series name and its part, both from one source.
#[derive(Debug, Default, Clone, PartialEq)]
struct SeriesTags {
    name: Option<String>,
    part: Option<String>,
}

impl SeriesTags {
    /// This source when it names a series (custom tags name it more surely
    /// than movements), else `other`; a part without a name is dropped.
    fn or(self, other: SeriesTags) -> SeriesTags {
        match (&self.name, &other.name) {
            (Some(_), _) => self,
            (None, Some(_)) => other,
            (None, None) => SeriesTags::default(),
        }
    }
}

/// The name of a user-defined tag: a Vorbis comment's key, or an ID3
/// `TXXX` frame's description.
fn custom_key(tag: &Tag) -> &str {
    if tag.raw.key == "TXXX" {
        return tag
            .raw
            .sub_fields
            .iter()
            .flat_map(|f| f.iter())
            .find(|f| f.field == "DESCRIPTION")
            .and_then(|f| match &f.value {
                symphonia::core::meta::RawValue::String(s) => Some(s.as_str()),
                _ => None,
            })
            .unwrap_or("");
    }
    &tag.raw.key
}

/// The duration of the default audio track: the container's figure when it
/// has one, else the end of the last packet (demuxing only, no decoding).
fn duration_sec(format: &mut dyn FormatReader) -> anyhow::Result<f64> {
    let track = format
        .default_track(TrackType::Audio)
        .context("no audio track")?
        .clone();
    if let (Some(tb), Some(dur)) = (track.time_base, track.duration)
        && let Some(t) = tb.calc_duration(dur)
    {
        let secs = t.as_secs_f64();
        if secs > 0.0 {
            return Ok(secs);
        }
    }
    let rate = match &track.codec_params {
        Some(symphonia::core::codecs::CodecParameters::Audio(p)) => p.sample_rate,
        _ => None,
    };
    if let (Some(frames), Some(rate)) = (track.num_frames, rate)
        && rate > 0
        && frames > 0
    {
        return Ok(frames as f64 / rate as f64);
    }
    let tb = track.time_base.context("no time base")?;
    let mut end = 0i64;
    loop {
        match format.next_packet() {
            Ok(Some(p)) if p.track_id == track.id => {
                end = end.max(p.pts.saturating_add(p.dur).get());
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            // A truncated tail still has a usable duration up to the damage.
            Err(_) => break,
        }
    }
    Ok(tb
        .calc_time(symphonia::core::units::Timestamp::new(end))
        .map(|t| t.as_secs_f64())
        .unwrap_or(0.0))
}

#[cfg(test)]
mod tests {
    use super::SeriesTags;

    fn tags(name: Option<&str>, part: Option<&str>) -> SeriesTags {
        SeriesTags {
            name: name.map(str::to_owned),
            part: part.map(str::to_owned),
        }
    }

    #[test]
    fn a_series_name_and_its_part_come_from_the_same_source() {
        let custom = tags(Some("Aesop's Fables"), None);
        let movement = tags(Some("Fables"), Some("3"));
        assert_eq!(
            custom.clone().or(movement.clone()),
            custom,
            "no part from MVIN"
        );
        assert_eq!(tags(None, Some("2")).or(movement.clone()), movement);
        assert_eq!(
            tags(None, Some("2")).or(tags(None, Some("3"))),
            tags(None, None)
        );
    }
}
