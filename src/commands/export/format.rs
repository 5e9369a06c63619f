//! Bookmarks and place history as Markdown (a readable list per book) or
//! CSV (RFC 4180: a header row, fields quoted when they hold a comma, a
//! quote or a line break, quotes doubled, CRLF line ends), both UTF-8.
//! Pure: entries in, text out.

use crate::domain::clock::hms as clock;
use crate::domain::{BookId, ChapterId, EpochMillis, Manifest, civil_date};

/// Markdown or CSV (`--export md|csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Csv,
}

/// What is exported: the server's bookmarks or this device's place history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bookmarks,
    History,
}

/// One place in a book and what is known about it. The chapter's number
/// and title come from the book's manifest; `None` when the manifest could
/// not be read or does not hold the chapter (an unknown is left empty,
/// never made up).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub chapter_id: ChapterId,
    pub chapter: Option<(usize, String)>,
    /// Seconds into the chapter.
    pub position: f64,
    /// Seconds into the book, when every earlier chapter's length is known.
    pub book_position: Option<f64>,
    /// The bookmark's note, or the history's cause ("skip", "chapter"…).
    pub text: Option<String>,
    pub at: Option<EpochMillis>,
}

impl Entry {
    /// The entry for `position` in `chapter`, placed with `manifest`.
    pub fn placed(
        manifest: Option<&Manifest>,
        chapter_id: &ChapterId,
        position: f64,
        text: Option<String>,
        at: Option<EpochMillis>,
    ) -> Entry {
        let chapter = manifest.and_then(|m| {
            let i = m.position_of(chapter_id)?;
            Some((i + 1, m.items[i].title.clone()))
        });
        Entry {
            chapter_id: chapter_id.clone(),
            chapter,
            position,
            book_position: manifest.and_then(|m| m.book_position(chapter_id, position)),
            text,
            at,
        }
    }
}

/// A book's entries, in the order they are written.
#[derive(Debug, Clone, PartialEq)]
pub struct BookEntries {
    pub book_id: BookId,
    pub title: Option<String>,
    pub entries: Vec<Entry>,
}

/// `2026-11-22T13:05:07Z`: unambiguous and sortable, for CSV.
pub fn utc(at: EpochMillis) -> String {
    let secs = at.div_euclid(1000);
    let (day, s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        civil_date(day),
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// One CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn csv_row(out: &mut String, fields: &[&str]) {
    let row: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    out.push_str(&row.join(","));
    out.push_str("\r\n");
}

/// The CSV document: one row per entry, books in the order given.
pub fn csv(kind: Kind, books: &[BookEntries]) -> String {
    let text_column = match kind {
        Kind::Bookmarks => "note",
        Kind::History => "cause",
    };
    let date_column = match kind {
        Kind::Bookmarks => "created",
        Kind::History => "at",
    };
    let mut out = String::new();
    csv_row(
        &mut out,
        &[
            "book_id",
            "book_title",
            "chapter_number",
            "chapter_id",
            "chapter_title",
            "time_in_chapter",
            "time_in_book",
            text_column,
            date_column,
        ],
    );
    for b in books {
        for e in &b.entries {
            let number = e.chapter.as_ref().map(|c| c.0.to_string());
            csv_row(
                &mut out,
                &[
                    b.book_id.as_str(),
                    b.title.as_deref().unwrap_or(""),
                    number.as_deref().unwrap_or(""),
                    e.chapter_id.as_str(),
                    e.chapter.as_ref().map_or("", |c| c.1.as_str()),
                    &clock(e.position),
                    &e.book_position.map(clock).unwrap_or_default(),
                    e.text.as_deref().unwrap_or(""),
                    &e.at.map(utc).unwrap_or_default(),
                ],
            );
        }
    }
    out
}

/// Markdown's punctuation that would start emphasis, a link, code, a
/// heading, a table cell or HTML, escaped; control characters dropped.
fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A note as a paragraph under its list item: each line indented, ending
/// in a hard break (two spaces) when another line follows, so the note's
/// own line breaks show; a line that would start a list, a heading or a
/// quote of its own is escaped.
fn md_note(note: &str) -> String {
    let text = note.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<String> = text
        .trim()
        .split('\n')
        .map(|l| md_inline(l.trim_end()).trim_start().to_owned())
        .collect();
    let mut out = String::from("\n");
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            out.push('\n');
            continue;
        }
        out.push_str("  ");
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        if line.starts_with(['-', '+', '=']) {
            out.push('\\');
            out.push_str(line);
        } else if digits > 0 && line[digits..].starts_with(['.', ')']) {
            // "1. years ago" is text, not an ordered list: `1\.`.
            out.push_str(&line[..digits]);
            out.push('\\');
            out.push_str(&line[digits..]);
        } else {
            out.push_str(line);
        }
        if lines.get(i + 1).is_some_and(|next| !next.is_empty()) {
            out.push_str("  ");
        }
        out.push('\n');
    }
    out
}

fn md_entry(out: &mut String, kind: Kind, e: &Entry, local: &dyn Fn(EpochMillis) -> String) {
    let chapter = match &e.chapter {
        Some((n, title)) => format!("Chapter {n} · {}", md_inline(title)),
        None => format!(
            "Chapter {} (not in the book's chapter list)",
            md_inline(e.chapter_id.as_str())
        ),
    };
    let mut parts = vec![
        format!("**{chapter}**"),
        format!("{} into the chapter", clock(e.position)),
    ];
    if let Some(b) = e.book_position {
        parts.push(format!("{} into the book", clock(b)));
    }
    if let (Kind::History, Some(cause)) = (kind, &e.text) {
        parts.push(md_inline(cause));
    }
    if let Some(at) = e.at {
        parts.push(local(at));
    }
    out.push_str(&format!("- {}\n", parts.join(" · ")));
    if let (Kind::Bookmarks, Some(note)) = (kind, &e.text)
        && !note.trim().is_empty()
    {
        out.push_str(&md_note(note));
    }
}

/// The Markdown document: a heading per book (one book: in the title),
/// then its entries as a list, the note under each bookmark. Dates are
/// local (`local` formats them).
pub fn markdown(
    kind: Kind,
    books: &[BookEntries],
    single: bool,
    local: &dyn Fn(EpochMillis) -> String,
) -> String {
    let what = match kind {
        Kind::Bookmarks => "Bookmarks",
        Kind::History => "Place history",
    };
    let name = |b: &BookEntries| md_inline(b.title.as_deref().unwrap_or(b.book_id.as_str()));
    let mut out = match (single, books.first()) {
        (true, Some(b)) => format!("# {what}: {}\n", name(b)),
        _ => format!("# {what}\n"),
    };
    let mut any = false;
    for b in books.iter().filter(|b| !b.entries.is_empty()) {
        any = true;
        if !single {
            out.push_str(&format!("\n## {}\n", name(b)));
        }
        out.push('\n');
        for e in &b.entries {
            md_entry(&mut out, kind, e, local);
        }
    }
    if !any {
        out.push_str(match kind {
            Kind::Bookmarks => "\nNo bookmarks.\n",
            Kind::History => "\nNo place history on this device.\n",
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(note: &str) -> Entry {
        Entry {
            chapter_id: ChapterId::new("ch_2"),
            chapter: Some((2, "Loomings, \"the\" start".into())),
            position: 751.5,
            book_position: Some(2551.5),
            text: Some(note.into()),
            at: Some(1_764_000_000_000),
        }
    }

    fn book(entries: Vec<Entry>) -> Vec<BookEntries> {
        vec![BookEntries {
            book_id: BookId::new("moby"),
            title: Some("Moby-Dick; or, The Whale".into()),
            entries,
        }]
    }

    #[test]
    fn csv_quotes_as_rfc_4180_says() {
        let text = csv(
            Kind::Bookmarks,
            &book(vec![entry("a \"quoted\", note\nover two lines – é")]),
        );
        assert_eq!(
            text,
            "book_id,book_title,chapter_number,chapter_id,chapter_title,time_in_chapter,time_in_book,note,created\r\n\
             moby,\"Moby-Dick; or, The Whale\",2,ch_2,\"Loomings, \"\"the\"\" start\",0:12:31,0:42:31,\"a \"\"quoted\"\", note\nover two lines – é\",2025-11-24T16:00:00Z\r\n"
        );
    }

    #[test]
    fn unknowns_stay_empty_in_csv() {
        let mut e = entry("");
        e.chapter = None;
        e.book_position = None;
        e.at = None;
        let text = csv(Kind::History, &book(vec![e]));
        let row = text.lines().nth(1).unwrap();
        assert_eq!(row, "moby,\"Moby-Dick; or, The Whale\",,ch_2,,0:12:31,,,");
        assert!(text.starts_with("book_id,") && text.contains(",cause,at\r\n"));
    }

    #[test]
    fn markdown_is_a_readable_list_with_notes_indented() {
        let local = |_: EpochMillis| "2025-11-24 17:00".to_owned();
        let text = markdown(
            Kind::Bookmarks,
            &book(vec![entry("*Call* me\n- Ishmael\n\n1. years ago")]),
            true,
            &local,
        );
        assert_eq!(
            text,
            "# Bookmarks: Moby-Dick; or, The Whale\n\n\
             - **Chapter 2 · Loomings, \"the\" start** · 0:12:31 into the chapter · 0:42:31 into the book · 2025-11-24 17:00\n\n  \
             \\*Call\\* me  \n  \\- Ishmael\n\n  1\\. years ago\n"
        );
        let none = markdown(Kind::History, &book(vec![]), false, &local);
        assert_eq!(
            none,
            "# Place history\n\nNo place history on this device.\n"
        );
    }

    #[test]
    fn times_and_dates() {
        assert_eq!(clock(0.0), "0:00:00");
        assert_eq!(clock(3725.9), "1:02:05");
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(-1), "1969-12-31T23:59:59Z");
    }
}
