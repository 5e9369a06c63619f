//! Where a profile's session is found: its lock (one session per profile
//! and data directory) and its socket.
//!
//! - the lock: `DATA/earmark/run/PROFILE.lock` (`durable::LockFile`,
//!   held for the session's life; the kernel lets go when it dies);
//! - the socket: `$XDG_RUNTIME_DIR/earmark/PROFILE.sock`, or
//!   `DATA/earmark/run/PROFILE.sock` without a runtime directory. Its
//!   directory is 0700 and the socket 0600.

use crate::config::Profile;
use crate::durable::{Fault, LockFile, Wait};
use std::path::{Path, PathBuf};

/// Where a profile's session lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub profile: String,
    pub socket: PathBuf,
    pub lock: PathBuf,
    /// The data directory the session keeps its place in (its hello says
    /// it, so a socket of another data directory is never mistaken).
    pub data: PathBuf,
    /// The log a detached session writes to.
    pub log: PathBuf,
}

/// A Unix socket's path must fit `sun_path` (108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

impl Place {
    pub fn of(profile: &Profile) -> Place {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute());
        Place::at(&profile.name, &profile.dirs.data, runtime.as_deref())
    }

    /// Pure: the paths for `profile` with `data` and the runtime directory.
    pub fn at(profile: &str, data: &Path, runtime: Option<&Path>) -> Place {
        let run = data.join("run");
        let socket = match runtime {
            Some(r) => r.join("earmark").join(format!("{profile}.sock")),
            None => run.join(format!("{profile}.sock")),
        };
        Place {
            profile: profile.to_owned(),
            socket,
            lock: run.join(format!("{profile}.lock")),
            data: data.to_owned(),
            log: data.join("earmark.log"),
        }
    }

    /// The socket's directory, made (0700) when missing.
    pub fn socket_dir(&self) -> std::io::Result<&Path> {
        let dir = self
            .socket
            .parent()
            .ok_or_else(|| std::io::Error::other("the socket has no directory"))?;
        if self.socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(std::io::Error::other(format!(
                "the socket path {} is longer than a Unix socket's 107 bytes; set XDG_RUNTIME_DIR to a shorter directory",
                self.socket.display()
            )));
        }
        crate::config::tokens::create_private_dir(dir)?;
        Ok(dir)
    }
}

/// This process is the profile's one session while it holds this.
#[derive(Debug)]
pub struct Claim {
    pub place: Place,
    _lock: LockFile,
}

/// Why a session could not be claimed.
#[derive(Debug)]
pub enum NotClaimed {
    /// Another process holds the profile's session.
    Running(Place),
    /// The lock file cannot be made or locked (its words).
    Disk(String),
}

impl Claim {
    /// Takes the profile's session lock without waiting.
    pub fn take(place: Place) -> Result<Claim, NotClaimed> {
        if let Some(dir) = place.lock.parent() {
            crate::config::tokens::create_private_dir(dir)
                .map_err(|e| NotClaimed::Disk(format!("{}: {e}", dir.display())))?;
        }
        match LockFile::take(&place.lock, Wait::No) {
            Ok(lock) => Ok(Claim { place, _lock: lock }),
            Err(e) if e.fault == Fault::Locked => Err(NotClaimed::Running(place)),
            Err(e) => Err(NotClaimed::Disk(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_in_the_runtime_directory_else_beside_the_lock() {
        let data = Path::new("/home/a/.local/share/earmark");
        let p = Place::at("home", data, Some(Path::new("/run/user/1000")));
        assert_eq!(p.socket, Path::new("/run/user/1000/earmark/home.sock"));
        assert_eq!(p.lock, data.join("run/home.lock"));
        let p = Place::at("home", data, None);
        assert_eq!(p.socket, data.join("run/home.sock"));
    }

    #[test]
    fn a_second_claim_finds_the_session_running_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::at("p", dir.path(), Some(dir.path()));
        let first = Claim::take(place.clone()).unwrap();
        assert!(matches!(
            Claim::take(place.clone()),
            Err(NotClaimed::Running(p)) if p == place
        ));
        drop(first);
        Claim::take(place).unwrap();
    }
}
