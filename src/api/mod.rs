//! The contract client: one HTTP client for the whole stable interface of
//! the Audiobook Library Service, with tolerant decoding of payloads.
//!
//! - `base`: the user's server address normalized to `…/api/v1`.
//! - `paths`: the one table of paths and names the contract does not show.
//! - `bodies`: the request body field names of the writes (per profile).
//! - `wire`: pure, tolerant decoding of payloads and error bodies.
//! - `error`: `ApiError`, one variant per row of the contract's error table.
//! - `client`: `Client`, the async HTTP client.

pub mod base;
pub mod bodies;
pub mod client;
pub mod error;
pub mod paths;
pub mod wire;

pub use base::BaseUrl;
pub use bodies::{BodyFields, PositionUnit};
pub use client::{
    Address, BookQuery, Client, ClientOptions, ItemDecoder, ListPage, Listing, MAX_COVER_BYTES,
    NewBookmark, PageCursor, Pager, ProgressWrite, RawAnswer, SettingsWrite, Shortfall, Speaks,
    StreamRequest, UnknownLengths, WhyUnknown, protocol_words,
};
pub use error::{ApiError, ErrorClass};
pub use paths::Paths;
pub use wire::{
    BatchResult, LoginData, NextPage, ProgressRead, ProgressState, SkippedItem, WriteOutcome,
};

use crate::domain::{ServerId, UserId};

/// A bearer token. `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(t: impl Into<String>) -> Token {
        Token(t.into())
    }
    /// The secret itself, for the `Authorization` header or the token store.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// What authenticated calls carry: the token and the identity the sync
/// writes must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    pub token: Token,
    pub server_id: ServerId,
    pub user_id: UserId,
}
