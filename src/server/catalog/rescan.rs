//! Rescanning: walks the library (`scan`), then stores what changed with
//! persistent ids. A book whose scan signature (everything stored about
//! it) is unchanged is not rewritten, nor kept in memory, so a rescan of an
//! unchanged library costs the walk and the file metadata, not the books.
//! A book whose stamp (the metadata of its files, see `scan`) is unchanged
//! is not even read.

use super::{StoredBook, StoredChapter};
use crate::server::db::{Db, now_ms, random_hex, sha256_hex};
use crate::server::scan::{self, Found, ScannedBook};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanSummary {
    pub books: usize,
    pub chapters: usize,
    pub new_books: usize,
    pub removed_books: usize,
    /// Books found as they were stored, not rewritten.
    pub unchanged_books: usize,
    /// Of those, the books known unchanged by their files' metadata alone
    /// (not read).
    pub unread_books: usize,
}

/// What the database knows of a book from an earlier scan.
struct Known {
    id: String,
    path: String,
    fingerprint: String,
    present: bool,
    sig: String,
    stamp: String,
}

/// Scans the library and stores the result with persistent ids. A book
/// keeps its id when found at the same path, else when its audio has the
/// same fingerprint (a renamed folder); a chapter keeps its id by key.
///
/// The walk compares each book with what is stored as it is read, and
/// keeps only the books that must be written: an unchanged library never
/// holds its scan results in memory. The walk runs outside the write
/// transaction (a running server keeps taking progress writes); if
/// another rescan stored a catalog meanwhile, the comparison is made again.
pub fn rescan(db: &Db, library: &Path, data_dir: &Path) -> anyhow::Result<ScanSummary> {
    let mut cache = scan::ProbeCache::lazy(|| load_probe_cache(db));
    for _ in 0..3 {
        if let Some(summary) = try_rescan(db, library, data_dir, &mut cache)? {
            return Ok(summary);
        }
        tracing::info!("another rescan stored the catalog meanwhile; comparing again");
    }
    anyhow::bail!("the catalog kept changing during the rescan (other rescans running?)")
}

fn generation(conn: &rusqlite::Connection) -> rusqlite::Result<String> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'catalog_generation'",
        [],
        |r| r.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
}

fn load_known(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<Known>> {
    let mut stmt = conn.prepare("SELECT id, path, fingerprint, present, sig, stamp FROM books")?;
    stmt.query_map([], |r| {
        Ok(Known {
            id: r.get(0)?,
            path: r.get(1)?,
            fingerprint: r.get(2)?,
            present: r.get::<_, i64>(3)? != 0,
            sig: r.get(4)?,
            stamp: r.get(5)?,
        })
    })?
    .collect()
}

/// One rescan; `None` when the stored catalog changed during the walk.
fn try_rescan(
    db: &Db,
    library: &Path,
    data_dir: &Path,
    cache: &mut scan::ProbeCache<'_>,
) -> anyhow::Result<Option<ScanSummary>> {
    let (known, before) = {
        let mut conn = db.conn()?;
        let tx = conn.transaction()?;
        let known = load_known(&tx)?;
        let before = generation(&tx)?;
        tx.commit()?;
        (known, before)
    };
    let mut compared = compare(library, cache, &known)?;
    compared.claim_renamed(&known);
    let mut conn = db.conn()?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    if generation(&tx)? != before {
        return Ok(None); // rolled back on drop
    }
    save_probe_cache(&tx, cache)?;
    let mut changed = compared.store(&tx, &known, &data_dir.join("covers"))?;
    changed |= store_library_root(&tx, library)?;
    // A running server reloads its snapshot only when something changed.
    if changed {
        tx.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalog_generation'",
            [],
        )?;
    }
    tx.commit()?;
    Ok(Some(compared.summary))
}

/// What the walk found, compared with what is stored.
#[derive(Default)]
struct Compared<'k> {
    summary: ScanSummary,
    /// Ids claimed by a book found at the same path (then by fingerprint).
    claimed: HashSet<&'k str>,
    /// Books found as stored.
    unchanged: Vec<&'k Known>,
    /// Books to write: the stored book each continues, if any, and its
    /// scan signature.
    to_write: Vec<(Option<&'k Known>, ScannedBook, String)>,
    /// Unchanged books read again (a touched file): their new stamps.
    restamped: Vec<(&'k str, Option<String>)>,
}

/// Walks the library and compares each book with the stored one at its
/// path as it is read.
fn compare<'k>(
    library: &Path,
    cache: &mut scan::ProbeCache<'_>,
    known: &'k [Known],
) -> anyhow::Result<Compared<'k>> {
    let by_path: HashMap<&str, &Known> = known.iter().map(|k| (k.path.as_str(), k)).collect();
    let mut c = Compared::default();
    let mut failed: Option<anyhow::Error> = None;
    let stored = |path: &str| by_path.get(path).map(|k| k.stamp.as_str());
    scan::scan_library(library, cache, &stored, &mut |found| {
        let book = match found {
            Found::Book(book) => *book,
            Found::Unchanged { rel_path, chapters } => {
                c.summary.books += 1;
                c.summary.chapters += chapters;
                c.summary.unread_books += 1;
                // The stamp came from this very row.
                if let Some(k) = by_path.get(rel_path.as_str()).copied() {
                    c.claimed.insert(&k.id);
                    c.unchanged.push(k);
                }
                return;
            }
        };
        c.summary.books += 1;
        c.summary.chapters += book.chapters.len();
        let sig = match signature(&book) {
            Ok(s) => s,
            Err(e) => {
                failed.get_or_insert(e);
                return;
            }
        };
        let k = by_path.get(book.rel_path.as_str()).copied();
        if let Some(k) = k {
            c.claimed.insert(&k.id);
            if k.sig == sig {
                if book.stamp.as_deref().unwrap_or("") != k.stamp {
                    c.restamped.push((&k.id, book.stamp));
                }
                c.unchanged.push(k);
                return;
            }
        }
        c.to_write.push((k, book, sig));
    })?;
    match failed.or_else(|| cache.failed.take()) {
        Some(e) => Err(e),
        None => Ok(c),
    }
}

impl<'k> Compared<'k> {
    /// A new book takes the id of an unclaimed stored book with the same
    /// fingerprint (a renamed folder). Done after the walk, so a renamed
    /// book never steals the id of a book still at its old path.
    fn claim_renamed(&mut self, known: &'k [Known]) {
        let mut by_fingerprint: HashMap<&str, Vec<&Known>> = HashMap::new();
        if self.to_write.iter().any(|(k, _, _)| k.is_none()) {
            for k in known {
                by_fingerprint.entry(&k.fingerprint).or_default().push(k);
            }
        }
        for (slot, book, _) in self.to_write.iter_mut() {
            if slot.is_none()
                && let Some(k) = by_fingerprint
                    .get(book.fingerprint.as_str())
                    .and_then(|ks| ks.iter().find(|k| !self.claimed.contains(k.id.as_str())))
            {
                self.claimed.insert(&k.id);
                *slot = Some(k);
            }
        }
    }

    /// Writes what changed: books found again, new stamps, new and changed
    /// books, books gone. True when the catalog changed.
    fn store(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        known: &[Known],
        covers_dir: &Path,
    ) -> anyhow::Result<bool> {
        let summary = &mut self.summary;
        let mut changed = false;
        let mut seen: HashSet<String> = HashSet::with_capacity(summary.books);
        let now = now_ms();
        summary.unchanged_books = self.unchanged.len();
        for k in &self.unchanged {
            if !k.present {
                tx.execute("UPDATE books SET present = 1 WHERE id = ?1", [&k.id])?;
                changed = true;
            }
            seen.insert(k.id.clone());
        }
        // Not a catalog change: the running server's snapshot stays.
        for (id, stamp) in &self.restamped {
            tx.prepare_cached("UPDATE books SET stamp = ?2 WHERE id = ?1")?
                .execute(params![id, stamp.as_deref().unwrap_or("")])?;
        }
        for (slot, book, sig) in &self.to_write {
            changed = true;
            let id = match slot {
                Some(k) => k.id.clone(),
                None => {
                    summary.new_books += 1;
                    format!("bk_{}", random_hex(8))
                }
            };
            let stored = store_book(tx, &id, book, covers_dir)?;
            let data = serde_json::to_string(&stored)?;
            let stamp = book.stamp.as_deref().unwrap_or("");
            let updated = tx.execute(
                "UPDATE books SET path = ?2, fingerprint = ?3, present = 1, data = ?4, sig = ?5, stamp = ?6 WHERE id = ?1",
                params![id, book.rel_path, book.fingerprint, data, sig, stamp],
            )?;
            if updated == 0 {
                tx.execute(
                    "INSERT INTO books(id, path, fingerprint, added_at, present, data, sig, stamp) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7)",
                    params![id, book.rel_path, book.fingerprint, now, data, sig, stamp],
                )?;
            }
            seen.insert(id);
        }
        for k in known.iter().filter(|k| k.present && !seen.contains(&k.id)) {
            tx.execute("UPDATE books SET present = 0 WHERE id = ?1", [&k.id])?;
            summary.removed_books += 1;
            changed = true;
        }
        Ok(changed)
    }
}

/// Remembers the canonical library folder (files are served only inside
/// it). True when it changed.
fn store_library_root(tx: &rusqlite::Transaction<'_>, library: &Path) -> anyhow::Result<bool> {
    let Ok(root) = std::fs::canonicalize(library) else {
        return Ok(false);
    };
    let root = root.to_string_lossy();
    let before: Option<String> = tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'library_root'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if before.as_deref() == Some(&*root) {
        return Ok(false);
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('library_root', ?1)",
        [&*root],
    )?;
    Ok(true)
}

/// Everything the scan found about a book, hashed: equal signatures mean
/// the stored row is still right. The prefix changes when what is stored
/// per book changes, so older rows are rewritten once.
fn signature(book: &ScannedBook) -> anyhow::Result<String> {
    let mut bytes = format!("{}\n", scan::SCAN_VERSION).into_bytes();
    serde_json::to_writer(&mut bytes, book)?;
    Ok(sha256_hex(&bytes))
}

fn load_probe_cache(db: &Db) -> anyhow::Result<HashMap<String, scan::CacheEntry>> {
    let conn = db.conn()?;
    let mut stmt = conn.prepare("SELECT path, data FROM probe_cache")?;
    let mut entries = HashMap::new();
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (path, data) = row?;
        // An entry from an older layout is simply probed again.
        if let Ok(entry) = serde_json::from_str(&data) {
            entries.insert(path, entry);
        }
    }
    Ok(entries)
}

fn save_probe_cache(
    tx: &rusqlite::Transaction<'_>,
    cache: &scan::ProbeCache<'_>,
) -> anyhow::Result<()> {
    for path in &cache.fresh {
        if let Some(entry) = cache.entries.get(path) {
            tx.execute(
                "INSERT OR REPLACE INTO probe_cache(path, data) VALUES (?1, ?2)",
                params![path, serde_json::to_string(entry)?],
            )?;
        }
    }
    // Never loaded (nothing was read): the stored paths, without their data.
    let stored: Vec<String> = if cache.loaded() {
        cache.entries.keys().cloned().collect()
    } else {
        tx.prepare("SELECT path FROM probe_cache")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    let stale = stored.iter().filter(|p| !cache.seen.contains(*p));
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
    let (bytes, ext) = match crate::server::media::probe(audio, false) {
        Ok(p) => p.cover?,
        Err(err) => {
            tracing::warn!("cannot read the cover art of {}: {err:#}", audio.display());
            return None;
        }
    };
    let path = named(ext);
    // Whole or not at all: a cover found here is never extracted again.
    match crate::durable::write_atomic(&path, &bytes) {
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
        // A chapter id of this book not taken yet, by `sql` with `value`.
        let unused = |sql: &str, value: &str| -> rusqlite::Result<Option<String>> {
            let id: Option<String> = tx
                .prepare_cached(sql)?
                .query_row(params![book_id, value], |r| r.get(0))
                .optional()?;
            Ok(id.filter(|id| !used.contains(id)))
        };
        let by_key = "SELECT chapter_id FROM chapter_keys WHERE book_id = ?1 AND key = ?2";
        // Else the same file position in the book (a re-tagged file).
        let by_place = "SELECT chapter_id FROM chapter_keys WHERE book_id = ?1 AND place = ?2";
        let id = match unused(by_key, &c.key)? {
            Some(id) => id,
            None => match unused(by_place, &c.place)? {
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
        tx.prepare_cached("UPDATE chapter_keys SET place = ?2 WHERE chapter_id = ?1")?
            .execute(params![id, c.place])?;
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
        series: book.series.clone(),
        cover,
        chapters,
    })
}
