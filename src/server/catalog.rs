//! The catalog: scanned books with persistent ids, stored in the database
//! (so `earmark serve rescan` can update a running server), and the
//! in-memory [`Library`] the endpoints read.

use super::db::{Db, now_ms, random_hex, sha256_hex};
use super::scan::{self, ScannedBook};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
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
    cover: Option<PathBuf>,
    chapters: Vec<StoredChapter>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    pub cover: Option<PathBuf>,
    pub added_at: i64,
    pub duration_sec: f64,
    pub chapters: Vec<Chapter>,
    /// Lower-cased title, author, narrator (for `q`).
    pub search_short: String,
    /// The same plus the description (for `/books/search`).
    pub search_long: String,
}

impl Book {
    pub fn chapter(&self, id: &str) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.id == id)
    }
}

/// A snapshot of the catalog; replaced whole on a rescan.
#[derive(Debug, Default)]
pub struct Library {
    /// Sorted by title.
    pub books: Vec<Arc<Book>>,
    by_id: HashMap<String, usize>,
    chapters: HashMap<String, (usize, usize)>,
    pub categories: Vec<(Category, usize)>,
    /// The canonical library folder of the last scan: files are served
    /// only while they still resolve inside it.
    pub root: Option<PathBuf>,
}

impl Library {
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
        let conn = db.conn();
        let mut stmt =
            conn.prepare("SELECT id, path, added_at, data FROM books WHERE present = 1")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut books = Vec::new();
        for row in rows {
            let (id, path, added_at, data) = row?;
            let stored: StoredBook = match serde_json::from_str(&data) {
                Ok(s) => s,
                Err(err) => {
                    tracing::warn!("book {id} has unreadable catalog data, skipped: {err}");
                    continue;
                }
            };
            let mut offset = 0.0;
            let chapters = stored
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
            let lower = |s: &Option<String>| s.as_deref().unwrap_or("").to_lowercase();
            let search_short = format!(
                "{}\n{}\n{}",
                stored.title.to_lowercase(),
                stored.author.to_lowercase(),
                lower(&stored.narrator)
            );
            let search_long = format!("{search_short}\n{}", lower(&stored.description));
            books.push(Book {
                id,
                path,
                categories: stored
                    .categories
                    .iter()
                    .map(|c| Category::named(c))
                    .collect(),
                title: stored.title,
                author: stored.author,
                narrator: stored.narrator,
                description: stored.description,
                cover: stored.cover,
                added_at,
                duration_sec: offset,
                chapters,
                search_short,
                search_long,
            });
        }
        books.sort_by(|a, b| scan::natural_cmp(&a.title, &b.title).then_with(|| a.id.cmp(&b.id)));
        let mut lib = Library {
            root,
            ..Library::default()
        };
        let mut counts: HashMap<Category, usize> = HashMap::new();
        for (bi, book) in books.into_iter().enumerate() {
            lib.by_id.insert(book.id.clone(), bi);
            for (ci, ch) in book.chapters.iter().enumerate() {
                lib.chapters.insert(ch.id.clone(), (bi, ci));
            }
            for c in &book.categories {
                *counts.entry(c.clone()).or_default() += 1;
            }
            lib.books.push(Arc::new(book));
        }
        lib.categories = counts.into_iter().collect();
        lib.categories
            .sort_by(|a, b| scan::natural_cmp(&a.0.name, &b.0.name));
        Ok(lib)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanSummary {
    pub books: usize,
    pub chapters: usize,
    pub new_books: usize,
    pub removed_books: usize,
}

/// Scans the library and stores the result with persistent ids. A book
/// keeps its id when found at the same path, else when its audio has the
/// same fingerprint (a renamed folder); a chapter keeps its id by key.
pub fn rescan(db: &Db, library: &Path, data_dir: &Path) -> anyhow::Result<ScanSummary> {
    let mut cache = load_probe_cache(db)?;
    let scanned = scan::scan_library(library, &mut cache)?;
    let covers_dir = data_dir.join("covers");
    let mut conn = db.conn();
    let tx = conn.transaction()?;
    save_probe_cache(&tx, &cache)?;
    let mut existing: Vec<(String, String, String)> = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT id, path, fingerprint FROM books")?;
        for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
            existing.push(row?);
        }
    }
    let was_present: HashSet<String> = {
        let mut stmt = tx.prepare("SELECT id FROM books WHERE present = 1")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    // First claim by path, then by fingerprint, so a renamed book never
    // steals the id of a book still at its old path.
    let mut claimed: HashSet<String> = HashSet::new();
    let mut ids: Vec<Option<String>> = scanned
        .iter()
        .map(|b| {
            let id = existing
                .iter()
                .find(|(_, p, _)| *p == b.rel_path)
                .map(|(id, _, _)| id.clone());
            if let Some(id) = &id {
                claimed.insert(id.clone());
            }
            id
        })
        .collect();
    for (slot, book) in ids.iter_mut().zip(&scanned) {
        if slot.is_none()
            && let Some((id, _, _)) = existing
                .iter()
                .find(|(id, _, fp)| *fp == book.fingerprint && !claimed.contains(id))
        {
            claimed.insert(id.clone());
            *slot = Some(id.clone());
        }
    }
    let mut summary = ScanSummary::default();
    tx.execute("UPDATE books SET present = 0", [])?;
    let now = now_ms();
    for (slot, book) in ids.into_iter().zip(&scanned) {
        let id = match slot {
            Some(id) => id,
            None => {
                summary.new_books += 1;
                format!("bk_{}", random_hex(8))
            }
        };
        let stored = store_book(&tx, &id, book, &covers_dir)?;
        summary.books += 1;
        summary.chapters += stored.chapters.len();
        let data = serde_json::to_string(&stored)?;
        let updated = tx.execute(
            "UPDATE books SET path = ?2, fingerprint = ?3, present = 1, data = ?4 WHERE id = ?1",
            params![id, book.rel_path, book.fingerprint, data],
        )?;
        if updated == 0 {
            tx.execute(
                "INSERT INTO books(id, path, fingerprint, added_at, present, data) VALUES (?1, ?2, ?3, ?4, 1, ?5)",
                params![id, book.rel_path, book.fingerprint, now, data],
            )?;
        }
    }
    let still: HashSet<String> = {
        let mut stmt = tx.prepare("SELECT id FROM books WHERE present = 1")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    summary.removed_books = was_present.difference(&still).count();
    if let Ok(root) = std::fs::canonicalize(library) {
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('library_root', ?1)",
            [root.to_string_lossy()],
        )?;
    }
    tx.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalog_generation'",
        [],
    )?;
    tx.commit()?;
    Ok(summary)
}

fn load_probe_cache(db: &Db) -> anyhow::Result<scan::ProbeCache> {
    let conn = db.conn();
    let mut stmt = conn.prepare("SELECT path, data FROM probe_cache")?;
    let mut cache = scan::ProbeCache::default();
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (path, data) = row?;
        // An entry from an older layout is simply probed again.
        if let Ok(entry) = serde_json::from_str(&data) {
            cache.entries.insert(path, entry);
        }
    }
    Ok(cache)
}

fn save_probe_cache(
    tx: &rusqlite::Transaction<'_>,
    cache: &scan::ProbeCache,
) -> anyhow::Result<()> {
    for path in &cache.fresh {
        if let Some(entry) = cache.entries.get(path) {
            tx.execute(
                "INSERT OR REPLACE INTO probe_cache(path, data) VALUES (?1, ?2)",
                params![path, serde_json::to_string(entry)?],
            )?;
        }
    }
    let stale: Vec<&String> = cache
        .entries
        .keys()
        .filter(|p| !cache.seen.contains(*p))
        .collect();
    for path in stale {
        tx.execute("DELETE FROM probe_cache WHERE path = ?1", [path])?;
    }
    Ok(())
}

/// The cover file for embedded art, named by the audio's fingerprint so a
/// changed file gets a fresh extraction and an unchanged one none at all.
fn embedded_cover(audio: &Path, fingerprint: &str, covers_dir: &Path) -> Option<PathBuf> {
    let named = |ext: &str| covers_dir.join(format!("{fingerprint}.{ext}"));
    if let Some(existing) = ["jpg", "png", "bmp"]
        .into_iter()
        .map(named)
        .find(|p| p.is_file())
    {
        return Some(existing);
    }
    let (bytes, ext) = match super::media::probe(audio, false) {
        Ok(p) => p.cover?,
        Err(err) => {
            tracing::warn!("cannot read the cover art of {}: {err:#}", audio.display());
            return None;
        }
    };
    let path = named(ext);
    match std::fs::create_dir_all(covers_dir).and_then(|_| std::fs::write(&path, bytes)) {
        Ok(()) => Some(path),
        Err(err) => {
            tracing::warn!("cannot store the cover of {}: {err}", audio.display());
            None
        }
    }
}

fn store_book(
    tx: &rusqlite::Transaction<'_>,
    book_id: &str,
    book: &ScannedBook,
    covers_dir: &Path,
) -> anyhow::Result<StoredBook> {
    let mut chapters = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for c in &book.chapters {
        let by_key: Option<String> = tx
            .query_row(
                "SELECT chapter_id FROM chapter_keys WHERE book_id = ?1 AND key = ?2",
                params![book_id, c.key],
                |r| r.get(0),
            )
            .optional()?
            .filter(|id| !used.contains(id));
        // Else the same file position in the book (a re-tagged file).
        let by_place = || -> rusqlite::Result<Option<String>> {
            Ok(tx
                .query_row(
                    "SELECT chapter_id FROM chapter_keys WHERE book_id = ?1 AND place = ?2",
                    params![book_id, c.place],
                    |r| r.get(0),
                )
                .optional()?
                .filter(|id| !used.contains(id)))
        };
        let id = match by_key {
            Some(id) => id,
            None => match by_place()? {
                Some(id) => {
                    tx.execute(
                        "UPDATE OR IGNORE chapter_keys SET key = ?2 WHERE chapter_id = ?1",
                        params![id, c.key],
                    )?;
                    id
                }
                None => {
                    let id = format!("ch_{}", random_hex(8));
                    tx.execute(
                        "INSERT INTO chapter_keys(book_id, key, place, chapter_id) VALUES (?1, ?2, ?3, ?4)",
                        params![book_id, c.key, c.place, id],
                    )?;
                    id
                }
            },
        };
        tx.execute(
            "UPDATE chapter_keys SET place = ?2 WHERE chapter_id = ?1",
            params![id, c.place],
        )?;
        used.insert(id.clone());
        chapters.push(StoredChapter {
            id,
            title: c.title.clone(),
            file: c.file.clone(),
            mime: c.mime.to_owned(),
            size: c.size,
            duration_sec: c.duration_sec,
            start_sec: c.start_sec,
            end_sec: c.end_sec,
        });
    }
    let cover = match (&book.cover_file, &book.cover_embedded) {
        (Some(file), _) => Some(file.clone()),
        (None, Some((audio, fingerprint))) => embedded_cover(audio, fingerprint, covers_dir),
        (None, None) => None,
    };
    Ok(StoredBook {
        title: book.title.clone(),
        author: book.author.clone(),
        narrator: book.narrator.clone(),
        description: book.description.clone(),
        categories: book.categories.clone(),
        cover,
        chapters,
    })
}
