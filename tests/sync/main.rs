//! Sync scenarios against the real reference server over real HTTP, with a
//! loopback proxy for outages and request counting (issue 5, tests 1–8).

mod addresses;
mod caches_disk;
mod child;
mod cli;
mod disk;
mod downloads;
mod export;
mod flapping;
mod gate;
mod h2;
#[path = "../harness/mod.rs"]
mod harness;
mod listening_cli;
mod long_session;
mod offline_open;
mod play;
mod proxy;
mod queued;
mod rule7;
mod scenarios;
mod small_disk;
mod startup;
mod stops;
mod support;
mod throttled;
mod up_next;
