//! The one classification of why playback, sync or a command stops: an
//! API error (by its class) and an engine error kind each become a
//! [`StopReason`]. The engine's judge of a stream's refusal reads the
//! refusal as every endpoint's errors are read (`Client::stream_refusal`)
//! and gives the engine the kind of that same reason, so a license refusal
//! on the chapter stream is the license stop an API call would be.

use super::CurrentClient;
use crate::api::{ApiError, ErrorClass};
use crate::domain::{Stop, StopReason};
use crate::player::{ErrorKind, Judgement, Refusal, RefusalJudge};
use std::sync::Arc;

/// Why an API error stops what it stopped.
pub fn of_api(e: &ApiError) -> StopReason {
    match e.class() {
        ErrorClass::License => StopReason::License,
        ErrorClass::Auth => StopReason::Login,
        ErrorClass::Forbidden => StopReason::Forbidden,
        ErrorClass::Scope => StopReason::Scope,
        ErrorClass::NotFound => StopReason::NotFound,
        ErrorClass::NetworkOrServer => StopReason::Network,
        // A malformed answer is the server's fault, not the request's.
        ErrorClass::Request if matches!(e, ApiError::Decode { .. }) => StopReason::Network,
        ErrorClass::Request => StopReason::Rejected,
    }
}

/// An API error as a stop: its reason and its sentence (a license stop
/// says the server's own words).
pub fn stop_of_api(e: &ApiError) -> Stop {
    let message = match e {
        // The server's own words, when they say what the stop is.
        ApiError::LicenseRequired { message } if message.to_lowercase().contains("license") => {
            message.clone()
        }
        ApiError::LicenseRequired { message } => format!("the license is required: {message}"),
        e => e.to_string(),
    };
    Stop::new(of_api(e), message)
}

/// An API call of a client failed: its stop, and what the session hears
/// (`license`: playback and sync stop; `lost`: the server is away, sync
/// shows it and asks it until it is back).
pub fn refused(e: &ApiError, license: impl FnOnce(String), lost: impl FnOnce(String)) -> Stop {
    let stop = stop_of_api(e);
    if stop.reason == StopReason::License {
        license(stop.message.clone());
    }
    if e.is_retryable() {
        lost(e.to_string());
    }
    stop
}

/// Why the engine stopped, from the kind it reported.
pub fn of_engine(kind: ErrorKind) -> StopReason {
    match kind {
        ErrorKind::LicenseRequired => StopReason::License,
        ErrorKind::Unauthorized => StopReason::Login,
        ErrorKind::Forbidden => StopReason::Forbidden,
        ErrorKind::Scope => StopReason::Scope,
        ErrorKind::NotFound => StopReason::NotFound,
        ErrorKind::Rejected => StopReason::Rejected,
        ErrorKind::Http => StopReason::Network,
        ErrorKind::Decode | ErrorKind::UnknownChapter => StopReason::Local,
    }
}

/// The engine's kind for a stream refused for `reason` (the inverse of
/// [`of_engine`]).
fn engine_kind(reason: StopReason) -> ErrorKind {
    match reason {
        StopReason::License => ErrorKind::LicenseRequired,
        StopReason::Login => ErrorKind::Unauthorized,
        StopReason::Forbidden => ErrorKind::Forbidden,
        StopReason::Scope => ErrorKind::Scope,
        StopReason::NotFound => ErrorKind::NotFound,
        StopReason::Rejected => ErrorKind::Rejected,
        StopReason::Network => ErrorKind::Http,
        StopReason::Local => ErrorKind::Decode,
    }
}

/// The engine's judge: the current login's client reads the refusal;
/// without a login, `fallback` (the player's status-only judge) does.
pub(super) fn judge(client: CurrentClient, fallback: RefusalJudge) -> RefusalJudge {
    Arc::new(move |r: &Refusal| {
        let Some(c) = client.get() else {
            return fallback(r);
        };
        let e = c.stream_refusal(r.status, r.content_type.as_deref(), &r.body);
        let stop = stop_of_api(&e);
        Judgement {
            kind: engine_kind(stop.reason),
            message: stop.message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, code: Option<&str>) -> ApiError {
        ApiError::from_status(status, code.map(str::to_owned), None, "http://h/api/v1")
    }

    #[test]
    fn every_answer_class_has_its_reason_and_exit_code() {
        let cases = [
            (api(403, Some("license_required")), StopReason::License, 4),
            (api(401, None), StopReason::Login, 3),
            (api(403, None), StopReason::Forbidden, 3),
            (
                api(409, Some("listening_scope_mismatch")),
                StopReason::Scope,
                7,
            ),
            (api(428, None), StopReason::Scope, 7),
            (api(404, None), StopReason::NotFound, 5),
            (api(503, None), StopReason::Network, 6),
            (api(429, None), StopReason::Network, 6),
            (api(400, None), StopReason::Rejected, 2),
        ];
        for (e, reason, code) in cases {
            assert_eq!(of_api(&e), reason, "{e:?}");
            assert_eq!(of_api(&e).exit_code(), code, "{e:?}");
        }
        let decode = ApiError::Decode {
            endpoint: "the chapter stream".into(),
            field: "body".into(),
            problem: "is not audio".into(),
        };
        assert_eq!(of_api(&decode), StopReason::Network);
    }

    #[test]
    fn a_stream_refusal_reaches_the_engine_as_the_same_reason() {
        for reason in StopReason::ALL {
            assert_eq!(of_engine(engine_kind(reason)), reason);
        }
    }

    #[test]
    fn a_license_stop_says_the_servers_words() {
        let e = ApiError::LicenseRequired {
            message: "Renew the license.".into(),
        };
        assert_eq!(
            stop_of_api(&e),
            Stop::new(StopReason::License, "Renew the license.")
        );
        let page = ApiError::LicenseRequired {
            message: "it answered with an HTML page".into(),
        };
        assert!(stop_of_api(&page).message.contains("license"));
    }
}
