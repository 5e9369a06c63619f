//! earmark: a keyboard-driven terminal audiobook player, and the reference
//! Audiobook Library Service it is tested against.

pub mod api;
pub mod cli;
pub mod commands;
pub mod config;
pub mod domain;
pub mod player;
pub mod server;
pub mod sync;
pub mod ui;
