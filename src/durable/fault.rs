//! What a failed write means to the user. The kinds a user can act on
//! (free some space, make the directory writable, quit the other earmark)
//! are told apart; anything else keeps the system's message.

use std::io;
use std::path::{Path, PathBuf};

/// Why a file could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// No space left (ENOSPC), over the quota (EDQUOT), or past the file
    /// size this process may write (EFBIG).
    #[error("the disk is full")]
    DiskFull,
    /// The file system is mounted read-only (EROFS).
    #[error("the file system is read-only")]
    ReadOnly,
    /// No permission (EACCES, EPERM).
    #[error("no permission to write there")]
    NoPermission,
    /// Another process holds the file's lock (a non-blocking `flock`).
    #[error("another earmark is using it")]
    Locked,
    /// Anything else, with the system's message.
    #[error("{0}")]
    Other(String),
}

impl Fault {
    pub fn of(e: &io::Error) -> Fault {
        match e.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => Fault::DiskFull,
            Some(libc::EROFS) => Fault::ReadOnly,
            Some(libc::EACCES | libc::EPERM) => Fault::NoPermission,
            Some(libc::EWOULDBLOCK) => Fault::Locked,
            _ => Fault::Other(e.to_string()),
        }
    }
}

/// A file that could not be written (or opened to be written), and why.
#[derive(Debug, thiserror::Error)]
#[error("{}", said(.path, .fault))]
pub struct DiskError {
    pub path: PathBuf,
    pub fault: Fault,
    pub source: io::Error,
}

impl DiskError {
    pub fn new(path: impl AsRef<Path>, source: io::Error) -> DiskError {
        DiskError {
            path: path.as_ref().to_owned(),
            fault: Fault::of(&source),
            source,
        }
    }
}

fn said(path: &Path, fault: &Fault) -> String {
    let path = path.display();
    match fault {
        Fault::DiskFull | Fault::ReadOnly => format!("{fault}: cannot write {path}"),
        Fault::NoPermission => format!("no permission to write {path}"),
        Fault::Locked => format!("{path} is in use by another earmark"),
        Fault::Other(m) => format!("{path}: {m}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_a_user_can_act_on_are_told_apart() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(Fault::of(&e(libc::ENOSPC)), Fault::DiskFull);
        assert_eq!(Fault::of(&e(libc::EDQUOT)), Fault::DiskFull);
        assert_eq!(Fault::of(&e(libc::EROFS)), Fault::ReadOnly);
        assert_eq!(Fault::of(&e(libc::EACCES)), Fault::NoPermission);
        assert!(matches!(Fault::of(&e(libc::EIO)), Fault::Other(_)));
        let d = DiskError::new("/d/outbox.journal", e(libc::ENOSPC));
        assert_eq!(
            d.to_string(),
            "the disk is full: cannot write /d/outbox.journal"
        );
    }
}
