//! Private at rest: the data dir is 0700 and the database files 0600, so
//! password hashes and tokens are readable by the server's user only.

use anyhow::Context;
use std::path::Path;

pub const DIR_MODE: u32 = 0o700;
pub const FILE_MODE: u32 = 0o600;

/// Creates `path` as an empty 0600 file unless it exists.
pub fn create_private_file(path: &Path) -> anyhow::Result<()> {
    if path.exists() {
        return restrict(path, FILE_MODE, false);
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, FILE_MODE);
    options
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    restrict(path, FILE_MODE, true)
}

/// Sets `mode` when the group or others have any access, with a notice
/// (an installation from before this rule) unless `fresh` (just created).
#[cfg(unix)]
pub fn restrict(path: &Path, mode: u32, fresh: bool) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let current = meta.permissions().mode() & 0o777;
    if current & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot make {} private", path.display()))?;
    if fresh {
        return Ok(());
    }
    tracing::warn!(
        "made {} private: its mode was {current:04o}, now {mode:04o} (it holds password hashes and tokens)",
        path.display()
    );
    Ok(())
}

#[cfg(not(unix))]
pub fn restrict(_path: &Path, _mode: u32, _fresh: bool) -> anyhow::Result<()> {
    Ok(())
}
