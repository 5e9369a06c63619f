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
    /// 428 although both identity headers were sent: the server knows them
    /// under other names. The message names the setting to change.
    #[error(
        "the server asked for the identity headers although earmark sent both ({prefix}-Expected-Server-Id and {prefix}-Expected-User-Id): this server expects them under other names. Set `identity_header_prefix` of this profile in config.toml (now \"{prefix}\") to the prefix the server uses; `earmark doctor` shows what the server said ({message})"
    )]
    IdentityHeadersIgnored { prefix: String, message: String },
    /// 429 (or a `too_many_requests` code), or 503 with `Retry-After`:
    /// the server asks to be left alone a while (`retry_after`: what it
    /// said, if it said). Also what a request gets without being sent
    /// while its address and kind still wait (`domain::backoff`).
    #[error("{}", rate_limited_text(.retry_after, .message))]
    RateLimited {
        status: u16,
        retry_after: Option<std::time::Duration>,
        message: String,
    },
    /// Any other HTTP status (e.g. 409 without the scope code, 413).
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
    /// A chapter stream answered with a success status and a body that is
    /// not audio and names no error earmark knows: a page (`kind`), or a
    /// JSON answer (`kind` is `None`).
    #[error(
        "the server at {address} answered the chapter stream with {} (HTTP {status}) instead of audio; check the address and gateway prefix",
        not_audio_text(.kind)
    )]
    NotAudio {
        address: String,
        status: u16,
        kind: Option<BodyKind>,
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

fn rate_limited_text(after: &Option<std::time::Duration>, message: &str) -> String {
    match after {
        Some(d) => format!(
            "the server is limiting requests ({message}); try again in {} s",
            d.as_secs().max(1)
        ),
        None => format!("the server is limiting requests ({message}); try again in a moment"),
    }
}

fn not_audio_text(kind: &Option<BodyKind>) -> String {
    match kind {
        Some(k) => k.to_string(),
        None => "a JSON answer that names no error earmark knows".into(),
    }
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
    /// The request itself was wrong (400, 413, another 4xx).
    Request,
    /// Log in again (401).
    Auth,
    /// The license must be resolved (403 license_required).
    License,
    /// 403 general.
    Forbidden,
    NotFound,
    /// The server could not be reached, failed, or answered something
    /// that is not the API or that earmark cannot read (a malformed answer
    /// is the server's fault, not the user's).
    NetworkOrServer,
    /// Identity headers wrong or missing (409/428/400 scope).
    Scope,
}

impl ApiError {
    pub fn class(&self) -> ErrorClass {
        match self {
            ApiError::BadRequest { .. } => ErrorClass::Request,
            ApiError::Status { status, .. } if *status < 500 => ErrorClass::Request,
            ApiError::Status { .. } => ErrorClass::NetworkOrServer,
            ApiError::Unauthorized { .. } | ApiError::NotLoggedIn => ErrorClass::Auth,
            ApiError::LicenseRequired { .. } => ErrorClass::License,
            ApiError::Forbidden { .. } => ErrorClass::Forbidden,
            ApiError::NotFound { .. } => ErrorClass::NotFound,
            ApiError::ScopeInvalid { .. }
            | ApiError::ScopeMismatch { .. }
            | ApiError::ScopeRequired { .. }
            | ApiError::IdentityHeadersIgnored { .. } => ErrorClass::Scope,
            ApiError::RateLimited { .. } => ErrorClass::NetworkOrServer,
            ApiError::Server { .. }
            | ApiError::Network { .. }
            | ApiError::NotJson { .. }
            | ApiError::NotAudio { .. }
            | ApiError::Decode { .. }
            | ApiError::Redirect { .. } => ErrorClass::NetworkOrServer,
        }
    }

    /// The code the server named (normalized to `snake_case`): the
    /// contract's for its own variants, the body's for the others.
    pub fn code(&self) -> Option<&str> {
        match self {
            ApiError::LicenseRequired { .. } => Some("license_required"),
            ApiError::ScopeMismatch { .. } => Some("listening_scope_mismatch"),
            ApiError::ScopeRequired { .. } | ApiError::IdentityHeadersIgnored { .. } => {
                Some("listening_scope_required")
            }
            ApiError::ScopeInvalid { .. } => Some("listening_scope_invalid"),
            ApiError::BadRequest { code, .. }
            | ApiError::Unauthorized { code, .. }
            | ApiError::Forbidden { code, .. }
            | ApiError::Status { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// THE policy for "try again later without user action": network
    /// trouble, 5xx, a gateway's HTML or empty answer, a refused redirect
    /// (a gateway in the way) and 429. Everything else needs the user, a
    /// new login, or is a refusal that repeating cannot change.
    pub fn is_transient(&self) -> bool {
        match self {
            ApiError::Network { .. }
            | ApiError::Server { .. }
            | ApiError::NotJson { .. }
            | ApiError::Redirect { .. }
            | ApiError::RateLimited { .. } => true,
            ApiError::Status { status, .. } => *status >= 500 || *status == 408,
            // A page where audio was expected: a gateway in the way.
            ApiError::NotAudio { kind, .. } => kind.is_some(),
            _ => false,
        }
    }

    /// Worth repeating at once inside one call (idempotent GETs only):
    /// network trouble and 5xx. 429 and gateway answers wait for the
    /// caller's own back-off.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ApiError::Network { .. } | ApiError::Server { .. })
            || matches!(self, ApiError::Status { status, .. } if *status >= 500)
    }

    /// The server refused this request for good (400, 403 general, 404,
    /// 413, a malformed answer): repeating it unchanged will not help.
    pub fn is_rejection(&self) -> bool {
        !self.is_transient()
            && !self.needs_login()
            && !self.is_license()
            && !matches!(self, ApiError::NotLoggedIn)
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

    /// The identity headers are missing, malformed or not understood: a
    /// client bug or a wrong `identity_header_prefix`, not the user's data.
    pub fn is_scope_problem(&self) -> bool {
        matches!(
            self,
            ApiError::ScopeRequired { .. }
                | ApiError::ScopeInvalid { .. }
                | ApiError::IdentityHeadersIgnored { .. }
        )
    }

    /// The server asked to be left alone (429, 503 with `Retry-After`),
    /// or its address still waits for it: not "unreachable".
    pub fn is_throttle(&self) -> bool {
        matches!(self, ApiError::RateLimited { .. })
    }

    /// An answer that closes the back-off of its address and kind
    /// (`domain::backoff::Throttles`): 429 and 503, with or without
    /// `Retry-After`.
    pub fn slows_down(&self) -> bool {
        matches!(self.status(), Some(429 | 503))
    }

    /// How long the server asked us to wait (`Retry-After` of a 429 or 503).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            ApiError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The HTTP status, when the error came from an HTTP answer.
    pub fn status(&self) -> Option<u16> {
        Some(match self {
            ApiError::BadRequest { .. } | ApiError::ScopeInvalid { .. } => 400,
            ApiError::Unauthorized { .. } => 401,
            ApiError::Forbidden { .. } | ApiError::LicenseRequired { .. } => 403,
            ApiError::NotFound { .. } => 404,
            ApiError::ScopeMismatch { .. } => 409,
            ApiError::ScopeRequired { .. } | ApiError::IdentityHeadersIgnored { .. } => 428,
            ApiError::RateLimited { status, .. } => *status,
            ApiError::Server { status, .. }
            | ApiError::Status { status, .. }
            | ApiError::NotJson { status, .. }
            | ApiError::NotAudio { status, .. } => *status,
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
        let client_error = (400..500).contains(&status);
        match (status, code.as_deref()) {
            // A contract code decides wherever the status put it.
            (_, Some("license_required")) if client_error => ApiError::LicenseRequired { message },
            (_, Some("listening_scope_mismatch")) if client_error => {
                ApiError::ScopeMismatch { message }
            }
            (_, Some("listening_scope_required")) if client_error => {
                ApiError::ScopeRequired { message }
            }
            (_, Some("listening_scope_invalid")) if client_error => {
                ApiError::ScopeInvalid { message }
            }
            (429, _) | (_, Some("too_many_requests")) => ApiError::RateLimited {
                status: if status >= 400 { status } else { 429 },
                retry_after: None,
                message,
            },
            (400, _) => ApiError::BadRequest { code, message },
            (401, _) => ApiError::Unauthorized { code, message },
            (403, _) => ApiError::Forbidden { code, message },
            (404, _) => ApiError::NotFound { message },
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
            429 => "too many requests".into(),
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

    #[test]
    fn contract_codes_decide_whatever_the_status() {
        assert!(matches!(
            e(400, Some("license_required")),
            ApiError::LicenseRequired { .. }
        ));
        assert!(matches!(
            e(403, Some("listening_scope_mismatch")),
            ApiError::ScopeMismatch { .. }
        ));
        assert!(matches!(
            e(500, Some("license_required")),
            ApiError::Server { .. }
        ));
    }

    #[test]
    fn rate_limits_are_transient_and_never_a_wrong_password() {
        let r = e(429, None);
        assert!(r.is_transient() && !r.is_retryable() && !r.is_rejection());
        assert_eq!(r.status(), Some(429));
        let r = e(401, Some("too_many_requests"));
        assert!(matches!(r, ApiError::RateLimited { .. }), "{r:?}");
        let r = ApiError::RateLimited {
            status: 429,
            retry_after: Some(std::time::Duration::from_secs(30)),
            message: "slow down".into(),
        };
        let m = r.to_string();
        assert!(
            m.contains("try again in 30 s") && !m.contains("password"),
            "{m}"
        );
    }

    #[test]
    fn an_answer_earmark_cannot_read_is_the_servers_fault() {
        let d = ApiError::Decode {
            endpoint: "GET /books".into(),
            field: "items".into(),
            problem: "is missing".into(),
        };
        assert_eq!(d.class(), ErrorClass::NetworkOrServer);
        assert!(!d.is_transient() && d.is_rejection());
        assert_eq!(e(400, Some("bad_request")).code(), Some("bad_request"));
        assert_eq!(
            e(403, Some("license_required")).code(),
            Some("license_required")
        );
    }

    #[test]
    fn one_policy_per_question() {
        assert!(e(503, None).is_transient());
        assert!(!e(400, None).is_transient() && e(400, None).is_rejection());
        assert!(!e(401, None).is_rejection() && e(401, None).needs_login());
        assert!(!e(403, Some("license_required")).is_rejection());
        assert!(e(403, None).is_rejection());
        assert!(e(428, None).is_scope_problem());
        let i = ApiError::IdentityHeadersIgnored {
            prefix: "X-Service".into(),
            message: "missing".into(),
        };
        assert!(i.is_scope_problem() && i.class() == ErrorClass::Scope);
        let m = i.to_string();
        assert!(
            m.contains("identity_header_prefix") && m.contains("\"X-Service\""),
            "{m}"
        );
    }
}
