//! The token at rest: the OS keyring when it answers within a short
//! time-out, else `$XDG_DATA_HOME/earmark/tokens/<profile>.token` (file
//! 0600 in a 0700 directory, written with the one atomic write of
//! `crate::durable`). `EARMARK_TOKEN_STORE=file|keyring` forces one (CI has
//! no D-Bus session).

use crate::api::Token;
use crate::durable::DiskError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

const SERVICE: &str = "earmark";
const KEYRING_TIMEOUT: Duration = Duration::from_secs(2);
pub const STORE_ENV: &str = "EARMARK_TOKEN_STORE";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenStoreKind {
    Keyring,
    File,
}

impl std::fmt::Display for TokenStoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TokenStoreKind::Keyring => "keyring",
            TokenStoreKind::File => "file",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot store the token in {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot store the token: {0}")]
    Write(#[from] DiskError),
    #[error("the OS keyring failed: {0}")]
    Keyring(String),
    #[error("{STORE_ENV} must be \"file\" or \"keyring\", not {0:?}")]
    BadEnv(String),
}

/// Saves, loads and deletes tokens per profile.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
    forced: Option<TokenStoreKind>,
}

/// The result of saving a token.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub kind: TokenStoreKind,
    /// Shown once when the keyring was not available and the file was used.
    pub warning: Option<String>,
}

impl TokenStore {
    /// `dir` is the tokens directory (`Dirs::tokens_dir`).
    pub fn new(dir: PathBuf) -> Result<TokenStore, StoreError> {
        let forced = match std::env::var(STORE_ENV) {
            Ok(v) if v.eq_ignore_ascii_case("file") => Some(TokenStoreKind::File),
            Ok(v) if v.eq_ignore_ascii_case("keyring") => Some(TokenStoreKind::Keyring),
            Ok(v) if v.is_empty() || v.eq_ignore_ascii_case("auto") => None,
            Ok(v) => return Err(StoreError::BadEnv(v)),
            Err(_) => None,
        };
        Ok(TokenStore { dir, forced })
    }

    pub fn with_kind(dir: PathBuf, kind: Option<TokenStoreKind>) -> TokenStore {
        TokenStore { dir, forced: kind }
    }

    pub fn file_path(&self, profile: &str) -> PathBuf {
        self.dir.join(format!("{profile}.token"))
    }

    pub fn save(&self, profile: &str, token: &Token) -> Result<Saved, StoreError> {
        let mut keyring_failed = None;
        if self.forced != Some(TokenStoreKind::File) {
            match keyring_op(profile, KeyringOp::Set(token.expose().to_owned())) {
                Ok(_) => {
                    // A stale file from an earlier fallback must not linger.
                    let _ = std::fs::remove_file(self.file_path(profile));
                    return Ok(Saved {
                        kind: TokenStoreKind::Keyring,
                        warning: None,
                    });
                }
                Err(e) if self.forced == Some(TokenStoreKind::Keyring) => return Err(e),
                Err(e) => keyring_failed = Some(e),
            }
        }
        self.write_file(profile, token)?;
        Ok(Saved {
            kind: TokenStoreKind::File,
            warning: keyring_failed.and_then(|e| self.warn_once(&e)),
        })
    }

    pub fn load(&self, profile: &str, kind: TokenStoreKind) -> Result<Option<Token>, StoreError> {
        match kind {
            TokenStoreKind::Keyring => keyring_op(profile, KeyringOp::Get),
            TokenStoreKind::File => {
                let path = self.file_path(profile);
                match std::fs::read_to_string(&path) {
                    Ok(t) if !t.trim().is_empty() => Ok(Some(Token::new(t.trim()))),
                    Ok(_) => Ok(None),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(source) => Err(StoreError::File { path, source }),
                }
            }
        }
    }

    pub fn delete(&self, profile: &str, kind: TokenStoreKind) -> Result<(), StoreError> {
        let path = self.file_path(profile);
        if let Err(source) = std::fs::remove_file(&path)
            && source.kind() != std::io::ErrorKind::NotFound
        {
            return Err(StoreError::File { path, source });
        }
        if kind == TokenStoreKind::Keyring {
            keyring_op(profile, KeyringOp::Delete)?;
        }
        Ok(())
    }

    fn write_file(&self, profile: &str, token: &Token) -> Result<(), StoreError> {
        create_private_dir(&self.dir).map_err(|e| DiskError::new(&self.dir, e))?;
        Ok(write_private(
            &self.file_path(profile),
            token.expose().as_bytes(),
        )?)
    }

    fn warn_once(&self, cause: &StoreError) -> Option<String> {
        let marker = self.dir.join(".keyring-fallback-warned");
        if marker.exists() {
            return None;
        }
        let _ = write_private(&marker, b"");
        Some(format!(
            "the OS keyring is not available ({cause}); the token is kept in {} (readable only by you)",
            self.dir.display()
        ))
    }
}

/// Create `dir` (and parents) and make it 0700.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` with the one atomic write
/// (`durable::replace`: whole or not at all, fsynced with its directory),
/// made 0600 before it takes its name. Callers keep such files in a
/// directory of [`create_private_dir`] (0700), so no one else can open the
/// temporary file meanwhile either.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), DiskError> {
    crate::durable::replace(path, bytes, |f| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        #[cfg(not(unix))]
        let _ = f;
        Ok(())
    })
    .map(drop)
}

enum KeyringOp {
    Set(String),
    Get,
    Delete,
}

/// Run a keyring call on its own thread with a time-out: a keyring that
/// hangs (a locked collection waiting for a prompt) must not hang earmark.
fn keyring_op(profile: &str, op: KeyringOp) -> Result<Option<Token>, StoreError> {
    let (tx, rx) = mpsc::channel();
    let user = format!("profile:{profile}");
    std::thread::Builder::new()
        .name("keyring".into())
        .spawn(move || {
            let r = (|| -> Result<Option<Token>, keyring::Error> {
                let entry = keyring::Entry::new(SERVICE, &user)?;
                match op {
                    KeyringOp::Set(t) => entry.set_password(&t).map(|_| None),
                    KeyringOp::Get => match entry.get_password() {
                        Ok(t) => Ok(Some(Token::new(t))),
                        Err(keyring::Error::NoEntry) => Ok(None),
                        Err(e) => Err(e),
                    },
                    KeyringOp::Delete => match entry.delete_credential() {
                        Ok(()) | Err(keyring::Error::NoEntry) => Ok(None),
                        Err(e) => Err(e),
                    },
                }
            })();
            let _ = tx.send(r.map_err(|e| e.to_string()));
        })
        .map_err(|e| StoreError::Keyring(e.to_string()))?;
    match rx.recv_timeout(KEYRING_TIMEOUT) {
        Ok(r) => r.map_err(StoreError::Keyring),
        Err(_) => Err(StoreError::Keyring(format!(
            "no answer within {} s",
            KEYRING_TIMEOUT.as_secs()
        ))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn file_store_round_trip_with_private_modes() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("tokens");
        let s = TokenStore::with_kind(dir.clone(), Some(TokenStoreKind::File));
        let saved = s.save("home", &Token::new("tok123")).unwrap();
        assert_eq!(saved.kind, TokenStoreKind::File);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&s.file_path("home")), 0o600);
        s.save("home", &Token::new("tok123")).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
        assert_eq!(
            s.load("home", TokenStoreKind::File).unwrap(),
            Some(Token::new("tok123"))
        );
        s.delete("home", TokenStoreKind::File).unwrap();
        assert_eq!(s.load("home", TokenStoreKind::File).unwrap(), None);
    }
}
