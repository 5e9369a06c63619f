//! Progress sync: the pure reconciler (what to report, what to show), the
//! durable outbox (writes survive crashes and outages), a small cache of
//! this device's progress, and the worker that reports to the server.
//!
//! - `reconciler`: pure rules (landing, zero guard, ownership, prompts).
//! - `outbox`: the crash-safe journal of queued writes, tagged by scope.
//! - `worker`: the tokio task; `handle`: its [`handle::SyncHandle`] (commands
//!   in, status and notices out) for the UI and `earmark play`.
//! - `remote` / `client_remote`: what the worker needs from the server.
//! - `engine_bridge`: engine states → reconciler events.
//! - `headless`: sync for `earmark play`; `cli`: `earmark sync …`.

pub mod cache;
pub mod cli;
pub mod client_remote;
pub mod engine_bridge;
pub mod handle;
pub mod headless;
pub mod outbox;
pub mod reconciler;
pub mod remote;
pub mod worker;
