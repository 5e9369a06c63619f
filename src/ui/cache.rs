//! The library cache on disk, one file per (address, serverId, userId), so
//! the library shows at once on start while a refresh runs. Written
//! atomically (temp file + rename); a missing, old or damaged cache is
//! simply not used.

use crate::domain::{Book, ServerId, UserId};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const VERSION: u32 = 1;

/// Whose library a cache file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    pub address: String,
    pub server_id: ServerId,
    pub user_id: UserId,
}

#[derive(Serialize, Deserialize)]
struct File<B> {
    version: u32,
    scope: Scope,
    books: B,
}

pub fn path(dir: &Path, scope: &Scope) -> PathBuf {
    let mut h = Sha256::new();
    h.update(scope.address.as_bytes());
    h.update([0]);
    h.update(scope.server_id.as_str().as_bytes());
    h.update([0]);
    h.update(scope.user_id.0.to_le_bytes());
    let name = hex::encode(&h.finalize()[..12]);
    dir.join(format!("library-{name}.json"))
}

/// The cached books for `scope`, if a valid cache exists.
pub fn load(dir: &Path, scope: &Scope) -> Option<Vec<Book>> {
    let bytes = std::fs::read(path(dir, scope)).ok()?;
    let file: File<Vec<Book>> = serde_json::from_slice(&bytes).ok()?;
    (file.version == VERSION && &file.scope == scope).then_some(file.books)
}

pub fn save(dir: &Path, scope: &Scope, books: &[Book]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let target = path(dir, scope);
    let file = File {
        version: VERSION,
        scope: scope.clone(),
        books,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        serde_json::to_writer(&mut w, &file)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::BookId;

    #[test]
    fn round_trips_per_scope() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope {
            address: "http://a/api/v1".into(),
            server_id: ServerId::new("s1"),
            user_id: UserId(7),
        };
        let books = vec![Book {
            id: BookId::new("b"),
            title: "三体".into(),
            ..Book::default()
        }];
        save(dir.path(), &scope, &books).unwrap();
        assert_eq!(load(dir.path(), &scope).unwrap(), books);
        let other = Scope {
            user_id: UserId(8),
            ..scope.clone()
        };
        assert!(load(dir.path(), &other).is_none());
        std::fs::write(path(dir.path(), &scope), b"{garbage").unwrap();
        assert!(load(dir.path(), &scope).is_none());
    }
}
