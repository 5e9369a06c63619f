//! What a stream's answer is when it is not audio. [`sniff`] looks before
//! anything is decoded: a success answer whose body starts with `{`, `[`
//! or `<` (after a BOM or whitespace), or whose type is JSON, HTML, XML
//! or text and whose first bytes are no audio signature, goes to the judge
//! like an error status. [`default_judge`] is the judge of an engine
//! started without the API layer's (tests, benches): by status, and a 403
//! is a license stop only when its code says `license_required` (in any
//! case style); any other 403 is `Forbidden` with the server's text. A
//! minimal check: the player does not import the API layer, whose judge
//! (`EngineConfig::judge`) reads refusals as every endpoint's errors.

use super::source::SourceError;
use super::{ErrorKind, Judgement, Refusal, RefusalJudge};
use std::sync::Arc;

/// Status-based judgement (see the module header).
pub(super) fn default_judge() -> RefusalJudge {
    Arc::new(judge)
}

/// What the start of a success answer on a stream says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sniff {
    Audio,
    /// An error answer or a page: judged, never decoded.
    NotAudio,
    /// Too few bytes yet to tell.
    NeedMore,
}

/// Bytes a sniff may need to see an audio signature (`....ftyp`).
const SIGNATURE_BYTES: usize = 12;

/// Looks at a success answer whose body starts at byte 0: `head` is its
/// first bytes, `complete` when that is the whole body. Real audio never
/// starts with `{`, `[`, `<` or whitespace; a body that does, or an empty
/// one, is not audio. A JSON, HTML, XML or text type counts only without
/// an audio signature (a server may mislabel its audio).
pub(super) fn sniff(content_type: Option<&str>, head: &[u8], complete: bool) -> Sniff {
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None if !complete && head.len() < 4096 => Sniff::NeedMore,
        None => Sniff::NotAudio,
        Some(b'{' | b'[' | b'<') => Sniff::NotAudio,
        Some(_) if !content_type.is_some_and(not_audio_type) => Sniff::Audio,
        Some(_) if head.len() < SIGNATURE_BYTES && !complete => Sniff::NeedMore,
        Some(_) if audio_signature(head) => Sniff::Audio,
        Some(_) => Sniff::NotAudio,
    }
}

/// A later answer of the same stream (a Range request from the middle,
/// where no signature can be seen): not audio when its type says so and
/// differs from the type of the answer accepted at the start.
pub(super) fn midstream_not_audio(content_type: Option<&str>, accepted: Option<&str>) -> bool {
    content_type.is_some_and(not_audio_type) && content_type != accepted
}

/// JSON, HTML, XML, JavaScript or any text type.
pub(super) fn not_audio_type(content_type: &str) -> bool {
    let t = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    t.starts_with("text/")
        || t.ends_with("/json")
        || t.ends_with("+json")
        || t.ends_with("/xml")
        || t.ends_with("+xml")
        || t.ends_with("/html")
        || t == "application/javascript"
}

/// The first bytes of an audio file in a format the engine may play.
fn audio_signature(b: &[u8]) -> bool {
    b.starts_with(b"ID3")
        || (b.len() >= 2 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0)
        || b.starts_with(b"fLaC")
        || b.starts_with(b"OggS")
        || b.starts_with(b"RIFF")
        || b.starts_with(b"FORM")
        || b.starts_with(&[0x1A, 0x45, 0xDF, 0xA3])
        || b.get(4..8) == Some(b"ftyp")
        || b.starts_with(b"caff")
        || b.starts_with(b"#!AMR")
}

fn judge(r: &Refusal) -> Judgement {
    let body = String::from_utf8_lossy(&r.body);
    let m = message_of(&body, r.status);
    if (200..300).contains(&r.status) {
        let kind = if says_license_required(&body) {
            ErrorKind::LicenseRequired
        } else {
            ErrorKind::Http
        };
        let what = r.content_type.as_deref().unwrap_or("no content type");
        return Judgement {
            kind,
            message: format!(
                "the server answered HTTP {} ({what}) instead of audio: {m}",
                r.status
            ),
        };
    }
    let (kind, message) = match r.status {
        401 => (ErrorKind::Unauthorized, format!("not authorized: {m}")),
        403 => match classify_forbidden(&body) {
            SourceError::Refused { kind, message } => (kind, message),
            other => (ErrorKind::Forbidden, other.to_string()),
        },
        404 => (ErrorKind::NotFound, format!("HTTP 404: {m}")),
        s if (400..500).contains(&s) && s != 408 && s != 429 => {
            (ErrorKind::Rejected, format!("HTTP {s}: {m}"))
        }
        s => (ErrorKind::Http, format!("HTTP {s}: {m}")),
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
    fn answers_that_are_not_audio_are_seen_before_decoding() {
        let json = Some("application/json");
        for (ct, head) in [
            (None, &b"{\"code\":\"license_required\"}"[..]),
            (Some("audio/mpeg"), &b"  \r\n[1]"[..]),
            (None, &b"\xEF\xBB\xBF<!doctype html>"[..]),
            (
                Some("text/html; charset=utf-8"),
                &b"Forbidden, renew the license."[..],
            ),
            (json, &b"\"license_required\""[..]),
            (None, &b""[..]),
        ] {
            assert_eq!(sniff(ct, head, true), Sniff::NotAudio, "{ct:?} {head:?}");
        }
        let mp4 = b"\x00\x00\x00\x20ftypM4A \x00\x00";
        for (ct, head) in [
            (Some("audio/mpeg"), &b"ID3\x04\x00"[..]),
            (None, &b"\xFF\xFB\x90\x64"[..]),
            (Some("audio/flac"), &b"fLaC\x00"[..]),
            (Some("application/octet-stream"), &b"OggS\x00"[..]),
            (Some("audio/wav"), &b"RIFF\x24\x00"[..]),
            (Some("audio/webm"), &b"\x1A\x45\xDF\xA3"[..]),
            (Some("audio/mp4"), &mp4[..]),
            // Mislabeled audio is still audio.
            (json, &mp4[..]),
            (
                Some("text/plain"),
                &b"ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00"[..],
            ),
        ] {
            assert_eq!(sniff(ct, head, false), Sniff::Audio, "{ct:?} {head:?}");
        }
        assert_eq!(sniff(None, b"  ", false), Sniff::NeedMore);
        assert_eq!(sniff(json, b"\x00\x00", false), Sniff::NeedMore);
        assert!(midstream_not_audio(json, Some("audio/mpeg")));
        assert!(!midstream_not_audio(Some("audio/mpeg"), Some("audio/mpeg")));
        assert!(!midstream_not_audio(Some("text/plain"), Some("text/plain")));
    }

    #[test]
    fn a_success_answer_that_is_not_audio_is_judged_with_its_words() {
        let j = judge(&Refusal {
            status: 200,
            content_type: Some("application/json".into()),
            body: br#"{"code":"LICENSE_REQUIRED","message":"renew"}"#.to_vec(),
        });
        assert_eq!(j.kind, ErrorKind::LicenseRequired);
        assert!(j.message.contains("instead of audio"), "{}", j.message);
        let j = judge(&Refusal {
            status: 200,
            content_type: Some("text/html".into()),
            body: b"<html>login</html>".to_vec(),
        });
        assert_eq!(j.kind, ErrorKind::Http);
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
