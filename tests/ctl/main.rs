//! `earmark ctl` and detached sessions through the real binary, against
//! the reference server: a session with no terminal answers every command
//! and keeps the server's place, a player attaches to it in a real
//! pseudo-terminal, a lost terminal or SIGTERM never loses the place, and
//! bad clients (malformed lines, a line over 64 KiB, one that never reads,
//! 100 at once, another uid) never stop it.

mod attach;
mod bad_input;
mod common;
mod session;
// The shared harness (a home logged in with the binary, the small
// library) and the pty player of tests/ui, shared as they are.
#[path = "../harness/mod.rs"]
mod harness;
#[path = "../ui/pty.rs"]
#[allow(dead_code)]
mod pty;
