//! The player's runtime: a thin adapter between the pure terminal UI
//! (`crate::ui`) and the playback owner (`crate::playback`: the engine,
//! sync's session, each book's settings, every stop) and the contract
//! client. The UI thread never waits here: [`Live`] answers effects
//! through channels.
//!
//! Modules depend on each other one way (no circles):
//! - `launch`: `earmark` (and `earmark demo`, from `crate::demo`) open the
//!   player; it starts the terminal's threads and [`Live::start`], which
//!   starts every backend thread and task (see docs/ui.md).
//! - `live`: the [`Backends`](crate::ui::event_loop::Backends) the UI calls:
//!   `Effect::Engine` is one call to the owner, effects that are API calls
//!   one task each.
//! - `api`: effects that are plain API calls (login, library, book, …).
//! - `offline`: downloaded books (markers, the book screen from a
//!   snapshot, the download effect).
//! - `covers`: cover art fetched, cached on disk, decoded and encoded for
//!   the terminal (the book screen, MPRIS).
//! - `playback`: the session's snapshot and events, handed to the player;
//! - `notices`: the address in use.
//! - `mpris`: media keys and desktop widgets over D-Bus (Linux, `mpris`),
//!   one more client of the session owner.
//! - `shared`: what the tasks share (UI sender, login, the owner's handle);
//!   it depends on none of the above.
//! - `cache`: the library cache shown before the server answers.

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
mod shared;

pub use launch::{open, run, run_terminal};
pub use live::Live;
pub use shared::session_info;
