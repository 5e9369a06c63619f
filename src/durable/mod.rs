//! What keeps data on this device whole across a crash, a power cut, a
//! full disk or a read-only one: the one copy of each durable mechanism,
//! used by everything that writes state (`config`, `sync`, `offline`).
//!
//! - `atomic`: [`write_atomic`], a file replaced whole (temporary file,
//!   fsync, rename, fsync of the directory) or not at all;
//! - `lock`: [`lock`] and [`LockFile`], the one `flock`;
//! - `log`: [`RecordLog`], the crash-safe record log (magic, length,
//!   CRC32, JSON payload; a torn tail is cut, a damaged record skipped and
//!   counted), in memory when its file cannot take a write;
//! - `fault`: what a failed write means to the user ([`Fault`]: the disk
//!   is full, read-only, no permission, locked) and [`DiskError`].
//!
//! Nothing here knows what the records or files mean; it imports nothing
//! of earmark's.

mod atomic;
mod fault;
mod lock;
mod log;

pub use atomic::{replace, sync_dir, write_atomic};
pub use fault::{DiskError, Fault};
pub use lock::{LockFile, Wait, lock};
pub use log::{Durability, HEADER, MAX_PAYLOAD, RecordLog, Recovery, encode, frames};
