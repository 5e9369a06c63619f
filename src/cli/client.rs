//! The client commands' flags (`earmark login`, `books`, `bookmarks`, …;
//! and a position's check), turned into [`crate::commands::ClientCommand`].

use super::ExportFlag;
use crate::commands::{BookmarkAction, ClientCommand, FavoriteAction};
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum ClientSubcommand {
    /// Log in and store the session token (never the password).
    Login {
        /// Read the password from standard input instead of the terminal.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Log out: revoke the token on the server and remove it locally.
    Logout,
    /// Server, serverId, user id, license status and token store in use.
    Status,
    /// List books.
    Books {
        /// Only books of this category id.
        #[arg(long)]
        category: Option<String>,
        /// Only your favorites.
        #[arg(long)]
        favorites: bool,
        /// Sort order: title, author, recent or added.
        #[arg(long)]
        sort: Option<String>,
        /// Print each page as it arrives (with --json: one JSON line per page).
        #[arg(long)]
        stream: bool,
        /// Only books by this author (the whole name, any case).
        #[arg(long)]
        author: Option<String>,
        /// Only books read by this narrator (the whole name, any case).
        #[arg(long)]
        narrator: Option<String>,
        /// Only books of this series, in series order (#1, #1.5, #2, #10…;
        /// with --stream, in the server's order page by page).
        #[arg(long)]
        series: Option<String>,
    },
    /// Search books by title, author, narrator or description.
    Search {
        /// The search text (several words are joined with spaces).
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Details of a book.
    Book { book_id: String },
    /// Chapters of a book.
    Chapters { book_id: String },
    /// The playback manifest of a book, in server order.
    Manifest { book_id: String },
    /// Categories.
    Categories,
    /// List favorites, or add/remove one.
    Favorites {
        #[command(subcommand)]
        action: Option<FavoriteSubcommand>,
    },
    /// List a book's bookmarks, add/remove one, or export them.
    Bookmarks {
        /// The book's id (leave it out with --all).
        #[arg(required_unless_present = "all")]
        book_id: Option<String>,
        /// Export the bookmarks of every book (with --export).
        #[arg(long, requires = "export", conflicts_with = "book_id")]
        all: bool,
        /// Write the bookmarks as Markdown or CSV (chapter, times, note, date).
        #[arg(long, value_enum)]
        export: Option<ExportFlag>,
        #[command(subcommand)]
        action: Option<BookmarkSubcommand>,
    },
    /// Reading progress (and playback settings) of a book.
    Progress { book_id: String },
    /// Check what earmark recognises in this server's answers (read-only).
    Doctor {
        /// Also log in (password from standard input) to check the login answer.
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum FavoriteSubcommand {
    /// Mark a book as favorite.
    Add { book_id: String },
    /// Remove a book from the favorites.
    Remove { book_id: String },
}

#[derive(Debug, Subcommand)]
pub enum BookmarkSubcommand {
    /// Add a bookmark.
    Add {
        /// Chapter id (from `earmark manifest`).
        #[arg(long)]
        chapter: String,
        /// Position in the chapter: seconds, or MM:SS / HH:MM:SS.
        #[arg(long, value_parser = parse_position)]
        at: f64,
        /// A note.
        #[arg(long)]
        note: Option<String>,
    },
    /// Remove a bookmark by id.
    Remove { bookmark_id: String },
}

fn parse_position(s: &str) -> Result<f64, String> {
    crate::api::wire::fields::clock_seconds(s)
        .ok_or_else(|| format!("{s:?} is not a position (seconds, MM:SS or HH:MM:SS)"))
}

impl From<ClientSubcommand> for ClientCommand {
    fn from(c: ClientSubcommand) -> ClientCommand {
        use ClientSubcommand as S;
        match c {
            S::Login { password_stdin } => ClientCommand::Login { password_stdin },
            S::Logout => ClientCommand::Logout,
            S::Status => ClientCommand::Status,
            S::Books {
                category,
                favorites,
                sort,
                stream,
                author,
                narrator,
                series,
            } => ClientCommand::Books {
                category,
                favorites,
                sort,
                stream,
                author,
                narrator,
                series,
            },
            S::Search { text } => ClientCommand::Search { text },
            S::Book { book_id } => ClientCommand::Book { book_id },
            S::Chapters { book_id } => ClientCommand::Chapters { book_id },
            S::Manifest { book_id } => ClientCommand::Manifest { book_id },
            S::Categories => ClientCommand::Categories,
            S::Favorites { action } => ClientCommand::Favorites {
                action: action.map(|a| match a {
                    FavoriteSubcommand::Add { book_id } => FavoriteAction::Add { book_id },
                    FavoriteSubcommand::Remove { book_id } => FavoriteAction::Remove { book_id },
                }),
            },
            S::Bookmarks {
                book_id,
                export,
                action,
                ..
            } => ClientCommand::Bookmarks {
                book_id,
                export: export.map(Into::into),
                action: action.map(|a| match a {
                    BookmarkSubcommand::Add { chapter, at, note } => {
                        BookmarkAction::Add { chapter, at, note }
                    }
                    BookmarkSubcommand::Remove { bookmark_id } => {
                        BookmarkAction::Remove { bookmark_id }
                    }
                }),
            },
            S::Progress { book_id } => ClientCommand::Progress { book_id },
            S::Doctor { password_stdin } => ClientCommand::Doctor { password_stdin },
        }
    }
}
