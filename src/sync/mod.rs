//! Progress sync: the pure reconciler (what to report, what to show), the
//! durable outbox (writes survive crashes and outages), a small cache of
//! this device's progress, and the worker that reports to the server.

pub mod cache;
pub mod outbox;
pub mod reconciler;
pub mod remote;
pub mod worker;
