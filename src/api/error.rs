//! Typed errors of the contract client: one variant per row of the
//! contract's error table, plus transport and decoding failures. Callers
//! match on the variant, never on message text.

use std::fmt;

/// What kind of non-JSON body a server sent where JSON was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    Empty,
    /// Some other text that does not parse as JSON.
    Garbage,
}

impl fmt::Display for BodyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BodyKind::Html => "an HTML page",
            BodyKind::Empty => "an empty body",
            BodyKind::Garbage => "a body that is not JSON",
        })
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    /// 400 (general): a parameter is missing or malformed.
    #[error("the server rejected the request: {message}")]
    BadRequest {
        code: Option<String>,
        message: String,
    },
    /// 400 `listening_scope_invalid`: the user-id identity header is not a number.
    #[error("the server rejected the identity headers (user id is not a number): {message}")]
    ScopeInvalid { message: String },
    /// 401: not logged in, token invalid or expired, or wrong credentials at login.
    #[error("{}", unauthorized_text(.code.as_deref(), .message))]
    Unauthorized {
        code: Option<String>,
        message: String,
    },
    /// 403 (general): no permission.
    #[error("the server refused access: {message}")]
    Forbidden {
        code: Option<String>,
        message: String,
    },
    /// 403 `license_required`: playback and sync must stop until resolved.
    #[error("the server's license is not valid: {message} Resolve the license on the server.")]
    LicenseRequired { message: String },
    /// 404: the resource does not exist.
    #[error("not found: {message}")]
    NotFound { message: String },
    /// 409 `listening_scope_mismatch`: log in again and refresh serverId/userId.
    #[error(
        "the server instance or account changed since login ({message}); log in again with `earmark login`"
    )]
    ScopeMismatch { message: String },
    /// 428 `listening_scope_required`: a write lacked an identity header.
    #[error("the server requires the identity headers on this write: {message}")]
    ScopeRequired { message: String },
    /// 5xx: keep local state and retry later.
    #[error("the server at {address} failed (HTTP {status}): {message}")]
    Server {
        address: String,
        status: u16,
        message: String,
    },
    /// Any other HTTP status (e.g. 409 without the scope code, 413, 429).
    #[error("the server answered HTTP {status}: {message}")]
    Status {
        status: u16,
        code: Option<String>,
        message: String,
    },
    /// Could not reach the server: DNS, connect, TLS, time-out, reset.
    #[error("cannot reach the server at {address}: {message}")]
    Network { address: String, message: String },
    /// A success status with a body that is not JSON (gateway login page, empty body).
    #[error(
        "the server at {address} answered with {kind} (HTTP {status}) instead of JSON; check the address and gateway prefix"
    )]
    NotJson {
        address: String,
        status: u16,
        kind: BodyKind,
    },
    /// JSON arrived but a required field is missing or has the wrong type.
    #[error("unexpected answer from {endpoint}: {field} {problem}")]
    Decode {
        endpoint: String,
        field: String,
        problem: String,
    },
    /// The server redirected in a way we refuse to follow.
    #[error("the server at {address} redirected {detail}")]
    Redirect { address: String, detail: String },
    /// An authenticated call was made on a client that has no session.
    #[error("not logged in; run `earmark login`")]
    NotLoggedIn,
}

fn unauthorized_text(code: Option<&str>, message: &str) -> String {
    if code == Some("invalid_credentials") {
        format!("wrong user name or password ({message})")
    } else {
        format!("the session is not valid any more ({message}); log in again with `earmark login`")
    }
}

/// Coarse classes of errors, for exit codes and UI decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The request itself was wrong (400, 413, decode problems).
    Request,
    /// Log in again (401).
    Auth,
    /// The license must be resolved (403 license_required).
    License,
    /// 403 general.
    Forbidden,
    NotFound,
    /// The server could not be reached, failed, or answered something that is not the API.
    NetworkOrServer,
    /// Identity headers wrong or missing (409/428/400 scope).
    Scope,
}

impl ApiError {
    pub fn class(&self) -> ErrorClass {
        match self {
            ApiError::BadRequest { .. } | ApiError::Decode { .. } => ErrorClass::Request,
            ApiError::Status { status, .. } if *status < 500 => ErrorClass::Request,
            ApiError::Status { .. } => ErrorClass::NetworkOrServer,
            ApiError::Unauthorized { .. } | ApiError::NotLoggedIn => ErrorClass::Auth,
            ApiError::LicenseRequired { .. } => ErrorClass::License,
            ApiError::Forbidden { .. } => ErrorClass::Forbidden,
            ApiError::NotFound { .. } => ErrorClass::NotFound,
            ApiError::ScopeInvalid { .. }
            | ApiError::ScopeMismatch { .. }
            | ApiError::ScopeRequired { .. } => ErrorClass::Scope,
            ApiError::Server { .. }
            | ApiError::Network { .. }
            | ApiError::NotJson { .. }
            | ApiError::Redirect { .. } => ErrorClass::NetworkOrServer,
        }
    }

    /// Worth retrying later without user action (network trouble, 5xx).
    pub fn is_retryable(&self) -> bool {
        matches!(self, ApiError::Network { .. } | ApiError::Server { .. })
            || matches!(self, ApiError::Status { status, .. } if *status == 429)
    }

    /// The user must log in again (401, or 409 scope mismatch to refresh ids).
    pub fn needs_login(&self) -> bool {
        matches!(
            self,
            ApiError::Unauthorized { .. } | ApiError::NotLoggedIn | ApiError::ScopeMismatch { .. }
        )
    }

    /// Playback and background sync must stop (403 license_required).
    pub fn is_license(&self) -> bool {
        matches!(self, ApiError::LicenseRequired { .. })
    }

    /// The HTTP status, when the error came from an HTTP answer.
    pub fn status(&self) -> Option<u16> {
        Some(match self {
            ApiError::BadRequest { .. } | ApiError::ScopeInvalid { .. } => 400,
            ApiError::Unauthorized { .. } => 401,
            ApiError::Forbidden { .. } | ApiError::LicenseRequired { .. } => 403,
            ApiError::NotFound { .. } => 404,
            ApiError::ScopeMismatch { .. } => 409,
            ApiError::ScopeRequired { .. } => 428,
            ApiError::Server { status, .. }
            | ApiError::Status { status, .. }
            | ApiError::NotJson { status, .. } => *status,
            _ => return None,
        })
    }

    /// Build the typed error for an HTTP error status from the decoded
    /// body's code and message (`None` when the body had none).
    pub fn from_status(
        status: u16,
        code: Option<String>,
        message: Option<String>,
        address: &str,
    ) -> ApiError {
        let message = message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| default_message(status, code.as_deref()));
        match (status, code.as_deref()) {
            (400, Some("listening_scope_invalid")) => ApiError::ScopeInvalid { message },
            (400, _) => ApiError::BadRequest { code, message },
            (401, _) => ApiError::Unauthorized { code, message },
            (403, Some("license_required")) => ApiError::LicenseRequired { message },
            (403, _) => ApiError::Forbidden { code, message },
            (404, _) => ApiError::NotFound { message },
            (409, Some("listening_scope_mismatch")) => ApiError::ScopeMismatch { message },
            (428, _) => ApiError::ScopeRequired { message },
            (500..=599, _) => ApiError::Server {
                address: address.to_owned(),
                status,
                message,
            },
            _ => ApiError::Status {
                status,
                code,
                message,
            },
        }
    }
}

fn default_message(status: u16, code: Option<&str>) -> String {
    match code {
        Some(c) => c.replace('_', " "),
        None => match status {
            400 => "bad request".into(),
            401 => "not logged in or token invalid".into(),
            403 => "access denied".into(),
            404 => "the resource does not exist".into(),
            409 => "conflict".into(),
            428 => "identity headers missing".into(),
            500..=599 => "internal server error".into(),
            _ => format!("HTTP {status}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(status: u16, code: Option<&str>) -> ApiError {
        ApiError::from_status(
            status,
            code.map(str::to_owned),
            None,
            "http://h:8686/api/v1",
        )
    }

    #[test]
    fn every_contract_row_has_its_variant() {
        assert!(matches!(e(400, None), ApiError::BadRequest { .. }));
        assert!(matches!(
            e(400, Some("bad_request")),
            ApiError::BadRequest { .. }
        ));
        assert!(matches!(
            e(400, Some("listening_scope_invalid")),
            ApiError::ScopeInvalid { .. }
        ));
        assert!(matches!(e(401, None), ApiError::Unauthorized { .. }));
        assert!(matches!(e(403, None), ApiError::Forbidden { .. }));
        assert!(matches!(
            e(403, Some("license_required")),
            ApiError::LicenseRequired { .. }
        ));
        assert!(matches!(e(404, None), ApiError::NotFound { .. }));
        assert!(matches!(
            e(409, Some("listening_scope_mismatch")),
            ApiError::ScopeMismatch { .. }
        ));
        assert!(matches!(e(409, None), ApiError::Status { status: 409, .. }));
        assert!(matches!(e(428, None), ApiError::ScopeRequired { .. }));
        assert!(matches!(e(500, None), ApiError::Server { status: 500, .. }));
        assert!(matches!(e(503, None), ApiError::Server { status: 503, .. }));
    }

    #[test]
    fn classes_and_flags() {
        assert_eq!(e(401, None).class(), ErrorClass::Auth);
        assert_eq!(
            e(403, Some("license_required")).class(),
            ErrorClass::License
        );
        assert_eq!(
            e(409, Some("listening_scope_mismatch")).class(),
            ErrorClass::Scope
        );
        assert!(e(502, None).is_retryable());
        assert!(!e(400, None).is_retryable());
        assert!(e(409, Some("listening_scope_mismatch")).needs_login());
        assert!(e(403, Some("license_required")).is_license());
        assert_eq!(e(428, None).status(), Some(428));
    }

    #[test]
    fn messages_are_one_clear_sentence() {
        let m = e(401, Some("invalid_credentials")).to_string();
        assert!(m.contains("wrong user name or password"), "{m}");
        let m = e(502, None).to_string();
        assert!(
            m.contains("http://h:8686/api/v1") && m.contains("502"),
            "{m}"
        );
    }
}
