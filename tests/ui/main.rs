//! The terminal player's integration tests: snapshots of every screen,
//! rendering at every small size, the reducer's flows, and (with the
//! reference server) end to end in a real pseudo-terminal.

mod arrival;
mod backend;
mod bench;
mod browse;
mod covers;
mod downloads;
mod driver;
mod e2e;
mod fixtures;
mod flows;
#[path = "../sync/gate.rs"]
mod gate;
mod history;
mod listening_backend;
#[cfg(all(feature = "mpris", target_os = "linux"))]
mod mpris;
mod resume;
mod rewind;
mod search;
mod sizes;
mod sleep;
mod snapshots;
mod sound;
mod stops;
