//! `earmark bookmarks BOOK_ID --export md|csv`, `earmark bookmarks --all
//! --export md|csv` and `earmark history BOOK_ID --export md|csv`: the
//! server's bookmarks, or this device's place history, written out with
//! chapter titles (from each book's manifest), the time in the chapter and
//! in the book, the note or the cause, and the date (`format` makes the
//! text).
//!
//! Nothing is written until everything needed was read: a bookmark list
//! the server does not give fails the whole export with its exit code. A
//! manifest that cannot be read leaves that book's chapter titles and
//! book times empty, and says so on stderr.

mod format;

pub use format::ExportFormat;

use super::{CommandError, Invocation};
use crate::api::{ApiError, BookQuery, Client};
use crate::config::{Profile, Session};
use crate::domain::{Book, BookId, Bookmark, Manifest};
use format::{BookEntries, Entry, Kind};
use futures_util::{StreamExt, stream};
use std::io::Write;
use std::process::ExitCode;

/// Books whose bookmarks are asked for at once with `--all`.
const PARALLEL: usize = 8;

/// `--json` prints JSON; an export prints the format asked for.
fn refuse_json(global: &Invocation) -> Result<(), CommandError> {
    match global.json {
        true => Err(CommandError::usage(
            "--export writes Markdown or CSV, not JSON; leave out --json",
        )),
        false => Ok(()),
    }
}

/// Writes the whole document to stdout (a closed pipe ends quietly).
fn emit(text: &str) -> Result<(), CommandError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CommandError {
            code: 1,
            message: format!("could not write the export to standard output: {e}"),
        }),
        _ => Ok(()),
    }
}

fn render(kind: Kind, format: ExportFormat, books: &[BookEntries], single: bool) -> String {
    match format {
        ExportFormat::Csv => format::csv(kind, books),
        ExportFormat::Markdown => format::markdown(kind, books, single, &crate::sync::local_clock),
    }
}

/// A book's manifest, or `None` after saying on stderr why not.
async fn manifest_or_warn(client: &Client, book: &BookId, title: &str) -> Option<Manifest> {
    match client.manifest(book).await {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!(
                "earmark: warning: the chapters of {title} ({book}) could not be read ({e}); its chapter titles and times in the book are left empty."
            );
            None
        }
    }
}

/// Bookmarks in the book's order: by chapter (unknown chapters last),
/// then position, then date.
fn bookmark_entries(manifest: Option<&Manifest>, marks: &[Bookmark]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = marks
        .iter()
        .map(|b| {
            Entry::placed(
                manifest,
                &b.chapter_id,
                b.position,
                b.note.clone(),
                b.created_at,
            )
        })
        .collect();
    entries.sort_by(|a, b| {
        let n = |e: &Entry| e.chapter.as_ref().map_or(usize::MAX, |c| c.0);
        n(a).cmp(&n(b))
            .then(a.position.total_cmp(&b.position))
            .then(a.at.cmp(&b.at))
    });
    entries
}

/// One book's bookmarks, placed in its manifest (read only when it has some).
async fn book_bookmarks(client: &Client, book: &Book) -> Result<BookEntries, CommandError> {
    let marks = client.bookmarks(&book.id).await.map_err(|e| {
        let code = CommandError::from(e.clone()).code;
        CommandError {
            code,
            message: format!(
                "the bookmarks of {} ({}) could not be read, so nothing was exported: {e}",
                book.title, book.id
            ),
        }
    })?;
    let manifest = match marks.is_empty() {
        true => None,
        false => manifest_or_warn(client, &book.id, &book.title).await,
    };
    Ok(BookEntries {
        book_id: book.id.clone(),
        title: Some(book.title.clone()),
        entries: bookmark_entries(manifest.as_ref(), &marks),
    })
}

/// `earmark bookmarks BOOK_ID --export …` (`book`), or `--all` (`None`).
pub async fn bookmarks(
    global: &Invocation,
    profile: &Profile,
    book: Option<BookId>,
    format: ExportFormat,
) -> Result<(), CommandError> {
    refuse_json(global)?;
    let client = &Session::load(profile)?.client(profile)?;
    let books: Vec<Book> = match &book {
        Some(id) => vec![client.book(id).await?],
        None => {
            let listing = client.books_listing(&BookQuery::default()).await?;
            if let Some(first) = listing.skipped.first() {
                eprintln!(
                    "earmark: warning: {} book(s) of the library could not be read, so their bookmarks are not in the export (first: {first}).",
                    listing.skipped.len()
                );
            }
            let mut books = listing.items;
            books.sort_by(|a, b| {
                a.title
                    .to_lowercase()
                    .cmp(&b.title.to_lowercase())
                    .then_with(|| a.id.as_str().cmp(b.id.as_str()))
            });
            books
        }
    };
    let entries: Vec<Result<BookEntries, CommandError>> = stream::iter(&books)
        .map(|b| book_bookmarks(client, b))
        .buffered(PARALLEL)
        .collect()
        .await;
    let entries = entries.into_iter().collect::<Result<Vec<_>, _>>()?;
    emit(&render(Kind::Bookmarks, format, &entries, book.is_some()))
}

/// `earmark history BOOK_ID --export …`: the place history is this
/// device's; the book's title and chapters come from the server when it
/// answers (else they are left empty, and stderr says so).
pub fn history(global: &Invocation, book: String, format: ExportFormat) -> ExitCode {
    match history_export(global, BookId::new(book), format) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("earmark: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

fn history_export(
    global: &Invocation,
    book: BookId,
    format: ExportFormat,
) -> Result<(), CommandError> {
    refuse_json(global)?;
    let profile = Profile::resolve(&global.select)?;
    let marks = crate::sync::Records::new(profile.sync_dir())
        .history(&book)
        .map_err(|e| CommandError {
            code: 1,
            message: e,
        })?;
    let (title, manifest) = if marks.is_empty() {
        (None, None)
    } else {
        from_server(&profile, &book)
    };
    let entries = marks
        .iter()
        .rev()
        .map(|m| {
            let cause = Some(m.cause.word().to_owned());
            Entry::placed(
                manifest.as_ref(),
                &m.chapter_id,
                m.position,
                cause,
                Some(m.at),
            )
        })
        .collect();
    let books = [BookEntries {
        book_id: book,
        title,
        entries,
    }];
    emit(&render(Kind::History, format, &books, true))
}

/// The book's title and manifest, when the server gives them (else
/// stderr says why the export leaves them empty).
fn from_server(profile: &Profile, book: &BookId) -> (Option<String>, Option<Manifest>) {
    match read_book(profile, book, None) {
        Ok((b, m)) => (Some(b.title), Some(m)),
        Err(e) => {
            eprintln!(
                "earmark: warning: the book's title and chapters could not be read from the server ({e}); chapter titles and times in the book are left empty."
            );
            (None, None)
        }
    }
}

/// The book and its manifest from the server, outside a runtime; within
/// `limit` when given.
pub(super) fn read_book(
    profile: &Profile,
    book: &BookId,
    limit: Option<std::time::Duration>,
) -> Result<(Book, Manifest), String> {
    let session = Session::load(profile).map_err(|e| e.to_string())?;
    let client = session.client(profile).map_err(|e| e.to_string())?;
    let rt = super::runtime().map_err(|e| e.to_string())?;
    let read = async {
        let b = client.book(book).await?;
        let m = client.manifest(book).await?;
        Ok::<_, ApiError>((b, m))
    };
    rt.block_on(async {
        match limit {
            Some(l) => tokio::time::timeout(l, read)
                .await
                .map_err(|_| "the server did not answer in time".to_owned())?,
            None => read.await,
        }
        .map_err(|e| e.to_string())
    })
}
