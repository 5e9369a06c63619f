//! A small real disk for the fault tests: a tmpfs of a few hundred kB
//! mounted at a test's directory, filled to the last byte or remounted
//! read-only, and unmounted when dropped. Mounting needs root (or
//! CAP_SYS_ADMIN); where it is refused, [`SmallDisk::mount`] says on stderr
//! that the test was skipped and why.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub struct SmallDisk {
    at: PathBuf,
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

impl SmallDisk {
    /// A tmpfs of `bytes` at `at` (created). `None` where this machine does
    /// not let the test mount one.
    pub fn mount(at: &Path, bytes: u64, test: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(at).unwrap();
        let options = CString::new(format!("size={bytes},mode=0755")).unwrap();
        // SAFETY: every pointer is a NUL-terminated string that outlives the call.
        let rc = unsafe {
            libc::mount(
                c"earmark-test".as_ptr(),
                c_path(at).as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        if rc != 0 {
            eprintln!(
                "{test}: SKIPPED: cannot mount a small tmpfs here ({}); run the tests as root (or with CAP_SYS_ADMIN) to try a full or read-only disk",
                std::io::Error::last_os_error()
            );
            return None;
        }
        Some(SmallDisk { at: at.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.at
    }

    /// Takes every free byte with one file (`filler`), and returns it.
    pub fn fill(&self) -> PathBuf {
        let path = self.at.join("filler");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        // Whole pages first, then byte by byte into the last one.
        for size in [64 * 1024, 4096, 1] {
            let chunk = vec![0xa5u8; size];
            loop {
                match f.write(&chunk) {
                    Ok(n) if n > 0 => {}
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                    Err(e) => panic!("filling {}: {e}", self.at.display()),
                }
            }
        }
        assert_eq!(free_bytes(&self.at), 0, "the disk is full");
        path
    }

    /// Gives the filler's space back.
    pub fn free(&self) {
        std::fs::remove_file(self.at.join("filler")).unwrap();
    }

    /// Remounts the disk read-only (as root, `chmod` would not stop a write).
    pub fn read_only(&self) {
        // SAFETY: as in `mount`.
        let rc = unsafe {
            libc::mount(
                std::ptr::null(),
                c_path(&self.at).as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_RDONLY,
                std::ptr::null(),
            )
        };
        assert_eq!(
            rc,
            0,
            "remount read-only: {}",
            std::io::Error::last_os_error()
        );
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // SAFETY: as in `mount`. Lazily: a process still using it lets go later.
        unsafe { libc::umount2(c_path(&self.at).as_ptr(), libc::MNT_DETACH) };
    }
}

/// Bytes still free on `dir`'s file system.
pub fn free_bytes(dir: &Path) -> u64 {
    // SAFETY: statvfs writes only into the struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c_path(dir).as_ptr(), &mut st) }, 0);
    st.f_bavail as u64 * st.f_frsize as u64
}
