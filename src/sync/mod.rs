//! Progress sync, behind one front door: [`SyncSession`]. The player and
//! `earmark play` open books, send user intents and read notices through
//! it; everything else here is private.
//!
//! - `session`: the front door (commands in, [`Notice`]s and a published
//!   [`SyncStatus`] out) and the [`EngineLink`] it follows.
//! - `reconciler`: the pure rules (landing, zero guard, ownership,
//!   prompts), where the property tests are. The only place they live.
//! - `worker`: the tokio task that carries the reconciler's decisions out.
//! - `outbox`: the crash-safe journal of queued writes, tagged by scope
//!   (in memory when the file cannot be opened: same rules, not durable).
//! - `cache`: this device's last known place and settings per book.
//! - `engine_bridge`: engine states → reconciler events.
//! - `remote` / `client_remote`: the contract client as the worker sees it.
//! - `journal`: what `earmark sync pending | push | discard` needs.
//! - `listening`: this device's place history and listening statistics
//!   (`read_history` / `read_stats` for `earmark history | stats`).

mod cache;
mod client_remote;
mod engine_bridge;
mod journal;
mod listening;
mod outbox;
mod reconciler;
mod remote;
mod session;
mod worker;

pub use journal::{Discard, Journal, QueuedChange};
pub use listening::{day_name, local_clock, local_day, read_history, read_stats};
pub use session::{
    Choice, EngineLink, Link, LoginReason, Notice, Notices, Playing, QuitSummary, Shown, Source,
    Spot, StartAt, SyncConfig, SyncSession, SyncStatus,
};
