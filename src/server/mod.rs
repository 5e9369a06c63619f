//! The reference Audiobook Library Service (`earmark serve`): the whole
//! stable contract over axum, with SQLite storage and a scanned library.

pub mod cli;
pub mod demo;
