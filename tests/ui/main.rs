//! The terminal player's integration tests: snapshots of every screen,
//! rendering at every small size, the reducer's flows, and (with the
//! reference server) end to end in a real pseudo-terminal.

mod addresses;
mod arrival;
mod backend;
mod bench;
mod browse;
mod covers;
mod cursor;
mod downloads;
mod driver;
mod e2e;
mod e2e_cursor;
mod e2e_owner;
mod e2e_return;
mod e2e_rule7;
mod e2e_session;
mod e2e_up_next;
mod fixtures;
mod flows;
#[path = "../sync/gate.rs"]
mod gate;
#[path = "../harness/mod.rs"]
mod harness;
mod history;
mod listening_backend;
#[cfg(all(feature = "mpris", target_os = "linux"))]
mod mpris;
mod pty;
mod resume;
mod rewind;
mod round_trips;
mod rule7;
mod search;
mod sizes;
mod sleep;
mod snapshots;
mod snapshots_accessible;
mod snapshots_scripts;
mod sound;
mod stops;
mod up_next;
mod up_next_follow;
mod up_next_live;
