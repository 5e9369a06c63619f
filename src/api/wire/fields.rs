//! Tolerant field readers over `serde_json::Value`: the first of several
//! names, ids as strings or numbers, numbers as strings, durations in
//! seconds, milliseconds or `HH:MM:SS`.

use crate::domain::{DurationSource, Unit, Unitless};
use serde_json::{Map, Value};

pub type Obj = Map<String, Value>;

/// The words of a key in any case style, lowercased: `nextPageToken`,
/// `next_page_token`, `NEXT-PAGE-TOKEN` and `@odata.nextPageToken` all
/// give `next`, `page`, `token`.
pub fn key_words(key: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else {
            let upper_after_lower = c.is_ascii_uppercase()
                && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            if upper_after_lower && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.push(c.to_ascii_lowercase());
        }
        prev = Some(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The first of `keys` present in `obj` with a non-null value.
pub fn get<'a>(obj: &'a Obj, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .filter_map(|k| obj.get(*k))
        .find(|v| !v.is_null())
}

/// An id as an opaque string: strings are kept, integers printed.
pub fn id_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub fn id(obj: &Obj, keys: &[&str]) -> Option<String> {
    keys.iter().filter_map(|k| obj.get(*k)).find_map(id_value)
}

pub fn string(obj: &Obj, keys: &[&str]) -> Option<String> {
    keys.iter()
        .filter_map(|k| obj.get(*k))
        .find_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

pub fn number_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|f| f.is_finite())
}

pub fn number(obj: &Obj, keys: &[&str]) -> Option<f64> {
    keys.iter()
        .filter_map(|k| obj.get(*k))
        .find_map(number_value)
}

pub fn unsigned(obj: &Obj, keys: &[&str]) -> Option<u64> {
    number(obj, keys).filter(|f| *f >= 0.0).map(|f| f as u64)
}

pub fn unsigned_value(v: &Value) -> Option<u64> {
    number_value(v).filter(|f| *f >= 0.0).map(|f| f as u64)
}

/// A flag: a boolean, a number (0 is false) or a word (`true`, `no`).
pub fn boolean_value(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_i64().map(|i| i != 0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(true),
            "false" | "0" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

pub fn boolean(obj: &Obj, keys: &[&str]) -> Option<bool> {
    keys.iter()
        .filter_map(|k| obj.get(*k))
        .find_map(boolean_value)
}

/// `HH:MM:SS(.fff)`, `MM:SS` or a plain number of seconds.
pub fn clock_seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    if !s.contains(':') {
        return s.parse::<f64>().ok().filter(|f| f.is_finite() && *f >= 0.0);
    }
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut total = 0.0;
    for (i, p) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        let v: f64 = if last {
            p.parse().ok()?
        } else {
            p.parse::<u64>().ok()? as f64
        };
        if v < 0.0 || !v.is_finite() {
            return None;
        }
        total = total * 60.0 + v;
    }
    Some(total)
}

/// A duration or position in seconds. `sec_keys` hold seconds (numbers,
/// numeric strings or clock strings), `ms_keys` hold milliseconds.
pub fn seconds(obj: &Obj, sec_keys: &[&str], ms_keys: &[&str]) -> Option<f64> {
    let secs = sec_keys
        .iter()
        .filter_map(|k| obj.get(*k))
        .find_map(|v| match v {
            Value::String(s) => clock_seconds(s),
            other => number_value(other),
        });
    secs.or_else(|| number(obj, ms_keys).map(|ms| ms / 1000.0))
        .filter(|f| *f >= 0.0)
}

/// The unit a key names by its words (`durationMs`, `length_sec`,
/// `runtimeMinutes`); `None` when it names none (`duration`, `length`).
pub fn unit_named(key: &str) -> Option<Unit> {
    let w = key_words(key);
    let has = |set: &[&str]| w.iter().any(|x| set.contains(&x.as_str()));
    if has(&["ms", "millis", "milliseconds", "msec", "msecs"]) {
        Some(Unit::Millis)
    } else if has(&["s", "sec", "secs", "second", "seconds"]) {
        Some(Unit::Seconds)
    } else if has(&["min", "mins", "minute", "minutes"]) {
        Some(Unit::Minutes)
    } else {
        None
    }
}

/// A length under the first of `keys` that holds one, and where it came
/// from: a key that names its unit, or a clock string (`"1:02:03"`), is
/// read as it says; a number under a key that names no unit is not a
/// length until earmark's measure says which unit it is in
/// ([`DurationSource::Unchecked`], the length `None`).
pub fn length(obj: &Obj, keys: &[&str]) -> (Option<f64>, DurationSource) {
    for k in keys {
        let Some(v) = obj.get(*k).filter(|v| !v.is_null()) else {
            continue;
        };
        let clock = v
            .as_str()
            .filter(|s| s.contains(':'))
            .and_then(clock_seconds);
        let Some(n) = clock.or_else(|| number_value(v)).filter(|n| *n >= 0.0) else {
            continue;
        };
        return match (clock, unit_named(k)) {
            (Some(secs), _) => (Some(secs), DurationSource::Server),
            (None, Some(unit)) => (Some(unit.secs(n)), DurationSource::Server),
            (None, None) => (
                None,
                DurationSource::Unchecked(Unitless {
                    key: (*k).to_owned(),
                    value: n,
                }),
            ),
        };
    }
    (None, DurationSource::Server)
}

/// A wall-clock instant in epoch milliseconds. An `…At` key names no
/// unit: the number is read in the unit that puts it near the present,
/// earmark's own clock (below 10¹¹ it is seconds: as milliseconds it would
/// be before 1973, and as seconds anything above is past the year 5000).
pub fn instant_millis(obj: &Obj, keys: &[&str]) -> Option<i64> {
    let n = number(obj, keys)?;
    if n <= 0.0 {
        return None;
    }
    Some(if n < 100_000_000_000.0 {
        (n * 1000.0) as i64
    } else {
        n as i64
    })
}

/// Names from a string, an array of strings, or an array of objects with a
/// `name`; a single string is kept whole.
pub fn names(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => vec![s.trim().to_owned()],
        Value::Array(a) => a.iter().flat_map(names).collect(),
        Value::Object(o) => string(o, &["name", "fullName", "displayName", "title"])
            .filter(|s| !s.trim().is_empty())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The people named under the first of `keys` that is present: `None`
/// when a value is there but names no one and is not simply empty (a
/// number, `{"id": 3}`): unreadable, not "nobody".
pub fn people(obj: &Obj, keys: &[&str]) -> Option<Vec<String>> {
    let Some(v) = get(obj, keys) else {
        return Some(Vec::new());
    };
    let found = names(v);
    let empty = match v {
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    (!found.is_empty() || empty).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Obj {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn key_words_in_any_case_style() {
        for k in [
            "nextPageToken",
            "next_page_token",
            "NEXT-PAGE-TOKEN",
            "@odata.nextPageToken",
        ] {
            let w = key_words(k);
            assert!(
                w.ends_with(&["next".into(), "page".into(), "token".into()]),
                "{k}: {w:?}"
            );
        }
        assert_eq!(key_words("chapterID"), ["chapter", "id"]);
        assert_eq!(key_words("offset_s"), ["offset", "s"]);
    }

    #[test]
    fn clock_strings() {
        assert_eq!(clock_seconds("01:02:03"), Some(3723.0));
        assert_eq!(clock_seconds("2:03"), Some(123.0));
        assert_eq!(clock_seconds("0:00:01.5"), Some(1.5));
        assert_eq!(clock_seconds("61.25"), Some(61.25));
        assert_eq!(clock_seconds("a:b"), None);
        assert_eq!(clock_seconds("1:2:3:4"), None);
        assert_eq!(clock_seconds("-3"), None);
    }

    #[test]
    fn seconds_from_every_unit() {
        let s = |v: Value| seconds(&obj(v), &["durationSec", "duration"], &["durationMs"]);
        assert_eq!(s(json!({"durationSec": 61.2})), Some(61.2));
        assert_eq!(s(json!({"durationMs": 61200})), Some(61.2));
        assert_eq!(s(json!({"duration": "00:01:01"})), Some(61.0));
        assert_eq!(s(json!({"duration": "61"})), Some(61.0));
        assert_eq!(s(json!({"duration": null})), None);
        assert_eq!(s(json!({"duration": -1})), None);
    }

    #[test]
    fn a_length_is_read_in_the_unit_its_key_names_or_left_unchecked() {
        let keys = ["durationSec", "durationMs", "runtimeMinutes", "duration"];
        let l = |v: Value| length(&obj(v), &keys);
        let server = |secs: Option<f64>| (secs, DurationSource::Server);
        assert_eq!(l(json!({"durationMs": 90000})), server(Some(90.0)));
        assert_eq!(l(json!({"runtimeMinutes": 1.5})), server(Some(90.0)));
        let clock = l(json!({"duration": "0:01:30"}));
        assert_eq!(clock, server(Some(90.0)), "a clock names its units");
        for v in [json!(90000), json!("90000")] {
            assert_eq!(
                l(json!({"duration": v})),
                (
                    None,
                    DurationSource::Unchecked(Unitless {
                        key: "duration".into(),
                        value: 90000.0
                    })
                ),
                "{v}: no unit, no length yet"
            );
        }
        // A key that names its unit is taken before one that does not.
        let both = l(json!({"duration": 90000, "durationSec": 90}));
        assert_eq!(both, server(Some(90.0)));
        assert_eq!(l(json!({"duration": -1})), server(None));
        assert_eq!(l(json!({"duration": null})), server(None));
        assert_eq!(unit_named("length_ms"), Some(Unit::Millis));
        assert_eq!(unit_named("lengthSeconds"), Some(Unit::Seconds));
        assert_eq!(unit_named("length"), None);
    }

    #[test]
    fn ids_and_names() {
        assert_eq!(id(&obj(json!({"id": 42})), &["id"]), Some("42".into()));
        assert_eq!(
            id(&obj(json!({"id": "", "bookId": "b"})), &["id", "bookId"]),
            Some("b".into())
        );
        assert_eq!(names(&json!(["A", {"name": "B"}, 3])), ["A", "B"]);
        assert_eq!(names(&json!("A and B")), ["A and B"]);
        let who = |v: Value| people(&obj(v), &["narrator"]);
        assert_eq!(who(json!({"narrator": ["A"]})), Some(vec!["A".into()]));
        assert_eq!(who(json!({})), Some(vec![]));
        assert_eq!(who(json!({"narrator": null})), Some(vec![]));
        assert_eq!(who(json!({"narrator": " "})), Some(vec![]));
        assert_eq!(who(json!({"narrator": []})), Some(vec![]));
        assert_eq!(who(json!({"narrator": 5})), None, "unreadable, not nobody");
        assert_eq!(who(json!({"narrator": {"id": 3}})), None);
        assert_eq!(who(json!({"narrator": [{"id": 3}]})), None);
        let at = |v: Value| instant_millis(&obj(json!({ "t": v })), &["t"]);
        assert_eq!(at(json!(1795000000)), Some(1795000000000));
        assert_eq!(at(json!(1795000000123i64)), Some(1795000000123));
        assert_eq!(boolean(&obj(json!({"b": "true"})), &["b"]), Some(true));
    }
}
