//! Series: a book's place in one or more series, and the order of a
//! series by its sequence numbers (`#2` before `#10`, `1.5` between them).
//!
//! A book may belong to several series (a sub-series and its universe), so
//! a book holds a list. A sequence keeps the text the source wrote ("Book
//! 3", "1.5") and orders by the first number in it; a sequence without a
//! number ("Prequel") sorts after the numbered ones, by its text.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// One series a book belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesRef {
    pub name: String,
    /// Where the book sits in it; `None` when the source does not say.
    pub sequence: Option<Sequence>,
}

impl SeriesRef {
    /// A series from a name and a sequence text; `None` for a blank name.
    pub fn new(name: &str, sequence: Option<&str>) -> Option<Self> {
        let name = name.trim();
        (!name.is_empty()).then(|| Self {
            name: name.to_owned(),
            sequence: sequence.and_then(Sequence::parse),
        })
    }

    /// `Name #2`, or the name alone.
    pub fn label(&self) -> String {
        match &self.sequence {
            Some(s) => format!("{} #{}", self.name, s.shown()),
            None => self.name.clone(),
        }
    }
}

/// A position in a series, as written, ordered by its number.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Sequence {
    raw: String,
    number: Option<f64>,
}

impl Sequence {
    /// `None` for blank text; text without a number is kept (unnumbered).
    pub fn parse(text: &str) -> Option<Self> {
        let raw = text.trim();
        if raw.is_empty() {
            return None;
        }
        Some(Self {
            raw: raw.to_owned(),
            number: first_number(raw),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The number that orders it (`Book 3` → 3, `#1.5` → 1.5).
    pub fn number(&self) -> Option<f64> {
        self.number
    }

    /// What a list shows after `#`: the text without a leading `#`.
    pub fn shown(&self) -> &str {
        self.raw.strip_prefix('#').unwrap_or(&self.raw).trim_start()
    }
}

/// The first decimal number in `s`: digits, then optionally `.` or `,`
/// and more digits (`1,5` is how much of Europe writes 1.5). A `-` right
/// before the digits makes it negative when it starts the text or follows
/// `#` or a space (`-1`, `#-1`, `Book -1`), not in a range like `2-3`.
fn first_number(s: &str) -> Option<f64> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let bytes = s.as_bytes();
    let negative = start > 0
        && bytes[start - 1] == b'-'
        && (start == 1 || matches!(bytes[start - 2], b'#' | b' '));
    let rest = &s[start..];
    let int_len = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let mut text = if negative {
        "-".to_owned()
    } else {
        String::new()
    };
    text.push_str(&rest[..int_len]);
    let after = &rest[int_len..];
    if let Some(frac) = after.strip_prefix(['.', ',']) {
        let frac_len = frac
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(frac.len());
        if frac_len > 0 {
            text.push('.');
            text.push_str(&frac[..frac_len]);
        }
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

impl From<String> for Sequence {
    fn from(s: String) -> Self {
        // Serialized sequences are never blank; keep a blank one as text.
        Self::parse(&s).unwrap_or(Self {
            raw: s,
            number: None,
        })
    }
}

impl From<Sequence> for String {
    fn from(s: Sequence) -> Self {
        s.raw
    }
}

impl fmt::Display for Sequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl Ord for Sequence {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.number, other.number) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
        .then_with(|| self.raw.cmp(&other.raw))
    }
}

impl PartialOrd for Sequence {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Sequence {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Sequence {}

/// Order of two books in one series: by sequence (unknown last), then by
/// title (case-insensitive).
pub fn series_order(a: (Option<&Sequence>, &str), b: (Option<&Sequence>, &str)) -> Ordering {
    // `false` (a sequence) before `true` (none), then by sequence.
    let seq = (a.0.is_none(), a.0).cmp(&(b.0.is_none(), b.0));
    seq.then_with(|| {
        a.1.chars()
            .flat_map(char::to_lowercase)
            .cmp(b.1.chars().flat_map(char::to_lowercase))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn seq(s: &str) -> Sequence {
        Sequence::parse(s).unwrap()
    }

    #[test]
    fn numbers_in_the_usual_spellings() {
        assert_eq!(seq("2").number(), Some(2.0));
        assert_eq!(seq("#10").number(), Some(10.0));
        assert_eq!(seq("1.5").number(), Some(1.5));
        assert_eq!(seq("1,5").number(), Some(1.5));
        assert_eq!(seq("Book 3").number(), Some(3.0));
        assert_eq!(seq("Vol. 7 of 9").number(), Some(7.0));
        assert_eq!(seq("2-3").number(), Some(2.0));
        assert_eq!(seq("4.").number(), Some(4.0));
        assert_eq!(seq("-1").number(), Some(-1.0));
        assert_eq!(seq("#-0.5").number(), Some(-0.5));
        assert_eq!(seq("Book -2").number(), Some(-2.0));
        assert_eq!(seq("x-2").number(), Some(2.0), "a dash inside a word");
        assert_eq!(seq("Prequel").number(), None);
        assert!(Sequence::parse("  ").is_none());
        assert_eq!(seq("#1.5").shown(), "1.5");
        assert_eq!(seq("Book 3").as_str(), "Book 3");
    }

    #[test]
    fn hash_two_comes_before_hash_ten_and_one_and_a_half_between_one_and_two() {
        assert!(seq("#2") < seq("#10"));
        assert!(seq("1") < seq("1.5") && seq("1.5") < seq("2"));
        assert!(seq("10") < seq("Prequel"), "unnumbered sort last");
        assert!(seq("2") < seq("Book 2"), "equal numbers: by text");
    }

    #[test]
    fn series_order_puts_unknown_sequences_last_then_titles() {
        let one = seq("1");
        let mut books = [
            (None, "b"),
            (Some(&one), "z"),
            (None, "A"),
            (Some(&one), "a"),
        ];
        books.sort_by(|x, y| series_order(*x, *y));
        let titles: Vec<&str> = books.iter().map(|b| b.1).collect();
        assert_eq!(titles, ["a", "z", "A", "b"]);
    }

    #[test]
    fn serializes_as_its_text() {
        let r = SeriesRef::new(" Discworld ", Some("#2")).unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r##"{"name":"Discworld","sequence":"#2"}"##);
        assert_eq!(serde_json::from_str::<SeriesRef>(&json).unwrap(), r);
        assert_eq!(r.label(), "Discworld #2");
        assert!(SeriesRef::new("", Some("1")).is_none());
    }

    fn any_sequence() -> impl Strategy<Value = Sequence> {
        prop_oneof![
            (0u32..2000).prop_map(|n| seq(&n.to_string())),
            (0u32..100, 0u32..100).prop_map(|(a, b)| seq(&format!("{a}.{b}"))),
            (0u32..100).prop_map(|n| seq(&format!("#{n}"))),
            (0u32..100).prop_map(|n| seq(&format!("Book {n}"))),
            (1u32..100).prop_map(|n| seq(&format!("-{n}"))),
            (0u32..100, 1u32..10).prop_map(|(a, b)| seq(&format!("#-{a}.{b}"))),
            "[a-zA-Z #.,]{1,8}".prop_filter_map("blank", |s| Sequence::parse(&s)),
        ]
    }

    proptest! {
        #[test]
        fn the_order_is_total_and_consistent(
            a in any_sequence(), b in any_sequence(), c in any_sequence()
        ) {
            prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
            prop_assert_eq!(a == b, a.as_str() == b.as_str());
            if a <= b && b <= c {
                prop_assert!(a <= c);
            }
        }

        #[test]
        fn integers_order_by_value_not_by_text(x in 0u32..100_000, y in 0u32..100_000) {
            prop_assert_eq!(seq(&format!("#{x}")).cmp(&seq(&format!("#{y}"))), x.cmp(&y));
        }

        #[test]
        fn a_fraction_sits_between_its_neighbours(n in 0u32..10_000, f in 1u32..10) {
            let mid = seq(&format!("{n}.{f}"));
            prop_assert!(seq(&n.to_string()) < mid);
            prop_assert!(mid < seq(&(n + 1).to_string()));
        }

        #[test]
        fn negatives_come_before_zero_in_value_order(x in 1u32..10_000, y in 1u32..10_000) {
            let neg = seq(&format!("-{x}"));
            prop_assert!(neg < seq("0"));
            prop_assert_eq!(seq(&format!("#-{x}")).cmp(&seq(&format!("#-{y}"))), y.cmp(&x));
        }

        #[test]
        fn survives_a_json_round_trip(a in any_sequence()) {
            let back: Sequence = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
            prop_assert_eq!(back.number(), a.number());
            prop_assert_eq!(back, a);
        }
    }
}
