//! The library cache on disk, one file per (serverId, userId): every
//! address of the server shares it. The library shows at once on start
//! while a refresh runs. Written with `durable::write_atomic` (a failed
//! write leaves the old cache as it was); a missing, old or damaged cache
//! is simply not used (one from before addresses, version 2, is old).
//!
//! Also what the player says when one of its caches (this one, the
//! covers) cannot be written: one sentence per cache and fault
//! ([`Unwritten`]), the log has every failure.

use crate::domain::locks::lock;
use crate::domain::{Book, BookId, Category, CategoryId, ChapterId, Progress, SeriesRef};
use crate::durable::{DiskError, Fault, write_atomic};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &str = "earmark-library-cache 3";

/// Whose library a cache file holds: a server instance and account.
pub use crate::domain::Account as Scope;

pub fn path(dir: &Path, scope: &Scope) -> PathBuf {
    let name = scope_digest(scope, None, 12);
    dir.join(format!("library-{name}.tsv"))
}

/// The first `bytes` of the SHA-256 of the scope (and `book`), in hex: a
/// cache file's name.
pub fn scope_digest(scope: &Scope, book: Option<&str>, bytes: usize) -> String {
    let mut h = Sha256::new();
    h.update(scope.server_id.as_str().as_bytes());
    h.update([0]);
    h.update(scope.user_id.as_str().as_bytes());
    if let Some(book) = book {
        h.update([0]);
        h.update(book.as_bytes());
    }
    hex::encode(&h.finalize()[..bytes])
}

// The format is one book per line, tab-separated, in title order (so the
// first sort on load is linear). JSON of 100k books took ~10× longer to
// read. Descriptions are not cached: the book screen asks for them.
// Narrators are a list in field 4 (an older cache's single name reads as
// one), series the 12th field (an older cache has 11 fields: no series).
const US: char = '\u{1f}';
const RS: char = '\u{1e}';

/// Escapes `s`; with `lists`, the separators in it stay separators.
fn esc(s: &str, lists: bool, out: &mut String) {
    for c in s.chars() {
        match c {
            US | RS if lists => out.push(c),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            US => out.push_str("\\u"),
            RS => out.push_str("\\v"),
            c => out.push(c),
        }
    }
}

fn unesc(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('u') => out.push(US),
            Some('v') => out.push(RS),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn parse_opt<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() { None } else { s.parse().ok() }
}

fn header(scope: &Scope) -> String {
    let mut h = String::from(MAGIC);
    h.push('\t');
    esc(scope.server_id.as_str(), false, &mut h);
    h.push('\t');
    h.push_str(scope.user_id.as_str());
    h
}

fn encode(b: &Book, out: &mut String) {
    let join =
        |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join(&US.to_string());
    let mut fields: Vec<String> = Vec::with_capacity(12);
    fields.push(b.id.as_str().to_owned());
    fields.push(b.title.clone());
    fields.push(join(&mut b.authors.iter().cloned()));
    fields.push(join(&mut b.narrators.iter().cloned()));
    fields.push(opt(b.duration));
    fields.push(opt(b.chapter_count));
    fields.push(if b.favorite { "1" } else { "0" }.into());
    fields.push(opt(b.added_at));
    fields.push(join(
        &mut b
            .categories
            .iter()
            .map(|c| format!("{}{RS}{}", c.id, c.name)),
    ));
    fields.push(match &b.progress {
        None => String::new(),
        Some(p) => [
            p.chapter_id.to_string(),
            p.position.to_string(),
            opt(p.book_position),
            if p.finished { "1" } else { "0" }.into(),
            opt(p.client_updated_at),
            opt(p.server_updated_at),
        ]
        .join(&US.to_string()),
    });
    fields.push(b.cover_url.clone().unwrap_or_default());
    fields.push(join(&mut b.series.iter().map(|s| {
        let seq = s.sequence.as_ref().map(|q| q.as_str()).unwrap_or("");
        format!("{}{RS}{seq}", s.name)
    })));
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        // Separators inside lists are real separators; escape the parts.
        esc(f, true, out);
    }
    out.push('\n');
}

/// A list field's items; an empty field has none.
fn items(s: &str) -> impl Iterator<Item = &str> {
    s.split(US).filter(move |_| !s.is_empty())
}

fn decode(line: &str) -> Option<Book> {
    let f: Vec<&str> = line.split('\t').collect();
    if !(11..=12).contains(&f.len()) || f[0].is_empty() {
        return None;
    }
    let list = |s: &str| -> Vec<String> { items(s).map(unesc).collect() };
    let categories = items(f[8])
        .filter_map(|c| {
            let (id, name) = c.split_once(RS)?;
            Some(Category {
                id: CategoryId::new(unesc(id)),
                name: unesc(name),
                book_count: None,
            })
        })
        .collect();
    let progress = if f[9].is_empty() {
        None
    } else {
        let p: Vec<&str> = f[9].split(US).collect();
        if p.len() != 6 {
            return None;
        }
        Some(Progress {
            chapter_id: ChapterId::new(unesc(p[0])),
            position: p[1].parse().ok()?,
            book_position: parse_opt(p[2]),
            finished: p[3] == "1",
            client_updated_at: parse_opt(p[4]),
            server_updated_at: parse_opt(p[5]),
        })
    };
    Some(Book {
        id: BookId::new(unesc(f[0])),
        title: unesc(f[1]),
        authors: list(f[2]),
        narrators: list(f[3]),
        series: items(f.get(11).unwrap_or(&""))
            .map(|one| {
                let (name, seq) = one.split_once(RS)?;
                SeriesRef::new(&unesc(name), Some(&unesc(seq)))
            })
            .collect::<Option<Vec<_>>>()?,
        description: None,
        duration: parse_opt(f[4]),
        chapter_count: parse_opt(f[5]),
        categories,
        cover_url: Some(unesc(f[10])).filter(|s| !s.is_empty()),
        favorite: f[6] == "1",
        added_at: parse_opt(f[7]),
        progress,
    })
}

/// The cached books for `scope`, if a valid cache exists.
pub fn load(dir: &Path, scope: &Scope) -> Option<Vec<Book>> {
    let text = std::fs::read_to_string(path(dir, scope)).ok()?;
    let mut lines = text.lines();
    if lines.next()? != header(scope) {
        return None;
    }
    lines.map(decode).collect()
}

/// The first `n` books of the cache (title order), read without touching
/// the rest of the file: enough for the first frame while the rest loads.
pub fn load_head(dir: &Path, scope: &Scope, n: usize) -> Option<Vec<Book>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path(dir, scope)).ok()?;
    let mut lines = std::io::BufReader::with_capacity(16 * 1024, file).lines();
    if lines.next()?.ok()? != header(scope) {
        return None;
    }
    lines.take(n).map(|l| decode(&l.ok()?)).collect()
}

/// Writes the cache atomically, in title order.
pub fn save(dir: &Path, scope: &Scope, books: &[Book]) -> Result<(), DiskError> {
    let mut order: Vec<&Book> = books.iter().collect();
    order.sort_by_cached_key(|b| b.title.to_lowercase());
    let mut out = header(scope);
    out.push('\n');
    for b in order {
        encode(b, &mut out);
    }
    write_atomic(&path(dir, scope), out.as_bytes())
}

/// A cache of the player's on this device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheFile {
    Library,
    Cover,
}

impl CacheFile {
    /// What the user is told when it could not be written (the old file
    /// is left as it was), in one sentence.
    pub fn not_written(self, e: &DiskError) -> String {
        match self {
            CacheFile::Library => format!(
                "The library could not be cached on this device ({e}); the next start shows the copy cached before, or waits for the server."
            ),
            CacheFile::Cover => format!(
                "A cover could not be cached on this device ({e}); covers are fetched from the server each time and do not show offline."
            ),
        }
    }
}

/// The caches that could not be written, by fault: each is told once.
#[derive(Debug, Default)]
pub struct Unwritten(Mutex<Vec<(CacheFile, Fault)>>);

impl Unwritten {
    /// True the first time `file` fails with `fault`.
    pub fn first(&self, file: CacheFile, fault: &Fault) -> bool {
        let mut told = lock(&self.0);
        if told.iter().any(|(f, why)| *f == file && why == fault) {
            return false;
        }
        told.push((file, fault.clone()));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ServerId, UserId};

    #[test]
    fn round_trips_per_scope() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope {
            server_id: ServerId::new("s1"),
            user_id: UserId::from(7),
        };
        let books = vec![
            Book {
                id: BookId::new("b"),
                title: "三体\twith\ttabs\nand \\ and \u{1f}".into(),
                authors: vec!["A".into(), "B\u{1e}".into()],
                narrators: vec!["N".into(), "M".into()],
                series: vec![
                    SeriesRef::new("S\t1", Some("#1.5")).unwrap(),
                    SeriesRef::new("T", None).unwrap(),
                ],
                duration: Some(12.5),
                chapter_count: Some(3),
                favorite: true,
                added_at: Some(5),
                categories: vec![Category {
                    id: CategoryId::new("c1"),
                    name: "Sea\tStories".into(),
                    book_count: None,
                }],
                cover_url: Some("/c.jpg".into()),
                progress: Some(Progress {
                    chapter_id: ChapterId::new("ch\t1"),
                    position: 1.5,
                    book_position: None,
                    finished: false,
                    client_updated_at: Some(1),
                    server_updated_at: None,
                }),
                description: None,
            },
            Book {
                id: BookId::new("a"),
                title: "Alpha".into(),
                ..Book::default()
            },
        ];
        save(dir.path(), &scope, &books).unwrap();
        let loaded = load(dir.path(), &scope).unwrap();
        assert_eq!(loaded[0].title, "Alpha", "stored in title order");
        assert_eq!(loaded[1], books[0]);
        assert_eq!(load_head(dir.path(), &scope, 1).unwrap(), loaded[..1]);
        let other = Scope {
            user_id: UserId::from(8),
            ..scope.clone()
        };
        assert!(load(dir.path(), &other).is_none());
        // A cache written before series (11 fields, one narrator) still loads.
        let old = format!("{}\nb\tOld\tA\tNarr, Ator\t\t\t0\t\t\t\t\n", header(&scope));
        std::fs::write(path(dir.path(), &scope), old).unwrap();
        let loaded = load(dir.path(), &scope).unwrap();
        assert_eq!(loaded[0].narrators, ["Narr, Ator"]);
        assert!(loaded[0].series.is_empty());
        std::fs::write(path(dir.path(), &scope), b"{garbage").unwrap();
        assert!(load(dir.path(), &scope).is_none());
    }

    #[test]
    fn each_cache_that_cannot_be_written_is_told_once_per_fault() {
        let told = Unwritten::default();
        assert!(told.first(CacheFile::Library, &Fault::DiskFull));
        assert!(!told.first(CacheFile::Library, &Fault::DiskFull));
        assert!(told.first(CacheFile::Cover, &Fault::DiskFull));
        assert!(told.first(CacheFile::Library, &Fault::ReadOnly));
        let e = DiskError::new(
            "/c/library-1.tsv",
            std::io::Error::from_raw_os_error(libc::EROFS),
        );
        assert_eq!(
            CacheFile::Library.not_written(&e),
            "The library could not be cached on this device (the file system is read-only: cannot write /c/library-1.tsv); the next start shows the copy cached before, or waits for the server."
        );
    }

    #[test]
    fn a_cache_that_cannot_be_written_says_where_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the cache's directory should be.
        let not_a_dir = dir.path().join("cache");
        std::fs::write(&not_a_dir, b"x").unwrap();
        let scope = Scope {
            server_id: ServerId::new("s1"),
            user_id: UserId::from(7),
        };
        let e = save(&not_a_dir, &scope, &[Book::default()]).unwrap_err();
        assert_eq!(e.path, not_a_dir);
        assert_eq!(std::fs::read(&not_a_dir).unwrap(), b"x");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
