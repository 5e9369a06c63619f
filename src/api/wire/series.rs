//! A book's series from the shapes servers use: `series` as a string, an
//! object or a list of either; flat `seriesName`/`series_name` beside a
//! sequence key; sequences as strings or numbers. A shape it cannot read
//! gives no series (unknown), never a guessed one, and is logged.

use super::fields::{Obj, get};
use crate::domain::SeriesRef;
use serde_json::Value;

const NAME_KEYS: &[&str] = &["series", "seriesName", "series_name", "seriesTitle"];
const SEQUENCE_KEYS: &[&str] = &[
    "seriesSequence",
    "series_sequence",
    "sequence",
    "seriesIndex",
    "series_index",
    "seriesNumber",
    "series_number",
    "seriesPosition",
    "seriesPart",
    "series_part",
    "volume",
];
/// Inside a series object.
const INNER_NAME_KEYS: &[&str] = &["name", "title", "seriesName", "series_name"];
const INNER_SEQUENCE_KEYS: &[&str] = &[
    "sequence",
    "seriesSequence",
    "series_sequence",
    "index",
    "seriesIndex",
    "series_index",
    "number",
    "position",
    "part",
    "volume",
    "book",
];

/// The series of the book object `obj`.
pub fn decode_series(obj: &Obj) -> Vec<SeriesRef> {
    let Some((key, value)) = NAME_KEYS
        .iter()
        .find_map(|k| obj.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
    else {
        return Vec::new();
    };
    let flat_sequence = get(obj, SEQUENCE_KEYS);
    let mut out = Vec::new();
    let readable = match (value, flat_sequence) {
        // A name beside its own sequence key.
        (Value::String(name), Some(seq)) => match sequence_text(seq) {
            Some(seq) => push(&mut out, SeriesRef::new(name, Some(&seq))),
            None => false,
        },
        (Value::Array(items), _) => {
            let mut all = true;
            for item in items {
                all &= one(item, &mut out);
            }
            all
        }
        (other, _) => one(other, &mut out),
    };
    if !readable {
        tracing::warn!(
            "book field {key} has a shape I cannot read, series left unknown: {}",
            raw_shape(value, flat_sequence)
        );
    }
    out
}

/// One series entry: `"Name"`, `"Name #2"` or an object. False when it
/// could not be read (nothing is added then).
fn one(v: &Value, out: &mut Vec<SeriesRef>) -> bool {
    match v {
        Value::String(s) if s.trim().is_empty() => true,
        Value::String(s) => {
            // Several in one string, as some servers list them: "A #1, B #2";
            // only when every part is numbered, so "Tom, Dick #2" stays one.
            let parts: Vec<&str> = s.split(", ").collect();
            let parts = if parts.len() > 1 && parts.iter().all(|p| numbered(p).is_some()) {
                parts
            } else {
                vec![s.as_str()]
            };
            parts.into_iter().all(|p| push(out, split_label(p)))
        }
        Value::Object(o) => {
            let Some(name) = get(o, INNER_NAME_KEYS).and_then(Value::as_str) else {
                return false;
            };
            match get(o, INNER_SEQUENCE_KEYS) {
                None => push(out, SeriesRef::new(name, None)),
                Some(seq) => match sequence_text(seq) {
                    Some(seq) => push(out, SeriesRef::new(name, Some(&seq))),
                    None => false,
                },
            }
        }
        _ => false,
    }
}

fn push(out: &mut Vec<SeriesRef>, series: Option<SeriesRef>) -> bool {
    if let Some(s) = series
        && !out.contains(&s)
    {
        out.push(s);
    }
    true
}

/// `"Name #2"` → (Name, 2); a `#` not followed by a number stays in the name.
fn split_label(s: &str) -> Option<SeriesRef> {
    match numbered(s) {
        Some((name, seq)) => SeriesRef::new(name, Some(seq)),
        None => SeriesRef::new(s, None),
    }
}

/// `"Name #2"` (or `#-1`) → (name, sequence text) when a name comes before
/// ` #` and a number after it.
fn numbered(s: &str) -> Option<(&str, &str)> {
    let (name, seq) = s.rsplit_once(" #")?;
    let digits = seq.trim_start();
    let digits = digits.strip_prefix('-').unwrap_or(digits);
    (!name.trim().is_empty() && digits.starts_with(|c: char| c.is_ascii_digit()))
        .then_some((name, seq))
}

/// A sequence as text: strings as written, numbers printed (`2`, `1.5`).
/// `None` for a shape that is not a sequence (an object, a list, a bool).
fn sequence_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(i), _) => Some(i.to_string()),
            (None, Some(f)) if f.is_finite() => Some(f.to_string()),
            _ => None,
        },
        _ => None,
    }
}

fn raw_shape(value: &Value, sequence: Option<&Value>) -> String {
    let mut s = value.to_string();
    if let Some(seq) = sequence {
        s.push_str(&format!(" (sequence {seq})"));
    }
    s.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Vec<String> {
        decode_series(v.as_object().unwrap())
            .iter()
            .map(SeriesRef::label)
            .collect()
    }

    #[test]
    fn every_usual_shape() {
        assert_eq!(labels(json!({"series": "Discworld"})), ["Discworld"]);
        assert_eq!(
            labels(json!({"series": "Discworld", "seriesSequence": 2})),
            ["Discworld #2"]
        );
        assert_eq!(
            labels(json!({"seriesName": "Discworld", "series_index": "1.5"})),
            ["Discworld #1.5"]
        );
        assert_eq!(
            labels(json!({"series_name": "Discworld", "volume": 10})),
            ["Discworld #10"]
        );
        assert_eq!(
            labels(json!({"series": {"name": "Dune", "sequence": "3"}})),
            ["Dune #3"]
        );
        assert_eq!(
            labels(json!({"series": [{"name": "A", "sequence": 1.5}, {"title": "B"}, "C #2"]})),
            ["A #1.5", "B", "C #2"]
        );
        assert_eq!(
            labels(json!({"seriesName": "Mistborn #1, Cosmere #4"})),
            ["Mistborn #1", "Cosmere #4"]
        );
        assert_eq!(labels(json!({"series": "No. #Sign"})), ["No. #Sign"]);
        // A comma inside one name is no list: every part must be numbered.
        assert_eq!(labels(json!({"series": "Tom, Dick #2"})), ["Tom, Dick #2"]);
        assert_eq!(
            labels(json!({"series": "Tom, Dick #2, Harry"})),
            ["Tom, Dick #2, Harry"]
        );
        assert_eq!(labels(json!({"series": "Prequels #-1"})), ["Prequels #-1"]);
        assert_eq!(
            labels(json!({"series": {"name": null, "title": "Dune", "index": 2}})),
            ["Dune #2"],
            "a null name falls through to title"
        );
        assert!(labels(json!({"series": null})).is_empty());
        assert!(labels(json!({"series": []})).is_empty());
        assert!(labels(json!({"title": "x"})).is_empty());
    }

    #[test]
    fn unreadable_shapes_are_unknown_not_guessed() {
        assert!(labels(json!({"series": 3})).is_empty());
        assert!(labels(json!({"series": true})).is_empty());
        assert!(labels(json!({"series": {"sequence": 2}})).is_empty());
        assert!(labels(json!({"series": {"name": "A", "sequence": {"n": 2}}})).is_empty());
        assert!(labels(json!({"series": "A", "sequence": [2]})).is_empty());
        // A readable entry beside an unreadable one is kept.
        assert_eq!(labels(json!({"series": [{"name": "A"}, 7]})), ["A"]);
    }
}
