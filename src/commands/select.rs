//! `earmark books --author/--narrator/--series`: which listed books are
//! kept, and the series order. Names match whole, ignoring case and
//! surrounding spaces. Pure, over the books the server listed.

use crate::domain::{Book, series_order};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookSelect {
    pub author: Option<String>,
    pub narrator: Option<String>,
    pub series: Option<String>,
}

fn same(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

impl BookSelect {
    pub fn is_empty(&self) -> bool {
        self.author.is_none() && self.narrator.is_none() && self.series.is_none()
    }

    pub fn keeps(&self, b: &Book) -> bool {
        fn has<'a>(want: &Option<String>, mut names: impl Iterator<Item = &'a str>) -> bool {
            want.as_deref().is_none_or(|w| names.any(|n| same(n, w)))
        }
        has(&self.author, b.authors.iter().map(String::as_str))
            && has(&self.narrator, b.narrators.iter().map(String::as_str))
            && has(&self.series, b.series.iter().map(|s| s.name.as_str()))
    }

    /// Keeps the selected books; with `--series`, in series order
    /// (sequence, then title; unnumbered last).
    pub fn apply(&self, books: &mut Vec<Book>) {
        books.retain(|b| self.keeps(b));
        if let Some(series) = &self.series {
            let seq = |b: &Book| {
                b.series
                    .iter()
                    .find(|s| same(&s.name, series))
                    .and_then(|s| s.sequence.clone())
            };
            books.sort_by(|a, b| {
                series_order((seq(a).as_ref(), &a.title), (seq(b).as_ref(), &b.title))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BookId, SeriesRef};

    fn book(title: &str, seq: Option<&str>) -> Book {
        Book {
            id: BookId::new(title),
            title: title.into(),
            authors: vec!["Terry Pratchett".into()],
            narrators: vec!["Nigel Planer".into()],
            series: seq
                .map(|s| SeriesRef::new("Discworld", Some(s)).unwrap())
                .into_iter()
                .collect(),
            ..Book::default()
        }
    }

    #[test]
    fn selects_by_whole_names_and_orders_a_series_by_sequence() {
        let mut books = vec![
            book("Mort", Some("#10")),
            book("Good Omens", None),
            book("The Light Fantastic", Some("2")),
            book("Interlude", Some("2.5")),
        ];
        let select = BookSelect {
            series: Some(" discworld ".into()),
            author: Some("terry pratchett".into()),
            ..BookSelect::default()
        };
        select.apply(&mut books);
        let titles: Vec<&str> = books.iter().map(|b| b.title.as_str()).collect();
        assert_eq!(titles, ["The Light Fantastic", "Interlude", "Mort"]);
        let none = BookSelect {
            narrator: Some("Nigel".into()),
            ..BookSelect::default()
        };
        assert!(!none.keeps(&books[0]), "a part of a name is not the name");
    }
}
