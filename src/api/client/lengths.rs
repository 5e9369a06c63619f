//! Lengths checked against the audio (docs/contract.md, "Numbers without
//! a unit"): a server's number under a key that names no unit is read in
//! the unit earmark's own measure of one stream fits
//! (`domain::unit_of`). A server uses one unit per field, so the unit is
//! learned once per address and field: a 50-chapter manifest costs one
//! measurement, and every later answer of that field is read at once
//! ([`Client::read_known_lengths`], no I/O). A number no unit fits stays
//! unknown, said once (logged with the raw shape), never guessed.

use super::Client;
use crate::api::wire::{self, audio_head, audio_head::HeadSays};
use crate::domain::locks::lock;
use crate::domain::*;
use reqwest::header;
use std::collections::HashMap;
use std::sync::Mutex;

/// What was learned of one field of one address.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Learned {
    In(Unit),
    /// The number fit no unit of the audio (`measured` seconds): its
    /// lengths stay unknown.
    NoUnitFits {
        measured: f64,
    },
}

/// Units learned per (address, field), the field named by where it sits
/// and the server's key: `manifest.duration`, `book.length`.
#[derive(Debug, Default)]
pub(super) struct Units(Mutex<HashMap<(String, String), Learned>>);

impl Units {
    fn get(&self, address: &str, field: &str) -> Option<Learned> {
        let map = lock(&self.0);
        map.get(&(address.to_owned(), field.to_owned())).copied()
    }

    fn set(&self, address: &str, field: &str, l: Learned) {
        let mut map = lock(&self.0);
        map.insert((address.to_owned(), field.to_owned()), l);
    }
}

/// Lengths a check left unknown, for the caller to say once.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownLengths {
    /// The server's key (`duration`).
    pub key: String,
    /// A number the server gave under it (the one checked).
    pub value: f64,
    pub why: WhyUnknown,
    /// How many lengths stay unknown.
    pub count: usize,
}

/// Why a number without a unit was not read as a length.
#[derive(Debug, Clone, PartialEq)]
pub enum WhyUnknown {
    /// Neither seconds, milliseconds nor minutes fit what earmark
    /// measured (seconds of audio).
    NoUnitFits { measured: f64 },
    /// The audio could not be measured (the measure's reason).
    NotMeasured(String),
}

/// A length to check: the server's number and the stream it is part of.
struct Entry<'a> {
    value: f64,
    stream: &'a ManifestItem,
}

fn field(place: &str, key: &str) -> String {
    format!("{place}.{key}")
}

impl Client {
    /// Read every unchecked length of `m` in a unit already learned for
    /// its field at this address (no I/O).
    pub fn read_known_lengths(&self, m: &mut Manifest) {
        let address = self.base().to_string();
        for item in &mut m.items {
            read_in(&self.inner.units, &address, "manifest", item);
        }
    }

    /// [`Client::read_known_lengths`] for a chapter list.
    pub fn read_known_chapter_lengths(&self, chapters: &mut [Chapter]) {
        let address = self.base().to_string();
        for c in chapters {
            if let Some(u) = c.duration_source.unchecked()
                && let Some(Learned::In(unit)) =
                    self.inner.units.get(&address, &field("chapters", &u.key))
            {
                c.duration = Some(unit.secs(u.value));
                c.duration_source = DurationSource::Server;
            }
        }
    }

    /// Check every unchecked length of `m` against the audio: the unit is
    /// learned from the stream whose chapters' numbers add up to the most
    /// (one measurement per field), then every chapter's number is read
    /// in it. `None`: nothing was left unknown.
    pub async fn check_lengths(&self, m: &mut Manifest) -> Option<UnknownLengths> {
        self.read_known_lengths(m);
        let keys = unchecked_keys(m.items.iter().map(|i| &i.duration_source));
        let mut unknown = None;
        for key in keys {
            let snapshot = m.items.clone();
            let entries: Vec<Entry> = snapshot
                .iter()
                .filter_map(|i| {
                    let u = i.duration_source.unchecked().filter(|u| u.key == key)?;
                    Some(Entry {
                        value: u.value,
                        stream: i,
                    })
                })
                .collect();
            let said = self.learn(&field("manifest", &key), &entries).await;
            self.read_known_lengths(m);
            unknown = unknown.or(said);
        }
        unknown
    }

    /// A book's chapters with their lengths checked against the audio
    /// (through the manifest, whose items name the streams).
    pub async fn chapters_checked(
        &self,
        id: &BookId,
    ) -> Result<(Vec<Chapter>, Option<UnknownLengths>), crate::api::ApiError> {
        let mut chapters = self.chapters(id).await?;
        self.read_known_chapter_lengths(&mut chapters);
        let keys = unchecked_keys(chapters.iter().map(|c| &c.duration_source));
        if keys.is_empty() {
            return Ok((chapters, None));
        }
        let m = match self.manifest(id).await {
            Ok(m) => m,
            Err(e) => {
                let first = chapters.iter().find_map(|c| c.duration_source.unchecked());
                let unknown = first.map(|u| UnknownLengths {
                    key: u.key.clone(),
                    value: u.value,
                    why: WhyUnknown::NotMeasured(format!("the manifest could not be read: {e}")),
                    count: chapters.len(),
                });
                return Ok((chapters, unknown));
            }
        };
        let mut unknown = None;
        for key in keys {
            let entries: Vec<Entry> = chapters
                .iter()
                .filter_map(|c| {
                    let u = c.duration_source.unchecked().filter(|u| u.key == key)?;
                    Some(Entry {
                        value: u.value,
                        stream: m.item(&c.id)?,
                    })
                })
                .collect();
            let said = self.learn(&field("chapters", &key), &entries).await;
            unknown = unknown.or(said);
        }
        self.read_known_chapter_lengths(&mut chapters);
        let left = chapters
            .iter()
            .filter(|c| c.duration_source.unchecked().is_some())
            .count();
        Ok((
            chapters,
            unknown.map(|u| UnknownLengths { count: left, ..u }),
        ))
    }

    /// A book with its length checked: a number under a key that names no
    /// unit is read against its chapters' lengths, themselves checked
    /// against the audio. Also where the length came from.
    pub async fn book_checked(
        &self,
        id: &BookId,
    ) -> Result<(Book, DurationSource, Option<UnknownLengths>), crate::api::ApiError> {
        let v = self.get(&["books", id.as_str()], &[]).await?;
        let (mut book, source) = wire::decode_book_and_length(&v, "GET /books/{bookId}")?;
        let Some(u) = source.unchecked().cloned() else {
            return Ok((book, source, None));
        };
        let address = self.base().to_string();
        let f = field("book", &u.key);
        let unknown = |why| {
            let (key, value) = (u.key.clone(), u.value);
            Some(UnknownLengths {
                key,
                value,
                why,
                count: 1,
            })
        };
        if self.inner.units.get(&address, &f).is_none() {
            let total = match self.manifest(id).await {
                Ok(mut m) => match self.check_lengths(&mut m).await {
                    Some(chapters) => Err(chapters.why),
                    None => m.total_duration().ok_or_else(|| {
                        WhyUnknown::NotMeasured("its chapters' lengths are not known".into())
                    }),
                },
                Err(e) => Err(WhyUnknown::NotMeasured(format!(
                    "its chapters could not be read: {e}"
                ))),
            };
            match total {
                Ok(secs) => {
                    let learned = unit_of(u.value, Measure { secs, exact: false })
                        .map_or(Learned::NoUnitFits { measured: secs }, Learned::In);
                    self.remember(&address, &f, learned, &u);
                }
                Err(why) => return Ok((book, source, unknown(why))),
            }
        }
        match self.inner.units.get(&address, &f) {
            Some(Learned::In(unit)) => {
                book.duration = Some(unit.secs(u.value));
                Ok((book, DurationSource::Server, None))
            }
            Some(Learned::NoUnitFits { measured }) => {
                Ok((book, source, unknown(WhyUnknown::NoUnitFits { measured })))
            }
            None => Ok((book, source, None)),
        }
    }

    /// Learn the unit of `field` from the entries' stream whose numbers
    /// add up to the most; `Some` when the lengths stay unknown.
    async fn learn(&self, field: &str, entries: &[Entry<'_>]) -> Option<UnknownLengths> {
        let address = self.base().to_string();
        let first = entries.first()?;
        let key = field.split_once('.').map_or(field, |(_, k)| k).to_owned();
        let unknown = |why: WhyUnknown| UnknownLengths {
            key: key.clone(),
            value: first.value,
            why,
            count: entries.len(),
        };
        match self.inner.units.get(&address, field) {
            Some(Learned::In(_)) => return None,
            Some(Learned::NoUnitFits { measured }) => {
                return Some(unknown(WhyUnknown::NoUnitFits { measured }));
            }
            None => {}
        }
        // Chapters of one file add up to the file.
        let mut sums: Vec<(String, f64, &ManifestItem)> = Vec::new();
        for e in entries {
            let url = self.stream_url(e.stream).to_string();
            match sums.iter_mut().find(|(u, ..)| *u == url) {
                Some((_, sum, _)) => *sum += e.value,
                None => sums.push((url, e.value, e.stream)),
            }
        }
        let (_, sum, item) = sums.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let measured = match self.measure_stream(item).await {
            Ok(m) => m,
            Err(why) => {
                tracing::warn!(
                    "{address}: the lengths under {key:?} name no unit and the audio could not be measured ({why}); they stay unknown"
                );
                return Some(unknown(WhyUnknown::NotMeasured(why)));
            }
        };
        let fits_none = Learned::NoUnitFits {
            measured: measured.secs,
        };
        let learned = unit_of(sum, measured).map_or(fits_none, Learned::In);
        let raw = Unitless {
            key: key.clone(),
            value: sum,
        };
        self.remember(&address, field, learned, &raw);
        match learned {
            Learned::In(_) => None,
            Learned::NoUnitFits { measured } => Some(unknown(WhyUnknown::NoUnitFits { measured })),
        }
    }

    /// Keep what was learned of `field`, and log it once with the raw
    /// number it was learned from.
    fn remember(&self, address: &str, field: &str, learned: Learned, raw: &Unitless) {
        match learned {
            Learned::In(u) => tracing::info!(
                "{address}: {field} names no unit; read in {} ({{{:?}: {}}} fits earmark's measure)",
                u.word(),
                raw.key,
                raw.value
            ),
            Learned::NoUnitFits { measured } => tracing::warn!(
                "{address}: {field} names no unit and fits none (seconds, milliseconds, minutes) of the audio: {{{:?}: {}}} against {measured:.1} s measured; those lengths stay unknown",
                raw.key,
                raw.value
            ),
        }
        self.inner.units.set(address, field, learned);
    }

    /// The length of `item`'s stream as earmark measures it: its head (one
    /// ranged GET) and, where a format keeps its length further on, those
    /// bytes (an MP4 `moov` after the audio, an Ogg stream's last page).
    /// Within the request time-out.
    pub async fn measure_stream(&self, item: &ManifestItem) -> Result<Measure, String> {
        let req = self.stream_request(item);
        let work = async {
            let audio = crate::domain::backoff::Kind::Audio;
            let mut head = self.read_range(&req, 0, audio_head::HEAD_BYTES).await;
            // The server said "slow down": a measurement is a read, which
            // waits out short waits (a few times).
            for _ in 0..3 {
                if head.is_ok() || self.throttle(audio).is_none() {
                    break;
                }
                let open = self.open_to(&req.url, audio, true).await;
                open.map_err(|e| e.to_string())?;
                head = self.read_range(&req, 0, audio_head::HEAD_BYTES).await;
            }
            let (head, total) = head?;
            let mut says = audio_head::stream_length(&head, total);
            for _ in 0..3 {
                let HeadSays::NeedsBytes { from, len, then } = says else {
                    break;
                };
                let (bytes, _) = self.read_range(&req, from, len).await?;
                says = audio_head::more_bytes(&bytes, from, then, total);
            }
            match says {
                HeadSays::Length(m) => Ok(m),
                HeadSays::Unknown(why) => Err(why.to_owned()),
                HeadSays::NeedsBytes { .. } => {
                    Err("the length sits too far into the stream".into())
                }
            }
        };
        tokio::time::timeout(self.inner.opts.request_timeout, work)
            .await
            .unwrap_or_else(|_| Err("the stream did not answer in time".into()))
    }

    /// Up to `len` bytes of a stream from byte `from`, and its whole size
    /// when the answer says it.
    async fn read_range(
        &self,
        req: &super::StreamRequest,
        from: u64,
        len: u64,
    ) -> Result<(Vec<u8>, Option<u64>), String> {
        let mut resp = self
            .open_stream(req, Some(from))
            .await
            .map_err(|e| e.to_string())?;
        let ranged = resp.status() == reqwest::StatusCode::PARTIAL_CONTENT;
        let total = if ranged {
            resp.headers()
                .get(header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(audio_head::content_range_total)
        } else {
            resp.content_length()
        };
        // A server that ignores ranges sends it all from byte 0.
        let mut skip = if ranged { 0 } else { from };
        if skip > 8 * 1024 * 1024 {
            return Err("the server does not answer byte ranges".into());
        }
        let mut out = Vec::new();
        while (out.len() as u64) < len {
            match resp.chunk().await {
                Ok(Some(c)) => {
                    let drop = skip.min(c.len() as u64) as usize;
                    skip -= drop as u64;
                    out.extend_from_slice(&c[drop..]);
                }
                Ok(None) => break,
                Err(e) => return Err(format!("the stream broke off: {e}")),
            }
        }
        out.truncate(len as usize);
        Ok((out, total))
    }
}

/// Read `item`'s unchecked length in a unit learned for its field.
fn read_in(units: &Units, address: &str, place: &str, item: &mut ManifestItem) {
    if let Some(u) = item.duration_source.unchecked()
        && let Some(Learned::In(unit)) = units.get(address, &field(place, &u.key))
    {
        item.duration = Some(unit.secs(u.value));
        item.duration_source = DurationSource::Server;
    }
}

/// The keys of the unchecked lengths, each once, in order.
fn unchecked_keys<'a>(sources: impl Iterator<Item = &'a DurationSource>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for k in sources.filter_map(|s| s.unchecked().map(|u| &u.key)) {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    keys
}
