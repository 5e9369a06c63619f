//! The dialect matrix (issues 16 and 20): a test server whose answers are
//! picked from variants along each axis the contract leaves "not shown"
//! (envelopes, ids, paging and its numbering, error shapes and codes inside
//! URIs, refusals on the stream, progress shapes), driven over real HTTP on
//! 127.0.0.1 through `earmark::api::Client` and through the `earmark`
//! binary, with proptest choosing the combinations; one named test per
//! finding the api layer owns; and every exit code through each path that
//! can raise it; and a server that says "slow down" (`throttle`).

mod answers;
mod cli;
mod dialect;
mod exit_codes;
mod findings;
mod findings_lists;
mod findings_units;
#[path = "../harness/mod.rs"]
mod harness;
mod matrix;
mod principles;
mod server;
mod throttle;
