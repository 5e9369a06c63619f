//! The commands that read and change what the server keeps: books and
//! search, a book, its chapters and manifest (lengths checked against the
//! audio where the server names no unit), categories, favorites,
//! bookmarks and progress (chapters named by number and title).

use super::output::{self, Out};
use super::{BookmarkAction, ClientCommand, CommandError, FavoriteAction, select};
use crate::api::{ApiError, BookQuery, Client, NewBookmark, ProgressRead, ProgressState};
use crate::domain::*;
use serde_json::json;

pub(super) async fn run(
    client: &Client,
    cmd: ClientCommand,
    out: &mut Out,
) -> Result<(), CommandError> {
    match cmd {
        ClientCommand::Books {
            category,
            favorites,
            sort,
            stream,
            author,
            narrator,
            series,
        } => {
            let q = BookQuery {
                category: category.map(CategoryId::new),
                favorites,
                sort,
                ..Default::default()
            };
            let select = select::BookSelect {
                author,
                narrator,
                series,
            };
            books(client, &q, &select, stream, out).await
        }
        ClientCommand::Search { text } => search(client, text.join(" "), out).await,
        ClientCommand::Book { book_id } => book(client, &BookId::new(book_id), out).await,
        ClientCommand::Chapters { book_id } => {
            let (chapters, unknown) = client.chapters_checked(&BookId::new(book_id)).await?;
            output::chapters(out, &chapters);
            output::say_unknown_lengths(unknown.as_ref(), "the chapters'");
            Ok(())
        }
        ClientCommand::Manifest { book_id } => {
            let mut m = client.manifest(&BookId::new(book_id)).await?;
            let unknown = client.check_lengths(&mut m).await;
            output::manifest(out, client, &m);
            output::say_unknown_lengths(unknown.as_ref(), "the chapters'");
            Ok(())
        }
        ClientCommand::Categories => {
            let cats = client.categories().await?;
            output::categories(out, &cats);
            Ok(())
        }
        ClientCommand::Favorites { action } => favorites(client, action, out).await,
        ClientCommand::Bookmarks {
            book_id, action, ..
        } => {
            let book = BookId::new(
                book_id.ok_or_else(|| CommandError::usage("which book? give its BOOK_ID"))?,
            );
            bookmarks(client, &book, action, out).await
        }
        ClientCommand::Progress { book_id } => progress(client, &BookId::new(book_id), out).await,
        ClientCommand::Login { .. }
        | ClientCommand::Logout
        | ClientCommand::Status
        | ClientCommand::Doctor { .. } => {
            unreachable!("handled before a session is loaded")
        }
    }
}

async fn books(
    client: &Client,
    q: &BookQuery,
    select: &select::BookSelect,
    stream: bool,
    out: &mut Out,
) -> Result<(), CommandError> {
    if stream {
        output::books_stream(out, client.book_pager(q), select).await?;
        return Ok(());
    }
    let listing = client.books_listing(q).await?;
    let shown = (!select.is_empty()).then(|| {
        let mut books = listing.items.clone();
        select.apply(&mut books);
        books
    });
    output::books_listing(out, &listing, shown.as_deref(), "library");
    Ok(())
}

async fn search(client: &Client, text: String, out: &mut Out) -> Result<(), CommandError> {
    if text.trim().is_empty() {
        return Err(CommandError::usage("the search text is empty"));
    }
    let q = BookQuery {
        text: Some(text),
        ..Default::default()
    };
    let listing = client.search_listing(&q).await?;
    output::books_listing(out, &listing, None, "search result list");
    Ok(())
}

/// A book's details, its length checked; the chapter list names the
/// chapter of its progress.
async fn book(client: &Client, id: &BookId, out: &mut Out) -> Result<(), CommandError> {
    let (book, source, unknown) = client.book_checked(id).await?;
    let manifest = match book.progress {
        Some(_) => client.manifest(id).await.ok(),
        None => None,
    };
    output::book_details(out, &book, &source, manifest.as_ref());
    output::say_unknown_lengths(unknown.as_ref(), "the book's");
    Ok(())
}

async fn favorites(
    client: &Client,
    action: Option<FavoriteAction>,
    out: &mut Out,
) -> Result<(), CommandError> {
    let Some(action) = action else {
        let books = client.favorites().await?;
        output::books(out, &books);
        return Ok(());
    };
    let (id, add) = match action {
        FavoriteAction::Add { book_id } => (BookId::new(book_id), true),
        FavoriteAction::Remove { book_id } => (BookId::new(book_id), false),
    };
    if add {
        client.add_favorite(&id).await?;
    } else {
        client.remove_favorite(&id).await?;
    }
    out.json(json!({"bookId": id.as_str(), "favorite": add}));
    out.line(if add {
        format!("Added {id} to the favorites.")
    } else {
        format!("Removed {id} from the favorites.")
    });
    Ok(())
}

async fn bookmarks(
    client: &Client,
    book: &BookId,
    action: Option<BookmarkAction>,
    out: &mut Out,
) -> Result<(), CommandError> {
    match action {
        None => {
            let (marks, manifest) = tokio::join!(client.bookmarks(book), client.manifest(book));
            output::bookmarks(out, &marks?, manifest.ok().as_ref());
        }
        Some(BookmarkAction::Add { chapter, at, note }) => {
            let b = client
                .add_bookmark(&NewBookmark {
                    book_id: book.clone(),
                    chapter_id: ChapterId::new(chapter),
                    position: at,
                    note,
                    client_id: Some(format!("cli-{}-{}", now_millis(), std::process::id())),
                })
                .await?;
            let manifest = client.manifest(book).await.ok();
            out.json(output::bookmark_json(&b, manifest.as_ref()));
            out.line(format!(
                "Added bookmark {} at {} in {}.",
                b.id,
                output::clock(b.position),
                output::chapter_name(manifest.as_ref(), &b.chapter_id)
            ));
        }
        Some(BookmarkAction::Remove { bookmark_id }) => {
            let id = BookmarkId::new(bookmark_id);
            client.remove_bookmark(&id).await?;
            out.json(json!({"id": id.as_str(), "deleted": true}));
            out.line(format!("Removed bookmark {id}."));
        }
    }
    Ok(())
}

/// The server's place in a book, read against its chapters' lengths
/// (checked against the audio where they name no unit, so a position that
/// names none either can be judged), its chapter named by number and title.
async fn progress(client: &Client, book: &BookId, out: &mut Out) -> Result<(), CommandError> {
    let (state, manifest) = match client.manifest(book).await {
        Ok(mut m) => {
            client.check_lengths(&mut m).await;
            let read = client.progress_read(book, &m).await?;
            (known(read)?, Some(m))
        }
        // The read fetches the manifest again, and fails as it must.
        Err(_) => (client.progress(book).await?, None),
    };
    output::progress(out, book, &state, manifest.as_ref());
    Ok(())
}

/// A progress read as two values; one that could not be read is an error
/// (the place is unknown, never "no progress"), as `Client::progress` says.
fn known(read: ProgressRead) -> Result<ProgressState, CommandError> {
    match read {
        ProgressRead::Unreadable { shape } => Err(ApiError::Decode {
            endpoint: "GET /auth/reading-progress/{bookId}".into(),
            field: "progress".into(),
            problem: format!(
                "could not be read, so the place on the server is unknown (not empty): {shape}"
            ),
        }
        .into()),
        read => Ok(read.known().unwrap_or_default()),
    }
}
