//! Integration tests of the contract client, the session store and the CLI:
//! real HTTP on 127.0.0.1 against in-test servers with other payload
//! families, and against the reference server.

mod addresses;
mod covers;
mod errors;
mod families;
mod h2;
#[path = "../harness/mod.rs"]
mod harness;
mod redirect;
mod reference;
mod security;
mod shell;
mod streams;
mod support;
