//! What `earmark doctor` says of an answer's shape: its kinds, where a key
//! sits, and the header prefix an error message names.

use crate::api::wire;
use serde_json::Value;

pub(super) fn describe(v: &Result<Value, crate::api::error::BodyKind>) -> String {
    match v {
        Ok(v) => wire::describe_shape(v),
        Err(k) => k.to_string(),
    }
}

/// Where in `v` the first value satisfying `pred(key, value)` sits, as a
/// path like `data.auth.accessToken` or `errors[0].code`.
pub(super) fn find_path(
    v: &Value,
    pred: &dyn Fn(&str, &Value) -> bool,
    depth: u8,
) -> Option<String> {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if pred(k, x) {
                    return Some(k.clone());
                }
            }
            if depth == 0 {
                return None;
            }
            o.iter().find_map(|(k, x)| {
                find_path(x, pred, depth - 1).map(|p| {
                    if p.starts_with('[') {
                        format!("{k}{p}")
                    } else {
                        format!("{k}.{p}")
                    }
                })
            })
        }
        Value::Array(a) if depth > 0 => a
            .first()
            .and_then(|x| find_path(x, pred, depth - 1))
            .map(|p| format!("[0].{p}")),
        _ => None,
    }
}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        _ => "other",
    }
}

/// `X-Acme` from a message naming `X-Acme-Expected-Server-Id`.
pub(super) fn named_prefix(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let at = lower
        .find("-expected-server-id")
        .or_else(|| lower.find("-expected-user-id"))?;
    let start = text[..at]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .map(|i| i + 1)
        .unwrap_or(0);
    Some(text[start..at].to_owned()).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_prefix_named_in_a_message() {
        assert_eq!(
            named_prefix("missing header X-Acme-Expected-Server-Id").as_deref(),
            Some("X-Acme")
        );
        assert_eq!(named_prefix("identity headers missing"), None);
        let v = json!({"a": {"b": [{"code": "x"}]}});
        assert_eq!(
            find_path(&v, &|k, _| k == "code", 4).as_deref(),
            Some("a.b[0].code")
        );
    }
}
