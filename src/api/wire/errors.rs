//! Error bodies in whatever shape a server uses. A code is a word anywhere
//! in an error answer: [`code_words`] splits every string (URIs into their
//! path segments, query and fragment; sentences into words) and compares
//! the words in any case style with the known codes. A contract code
//! (`license_required`, `listening_scope_*`) named anywhere decides the
//! error; other codes count where an answer names its code (code keys,
//! RFC 7807 `type` URIs, a text that is only the code). A success status
//! whose envelope reports a failure is that failure.

use super::fields::*;
use serde_json::Value;

/// What an error body said, wherever it said it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorBody {
    /// A numeric status the body carries (`code: 403`, `status: 401`).
    pub status: Option<u16>,
    /// The string code, normalized to `snake_case` (see [`normalize_code`]).
    pub code: Option<String>,
    pub message: Option<String>,
}

/// The codes of the contract's error table: named anywhere in an error
/// answer (a key, a message, a URI segment), one of them decides it. In
/// order of precedence: a license stop is never hidden by another code.
pub const CONTRACT_CODES: &[&str] = &[
    "license_required",
    "listening_scope_mismatch",
    "listening_scope_required",
    "listening_scope_invalid",
];

/// Codes the client acts on besides the contract's: they count only where
/// an answer names its code.
const GENERIC_CODES: &[&str] = &[
    "invalid_credentials",
    "too_many_requests",
    "unauthorized",
    "not_found",
];

/// Keys whose string value names a code. `type` is RFC 7807's problem URI.
const CODE_KEYS: &[&str] = &[
    "code",
    "errorCode",
    "error_code",
    "error",
    "errorType",
    "error_type",
    "type",
];
/// Keys whose text may be a code (or a URI ending in one), else a message.
const TEXT_KEYS: &[&str] = &["reason", "detail", "message", "msg", "title", "description"];
/// Strings and keys looked at in one answer: an error answer is small; a
/// huge one is not searched to its end.
const MAX_STRINGS: usize = 4096;

/// Any case style to `snake_case`: `LicenseRequired`, `LICENSE_REQUIRED`,
/// `license-required` and `licenseRequired` all become `license_required`.
/// Text that is not code-like (spaces, punctuation) is returned as it is.
pub fn normalize_code(c: &str) -> String {
    let c = c.trim();
    if !code_like(c) {
        return c.to_owned();
    }
    let mut out = String::with_capacity(c.len() + 4);
    let mut prev: Option<char> = None;
    for ch in c.chars() {
        match ch {
            '-' | '.' | '_' => {
                if !out.ends_with('_') {
                    out.push('_');
                }
            }
            ch if ch.is_ascii_uppercase() => {
                if prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            }
            ch => out.push(ch),
        }
        prev = Some(ch);
    }
    out
}

/// A word made of letters, digits, `_`, `-` and `.`, starting with a letter.
fn code_like(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The words of `text` that may be codes, each normalized: the text is
/// split at anything but letters, digits, `_` and `-`, so a URI gives its
/// path segments, query and fragment words, and a sentence its words.
pub fn code_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| code_like(w))
        .map(normalize_code)
}

/// The contract code named in `text` (an HTML page, a plain-text body),
/// by precedence when it names several.
pub fn contract_code_in_text(text: &str) -> Option<&'static str> {
    let mut best: Option<usize> = None;
    rank_words(text, &mut best);
    best.map(|i| CONTRACT_CODES[i])
}

fn rank_words(text: &str, best: &mut Option<usize>) {
    for w in code_words(text) {
        if let Some(i) = CONTRACT_CODES.iter().position(|c| *c == w) {
            *best = Some(best.map_or(i, |b| b.min(i)));
        }
    }
}

/// The contract code named anywhere in an error answer: in any key or
/// string at any depth, URIs included.
pub fn contract_code(v: &Value) -> Option<&'static str> {
    let mut best: Option<usize> = None;
    let mut budget = MAX_STRINGS;
    visit_strings(v, &mut budget, &mut |s| rank_words(s, &mut best));
    best.map(|i| CONTRACT_CODES[i])
}

fn visit_strings(v: &Value, budget: &mut usize, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) if *budget > 0 => {
            *budget -= 1;
            f(s);
        }
        Value::Array(a) => {
            for x in a {
                visit_strings(x, budget, f);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                if *budget == 0 {
                    return;
                }
                *budget -= 1;
                f(k);
                visit_strings(x, budget, f);
            }
        }
        _ => {}
    }
}

/// The code a text names: the whole text when it is code-like, else the
/// fragment or last path segment of a URI (RFC 7807's
/// `https://errors.example/license-required`, `urn:problem:quota-exceeded`).
fn code_of_text(s: &str) -> Option<String> {
    let s = s.trim();
    if code_like(s) {
        return Some(normalize_code(s));
    }
    let uri = s.contains("://") || s.starts_with(['/', '#']) || s.starts_with("urn:");
    if !uri || s.contains(char::is_whitespace) {
        return None;
    }
    let (rest, fragment) = match s.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (s, None),
    };
    if let Some(f) = fragment.filter(|f| code_like(f)) {
        return Some(normalize_code(f));
    }
    let rest = rest.split('?').next().unwrap_or_default();
    // The path of `scheme://host/path`; a bare origin names nothing.
    let path = match rest.split_once("://") {
        Some((_, after)) => after.split_once('/').map_or("", |(_, p)| p),
        None => rest,
    };
    path.rsplit(['/', ':'])
        .find(|seg| !seg.is_empty())
        .filter(|seg| code_like(seg))
        .map(normalize_code)
}

fn status_of(v: &Value) -> Option<u16> {
    let n = match v {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        _ => return None,
    };
    u16::try_from(n).ok().filter(|s| (100..600).contains(s))
}

/// Read an error body: its numeric status, its code and its message. The
/// code is a contract code named anywhere ([`contract_code`]); else the
/// first known code where the answer names its code (`code`, `errorCode`,
/// `error`, `type`, … at the top, under `error`/`detail` and in
/// `errors[]`, or a `reason`/`detail`/`message`/`title` that is only a
/// code or a URI ending in one); else the first code-like value of the
/// code keys.
pub fn error_body(v: &Value) -> ErrorBody {
    let contract = contract_code(v).map(str::to_owned);
    let Some(obj) = v.as_object() else {
        return ErrorBody {
            code: contract,
            message: v.as_str().map(str::to_owned),
            ..ErrorBody::default()
        };
    };
    let mut named: Vec<&str> = Vec::new(); // values of code keys
    let mut texts: Vec<&str> = Vec::new(); // texts that may be a code
    let mut messages: Vec<&str> = Vec::new();
    let mut status = None;
    scan(obj, &mut named, &mut status);
    let nested: Vec<&Obj> = ["error", "detail"]
        .iter()
        .filter_map(|k| obj.get(*k).and_then(Value::as_object))
        .chain(
            obj.get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object),
        )
        .collect();
    for n in &nested {
        scan(n, &mut named, &mut status);
        for k in TEXT_KEYS {
            if let Some(s) = n.get(*k).and_then(Value::as_str) {
                texts.push(s);
                if *k != "reason" {
                    messages.push(s);
                }
            }
        }
    }
    for e in obj
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(s) = e.as_str() {
            texts.push(s);
            messages.push(s);
        }
    }
    for k in TEXT_KEYS {
        if let Some(s) = obj.get(*k).and_then(Value::as_str) {
            texts.push(s);
        }
    }
    let code = contract
        .or_else(|| {
            named
                .iter()
                .chain(texts.iter())
                .filter_map(|s| code_of_text(s))
                .find(|c| {
                    CONTRACT_CODES.contains(&c.as_str()) || GENERIC_CODES.contains(&c.as_str())
                })
        })
        .or_else(|| named.iter().find_map(|s| code_of_text(s)));
    let top_message = string(
        obj,
        &["message", "msg", "errorMessage", "error_description"],
    )
    .filter(|m| !m.trim().is_empty());
    let message = top_message
        .or_else(|| {
            obj.get("error")
                .and_then(Value::as_str)
                .filter(|s| code_of_text(s).is_none())
                .map(str::to_owned)
        })
        .or_else(|| {
            messages
                .iter()
                .find(|m| !m.trim().is_empty())
                .map(|m| (*m).to_owned())
        })
        .or_else(|| string(obj, &["detail", "title", "reason"]));
    ErrorBody {
        status,
        code,
        message,
    }
}

fn scan<'a>(o: &'a Obj, named: &mut Vec<&'a str>, status: &mut Option<u16>) {
    for k in CODE_KEYS {
        if let Some(Value::String(s)) = o.get(*k) {
            named.push(s);
        }
    }
    // A `status` word ("error", "fail") is not a code.
    for k in ["code", "statusCode", "status"] {
        if status.is_none()
            && let Some(n) = o.get(k).filter(|n| n.is_number() || k != "code")
        {
            *status = status_of(n);
        }
    }
}

/// Code and message of an error body (see [`error_body`]).
pub fn error_parts(v: &Value) -> (Option<String>, Option<String>) {
    let b = error_body(v);
    (b.code, b.message)
}

/// A success answer whose envelope says it failed: `success`/`ok` false,
/// `status` `"error"`/`"fail"`, a 4xx/5xx number under `code`/`status`,
/// or a top-level `error` and no content. Returns the HTTP-like status
/// (from the number, else from a known code, else 400), code and message.
pub fn envelope_error(v: &Value) -> Option<(u16, Option<String>, Option<String>)> {
    let obj = v.as_object()?;
    let numeric = ["code", "status", "statusCode"]
        .iter()
        .filter_map(|k| obj.get(*k))
        .filter(|x| x.is_number() || x.as_str().is_some_and(|s| s.parse::<u16>().is_ok()))
        .find_map(status_of);
    let word_failed = obj.get("status").and_then(Value::as_str).is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "error" | "fail" | "failed" | "failure"
        )
    });
    let has_content = ["data", "result", "payload", "response", "items"]
        .iter()
        .any(|k| obj.get(*k).is_some_and(|d| !d.is_null()));
    let error_present = obj
        .get("error")
        .is_some_and(|e| !e.is_null() && e != &Value::Bool(false) && e.as_str() != Some(""));
    let failed = boolean(obj, &["success", "ok"]) == Some(false)
        || word_failed
        || numeric.is_some_and(|s| s >= 400)
        || (error_present && !has_content);
    if !failed {
        return None;
    }
    // Only now: a success answer's strings are never searched for codes.
    let b = error_body(v);
    let status = numeric
        .filter(|s| *s >= 400)
        .or_else(|| b.code.as_deref().and_then(status_of_code))
        .unwrap_or(400);
    Some((status, b.code, b.message))
}

/// The status a known code implies, for envelopes without a number.
pub fn status_of_code(code: &str) -> Option<u16> {
    Some(match code {
        "license_required" => 403,
        "listening_scope_invalid" => 400,
        "listening_scope_mismatch" => 409,
        "listening_scope_required" => 428,
        "invalid_credentials" | "unauthorized" => 401,
        "too_many_requests" => 429,
        "not_found" => 404,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(v: &Value) -> Option<String> {
        error_body(v).code
    }

    #[test]
    fn codes_in_every_case_style_are_one_code() {
        for c in [
            "license_required",
            "LICENSE_REQUIRED",
            "LicenseRequired",
            "license-required",
            "licenseRequired",
        ] {
            assert_eq!(normalize_code(c), "license_required", "{c}");
        }
        assert_eq!(normalize_code("no such book"), "no such book");
    }

    #[test]
    fn a_numeric_code_never_hides_a_string_code() {
        let b = error_body(&json!({"code": 403, "errorCode": "license_required"}));
        assert_eq!(
            (b.status, b.code.as_deref()),
            (Some(403), Some("license_required"))
        );
        let b = error_body(&json!({"code": 409, "error": "listening_scope_mismatch"}));
        assert_eq!(b.code.as_deref(), Some("listening_scope_mismatch"));
    }

    #[test]
    fn codes_found_wherever_the_server_puts_them() {
        let cases = [
            json!({"detail": "license_required"}),
            json!({"detail": {"code": "LicenseRequired", "msg": "renew"}}),
            json!({"errors": [{"code": "license-required", "title": "renew"}]}),
            json!({"errors": [{"status": "403", "detail": "license_required"}]}),
            json!({"errors": ["LICENSE_REQUIRED"]}),
            json!({"type": "license_required"}),
            json!({"reason": "LicenseRequired"}),
            json!({"message": "license_required"}),
            json!({"error": {"type": "license_required"}}),
            json!({"code": "E403", "reason": "license_required"}),
        ];
        for v in cases {
            assert_eq!(code(&v).as_deref(), Some("license_required"), "{v}");
        }
        let b = error_body(&json!({"detail": "Not enough rights for this."}));
        assert_eq!(b.code, None);
        assert_eq!(b.message.as_deref(), Some("Not enough rights for this."));
        let b = error_body(&json!({"error": "Token has expired"}));
        assert_eq!(b.message.as_deref(), Some("Token has expired"));
    }

    #[test]
    fn a_code_is_a_word_anywhere_uris_included() {
        let cases = [
            json!({"type": "https://errors.example/license-required", "title": "Forbidden", "status": 403}),
            json!({"type": "https://errors.example/problems#LicenseRequired"}),
            json!({"type": "urn:problem:LICENSE_REQUIRED"}),
            json!({"error": {"links": {"about": "/docs/errors/license_required?lang=en"}}}),
            json!({"message": "Playback refused (license_required). Renew it."}),
            json!({"meta": {"problems": [{"href": "https://x.example/a/b/license-required#top"}]}}),
            json!({"license-required": true}),
            json!(["LicenseRequired"]),
            json!("see https://errors.example/license-required"),
        ];
        for v in cases {
            assert_eq!(code(&v).as_deref(), Some("license_required"), "{v}");
        }
        let b = error_body(&json!({
            "type": "https://errors.example/listening-scope-mismatch", "status": 409}));
        assert_eq!(
            (b.status, b.code.as_deref()),
            (Some(409), Some("listening_scope_mismatch"))
        );
        // A license stop is never hidden by another contract code.
        let b = error_body(&json!({"code": "listening_scope_mismatch",
            "detail": "https://errors.example/license-required"}));
        assert_eq!(b.code.as_deref(), Some("license_required"));
    }

    #[test]
    fn generic_codes_count_only_where_the_answer_names_its_code() {
        let uri = |s: &str| code(&json!({ "type": format!("https://errors.example/{s}") }));
        assert_eq!(uri("not-found").as_deref(), Some("not_found"));
        assert_eq!(uri("quota-exceeded").as_deref(), Some("quota_exceeded"));
        // A word of a sentence is not the code of the answer.
        let b = error_body(&json!({"code": "forbidden",
            "message": "you are unauthorized to open this not_found book"}));
        assert_eq!(b.code.as_deref(), Some("forbidden"));
        for v in [
            json!({"type": "about:blank", "title": "Forbidden"}),
            json!({"type": "https://errors.example/", "title": "Forbidden"}),
            json!({"message": "no license required here"}),
        ] {
            assert_eq!(code(&v), None, "{v}");
        }
    }

    #[test]
    fn contract_codes_are_found_in_text_bodies() {
        assert_eq!(
            contract_code_in_text("<html><p>Error: LICENSE_REQUIRED</p></html>"),
            Some("license_required")
        );
        assert_eq!(
            contract_code_in_text(
                "<a href=\"https://errors.example/listening-scope-mismatch\">log in</a>"
            ),
            Some("listening_scope_mismatch")
        );
        assert_eq!(contract_code_in_text("<h1>502 Bad Gateway</h1>"), None);
    }

    #[test]
    fn envelopes_that_report_failure() {
        let v = json!({"code": 403, "errorCode": "license_required", "message": "renew"});
        assert_eq!(
            envelope_error(&v),
            Some((403, Some("license_required".into()), Some("renew".into())))
        );
        let v = json!({"status": "fail", "error": "LicenseRequired"});
        assert_eq!(envelope_error(&v).unwrap().0, 403);
        assert_eq!(envelope_error(&json!({"code": 401})).unwrap().0, 401);
        assert_eq!(envelope_error(&json!({"code": 0, "data": {}})), None);
        assert_eq!(envelope_error(&json!({"code": 200, "data": []})), None);
        assert_eq!(envelope_error(&json!({"data": {}, "error": null})), None);
    }
}
