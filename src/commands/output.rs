//! Text and JSON output of the client commands. JSON shapes are documented
//! in docs/cli.md and kept stable: camelCase keys, seconds as numbers.

use crate::api::{
    ApiError, Client, Listing, Pager, ProgressState, Shortfall, SkippedItem, UnknownLengths,
    WhyUnknown,
};
use crate::domain::*;
use serde_json::{Value, json};
use std::io::Write;

/// Collects the one JSON document of a command, or prints text lines.
pub struct Out {
    json: bool,
    doc: Option<Value>,
    /// JSON lines already went out: an error is one more line.
    lines: bool,
}

impl Out {
    pub fn new(json: bool) -> Out {
        Out {
            json,
            doc: None,
            lines: false,
        }
    }

    pub fn json(&mut self, v: Value) {
        if self.json {
            self.doc = Some(v);
        }
    }

    pub fn line(&mut self, s: impl AsRef<str>) {
        if !self.json {
            println!("{}", s.as_ref());
        }
    }

    /// Print one JSON line now (streaming output).
    pub fn json_line(&mut self, v: &Value) {
        self.lines = true;
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{v}");
        let _ = o.flush();
    }

    pub fn error(&mut self, code: u8, message: &str) {
        if self.json && self.lines {
            let e = json!({"error": {"exitCode": code, "message": message}});
            println!("{e}");
        } else if self.json && self.doc.is_none() {
            self.doc = Some(json!({"error": {"exitCode": code, "message": message}}));
        }
    }

    /// Says `message` on stderr and in the document; exits with `code`.
    pub fn fail(&mut self, code: u8, message: &str) -> std::process::ExitCode {
        eprintln!("earmark: {message}");
        self.error(code, message);
        self.finish();
        std::process::ExitCode::from(code)
    }

    pub fn finish(&mut self) {
        if let Some(d) = self.doc.take() {
            println!(
                "{}",
                serde_json::to_string_pretty(&d).expect("JSON values print")
            );
        }
    }
}

pub use crate::domain::clock::clock;

/// A length, or `?` when it is not known.
fn opt_clock(secs: Option<f64>) -> String {
    secs.map(clock).unwrap_or_else(|| "?".into())
}

/// A chapter as text output names it: its number in the book and its
/// title (`ch 3 · The Storm`); its id only when the book's chapter list is
/// not known or does not hold it. `--json` keeps the id.
pub fn chapter_name(manifest: Option<&Manifest>, id: &ChapterId) -> String {
    let Some(m) = manifest else {
        return format!("chapter {id}");
    };
    match m.position_of(id) {
        Some(i) if m.items[i].title.trim().is_empty() => format!("ch {}", i + 1),
        Some(i) => format!("ch {} · {}", i + 1, m.items[i].title.trim()),
        None => format!("chapter {id} (not in the book's chapter list)"),
    }
}

/// The chapter's number and title for `--json`, beside its id (null when
/// the chapter list is not known or does not hold it).
fn chapter_json(manifest: Option<&Manifest>, id: &ChapterId) -> (Value, Value) {
    match manifest.and_then(|m| Some((m.position_of(id)?, m))) {
        Some((i, m)) => (json!(i + 1), json!(m.items[i].title)),
        None => (Value::Null, Value::Null),
    }
}

/// Lengths the server gave without a unit that earmark could not read:
/// one sentence on stderr (`whose`: "the chapters'", "the book's").
pub fn say_unknown_lengths(unknown: Option<&UnknownLengths>, whose: &str) {
    let Some(u) = unknown else { return };
    let why = match &u.why {
        WhyUnknown::NoUnitFits { measured } => format!(
            "neither seconds, milliseconds nor minutes fit the {} of audio earmark measured",
            clock(*measured)
        ),
        WhyUnknown::NotMeasured(why) => {
            format!("earmark could not measure the audio to tell the unit ({why})")
        }
    };
    let shown = if u.count == 1 { "it is" } else { "they are" };
    eprintln!(
        "earmark: the server gives {whose} length without a unit ({}: {}) and {why}; {shown} shown as unknown.",
        u.key, u.value
    );
}

/// `durationSource` of a length (docs/cli.md).
fn source_json(duration: Option<f64>, source: &DurationSource) -> Value {
    json!(source.word(duration))
}

pub fn license_word(s: LicenseState) -> &'static str {
    match s {
        LicenseState::Valid => "valid",
        LicenseState::Expired => "expired",
        LicenseState::Missing => "missing",
        LicenseState::Invalid => "invalid",
    }
}

pub fn license_json(l: &LicenseStatus) -> Value {
    json!({"status": license_word(l.state), "valid": l.valid, "message": l.message})
}

pub fn progress_json(p: &Progress) -> Value {
    json!({
        "chapterId": p.chapter_id.as_str(), "positionSec": p.position,
        "bookPositionSec": p.book_position, "finished": p.finished,
        "clientUpdatedAt": p.client_updated_at, "serverUpdatedAt": p.server_updated_at,
    })
}

/// [`progress_json`] with the chapter's number and title, and the place
/// in the book from the chapters' lengths when the server gave none.
fn placed_progress_json(p: &Progress, manifest: Option<&Manifest>) -> Value {
    let mut v = progress_json(p);
    let (number, title) = chapter_json(manifest, &p.chapter_id);
    v["chapterNumber"] = number;
    v["chapterTitle"] = title;
    v["bookPositionSec"] = json!(book_position(p, manifest));
    v
}

/// Seconds into the book: the server's, else from the chapters' lengths.
fn book_position(p: &Progress, manifest: Option<&Manifest>) -> Option<f64> {
    p.book_position
        .or_else(|| manifest?.book_position(&p.chapter_id, p.position))
}

pub fn book_json(b: &Book) -> Value {
    book_json_from(b, &DurationSource::Server)
}

/// [`book_json`] with where its length came from.
fn book_json_from(b: &Book, source: &DurationSource) -> Value {
    json!({
        "id": b.id.as_str(), "title": b.title, "authors": b.authors,
        // `narrator` (joined) as before; `narrators` names each one.
        "narrator": (!b.narrators.is_empty()).then(|| b.narrators.join(", ")),
        "narrators": b.narrators,
        "series": b.series,
        "description": b.description, "durationSec": b.duration,
        "durationSource": source_json(b.duration, source), "chapterCount": b.chapter_count,
        "categories": b.categories.iter().map(category_json).collect::<Vec<_>>(),
        "coverUrl": b.cover_url, "favorite": b.favorite, "addedAt": b.added_at,
        "progress": b.progress.as_ref().map(progress_json),
    })
}

pub fn category_json(c: &Category) -> Value {
    json!({"id": c.id.as_str(), "name": c.name, "bookCount": c.book_count})
}

pub fn bookmark_json(b: &Bookmark, manifest: Option<&Manifest>) -> Value {
    let (number, title) = chapter_json(manifest, &b.chapter_id);
    json!({
        "id": b.id.as_str(), "bookId": b.book_id.as_str(), "chapterId": b.chapter_id.as_str(),
        "chapterNumber": number, "chapterTitle": title,
        "positionSec": b.position, "note": b.note, "createdAt": b.created_at,
    })
}

fn skipped_json(s: &[SkippedItem]) -> Value {
    json!(
        s.iter()
            .map(|s| json!({"place": s.place, "reason": s.reason}))
            .collect::<Vec<_>>()
    )
}

fn warn_skipped(out: &Out, s: &[SkippedItem]) {
    if !out.json && !s.is_empty() {
        let n = s.len();
        eprintln!(
            "earmark: {n} book{} could not be read and {} left out (first: {})",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            s[0]
        );
    }
}

/// The whole list as one document: the items (`shown`: after the
/// command's own selection, else all), `total` (the server's count
/// whenever it gave one and nothing was selected, else the items shown),
/// `read` (books read from the server), `complete` (false when the
/// server's own counts or flags say books are missing) and the items that
/// could not be read. `what`: "library", "search results".
pub fn books_listing(out: &mut Out, l: &Listing<Book>, shown: Option<&[Book]>, what: &str) {
    let items = shown.unwrap_or(&l.items);
    books(out, items);
    if let Some(Value::Object(doc)) = out.doc.as_mut() {
        let total = match shown {
            None => l.total.unwrap_or(items.len() as u64),
            Some(s) => s.len() as u64,
        };
        doc.insert("total".into(), json!(total));
        doc.insert("read".into(), json!(l.read));
        doc.insert("complete".into(), json!(l.complete()));
        doc.insert("skipped".into(), skipped_json(&l.skipped));
    }
    warn_skipped(out, &l.skipped);
    warn_incomplete(out, l.shortfall, what);
}

/// An incomplete list is never silent: one sentence on stderr.
fn warn_incomplete(out: &Out, short: Option<Shortfall>, what: &str) {
    if let (false, Some(s)) = (out.json, short) {
        eprintln!("earmark: the {what} is incomplete: {}", s.describe("books"));
    }
}

/// Pages as they arrive: text lines, or one JSON line per page
/// `{"page", "items", "total", "skipped"}`.
pub async fn books_stream(
    out: &mut Out,
    mut pager: Pager<Book>,
    select: &super::select::BookSelect,
) -> Result<(), ApiError> {
    let mut n = 0u64;
    let mut count = 0usize;
    while let Some(mut page) = pager.next_page().await? {
        n += 1;
        if !select.is_empty() {
            page.items.retain(|b| select.keeps(b));
        }
        count += page.items.len();
        if out.json {
            // The server's total counts books the selection drops: unknown.
            let total = if select.is_empty() { page.total } else { None };
            out.json_line(&json!({
                "page": n, "items": page.items.iter().map(book_json).collect::<Vec<_>>(),
                "total": total, "skipped": skipped_json(&page.skipped),
            }));
        } else {
            for b in &page.items {
                out.line(book_line(b));
            }
            let _ = std::io::stdout().flush();
        }
    }
    if !out.json && count == 0 {
        out.line("No books.");
    }
    warn_skipped(out, pager.skipped());
    let short = pager.shortfall();
    if let (true, Some(s)) = (out.json, short) {
        out.json_line(&json!({"complete": false, "total": s.reported, "read": s.read}));
    }
    warn_incomplete(out, short, "library");
    Ok(())
}

fn book_line(b: &Book) -> String {
    let fav = if b.favorite { " ♥" } else { "" };
    format!(
        "{}\t{}\t{}\t{}{fav}",
        b.id,
        b.title,
        b.authors.join(", "),
        opt_clock(b.duration)
    )
}

pub fn books(out: &mut Out, books: &[Book]) {
    out.json(
        json!({"items": books.iter().map(book_json).collect::<Vec<_>>(), "total": books.len()}),
    );
    if books.is_empty() {
        out.line("No books.");
    }
    for b in books {
        out.line(book_line(b));
    }
}

/// A book's details; `manifest` names the chapter of its progress.
pub fn book_details(out: &mut Out, b: &Book, source: &DurationSource, manifest: Option<&Manifest>) {
    let mut doc = book_json_from(b, source);
    if let Some(p) = &b.progress {
        doc["progress"] = placed_progress_json(p, manifest);
    }
    out.json(doc);
    out.line(format!("{} ({})", b.title, b.id));
    if !b.authors.is_empty() {
        out.line(format!("Author:     {}", b.authors.join(", ")));
    }
    if !b.narrators.is_empty() {
        out.line(format!("Narrator:   {}", b.narrators.join(", ")));
    }
    if !b.series.is_empty() {
        let series: Vec<String> = b.series.iter().map(SeriesRef::label).collect();
        out.line(format!("Series:     {}", series.join(", ")));
    }
    out.line(format!("Duration:   {}", opt_clock(b.duration)));
    if let Some(c) = b.chapter_count {
        out.line(format!("Chapters:   {c}"));
    }
    if !b.categories.is_empty() {
        let names: Vec<&str> = b.categories.iter().map(|c| c.name.as_str()).collect();
        out.line(format!("Categories: {}", names.join(", ")));
    }
    out.line(format!(
        "Favorite:   {}",
        if b.favorite { "yes" } else { "no" }
    ));
    if let Some(p) = &b.progress {
        out.line(format!(
            "Progress:   {} at {}{}",
            chapter_name(manifest, &p.chapter_id),
            clock(p.position),
            if p.finished { " (finished)" } else { "" }
        ));
    }
    if let Some(d) = &b.description {
        out.line("");
        out.line(d);
    }
}

pub fn chapters(out: &mut Out, chapters: &[Chapter]) {
    out.json(json!({"items": chapters.iter().map(|c| json!({
        "id": c.id.as_str(), "title": c.title, "durationSec": c.duration,
        "durationSource": source_json(c.duration, &c.duration_source),
    })).collect::<Vec<_>>(), "total": chapters.len()}));
    for (i, c) in chapters.iter().enumerate() {
        out.line(format!(
            "{:>3}  {}\t{}\t{}",
            i + 1,
            c.id,
            c.title,
            opt_clock(c.duration)
        ));
    }
}

pub fn manifest(out: &mut Out, client: &Client, m: &Manifest) {
    // The total is as sure as its least sure part.
    let total_source = match m
        .items
        .iter()
        .any(|i| i.duration_source == DurationSource::Measured)
    {
        true => DurationSource::Measured,
        false => DurationSource::Server,
    };
    let total = m.total_duration();
    out.json(json!({
        "bookId": m.book_id.as_str(), "totalDurationSec": total,
        "totalDurationSource": source_json(total, &total_source),
        "items": m.items.iter().map(|i| json!({
            "chapterId": i.chapter_id.as_str(), "title": i.title, "durationSec": i.duration,
            "durationSource": source_json(i.duration, &i.duration_source),
            "url": client.stream_url(i).as_str(), "mimeType": i.mime_type,
            "sizeBytes": i.size_bytes, "startSec": i.start, "endSec": i.end,
        })).collect::<Vec<_>>(),
    }));
    for (i, item) in m.items.iter().enumerate() {
        out.line(format!(
            "{:>3}  {}\t{}\t{}\t{}",
            i + 1,
            item.chapter_id,
            item.title,
            opt_clock(item.duration),
            item.mime_type.as_deref().unwrap_or("")
        ));
    }
}

pub fn categories(out: &mut Out, cats: &[Category]) {
    out.json(
        json!({"items": cats.iter().map(category_json).collect::<Vec<_>>(), "total": cats.len()}),
    );
    for c in cats {
        let n = c
            .book_count
            .map(|n| format!("\t{n} book{}", if n == 1 { "" } else { "s" }))
            .unwrap_or_default();
        out.line(format!("{}\t{}{n}", c.id, c.name));
    }
}

/// A book's bookmarks; `manifest` names their chapters.
pub fn bookmarks(out: &mut Out, marks: &[Bookmark], manifest: Option<&Manifest>) {
    let items: Vec<Value> = marks.iter().map(|b| bookmark_json(b, manifest)).collect();
    out.json(json!({"items": items, "total": marks.len()}));
    if marks.is_empty() {
        out.line("No bookmarks.");
    }
    for b in marks {
        out.line(format!(
            "{}\t{}\t{}\t{}",
            b.id,
            chapter_name(manifest, &b.chapter_id),
            clock(b.position),
            b.note.as_deref().unwrap_or("")
        ));
    }
}

/// A book's progress; `manifest` names its chapter and, when the server
/// gives no place in the book, gives it from the chapters' lengths.
pub fn progress(out: &mut Out, book: &BookId, s: &ProgressState, manifest: Option<&Manifest>) {
    out.json(json!({
        "bookId": book.as_str(),
        "progress": s.progress.as_ref().map(|p| placed_progress_json(p, manifest)),
        "playbackSettings": s.settings.as_ref().map(|p| json!({
            "speed": p.speed, "volume": p.volume, "clientUpdatedAt": p.client_updated_at,
        })),
    }));
    match &s.progress {
        Some(p) => {
            out.line(format!(
                "{} at {}{}{}",
                chapter_name(manifest, &p.chapter_id),
                clock(p.position),
                book_position(p, manifest)
                    .map(|b| format!(" ({} into the book)", clock(b)))
                    .unwrap_or_default(),
                if p.finished { ", finished" } else { "" }
            ));
        }
        None => out.line("No progress yet."),
    }
    if let Some(st) = &s.settings {
        out.line(format!(
            "Speed {}×{}",
            st.speed,
            st.volume
                .map(|v| format!(", volume {:.0}%", v * 100.0))
                .unwrap_or_default()
        ));
    }
}
