//! The dialect matrix (issue 16): a test server whose answers are picked
//! from variants along each axis the contract leaves "not shown", driven
//! over real HTTP on 127.0.0.1 through `earmark::api::Client` and through
//! the `earmark` binary, with proptest choosing the combinations; plus one
//! named test per finding of issue 16 that the api layer owns.

mod cli;
mod dialect;
mod findings;
mod findings_lists;
mod matrix;
mod server;
