//! The catalog: scanned books with persistent ids, stored in the database
//! (so `earmark serve rescan` can update a running server), and the
//! in-memory [`Library`] snapshot the endpoints read, with its sort orders
//! and category index so that a page costs the page, not the library.

mod listing;
mod rescan;

pub use listing::{Filter, Sort, TextIndex};
pub use rescan::{ScanSummary, rescan};

use super::db::{Db, sha256_hex};
use super::fold::{fold, sort_key};
use crate::domain::SeriesRef;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredChapter {
    id: String,
    title: String,
    file: PathBuf,
    mime: String,
    size: u64,
    duration_sec: f64,
    start_sec: f64,
    end_sec: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredBook {
    title: String,
    author: String,
    narrator: Option<String>,
    description: Option<String>,
    categories: Vec<String>,
    /// Absent in rows written before series were read (a rescan fills it).
    #[serde(default)]
    series: Vec<SeriesRef>,
    cover: Option<PathBuf>,
    chapters: Vec<StoredChapter>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Category {
    pub id: String,
    pub name: String,
}

impl Category {
    pub fn named(name: &str) -> Self {
        let id = format!("cat_{}", &sha256_hex(name.to_lowercase().as_bytes())[..12]);
        Self {
            id,
            name: name.to_owned(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Chapter {
    pub id: String,
    pub index: usize,
    pub title: String,
    pub file: PathBuf,
    pub mime: String,
    pub size: u64,
    pub duration_sec: f64,
    /// Start inside the streamed file.
    pub start_sec: f64,
    pub end_sec: Option<f64>,
    /// Where the chapter starts in the whole book.
    pub book_offset_sec: f64,
}

#[derive(Debug, Clone)]
pub struct Book {
    pub id: String,
    pub path: String,
    pub title: String,
    pub author: String,
    pub narrator: Option<String>,
    pub description: Option<String>,
    pub categories: Vec<Category>,
    pub series: Vec<SeriesRef>,
    pub cover: Option<PathBuf>,
    pub added_at: i64,
    pub duration_sec: f64,
    pub chapters: Vec<Chapter>,
}

impl Book {
    pub fn chapter(&self, id: &str) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.id == id)
    }
}

/// A snapshot of the catalog; replaced whole on a rescan.
#[derive(Debug, Default)]
pub struct Library {
    /// Sorted by title (natural, folded order; then id). A book's index
    /// here is its "position" in the other indexes.
    pub books: Vec<Arc<Book>>,
    /// Positions by author, then title.
    by_author: Vec<u32>,
    /// Positions by date added (newest first), then title.
    by_added: Vec<u32>,
    /// Rank of each position in `by_author` / `by_added`.
    author_rank: Vec<u32>,
    added_rank: Vec<u32>,
    /// Category id → positions, in title order.
    category_books: HashMap<String, Vec<u32>>,
    /// Folded title, author, narrator, series (for `q`), by position.
    short_text: TextIndex,
    /// The same plus the description (for `/books/search`), by position.
    long_text: TextIndex,
    by_id: HashMap<String, usize>,
    chapters: HashMap<String, (usize, usize)>,
    pub categories: Vec<(Category, usize)>,
    /// The canonical library folder of the last scan: files are served
    /// only while they still resolve inside it.
    pub root: Option<PathBuf>,
}

impl Library {
    /// The index of a book in `books`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    pub fn book(&self, id: &str) -> Option<&Arc<Book>> {
        self.by_id.get(id).map(|&i| &self.books[i])
    }

    pub fn chapter(&self, id: &str) -> Option<(&Arc<Book>, &Chapter)> {
        let &(b, c) = self.chapters.get(id)?;
        let book = &self.books[b];
        Some((book, &book.chapters[c]))
    }

    /// Loads the present books from the database.
    pub fn load(db: &Db) -> anyhow::Result<Self> {
        let root = db.meta("library_root")?.map(PathBuf::from);
        let books = present_books(db)?;
        let mut keyed: Vec<(String, Book)> =
            books.into_iter().map(|b| (sort_key(&b.title), b)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
        let mut lib = Library {
            root,
            ..Library::default()
        };
        let mut counts: HashMap<Category, usize> = HashMap::new();
        let mut author_keys = Vec::with_capacity(keyed.len());
        for (bi, (_, book)) in keyed.into_iter().enumerate() {
            for c in &book.categories {
                *counts.entry(c.clone()).or_default() += 1;
            }
            author_keys.push(sort_key(&book.author));
            lib.index(bi, book);
        }
        lib.short_text.finish();
        lib.long_text.finish();
        lib.order(&author_keys);
        let mut categories: Vec<(String, (Category, usize))> = counts
            .into_iter()
            .map(|(c, n)| (sort_key(&c.name), (c, n)))
            .collect();
        categories.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.0.id.cmp(&b.1.0.id)));
        lib.categories = categories.into_iter().map(|(_, c)| c).collect();
        Ok(lib)
    }

    /// Adds the book at title position `bi` to the indexes by id, chapter,
    /// category and text.
    fn index(&mut self, bi: usize, book: Book) {
        self.by_id.insert(book.id.clone(), bi);
        for (ci, ch) in book.chapters.iter().enumerate() {
            self.chapters.insert(ch.id.clone(), (bi, ci));
        }
        for c in &book.categories {
            let members = self.category_books.entry(c.id.clone()).or_default();
            // A book naming a category twice is listed once.
            if members.last() != Some(&(bi as u32)) {
                members.push(bi as u32);
            }
        }
        // Folded (lower case, no accents) text for `q` and for search.
        let folded = |s: &Option<String>| fold(s.as_deref().unwrap_or(""));
        let series: Vec<&str> = book.series.iter().map(|s| s.name.as_str()).collect();
        let short = format!(
            "{}\n{}\n{}\n{}",
            fold(&book.title),
            fold(&book.author),
            folded(&book.narrator),
            fold(&series.join("\n"))
        );
        self.long_text
            .push(&format!("{short}\n{}", folded(&book.description)));
        self.short_text.push(&short);
        self.books.push(Arc::new(book));
    }

    /// The orders by author and by date added, from the books in title
    /// order and their authors' sort keys.
    fn order(&mut self, author_keys: &[String]) {
        // Positions are in title order, so a stable sort keeps title order
        // among equal authors or dates.
        let n = self.books.len() as u32;
        self.by_author = (0..n).collect();
        self.by_author
            .sort_by(|&a, &b| author_keys[a as usize].cmp(&author_keys[b as usize]));
        self.by_added = (0..n).collect();
        let books = &self.books;
        self.by_added
            .sort_by_key(|&p| std::cmp::Reverse(books[p as usize].added_at));
        self.author_rank = ranks(&self.by_author);
        self.added_rank = ranks(&self.by_added);
    }
}

/// The present books as stored, in no order; a row whose data can't be
/// read is skipped with a warning.
fn present_books(db: &Db) -> anyhow::Result<Vec<Book>> {
    let conn = db.conn()?;
    let mut stmt = conn.prepare("SELECT id, path, added_at, data FROM books WHERE present = 1")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    let mut books = Vec::new();
    for row in rows {
        let (id, path, added_at, data): (String, String, i64, String) = row?;
        match serde_json::from_str::<StoredBook>(&data) {
            Ok(stored) => books.push(stored.into_book(id, path, added_at)),
            Err(err) => tracing::warn!("book {id} has unreadable catalog data, skipped: {err}"),
        }
    }
    Ok(books)
}

impl StoredBook {
    /// The book as the endpoints read it: chapters numbered and placed in
    /// the whole book.
    fn into_book(self, id: String, path: String, added_at: i64) -> Book {
        let mut offset = 0.0;
        let chapters = self
            .chapters
            .into_iter()
            .enumerate()
            .map(|(index, c)| {
                let ch = Chapter {
                    id: c.id,
                    index,
                    title: c.title,
                    file: c.file,
                    mime: c.mime,
                    size: c.size,
                    duration_sec: c.duration_sec,
                    start_sec: c.start_sec,
                    end_sec: c.end_sec,
                    book_offset_sec: offset,
                };
                offset += c.duration_sec;
                ch
            })
            .collect::<Vec<_>>();
        Book {
            id,
            path,
            categories: self.categories.iter().map(|c| Category::named(c)).collect(),
            title: self.title,
            author: self.author,
            narrator: self.narrator,
            description: self.description,
            series: self.series,
            cover: self.cover,
            added_at,
            duration_sec: offset,
            chapters,
        }
    }
}

/// The inverse of an order: `ranks[position]` = index in `order`.
fn ranks(order: &[u32]) -> Vec<u32> {
    let mut ranks = vec![0; order.len()];
    for (rank, &p) in order.iter().enumerate() {
        ranks[p as usize] = rank as u32;
    }
    ranks
}
