//! The default judge of a stream's refusal ([`default_judge`]), for an
//! engine started without the API layer's (tests, benches): by status, and
//! a 403 is a license stop only when its code says `license_required` (in
//! any case style); any other 403 is `Forbidden` with the server's text. A
//! minimal check: the player does not import the API layer, whose judge
//! (`EngineConfig::judge`) reads refusals as every endpoint's errors.

use super::source::SourceError;
use super::{ErrorKind, Judgement, Refusal, RefusalJudge};
use std::sync::Arc;

/// Status-based judgement (see the module header).
pub(super) fn default_judge() -> RefusalJudge {
    Arc::new(judge)
}

fn judge(r: &Refusal) -> Judgement {
    let body = String::from_utf8_lossy(&r.body);
    let (kind, message) = match r.status {
        401 => (
            ErrorKind::Unauthorized,
            format!("not authorized: {}", message_of(&body, r.status)),
        ),
        403 => match classify_forbidden(&body) {
            SourceError::Refused { kind, message } => (kind, message),
            other => (ErrorKind::Forbidden, other.to_string()),
        },
        404 => (
            ErrorKind::NotFound,
            format!("HTTP 404: {}", message_of(&body, 404)),
        ),
        s => (
            ErrorKind::Http,
            format!("HTTP {s}: {}", message_of(&body, s)),
        ),
    };
    Judgement { kind, message }
}

fn message_of(body: &str, status: u16) -> String {
    json_message(body).unwrap_or_else(|| format!("HTTP {status}"))
}

/// Body text kept from a 403 (the message for the layer above).
const FORBIDDEN_BODY_MAX: usize = 4096;

/// Classify a 403 body.
fn classify_forbidden(body: &str) -> SourceError {
    let mut end = body.len().min(FORBIDDEN_BODY_MAX);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let text = body[..end].trim().to_string();
    if says_license_required(body) {
        SourceError::Refused {
            kind: ErrorKind::LicenseRequired,
            message: json_message(body).unwrap_or(text),
        }
    } else {
        SourceError::Refused {
            kind: ErrorKind::Forbidden,
            message: text,
        }
    }
}

/// True when a JSON body's `code` is license_required in any case style
/// (`license_required`, `LICENSE_REQUIRED`, `LicenseRequired`,
/// `license-required`). A minimal check: the player does not know the API.
fn says_license_required(body: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Body {
        code: Option<serde_json::Value>,
        error: Option<serde_json::Value>,
    }
    let Ok(b) = serde_json::from_str::<Body>(body) else {
        return false;
    };
    let norm = |v: &serde_json::Value| {
        v.as_str().is_some_and(|c| {
            let c: String = c
                .chars()
                .filter(|ch| ch.is_ascii_alphanumeric())
                .map(|ch| ch.to_ascii_lowercase())
                .collect();
            c == "licenserequired"
        })
    };
    // `code` at the top level, or inside an `error` object.
    b.code.as_ref().is_some_and(norm)
        || b.error
            .as_ref()
            .and_then(|e| e.get("code"))
            .is_some_and(norm)
}

/// The `message` (else `code`) of a JSON error body.
fn json_message(body: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Body {
        message: Option<String>,
        code: Option<String>,
    }
    let b = serde_json::from_str::<Body>(body).ok()?;
    b.message.or(b.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_403_is_a_license_stop_only_when_its_code_says_license_required() {
        for code in [
            "license_required",
            "LICENSE_REQUIRED",
            "LicenseRequired",
            "license-required",
        ] {
            let body = format!(r#"{{"code":"{code}","message":"renew"}}"#);
            assert_eq!(
                classify_forbidden(&body),
                SourceError::Refused {
                    kind: ErrorKind::LicenseRequired,
                    message: "renew".into()
                },
                "{code}"
            );
        }
        let nested = r#"{"error":{"code":"license_required"}}"#;
        assert!(matches!(
            classify_forbidden(nested),
            SourceError::Refused {
                kind: ErrorKind::LicenseRequired,
                ..
            }
        ));
        for body in [
            r#"{"code":"forbidden","message":"no access to this book"}"#,
            r#"{"message":"license_required"}"#,
            "<html>403 Forbidden</html>",
            "",
        ] {
            assert_eq!(
                classify_forbidden(body),
                SourceError::Refused {
                    kind: ErrorKind::Forbidden,
                    message: body.trim().to_string()
                },
                "{body}"
            );
        }
    }

    #[test]
    fn a_forbidden_body_is_kept_to_a_few_kib() {
        let body = "é".repeat(10_000);
        match classify_forbidden(&body) {
            SourceError::Refused {
                kind: ErrorKind::Forbidden,
                message: m,
            } => assert!(m.len() <= FORBIDDEN_BODY_MAX && !m.is_empty()),
            other => panic!("{other:?}"),
        }
    }
}
