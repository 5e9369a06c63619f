//! Progress sync, behind one front door: [`SyncSession`]. The playback
//! owner (`crate::playback`, for the player and `earmark play`) opens
//! books, sends user intents and reads notices through it; `earmark sync`
//! drives it for the journal. [`Records`] is its read-only view of what it
//! keeps on this device. Everything else here is private.
//!
//! - `session`: the front door (commands in, the session's events and a published
//!   [`SyncStatus`] out), given the [`EngineLink`] it follows and asks
//!   ([`EngineAsk`]: sync never commands the engine itself).
//! - `reconciler`: the pure rules (landing, zero guard, ownership,
//!   prompts, the server's place read again after a pause or a
//!   reconnect), where the property tests are. The only place they live.
//! - `worker`: the tokio task that carries the reconciler's decisions out.
//! - `outbox`: the crash-safe journal of queued writes, tagged by scope
//!   (in memory when the file cannot be opened: same rules, not durable).
//! - `cache`: this device's last known place and settings per book.
//! - `engine_bridge`: the engine as sync sees it ([`EngineLink`], what it
//!   asks of it, [`EngineAsk`]) and its states → reconciler events.
//! - `remote` / `client_remote`: the contract client as the worker sees it.
//! - `records`: the read-only view: queued changes (`earmark sync
//!   pending`), place history and statistics (`earmark history | stats`),
//!   as public types designed for the CLI.
//! - `listening`: this device's place history and listening statistics.

mod cache;
mod client_remote;
mod engine_bridge;
mod listening;
mod outbox;
mod reconciler;
mod records;
mod remote;
mod session;
mod worker;

pub use listening::{day_name, local_clock, local_day};
pub use records::{Change, ChangeScope, Pending, PendingChange, Records, Refusals};
pub use session::{
    Choice, EngineAsk, EngineLink, Heard, JournalOp, Link, LoadId, Notices, Playing, QuitSummary,
    Shown, Source, Spot, StartAt, SyncConfig, SyncNews, SyncSession, SyncStatus,
};
