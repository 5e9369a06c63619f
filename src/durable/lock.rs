//! The one advisory file lock (`flock`): exclusive, held until the last
//! descriptor of the open file is closed, so a crashed process never
//! leaves it behind.

use super::fault::DiskError;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Whether taking a lock waits for its holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Wait until the other process lets go.
    Yes,
    /// Fail at once (`WouldBlock`, [`super::Fault::Locked`]).
    No,
}

/// Takes an exclusive lock on `file`.
pub fn lock(file: &File, wait: Wait) -> io::Result<()> {
    let op = match wait {
        Wait::Yes => libc::LOCK_EX,
        Wait::No => libc::LOCK_EX | libc::LOCK_NB,
    };
    loop {
        // SAFETY: flock on a descriptor the caller owns; no memory is shared.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A lock file (created if missing), locked while this value lives.
#[derive(Debug)]
pub struct LockFile {
    _file: File,
}

impl LockFile {
    pub fn take(path: &Path, wait: Wait) -> Result<LockFile, DiskError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| DiskError::new(dir, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| DiskError::new(path, e))?;
        lock(&file, wait).map_err(|e| DiskError::new(path, e))?;
        Ok(LockFile { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durable::Fault;

    #[test]
    fn a_second_taker_that_does_not_wait_is_told_it_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = LockFile::take(&path, Wait::No).unwrap();
        let e = LockFile::take(&path, Wait::No).unwrap_err();
        assert_eq!(e.fault, Fault::Locked);
        drop(held);
        LockFile::take(&path, Wait::No).unwrap();
    }
}
