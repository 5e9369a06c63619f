//! Why playback or sync stopped: one vocabulary for the player, `earmark
//! play` and every command's exit code (docs/cli.md, "Exit codes"). The
//! reason is decided in one place (`crate::playback::stop`, from the API's
//! error classes and the engine's error kinds); this is only its name.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why playback, sync or a request stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StopReason {
    /// 403 `license_required`: playback and all sync stop until the
    /// server's license is valid again.
    License,
    /// 401, or not logged in: log in again.
    Login,
    /// 403 without the license code: no permission for this.
    Forbidden,
    /// The identity scope (409 `listening_scope_mismatch`, 428, 400
    /// `listening_scope_invalid`): log in again, or fix the profile's
    /// `identity_header_prefix`.
    Scope,
    /// 404: the book or chapter does not exist (any more).
    NotFound,
    /// Unreachable, time-out, 5xx, 429, or an answer that is not the API's
    /// (an HTML page, an empty or malformed body, a stream that is not audio).
    Network,
    /// The server refused the request itself (400, 413, …).
    Rejected,
    /// This device: audio that cannot be decoded, no output, a file that
    /// cannot be written.
    Local,
}

impl StopReason {
    /// The exit code of a command that stops for this reason (docs/cli.md).
    pub const fn exit_code(self) -> u8 {
        match self {
            StopReason::Local => 1,
            StopReason::Rejected => 2,
            StopReason::Login | StopReason::Forbidden => 3,
            StopReason::License => 4,
            StopReason::NotFound => 5,
            StopReason::Network => 6,
            StopReason::Scope => 7,
        }
    }

    /// A new login is what helps.
    pub fn needs_login(self) -> bool {
        matches!(self, StopReason::Login | StopReason::Scope)
    }

    /// Every reason, for tables and tests.
    pub const ALL: [StopReason; 8] = [
        StopReason::License,
        StopReason::Login,
        StopReason::Forbidden,
        StopReason::Scope,
        StopReason::NotFound,
        StopReason::Network,
        StopReason::Rejected,
        StopReason::Local,
    ];
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::License => "license",
            StopReason::Login => "login",
            StopReason::Forbidden => "no permission",
            StopReason::Scope => "identity scope",
            StopReason::NotFound => "not found",
            StopReason::Network => "network or server",
            StopReason::Rejected => "refused request",
            StopReason::Local => "this device",
        })
    }
}

/// A stop: its reason and the sentence that says what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    pub reason: StopReason,
    pub message: String,
}

impl Stop {
    pub fn new(reason: StopReason, message: impl Into<String>) -> Stop {
        Stop {
            reason,
            message: message.into(),
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_cli_table() {
        let codes: Vec<u8> = StopReason::ALL.iter().map(|r| r.exit_code()).collect();
        assert_eq!(codes, [4, 3, 3, 7, 5, 6, 2, 1]);
    }
}
