//! earmark: a keyboard-driven terminal audiobook player, and the reference
//! Audiobook Library Service it is tested against.
//!
//! Layers (imports point down only):
//! - on top: `cli` (the entry point; the argument parser's types stop
//!   there), `commands` (the scriptable CLI), `runtime` (the player's
//!   wiring), `demo` (server + player);
//! - `ctl`: the control socket, `earmark ctl`, detached and attached
//!   sessions (a client of `playback`, used by `commands` and `runtime`);
//! - `playback`: the one owner of a playback session (engine, sync's
//!   session, each book's settings, every stop), for the player and
//!   `earmark play`;
//! - `offline` (downloaded books); `sync`, behind one front door;
//! - `ui` (the pure terminal player), `player`, `api`, `config`, `server`;
//! - `domain`, and `durable` (atomic writes, the file lock, the record log).

pub mod api;
pub mod cli;
pub mod commands;
pub mod config;
pub mod ctl;
pub mod demo;
pub mod domain;
pub mod durable;
pub mod offline;
pub mod playback;
pub mod player;
pub mod runtime;
pub mod server;
pub mod sync;
pub mod ui;
