//! Set-up shared by the test binaries, each of which includes it with
//! `#[path = "../harness/mod.rs"] mod harness;`: an isolated home for the
//! `earmark` binary ([`Home`]), a home logged in to a reference server
//! with its books ([`logged_in`]) or with the id of the book a test wants
//! ([`log_in_and_find`]), a book by its title ([`titled`]), and API clients logged in or holding a made-up token.

// Each binary uses its part.
#![allow(dead_code)]

mod home;
mod library;
mod login;
pub mod proxy;
mod server;

#[allow(unused_imports)]
pub use home::{Home, text};
#[allow(unused_imports)]
pub use library::{library, wav};
#[allow(unused_imports)]
pub use login::{
    authed, client_logged_in, direct, log_in_and_find, logged_in, logged_in_at, titled,
};
#[allow(unused_imports)]
pub use server::{TestServer, TestSession};
