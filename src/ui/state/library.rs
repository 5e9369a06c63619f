//! The library list: all loaded books, the filtered/sorted view of them,
//! the cursor, and the fuzzy search over cached match strings.
//!
//! Only indices move around: 100k books are sorted and filtered once per
//! change, and the views draw just the rows that are visible.

use crate::domain::{Book, BookId, Category, CategoryId};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32String};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Favorites,
    InProgress,
    Finished,
}

impl Filter {
    pub fn next(self) -> Self {
        match self {
            Filter::All => Filter::Favorites,
            Filter::Favorites => Filter::InProgress,
            Filter::InProgress => Filter::Finished,
            Filter::Finished => Filter::All,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Favorites => "favorites",
            Filter::InProgress => "in progress",
            Filter::Finished => "finished",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Title,
    Author,
    Recent,
}

impl Sort {
    pub fn next(self) -> Self {
        match self {
            Sort::Title => Sort::Author,
            Sort::Author => Sort::Recent,
            Sort::Recent => Sort::Title,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Sort::Title => "title",
            Sort::Author => "author",
            Sort::Recent => "recent",
        }
    }
}

/// An active search: the query and the pending server request.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub query: String,
    /// When to ask the server (debounce), if not asked yet.
    pub ask_server_at: Option<u64>,
    pub asked: Option<String>,
}

pub struct Library {
    books: Vec<Book>,
    by_id: HashMap<BookId, usize>,
    /// "title  author" per book, converted once (nucleo's Utf32String).
    keys: Vec<Utf32String>,
    view: Vec<u32>,
    pub cursor: usize,
    pub offset: usize,
    pub filter: Filter,
    pub category: Option<CategoryId>,
    pub categories: Vec<Category>,
    pub sort: Sort,
    pub search: Option<Search>,
    pub loaded: bool,
    pub from_cache: bool,
    matcher: Matcher,
}

impl Default for Library {
    fn default() -> Self {
        Library {
            books: Vec::new(),
            by_id: HashMap::new(),
            keys: Vec::new(),
            view: Vec::new(),
            cursor: 0,
            offset: 0,
            filter: Filter::All,
            category: None,
            categories: Vec::new(),
            sort: Sort::Title,
            search: None,
            loaded: false,
            from_cache: false,
            matcher: Matcher::new(Config::DEFAULT),
        }
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("books", &self.books.len())
            .field("view", &self.view.len())
            .field("cursor", &self.cursor)
            .finish()
    }
}

fn match_key(b: &Book) -> Utf32String {
    let mut s = b.title.clone();
    if !b.authors.is_empty() {
        s.push_str("  ");
        s.push_str(&b.authors.join(", "));
    }
    Utf32String::from(s)
}

/// Fraction listened, when it is known.
pub fn fraction(b: &Book) -> Option<f64> {
    let p = b.progress.as_ref()?;
    if p.finished {
        return Some(1.0);
    }
    let d = b.duration.filter(|d| *d > 0.0)?;
    Some((p.book_position? / d).clamp(0.0, 1.0))
}

fn in_progress(b: &Book) -> bool {
    b.progress
        .as_ref()
        .is_some_and(|p| !p.finished && (p.position > 0.0 || p.book_position.unwrap_or(0.0) > 0.0))
}

fn recency(b: &Book) -> i64 {
    b.progress
        .as_ref()
        .and_then(|p| p.server_updated_at.or(p.client_updated_at))
        .unwrap_or(i64::MIN)
}

impl Library {
    pub fn books(&self) -> &[Book] {
        &self.books
    }
    pub fn len(&self) -> usize {
        self.view.len()
    }
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }
    pub fn total(&self) -> usize {
        self.books.len()
    }
    pub fn get(&self, id: &BookId) -> Option<&Book> {
        self.by_id.get(id).map(|&i| &self.books[i])
    }
    pub fn get_mut(&mut self, id: &BookId) -> Option<&mut Book> {
        self.by_id.get(id).map(|&i| &mut self.books[i])
    }
    /// The book at a position of the current view.
    pub fn row(&self, i: usize) -> Option<&Book> {
        self.view.get(i).map(|&b| &self.books[b as usize])
    }
    pub fn selected(&self) -> Option<&Book> {
        self.row(self.cursor)
    }

    /// Replaces the whole library (a fresh list or the cache).
    pub fn set_books(&mut self, books: Vec<Book>, from_cache: bool) {
        let keep = self.selected().map(|b| b.id.clone());
        self.books = Vec::with_capacity(books.len());
        self.by_id.clear();
        self.keys.clear();
        for b in books {
            self.insert(b);
        }
        self.loaded = true;
        self.from_cache = from_cache;
        self.rebuild(keep);
    }

    fn insert(&mut self, b: Book) {
        if let Some(&i) = self.by_id.get(&b.id) {
            self.keys[i] = match_key(&b);
            self.books[i] = b;
            return;
        }
        self.by_id.insert(b.id.clone(), self.books.len());
        self.keys.push(match_key(&b));
        self.books.push(b);
    }

    /// Merges server search results in (new books are appended, known ones
    /// updated); the view is re-run.
    pub fn merge(&mut self, books: Vec<Book>) {
        let keep = self.selected().map(|b| b.id.clone());
        for b in books {
            self.insert(b);
        }
        self.rebuild(keep);
    }

    pub fn update_book(&mut self, id: &BookId, f: impl FnOnce(&mut Book)) {
        if let Some(&i) = self.by_id.get(id) {
            f(&mut self.books[i]);
            self.keys[i] = match_key(&self.books[i]);
        }
    }

    fn passes(&self, b: &Book) -> bool {
        let by_filter = match self.filter {
            Filter::All => true,
            Filter::Favorites => b.favorite,
            Filter::InProgress => in_progress(b),
            Filter::Finished => b.progress.as_ref().is_some_and(|p| p.finished),
        };
        by_filter
            && self
                .category
                .as_ref()
                .is_none_or(|c| b.categories.iter().any(|bc| &bc.id == c))
    }

    /// Re-runs filter, search and sort; keeps the cursor on `keep` if it is
    /// still visible.
    pub fn rebuild(&mut self, keep: Option<BookId>) {
        let query = self.search.as_ref().map(|s| s.query.trim()).unwrap_or("");
        if query.is_empty() {
            let mut view: Vec<u32> = (0..self.books.len() as u32)
                .filter(|&i| self.passes(&self.books[i as usize]))
                .collect();
            let books = &self.books;
            match self.sort {
                Sort::Title => view.sort_by_cached_key(|&i| books[i as usize].title.to_lowercase()),
                Sort::Author => view.sort_by_cached_key(|&i| {
                    let b = &books[i as usize];
                    (
                        b.authors.first().map(|a| a.to_lowercase()),
                        b.title.to_lowercase(),
                    )
                }),
                Sort::Recent => {
                    view.sort_by_key(|&i| std::cmp::Reverse(recency(&books[i as usize])))
                }
            }
            self.view = view;
        } else {
            let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
            let mut scored: Vec<(u32, u32)> = Vec::new();
            for (i, key) in self.keys.iter().enumerate() {
                if !self.passes(&self.books[i]) {
                    continue;
                }
                if let Some(score) = pattern.score(key.slice(..), &mut self.matcher) {
                    scored.push((score, i as u32));
                }
            }
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            self.view = scored.into_iter().map(|(_, i)| i).collect();
        }
        self.cursor = keep
            .and_then(|id| self.by_id.get(&id).copied())
            .and_then(|bi| self.view.iter().position(|&v| v as usize == bi))
            .unwrap_or(0);
        self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
    }

    /// Char (grapheme) indices of `title` that match the search, for
    /// highlighting. Computed for visible rows only.
    pub fn title_matches(&mut self, book: &Book) -> Vec<u32> {
        let Some(q) = self
            .search
            .as_ref()
            .map(|s| s.query.trim())
            .filter(|q| !q.is_empty())
        else {
            return Vec::new();
        };
        let pattern = Pattern::parse(q, CaseMatching::Smart, Normalization::Smart);
        let hay = Utf32String::from(book.title.as_str());
        let mut idx = Vec::new();
        pattern.indices(hay.slice(..), &mut self.matcher, &mut idx);
        idx.sort_unstable();
        idx.dedup();
        idx
    }

    pub fn move_by(&mut self, delta: isize) {
        if self.view.is_empty() {
            self.cursor = 0;
            return;
        }
        let max = self.view.len() - 1;
        self.cursor = self.cursor.saturating_add_signed(delta).min(max);
    }

    pub fn move_to(&mut self, i: usize) {
        self.cursor = i.min(self.view.len().saturating_sub(1));
    }

    /// Keeps the cursor inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        let height = height.max(1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height;
        }
        self.offset = self.offset.min(self.view.len().saturating_sub(height));
    }

    pub fn next_category(&mut self) {
        self.category = match &self.category {
            None => self.categories.first().map(|c| c.id.clone()),
            Some(cur) => {
                let i = self.categories.iter().position(|c| &c.id == cur);
                i.and_then(|i| self.categories.get(i + 1))
                    .map(|c| c.id.clone())
            }
        };
    }

    pub fn category_name(&self) -> Option<&str> {
        let id = self.category.as_ref()?;
        self.categories
            .iter()
            .find(|c| &c.id == id)
            .map(|c| c.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Progress;

    fn book(id: &str, title: &str, author: &str) -> Book {
        Book {
            id: BookId::new(id),
            title: title.into(),
            authors: vec![author.into()],
            duration: Some(3600.0),
            ..Book::default()
        }
    }

    fn lib() -> Library {
        let mut l = Library::default();
        let mut started = book("3", "Moby Dick", "Melville");
        started.progress = Some(Progress {
            chapter_id: "c1".into(),
            position: 30.0,
            book_position: Some(900.0),
            finished: false,
            client_updated_at: Some(5),
            server_updated_at: None,
        });
        let mut fav = book("2", "Emma", "Austen");
        fav.favorite = true;
        l.set_books(
            vec![book("1", "Pride and Prejudice", "Austen"), fav, started],
            false,
        );
        l
    }

    #[test]
    fn sorts_and_filters() {
        let mut l = lib();
        let titles = |l: &Library| {
            (0..l.len())
                .map(|i| l.row(i).unwrap().title.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(titles(&l), ["Emma", "Moby Dick", "Pride and Prejudice"]);
        l.sort = Sort::Recent;
        l.rebuild(None);
        assert_eq!(titles(&l)[0], "Moby Dick");
        l.filter = Filter::Favorites;
        l.rebuild(None);
        assert_eq!(titles(&l), ["Emma"]);
        l.filter = Filter::InProgress;
        l.rebuild(None);
        assert_eq!(titles(&l), ["Moby Dick"]);
        assert_eq!(fraction(l.row(0).unwrap()), Some(0.25));
    }

    #[test]
    fn fuzzy_search_ranks_and_highlights() {
        let mut l = lib();
        l.search = Some(Search {
            query: "pp".into(),
            ..Search::default()
        });
        l.rebuild(None);
        assert_eq!(l.len(), 1);
        let b = l.row(0).unwrap().clone();
        assert_eq!(b.title, "Pride and Prejudice");
        let idx = l.title_matches(&b);
        assert_eq!(idx.len(), 2);
        // Matches authors too.
        l.search.as_mut().unwrap().query = "melv".into();
        l.rebuild(None);
        assert_eq!(l.row(0).unwrap().title, "Moby Dick");
    }

    #[test]
    fn merge_adds_server_results_and_keeps_the_cursor() {
        let mut l = lib();
        l.move_to(1);
        let id = l.selected().unwrap().id.clone();
        l.merge(vec![book("9", "Aaa", "Zed")]);
        assert_eq!(l.total(), 4);
        assert_eq!(l.selected().unwrap().id, id);
    }

    #[test]
    fn scrolling_keeps_cursor_visible() {
        let mut l = Library::default();
        l.set_books(
            (0..1000)
                .map(|i| book(&i.to_string(), &format!("{i:04}"), "a"))
                .collect(),
            true,
        );
        l.move_by(500);
        l.scroll_into_view(10);
        assert_eq!(l.offset, 491);
        l.move_by(-10_000);
        l.scroll_into_view(10);
        assert_eq!((l.cursor, l.offset), (0, 0));
    }
}
