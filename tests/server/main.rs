//! The reference server over real HTTP on 127.0.0.1 (docs/contract.md).

mod auth;
mod books;
mod cli;
mod common;
mod concurrency;
mod durations;
#[path = "../harness/mod.rs"]
mod harness;
mod library;
mod play;
mod private;
mod progress;
mod rescan;
mod scale;
mod security;
mod series;
mod social;
mod write_log;
