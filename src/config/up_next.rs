//! The "play next" list on disk: one file per server instance and account
//! (`up-next/<hash>.json` in the data directory; every address of the same
//! server shares it), replaced whole by the one atomic write under the one
//! lock (`crate::durable`), so the player and `earmark play --up-next`
//! never interleave their edits. The file names its server and account;
//! one that is not JSON of this shape is moved aside (`.damaged`), said,
//! and never overwritten unseen.

use crate::domain::{Account, Queued};
use crate::durable::{LockFile, Wait, write_atomic};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    server_id: String,
    user_id: String,
    books: Vec<Queued>,
}

/// The list of one account.
#[derive(Debug, Clone)]
pub struct UpNextStore {
    path: PathBuf,
    account: Account,
}

impl UpNextStore {
    pub fn of(data_dir: &Path, account: &Account) -> UpNextStore {
        let key = Sha256::digest(format!("{}\n{}", account.server_id, account.user_id));
        let name = format!("{}.json", hex::encode(&key[..10]));
        UpNextStore {
            path: data_dir.join("up-next").join(name),
            account: account.clone(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The list (empty when there is no file). A damaged file is moved
    /// aside and the error says so and where to.
    pub fn load(&self) -> Result<Vec<Queued>, String> {
        let bytes = match std::fs::read(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            read => read.map_err(|e| format!("cannot read {}: {e}", self.path.display()))?,
        };
        let file: File =
            serde_json::from_slice(&bytes).map_err(|e| self.move_aside(&e.to_string()))?;
        if file.server_id != self.account.server_id.as_str()
            || file.user_id != self.account.user_id.as_str()
        {
            return Err(self.move_aside("it belongs to another server or account"));
        }
        Ok(file.books)
    }

    /// Replaces the list.
    pub fn save(&self, books: &[Queued]) -> Result<(), String> {
        let lock_path = self.path.with_extension("lock");
        let _lock = LockFile::take(&lock_path, Wait::Yes).map_err(|e| e.to_string())?;
        let file = File {
            server_id: self.account.server_id.to_string(),
            user_id: self.account.user_id.to_string(),
            books: books.to_vec(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
        write_atomic(&self.path, &bytes).map_err(|e| e.to_string())
    }

    fn move_aside(&self, why: &str) -> String {
        let aside = self.path.with_extension("json.damaged");
        tracing::warn!("{} is not readable ({why})", self.path.display());
        match std::fs::rename(&self.path, &aside) {
            Ok(()) => format!(
                "The up next list could not be read ({why}); it was moved to {}.",
                aside.display()
            ),
            Err(e) => format!(
                "The up next list {} could not be read ({why}) nor moved aside: {e}",
                self.path.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BookId, ServerId, UserId};

    fn account(server: &str, user: &str) -> Account {
        Account {
            server_id: ServerId::new(server),
            user_id: UserId::parse(user).unwrap(),
        }
    }

    fn q(id: &str) -> Queued {
        Queued {
            id: BookId::new(id),
            title: format!("Title {id}"),
        }
    }

    #[test]
    fn each_account_of_each_server_keeps_its_own_list() {
        let dir = tempfile::tempdir().unwrap();
        let alice = UpNextStore::of(dir.path(), &account("srv-1", "1"));
        let bob = UpNextStore::of(dir.path(), &account("srv-1", "2"));
        let other = UpNextStore::of(dir.path(), &account("srv-2", "1"));
        assert_eq!(alice.load().unwrap(), vec![]);
        alice.save(&[q("a"), q("b")]).unwrap();
        bob.save(&[q("c")]).unwrap();
        assert_eq!(alice.load().unwrap(), vec![q("a"), q("b")]);
        assert_eq!(bob.load().unwrap(), vec![q("c")]);
        assert_eq!(other.load().unwrap(), vec![]);
    }

    #[test]
    fn a_damaged_file_is_moved_aside_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let s = UpNextStore::of(dir.path(), &account("srv", "1"));
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        std::fs::write(s.path(), b"{not json").unwrap();
        let e = s.load().unwrap_err();
        assert!(e.contains("moved to") && e.contains(".damaged"), "{e}");
        assert_eq!(s.load().unwrap(), vec![], "a fresh list after");
        assert!(s.path().with_extension("json.damaged").exists());
    }
}
