//! Error bodies in whatever shape a server uses: the code and message are
//! looked for in every common place, codes are compared in any case style,
//! and a success status whose envelope reports a failure is that failure.

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

/// Codes the client acts on; found anywhere in the body, they win over
/// any other string code.
pub const KNOWN_CODES: &[&str] = &[
    "license_required",
    "listening_scope_invalid",
    "listening_scope_mismatch",
    "listening_scope_required",
    "invalid_credentials",
    "too_many_requests",
    "unauthorized",
    "not_found",
];

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

fn status_of(v: &Value) -> Option<u16> {
    let n = match v {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        _ => return None,
    };
    u16::try_from(n).ok().filter(|s| (100..600).contains(s))
}

/// Read an error body. String codes are gathered from `code`, `errorCode`,
/// `error_code`, `error` (string or `{code,type}`), `detail` (string or
/// object), `errors[]`, `type`, `reason` and `message`; a known contract
/// code anywhere wins, else the first code-like value of the code keys.
pub fn error_body(v: &Value) -> ErrorBody {
    let Some(obj) = v.as_object() else {
        return ErrorBody {
            message: v.as_str().map(str::to_owned),
            ..ErrorBody::default()
        };
    };
    let mut primary: Vec<&str> = Vec::new(); // keys that name a code
    let mut secondary: Vec<&str> = Vec::new(); // texts that may be a code
    let mut messages: Vec<&str> = Vec::new();
    let mut status = None;
    scan(obj, &mut primary, &mut status);
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
        scan(n, &mut primary, &mut status);
        for k in ["type", "reason", "title"] {
            if let Some(s) = n.get(k).and_then(Value::as_str) {
                secondary.push(s);
            }
        }
        for k in ["message", "msg", "detail", "title", "description"] {
            if let Some(s) = n.get(k).and_then(Value::as_str) {
                secondary.push(s);
                messages.push(s);
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
            secondary.push(s);
            messages.push(s);
        }
    }
    for k in ["type", "reason", "detail", "message", "msg", "title"] {
        if let Some(s) = obj.get(k).and_then(Value::as_str) {
            secondary.push(s);
        }
    }
    let all = primary.iter().chain(secondary.iter());
    let known = all
        .clone()
        .filter(|s| code_like(s))
        .map(|s| normalize_code(s))
        .find(|c| KNOWN_CODES.contains(&c.as_str()));
    let code = known.or_else(|| {
        primary
            .iter()
            .find(|s| code_like(s))
            .map(|s| normalize_code(s))
    });
    let top_message = string(
        obj,
        &["message", "msg", "errorMessage", "error_description"],
    )
    .filter(|m| !m.trim().is_empty());
    let message = top_message
        .or_else(|| {
            obj.get("error")
                .and_then(Value::as_str)
                .filter(|s| !code_like(s))
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

fn scan<'a>(o: &'a Obj, primary: &mut Vec<&'a str>, status: &mut Option<u16>) {
    for k in [
        "code",
        "errorCode",
        "error_code",
        "error",
        "statusCode",
        "status",
    ] {
        match o.get(k) {
            // A `status` word ("error", "fail") is not a code.
            Some(Value::String(s)) if k != "status" && k != "statusCode" => primary.push(s),
            Some(n) if status.is_none() => *status = status_of(n),
            _ => {}
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
    let b = error_body(v);
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

/// `Retry-After`: seconds, or an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`)
/// counted from `now_unix` seconds. `None` when absent or unreadable.
pub fn retry_after_secs(value: &str, now_unix: u64) -> Option<u64> {
    let v = value.trim();
    if let Ok(s) = v.parse::<u64>() {
        return Some(s);
    }
    http_date_unix(v).map(|t| t.saturating_sub(now_unix))
}

fn http_date_unix(s: &str) -> Option<u64> {
    // IMF-fixdate only: "Sun, 06 Nov 1994 08:49:37 GMT".
    let rest = s.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, mon, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == mon)? as i64 + 1;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days)
        .ok()
        .map(|d| d * 86_400 + h * 3600 + m * 60 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            assert_eq!(
                error_body(&v).code.as_deref(),
                Some("license_required"),
                "{v}"
            );
        }
        let b = error_body(&json!({"detail": "Not enough rights for this."}));
        assert_eq!(b.code, None);
        assert_eq!(b.message.as_deref(), Some("Not enough rights for this."));
        let b = error_body(&json!({"error": "Token has expired"}));
        assert_eq!(b.message.as_deref(), Some("Token has expired"));
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

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        assert_eq!(retry_after_secs("7", 0), Some(7));
        assert_eq!(
            retry_after_secs("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_770),
            Some(7)
        );
        assert_eq!(retry_after_secs("soon", 0), None);
    }
}
