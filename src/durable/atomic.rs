//! The one atomic write: a file is replaced whole or not at all. The new
//! bytes go to a temporary file beside the target, which is fsynced and
//! renamed over it; then the directory is fsynced, so the rename itself
//! survives a power cut. When any step fails (a full disk, a read-only
//! file system) the temporary file is removed and the old file is left
//! exactly as it was.

use super::fault::DiskError;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Replaces `path` with `bytes` (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DiskError> {
    replace(path, bytes, |_| Ok(())).map(drop)
}

/// [`write_atomic`], returning the new file open for reading and
/// appending. `before_rename` runs on it before it takes the target's
/// name (a log locks it there, so no other process can take it first).
pub fn replace(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&File) -> io::Result<()>,
) -> Result<File, DiskError> {
    let dir = parent(path);
    std::fs::create_dir_all(dir).map_err(|e| DiskError::new(dir, e))?;
    let tmp = temp_name(path);
    let written = (|| {
        let mut f = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        before_rename(&f)?;
        std::fs::rename(&tmp, path)?;
        Ok(f)
    })();
    let file = written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DiskError::new(path, e)
    })?;
    // The new file is in place whatever this says: a failure here only
    // means the rename may not survive a power cut.
    if let Err(e) = sync_dir(dir) {
        tracing::warn!("cannot flush the directory {}: {e}", dir.display());
    }
    Ok(file)
}

/// Flushes a directory's entries (a rename or a new file in it) to the
/// disk. A file system that cannot sync directories (EINVAL) is accepted.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A name no other writer uses at the same time (this process's id and a
/// count), hidden, in the target's directory (a rename never crosses file
/// systems).
fn temp_name(path: &Path) -> PathBuf {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    parent(path).join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"old").unwrap();
        let e = replace(&path, b"new", |_| {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        })
        .unwrap_err();
        assert_eq!(e.fault, crate::durable::Fault::DiskFull);
        assert_eq!(e.path, path);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
