//! One book from its audio files: its chapters (one per file, or a single
//! file's embedded chapters), and its title, author, series and cover from
//! `book.toml`, else the first readable file's tags, else its name.

use super::media::{self, Probed};
use super::{ProbeCache, ScannedBook, ScannedChapter, file_name, rel};
use crate::domain::SeriesRef;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// `book.toml` beside the audio files.
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(default)]
struct BookToml {
    pub title: Option<String>,
    pub author: Option<String>,
    pub narrator: Option<String>,
    pub description: Option<String>,
    pub categories: Option<Vec<String>>,
    /// `series = "Name"` with `sequence = 2` (or `"1.5"`), or a list of
    /// `{ name, sequence }` tables for a book in several series. Read as
    /// plain values so a bad one loses only itself, not the whole file.
    #[serde(rename = "series")]
    series_raw: Option<toml::Value>,
    #[serde(rename = "sequence")]
    sequence_raw: Option<toml::Value>,
    /// The series read from those; `None` when the file names none.
    #[serde(skip)]
    pub series: Option<Vec<SeriesRef>>,
}

/// Reads `series`/`sequence` leniently: what cannot be read is left out
/// with a warning naming the file and the value.
fn toml_series(
    series: Option<&toml::Value>,
    sequence: Option<&toml::Value>,
    path: &Path,
) -> Option<Vec<SeriesRef>> {
    let warn = |what: &str, v: &toml::Value| {
        tracing::warn!(
            "{}: ignoring {what} {v}: not a series name or a {{ name, sequence }} table",
            path.display()
        );
    };
    let seq_text = |v: Option<&toml::Value>| -> Option<String> {
        let v = v?;
        match v {
            toml::Value::Integer(i) => Some(i.to_string()),
            toml::Value::Float(f) if f.is_finite() => Some(f.to_string()),
            toml::Value::String(t) => Some(t.clone()),
            other => {
                tracing::warn!(
                    "{}: ignoring sequence {other}: not a number or text",
                    path.display()
                );
                None
            }
        }
    };
    let entry = |v: &toml::Value, seq: Option<&toml::Value>| -> Option<SeriesRef> {
        match v {
            toml::Value::String(name) => SeriesRef::new(name, seq_text(seq).as_deref()),
            toml::Value::Table(t) => match t.get("name") {
                Some(toml::Value::String(name)) => {
                    SeriesRef::new(name, seq_text(t.get("sequence")).as_deref())
                }
                _ => {
                    warn("series entry", v);
                    None
                }
            },
            other => {
                warn("series", other);
                None
            }
        }
    };
    let list = match series? {
        toml::Value::Array(items) => items.iter().filter_map(|v| entry(v, None)).collect(),
        one => entry(one, sequence).into_iter().collect::<Vec<_>>(),
    };
    // Nothing readable: as if the key were absent (the tags may name it).
    (!list.is_empty()).then_some(list)
}

/// The series of a book: `book.toml` wins; else the `SERIES` /
/// `SERIES-PART` tags (or iTunes' movement name and number) of its first file.
fn series_of(toml: &BookToml, tags: &media::Tags) -> Vec<SeriesRef> {
    match &toml.series {
        Some(list) => list.clone(),
        None => tags
            .series
            .as_deref()
            .and_then(|name| SeriesRef::new(name, tags.series_part.as_deref()))
            .into_iter()
            .collect(),
    }
}

/// Builds one book from its audio files. A folder book (`Some(others)`:
/// the folder's non-audio files by lower-case name) takes the folder's
/// name, book.toml and cover.
pub(super) fn scan_book(
    root: &Path,
    dir: &Path,
    files: &[PathBuf],
    others: Option<&HashMap<String, PathBuf>>,
    cache: &mut ProbeCache<'_>,
) -> Option<ScannedBook> {
    let folder_book = others.is_some();
    let book_path = if folder_book { dir } else { &files[0] };
    let rel_path = rel(root, book_path);
    let toml = match others.and_then(|o| o.get("book.toml")) {
        Some(path) => read_book_toml(path),
        None => BookToml::default(),
    };
    let single = files.len() == 1;
    let Audio {
        mut chapters,
        fingerprints,
        first,
    } = read_audio(root, files, cache)?;
    let tags = &first.tags;
    let name_fallback = if folder_book {
        file_name(dir)
    } else {
        stem(&files[0])
    };
    let title = toml
        .title
        .clone()
        .or_else(|| tags.album.clone())
        .or_else(|| if single { tags.title.clone() } else { None })
        .unwrap_or(name_fallback);
    for c in chapters.iter_mut().filter(|c| c.title.is_empty()) {
        c.title = title.clone();
    }
    let author = toml
        .author
        .clone()
        .or_else(|| tags.album_artist.clone())
        .or_else(|| tags.artist.clone())
        .unwrap_or_else(|| "Unknown author".to_owned());
    let narrator = toml.narrator.clone().or_else(|| tags.composer.clone());
    let description = toml
        .description
        .clone()
        .or_else(|| tags.description.clone());
    let cover_file = others.and_then(|others| {
        ["cover.jpg", "cover.jpeg", "cover.png", "folder.jpg"]
            .iter()
            .find_map(|n| others.get(*n).cloned())
    });
    Some(ScannedBook {
        stamp: None,
        categories: categories(&toml, &rel_path),
        rel_path,
        fingerprint: book_fingerprint(&fingerprints),
        title,
        author,
        narrator,
        description,
        series: series_of(&toml, tags),
        cover_embedded: if cover_file.is_none() && first.has_cover {
            Some((first.file, first.fingerprint))
        } else {
            None
        },
        cover_file,
        chapters,
    })
}

/// What a book's audio files hold, those that could be read.
struct Audio {
    chapters: Vec<ScannedChapter>,
    /// Each readable file's fingerprint, in order.
    fingerprints: Vec<String>,
    first: FirstFile,
}

/// The first readable file: its tags describe the book, its embedded art
/// may be the cover.
struct FirstFile {
    tags: media::Tags,
    has_cover: bool,
    file: PathBuf,
    fingerprint: String,
}

/// Probes each file (unreadable ones are skipped with a warning) into
/// chapters; `None` when none could be read. A book of one file has its
/// embedded chapters, if it has several; otherwise each file is a chapter.
fn read_audio(root: &Path, files: &[PathBuf], cache: &mut ProbeCache<'_>) -> Option<Audio> {
    let single = files.len() == 1;
    let mut chapters = Vec::new();
    let mut first: Option<FirstFile> = None;
    let mut fingerprints = Vec::new();
    let mut seen_keys = HashSet::new();
    for file in files {
        let (probed, fp, size) = match cache.get(file, single && media::may_have_chapters(file)) {
            Ok(p) => p,
            Err(err) => {
                tracing::warn!("skipping {}: {err:#}", file.display());
                continue;
            }
        };
        fingerprints.push(fp.clone());
        let audio = AudioFile {
            root,
            file,
            fingerprint: &fp,
            probed,
            size,
        };
        if single && probed.chapters.len() > 1 {
            chapters.extend(audio.embedded_chapters());
        } else {
            let title = if single {
                String::new() // named after the book by `scan_book`
            } else {
                probed.tags.title.clone().unwrap_or_else(|| stem(file))
            };
            // Two identical files in one book still get distinct keys.
            let mut key = fp.clone();
            let mut n = 1;
            while !seen_keys.insert(key.clone()) {
                n += 1;
                key = format!("{fp}#{n}");
            }
            chapters.push(audio.whole(key, title));
        }
        if first.is_none() {
            first = Some(FirstFile {
                tags: probed.tags.clone(),
                has_cover: probed.has_cover,
                file: file.clone(),
                fingerprint: fp.clone(),
            });
        }
    }
    Some(Audio {
        chapters,
        fingerprints,
        first: first?,
    })
}

/// One probed audio file of a book.
struct AudioFile<'a> {
    root: &'a Path,
    file: &'a Path,
    fingerprint: &'a str,
    probed: &'a Probed,
    size: u64,
}

impl AudioFile<'_> {
    fn mime(&self) -> &'static str {
        media::mime_for(self.file).unwrap_or("application/octet-stream")
    }

    /// The file's embedded chapters, each keyed and placed by its start.
    fn embedded_chapters(&self) -> impl Iterator<Item = ScannedChapter> + '_ {
        let probed = self.probed;
        probed.chapters.iter().enumerate().map(move |(i, c)| {
            let end = c.end_sec.unwrap_or(probed.duration_sec);
            let start_ms = (c.start_sec * 1000.0).round() as i64;
            ScannedChapter {
                key: format!("{}@{start_ms}", self.fingerprint),
                place: format!("{}@{start_ms}", rel(self.root, self.file)),
                title: c
                    .title
                    .clone()
                    .unwrap_or_else(|| format!("Chapter {}", i + 1)),
                file: self.file.to_owned(),
                mime: self.mime(),
                size: self.size,
                duration_sec: (end - c.start_sec).max(0.0),
                start_sec: c.start_sec,
                end_sec: c.end_sec,
            }
        })
    }

    /// The whole file as one chapter.
    fn whole(&self, key: String, title: String) -> ScannedChapter {
        ScannedChapter {
            key,
            place: rel(self.root, self.file),
            title,
            file: self.file.to_owned(),
            mime: self.mime(),
            size: self.size,
            duration_sec: self.probed.duration_sec,
            start_sec: 0.0,
            end_sec: None,
        }
    }
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `book.toml`'s categories; else the top-level folder, when the book is
/// nested below one.
fn categories(toml: &BookToml, rel_path: &str) -> Vec<String> {
    match &toml.categories {
        Some(c) => c
            .iter()
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect(),
        None => rel_path
            .split_once('/')
            .map(|(top, _)| top.to_owned())
            .into_iter()
            .collect(),
    }
}

/// The book's audio, as one fingerprint of its files' fingerprints.
fn book_fingerprint(fingerprints: &[String]) -> String {
    let mut hasher = Sha256::new();
    for fp in fingerprints {
        hasher.update(fp.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Reads a `book.toml` already checked to be inside the library.
fn read_book_toml(path: &Path) -> BookToml {
    let read = fs::read_to_string(path).map_err(|e| e.to_string());
    match read.and_then(|text| toml::from_str::<BookToml>(&text).map_err(|e| e.to_string())) {
        Ok(mut t) => {
            t.series = toml_series(t.series_raw.as_ref(), t.sequence_raw.as_ref(), path);
            t
        }
        Err(err) => {
            tracing::warn!("ignoring {}: {err}", path.display());
            BookToml::default()
        }
    }
}
