//! One page of books from a [`Library`] snapshot: an unfiltered page in
//! title, author or date order is a slice of a precomputed order; filters
//! narrow the candidates first (a category's members, the caller's
//! favorites), then match folded text. Pure: no I/O.

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
    /// `q` of `/books`: one substring of title, author or narrator.
    pub substring: Option<String>,
    /// `q` of `/books/search`: every word in title, author, narrator or description.
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

    fn matches(&self, book: &Book) -> bool {
        self.substring
            .as_deref()
            .is_none_or(|s| book.search_short.contains(s))
            && self
                .all_words
                .iter()
                .all(|w| book.search_long.contains(w.as_str()))
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
        candidates.retain(|&p| filter.matches(&self.books[p as usize]));
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

    /// Positions that may match, in title order, from the narrowest filter.
    fn candidates(&self, filter: &Filter<'_>) -> Vec<u32> {
        let mut candidates: Vec<u32> = match (filter.category, filter.only) {
            (Some(category), _) => self
                .category_books
                .get(category)
                .cloned()
                .unwrap_or_default(),
            (None, Some(only)) => {
                let mut p: Vec<u32> = only
                    .iter()
                    .filter_map(|id| self.by_id.get(id).map(|&p| p as u32))
                    .collect();
                p.sort_unstable();
                p
            }
            (None, None) => (0..self.books.len() as u32).collect(),
        };
        if let (Some(_), Some(only)) = (filter.category, filter.only) {
            candidates.retain(|&p| only.contains(&self.books[p as usize].id));
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
