//! The arguments of the protocol's commands (docs/ctl.md): places in
//! seconds or clock form, with or without a sign, speeds, sleep times, a
//! book to open. Pure; each refusal names what was wrong.

use super::protocol::{Code, Open, Refusal, SPEEDS, Seek, Speed};
use crate::domain::sleep::{SleepChoice, parse_sleep};
use crate::domain::{BookId, ChapterId};
use serde_json::Value;

pub(super) fn bad(m: impl Into<String>) -> Refusal {
    Refusal::new(Code::BadArgument, m)
}

/// A name as an error quotes it: at most 40 characters.
pub(super) fn short(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

pub(super) fn one<'a>(name: &str, rest: &'a [Value]) -> Result<&'a Value, Refusal> {
    match rest {
        [v] => Ok(v),
        _ => Err(bad(format!("`{name}` takes one argument"))),
    }
}

pub(super) fn play(rest: &[Value]) -> Result<Option<Open>, Refusal> {
    let text = |v: &Value, what: &str| match v {
        Value::String(s) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
        Value::Null => Ok(None),
        _ => Err(bad(format!("`play`: the {what} is a non-empty string"))),
    };
    if rest.len() > 3 {
        return Err(bad("`play` takes a book, a chapter and a place, no more"));
    }
    let Some(book) = rest
        .first()
        .map(|v| text(v, "book id"))
        .transpose()?
        .flatten()
    else {
        return match rest.len() {
            0 | 1 => Ok(None),
            _ => Err(bad("`play`: a chapter or a place needs a book")),
        };
    };
    let chapter = rest.get(1).map(|v| text(v, "chapter id")).transpose()?;
    let at = match rest.get(2) {
        None | Some(Value::Null) => None,
        Some(v) => match seconds(v)? {
            (None, s) => Some(s),
            (Some(_), _) => return Err(bad("`play`: the place is seconds ≥ 0, without a sign")),
        },
    };
    Ok(Some(Open {
        book: BookId::new(book),
        chapter: chapter.flatten().map(ChapterId::new),
        at,
    }))
}

/// A number of seconds: `95`, `95.5`, `1:35`, `1:02:03`; with its sign
/// when it has one (a string `+30` or `-30`, a negative number).
fn seconds(v: &Value) -> Result<(Option<f64>, f64), Refusal> {
    let bad_place = || {
        bad(format!(
            "{} is not seconds (try 95, 1:35, +30 or -30)",
            shown(v)
        ))
    };
    let (sign, secs) = match v {
        Value::Number(n) => {
            let x = n.as_f64().ok_or_else(bad_place)?;
            match x < 0.0 {
                true => (Some(-1.0), -x),
                false => (None, x),
            }
        }
        Value::String(s) => {
            let (sign, body) = signed(s);
            (sign, clock(body).ok_or_else(bad_place)?)
        }
        _ => return Err(bad_place()),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad_place());
    }
    Ok((sign, secs))
}

/// A string's leading `+` or `-` as ±1, and the rest.
fn signed(s: &str) -> (Option<f64>, &str) {
    let s = s.trim();
    match s.as_bytes().first() {
        Some(b'+') => (Some(1.0), &s[1..]),
        Some(b'-') => (Some(-1.0), &s[1..]),
        _ => (None, s),
    }
}

/// `95.5`, `1:35`, `1:02:03.5` as seconds.
fn clock(s: &str) -> Option<f64> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let (last, whole) = parts.split_last()?;
    let mut secs = 0.0;
    for (i, p) in whole.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: f64 = p.parse().ok()?;
        if i > 0 && n >= 60.0 {
            return None;
        }
        secs = secs * 60.0 + n;
    }
    let ok = !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let last: f64 = ok.then(|| last.parse().ok()).flatten()?;
    if !whole.is_empty() && last >= 60.0 {
        return None;
    }
    Some(secs * 60.0 + last)
}

pub(super) fn seek(v: &Value) -> Result<Seek, Refusal> {
    Ok(match seconds(v)? {
        (Some(sign), s) => Seek::By(sign * s),
        (None, s) => Seek::To(s),
    })
}

pub(super) fn speed(v: &Value) -> Result<Speed, Refusal> {
    let bad_speed = || {
        bad(format!(
            "{} is not a speed: from 0.5 to 3.0, or +0.25 / -0.25",
            shown(v)
        ))
    };
    let (sign, x) = match v {
        Value::Number(n) => (None, n.as_f64().ok_or_else(bad_speed)?),
        Value::String(s) => {
            let (sign, body) = signed(s);
            let ok = !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            let x = ok.then(|| body.parse::<f64>().ok()).flatten();
            (sign, x.ok_or_else(bad_speed)?)
        }
        _ => return Err(bad_speed()),
    };
    match sign {
        Some(s) if x.is_finite() && x <= 2.5 => Ok(Speed::By((s * x) as f32)),
        None if SPEEDS.contains(&(x as f32)) => Ok(Speed::To(x as f32)),
        _ => Err(bad_speed()),
    }
}

pub(super) fn sleep(v: &Value) -> Result<SleepChoice, Refusal> {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(m @ 1..=1440) => Ok(SleepChoice::Minutes(m as u32)),
            _ => Err(bad(format!(
                "{n} is not a sleep time: minutes from 1 to 1440, chapter or off"
            ))),
        },
        Value::String(s) => parse_sleep(s).map_err(bad),
        _ => Err(bad(format!(
            "{} is not a sleep time: minutes, chapter or off",
            shown(v)
        ))),
    }
}

/// A value as an error quotes it (cut short).
fn shown(v: &Value) -> String {
    short(&v.to_string())
}
