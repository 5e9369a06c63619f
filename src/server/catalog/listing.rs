//! One page of books from a [`Library`] snapshot: an unfiltered page in
//! title, author or date order is a slice of a precomputed order; filters
//! narrow the candidates first (a category's members, the caller's
//! favorites, text matches over one contiguous buffer). Pure: no I/O.

use super::{Book, Library};
use crate::server::fold::fold;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Natural, case- and accent-insensitive title order.
    Title,
    /// Author, then title.
    Author,
    /// Newest first, then title.
    Added,
    /// The caller's latest progress write first; books without progress
    /// after, by title.
    Recent,
}

impl Sort {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "title" => Self::Title,
            "author" => Self::Author,
            "added" => Self::Added,
            "recent" => Self::Recent,
            _ => return None,
        })
    }
}

/// Which books a listing shows.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    /// `q` of `/books`: one substring of title, author, narrator or series.
    pub substring: Option<String>,
    /// `q` of `/books/search`: every word in title, author, narrator, series
    /// names or description.
    pub all_words: Vec<String>,
    /// A category id.
    pub category: Option<&'a str>,
    /// Only these book ids (the caller's favorites).
    pub only: Option<&'a HashSet<String>>,
}

impl Filter<'_> {
    /// Folds the query text the way book text is folded.
    pub fn text(substring: Option<&str>, all_words: Option<&str>) -> (Option<String>, Vec<String>) {
        (
            substring.map(fold).filter(|s| !s.is_empty()),
            all_words
                .map(|q| q.split_whitespace().map(fold).collect())
                .unwrap_or_default(),
        )
    }

    fn is_empty(&self) -> bool {
        self.substring.is_none()
            && self.all_words.is_empty()
            && self.category.is_none()
            && self.only.is_none()
    }
}

/// Folded text of every book in title order, in one buffer, so a search
/// scans memory sequentially instead of chasing one allocation per book.
#[derive(Debug, Default)]
pub struct TextIndex {
    /// Each book's text followed by a NUL.
    text: String,
    /// Where each book's text starts; one more entry: the end.
    starts: Vec<u32>,
}

impl TextIndex {
    /// Appends the next book's text (books must come in position order).
    pub fn push(&mut self, text: &str) {
        self.starts.push(self.text.len() as u32);
        self.text.push_str(text);
        self.text.push('\0');
    }

    /// Ends the index (after the last push).
    pub fn finish(&mut self) {
        self.starts.push(self.text.len() as u32);
    }

    /// Positions whose text contains `needle`, ascending.
    pub fn matching(&self, needle: &str) -> Vec<u32> {
        let bytes = self.text.as_bytes();
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(found) = finder.find(&bytes[from..]) {
            let at = from + found;
            let book = self.starts.partition_point(|&s| s as usize <= at) - 1;
            let end = self.starts[book + 1] as usize - 1; // the NUL
            if at + needle.len() <= end {
                out.push(book as u32);
                from = end + 1; // one hit per book is enough
            } else {
                from = at + 1; // spans two books: not a match
            }
        }
        out
    }
}

/// A page of a listing and the number of books the listing holds.
pub struct Listed<'a> {
    pub books: Vec<&'a Arc<Book>>,
    pub total: usize,
}

impl Library {
    /// Books `start..start + len` of the listing. `recent`: book id → when
    /// the caller's progress was last written (for [`Sort::Recent`]).
    pub fn list(
        &self,
        filter: &Filter<'_>,
        sort: Sort,
        recent: &HashMap<String, i64>,
        start: usize,
        len: usize,
    ) -> Listed<'_> {
        let n = self.books.len();
        let page = |order: &mut dyn Iterator<Item = u32>| -> Vec<&Arc<Book>> {
            order
                .skip(start)
                .take(len)
                .map(|p| &self.books[p as usize])
                .collect()
        };
        if filter.is_empty() {
            let books = match sort {
                Sort::Title => self.books.iter().skip(start).take(len).collect(),
                Sort::Author => page(&mut self.by_author.iter().copied()),
                Sort::Added => page(&mut self.by_added.iter().copied()),
                Sort::Recent => {
                    let first = self.recent_first(None, recent);
                    let seen: HashSet<u32> = first.iter().copied().collect();
                    page(
                        &mut first
                            .into_iter()
                            .chain((0..n as u32).filter(|p| !seen.contains(p))),
                    )
                }
            };
            return Listed { books, total: n };
        }
        let mut candidates = self.candidates(filter);
        match sort {
            Sort::Title => {}
            Sort::Author => candidates.sort_by_key(|&p| self.author_rank[p as usize]),
            Sort::Added => candidates.sort_by_key(|&p| self.added_rank[p as usize]),
            Sort::Recent => {
                let first = self.recent_first(Some(&candidates), recent);
                let seen: HashSet<u32> = first.iter().copied().collect();
                candidates.retain(|p| !seen.contains(p));
                candidates.splice(0..0, first);
            }
        }
        Listed {
            total: candidates.len(),
            books: page(&mut candidates.iter().copied()),
        }
    }

    /// Positions that pass every filter, in title order: the smallest
    /// list of (category members, favorites, each text match) narrowed by
    /// the others.
    fn candidates(&self, filter: &Filter<'_>) -> Vec<u32> {
        let mut lists: Vec<Vec<u32>> = Vec::new();
        if let Some(category) = filter.category {
            lists.push(
                self.category_books
                    .get(category)
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        if let Some(only) = filter.only {
            let mut p: Vec<u32> = only
                .iter()
                .filter_map(|id| self.by_id.get(id).map(|&p| p as u32))
                .collect();
            p.sort_unstable();
            lists.push(p);
        }
        if let Some(s) = &filter.substring {
            lists.push(self.short_text.matching(s));
        }
        for word in &filter.all_words {
            lists.push(self.long_text.matching(word));
        }
        lists.sort_by_key(Vec::len);
        let mut lists = lists.into_iter();
        let Some(mut candidates) = lists.next() else {
            return (0..self.books.len() as u32).collect();
        };
        for other in lists {
            candidates.retain(|p| other.binary_search(p).is_ok());
        }
        candidates
    }

    /// Books with progress (among `within`, if given), latest write first.
    fn recent_first(&self, within: Option<&[u32]>, recent: &HashMap<String, i64>) -> Vec<u32> {
        let within: Option<HashSet<u32>> = within.map(|w| w.iter().copied().collect());
        let mut first: Vec<(i64, u32)> = recent
            .iter()
            .filter_map(|(id, &at)| Some((at, *self.by_id.get(id)? as u32)))
            .filter(|(_, p)| within.as_ref().is_none_or(|w| w.contains(p)))
            .collect();
        first.sort_by_key(|&(at, p)| (std::cmp::Reverse(at), p));
        first.into_iter().map(|(_, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::TextIndex;

    #[test]
    fn text_index_finds_each_book_once_and_never_across_two() {
        let mut index = TextIndex::default();
        for text in ["abc abc", "xab", "cde", "", "abcab"] {
            index.push(text);
        }
        index.finish();
        assert_eq!(index.matching("abc"), [0, 4]);
        assert_eq!(index.matching("ab"), [0, 1, 4]);
        assert_eq!(index.matching("bx"), [] as [u32; 0]);
        assert_eq!(
            index.matching("b\0c"),
            [] as [u32; 0],
            "not across the separator"
        );
        assert_eq!(index.matching("cde"), [2]);
    }
}
