//! The player's runtime: wires the pure terminal UI (`crate::ui`) to the
//! contract client, the config and session, the audio engine and sync's
//! front door. The UI thread never waits here: [`Live`] answers effects
//! through channels.
//!
//! - `launch`: `earmark` (and `earmark demo`, from `crate::demo`) open the
//!   player; every thread is started from there (see its header and
//!   docs/ui.md).
//! - `live`: the backends and the little state they share.
//! - `api`: effects that are plain API calls (login, library, book, …).
//! - `playback`: engine commands and the engine's state for the UI.
//! - `notices`: sync's notices and status in the player's words.
//! - `cache`: the library cache shown before the server answers.
//! - `covers`: cover art fetched, cached on disk, decoded and encoded for
//!   the terminal (the book screen, MPRIS).
//! - `offline`: downloaded books (local files for the engine, the book
//!   screen from a snapshot, the download effect).
//! - `sound`: each book's boost, normalisation and skip silence, kept here.
//! - `mpris`: media keys and desktop widgets over D-Bus (Linux, `mpris`).

mod api;
pub mod cache;
pub mod covers;
mod launch;
mod live;
#[cfg(all(feature = "mpris", target_os = "linux"))]
mod mpris;
mod notices;
mod offline;
mod playback;
mod sound;

pub use launch::{open, run, run_terminal};
pub use live::{Live, session_info};
