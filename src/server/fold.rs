//! Text folding for search and sorting: lower case without accents
//! ("Poèmes" → "poemes"), and a sort key whose byte order is the natural,
//! case- and accent-insensitive order of titles. Pure functions.

/// Lower case with Latin diacritics removed and ligatures spelled out;
/// combining marks (decomposed input) are dropped.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        if ('\u{300}'..='\u{36f}').contains(&c) {
            continue;
        }
        match base_of(c) {
            Some(base) => out.push_str(base),
            None => out.push(c),
        }
    }
    out
}

/// The unaccented spelling of a lower-case Latin letter, if it has one.
fn base_of(c: char) -> Option<&'static str> {
    if c.is_ascii() {
        return None;
    }
    const TABLE: &[(&str, &str)] = &[
        ("a", "àáâãäåāăąǎǟǡǻȁȃȧ"),
        ("c", "çćĉċč"),
        ("d", "ďđð"),
        ("e", "èéêëēĕėęěȅȇȩ"),
        ("g", "ĝğġģǧǵ"),
        ("h", "ĥħȟ"),
        ("i", "ìíîïĩīĭįıǐȉȋ"),
        ("j", "ĵǰ"),
        ("k", "ķǩ"),
        ("l", "ĺļľŀł"),
        ("n", "ñńņňŉǹ"),
        ("o", "òóôõöøōŏőơǒǫǭǿȍȏȫȭȯȱ"),
        ("r", "ŕŗřȑȓ"),
        ("s", "śŝşšș"),
        ("t", "ţťŧț"),
        ("u", "ùúûüũūŭůűųưǔǖǘǚǜȕȗ"),
        ("w", "ŵ"),
        ("y", "ýÿŷȳ"),
        ("z", "źżžƶ"),
        ("ss", "ß"),
        ("ae", "æǣǽ"),
        ("oe", "œ"),
        ("th", "þ"),
    ];
    TABLE
        .iter()
        .find(|(_, accented)| accented.contains(c))
        .map(|(base, _)| *base)
}

/// A key whose byte order is the natural order of the folded text: digit
/// runs compare by value (then fewer leading zeros first), everything else
/// by folded character. Ties between equal keys are broken by the caller.
pub fn sort_key(text: &str) -> String {
    let folded = fold(text);
    let mut key = String::with_capacity(folded.len() + 8);
    let mut chars = folded.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_digit() {
            key.push(c);
            continue;
        }
        let mut run = String::from(c);
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            run.push(d);
        }
        let significant = run.trim_start_matches('0');
        let zeros = run.len() - significant.len();
        // '0' keeps a number below letters, as its first digit would be.
        key.push('0');
        key.push_str(&format!("{:03}", significant.len().min(999)));
        key.push_str(significant);
        key.push_str(&format!("{:02}", zeros.min(99)));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::scan::natural_cmp;
    use proptest::prelude::*;

    #[test]
    fn fold_removes_case_and_accents() {
        assert_eq!(fold("Poèmes saturniens"), "poemes saturniens");
        assert_eq!(fold("ÉCOLE Größe Œuvre"), "ecole grosse oeuvre");
        assert_eq!(fold("e\u{301}te\u{301}"), "ete");
        assert_eq!(fold("Чехов"), "чехов");
    }

    #[test]
    fn sort_key_orders_numbers_by_value_and_ignores_accents() {
        assert!(sort_key("Book 2") < sort_key("book 10"));
        assert!(sort_key("Émile") < sort_key("Fables"));
        assert!(sort_key("a") < sort_key("B"));
        assert!(sort_key("1") < sort_key("01"));
        assert!(sort_key("x 9") < sort_key("x a"));
    }

    proptest! {
        #[test]
        fn sort_key_order_is_the_natural_order(a in "[a-cA-C0-9 ./]{0,8}", b in "[a-cA-C0-9 ./]{0,8}") {
            prop_assert_eq!(sort_key(&a).cmp(&sort_key(&b)), natural_cmp(&a, &b));
        }

        #[test]
        fn fold_is_idempotent(s in "\\PC{0,20}") {
            let once = fold(&s);
            prop_assert_eq!(fold(&once), once);
        }
    }
}
