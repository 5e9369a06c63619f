//! The library list: all loaded books, the filtered/sorted view of them,
//! the cursor, and the fuzzy search (match strings made per candidate);
//! grouping and the focus on one author, narrator or series are in `facets`.
//!
//! Only indices move around: 100k books are sorted and filtered once per
//! change, and the views draw just the rows that are visible.

use crate::domain::{Book, BookId, Category, CategoryId};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Matcher, Utf32String};
use std::cell::OnceCell;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Favorites,
    InProgress,
    Finished,
}

impl Filter {
    const ALL: [Filter; 4] = [
        Filter::All,
        Filter::Favorites,
        Filter::InProgress,
        Filter::Finished,
    ];

    pub fn next(self) -> Self {
        Self::ALL[(self as usize + 1) % Self::ALL.len()]
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
    const ALL: [Sort; 3] = [Sort::Title, Sort::Author, Sort::Recent];

    pub fn next(self) -> Self {
        Self::ALL[(self as usize + 1) % Self::ALL.len()]
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

mod arrival;
mod facets;
mod index;
mod keys;
mod scan;
pub use arrival::Arrival;
pub use facets::{Facet, Focus, GroupRow, sequence_in};
use index::IdIndex;
pub use keys::SEARCH_DEBOUNCE_MS;
pub use scan::SCAN_CHUNK;
use scan::Scan;

#[derive(Default)]
pub struct Library {
    books: Vec<Book>,
    scan: Option<Scan>,
    /// Built on first use: indexing 100k ids costs more than the first frame.
    by_id: OnceCell<IdIndex>,
    /// All books in the order of `.0`, reused while the books do not change.
    order: Option<(Sort, Vec<u32>)>,
    /// `order` is the order the server sent the pages in (the list is
    /// arriving and the sort has not been changed since).
    arrival_order: bool,
    /// Views of the queries typed so far in this search, so a longer query
    /// only re-scores the previous matches and Backspace is instant.
    narrowing: Vec<(String, Vec<u32>)>,
    narrowed_for: (Filter, Option<CategoryId>, Option<Focus>),
    view: Vec<u32>,
    /// Grouped by this facet: the group list is shown until one is opened.
    pub group: Option<Facet>,
    /// Narrowed to one author, narrator or series.
    pub focus: Option<Focus>,
    /// The group list (built by `rebuild` while it is shown).
    groups: Vec<facets::GroupRow>,
    /// The group row the focus was opened from, for the way back.
    group_cursor: usize,
    pub cursor: usize,
    pub offset: usize,
    pub filter: Filter,
    pub category: Option<CategoryId>,
    pub categories: Vec<Category>,
    pub sort: Sort,
    pub search: Option<Search>,
    /// Keys go to the search line (false once Enter moved focus to the list).
    pub search_focus: bool,
    pub loaded: bool,
    pub from_cache: bool,
    /// Only the head of the cache is in; the rest is being read.
    pub partial: bool,
    /// The server's list is arriving page by page (or failed part way).
    pub arrival: Option<Arrival>,
    matcher: Matcher,
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

/// What a search matches a book by: "title  author, author", written into
/// `out`. Made per candidate as a scan scores it rather than kept for every
/// book: 100k kept keys were ~8 MB, making one is a copy of ~50 bytes.
fn match_key(b: &Book, out: &mut String) {
    out.clear();
    out.push_str(&b.title);
    for (i, a) in b.authors.iter().enumerate() {
        out.push_str(if i == 0 { "  " } else { ", " });
        out.push_str(a);
    }
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

/// Case-insensitive comparison key, without allocating.
fn caseless(s: &str) -> Caseless<'_> {
    Caseless(s)
}

struct Caseless<'a>(&'a str);

impl Ord for Caseless<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.0.is_ascii() && other.0.is_ascii() {
            let a = self.0.bytes().map(|c| c.to_ascii_lowercase());
            return a.cmp(other.0.bytes().map(|c| c.to_ascii_lowercase()));
        }
        let a = self.0.chars().flat_map(char::to_lowercase);
        let b = other.0.chars().flat_map(char::to_lowercase);
        a.cmp(b)
    }
}
impl PartialOrd for Caseless<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Caseless<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Caseless<'_> {}

/// Typing `added` after a query only ever removes matches (no operators).
fn narrows(added: &str) -> bool {
    !added.contains(['!', '^', '$', '\'', '\\'])
}

fn recency(b: &Book) -> i64 {
    b.progress
        .as_ref()
        .and_then(|p| p.server_updated_at.or(p.client_updated_at))
        .unwrap_or(i64::MIN)
}

/// How two books (indices into `books`) compare in `sort`. The comparators
/// do not allocate; the cache is stored in title order and the sort is
/// linear on sorted input.
fn order_by(sort: Sort, books: &[Book]) -> impl Fn(&u32, &u32) -> std::cmp::Ordering + '_ {
    let title = move |i: u32| caseless(&books[i as usize].title);
    let author =
        move |i: u32| caseless(books[i as usize].authors.first().map_or("", |s| s.as_str()));
    move |&a: &u32, &b: &u32| match sort {
        Sort::Title => title(a).cmp(&title(b)),
        Sort::Author => author(a)
            .cmp(&author(b))
            .then_with(|| title(a).cmp(&title(b))),
        Sort::Recent => recency(&books[b as usize]).cmp(&recency(&books[a as usize])),
    }
}

impl Library {
    pub fn books(&self) -> &[Book] {
        &self.books
    }
    /// Rows of the list on screen: groups while the group list is shown.
    pub fn len(&self) -> usize {
        if self.showing_groups() {
            self.groups.len()
        } else {
            self.view.len()
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn total(&self) -> usize {
        self.books.len()
    }
    fn position(&self, id: &BookId) -> Option<usize> {
        self.by_id
            .get_or_init(|| IdIndex::build(&self.books))
            .get(&self.books, id)
    }
    pub fn get(&self, id: &BookId) -> Option<&Book> {
        self.position(id).map(|i| &self.books[i])
    }
    /// The book at a position of the current view.
    pub fn row(&self, i: usize) -> Option<&Book> {
        if self.showing_groups() {
            return None;
        }
        self.view.get(i).map(|&b| &self.books[b as usize])
    }
    pub fn selected(&self) -> Option<&Book> {
        self.row(self.cursor)
    }

    /// Replaces the whole library (a fresh list or the cache). A fresh
    /// list ends the arrival of pages.
    pub fn set_books(&mut self, books: Vec<Book>, from_cache: bool) {
        let keep = self.selected().map(|b| b.id.clone());
        self.by_id = OnceCell::new();
        self.order = None;
        if !from_cache {
            self.arrival = None;
        }
        self.narrowing.clear();
        self.scan = None;
        self.books = books;
        self.loaded = true;
        self.from_cache = from_cache;
        self.partial = false;
        self.rebuild(keep);
    }

    /// Replaces the book of `b`'s id, or adds it (its index when new).
    fn place(&mut self, b: Book) -> Option<u32> {
        if let Some(i) = self.position(&b.id) {
            self.books[i] = b;
            return None;
        }
        let n = self.books.len();
        self.books.push(b);
        if let Some(m) = self.by_id.get_mut() {
            m.insert(&self.books, n);
        }
        Some(n as u32)
    }

    /// Merges server search results in (new books are appended, known ones
    /// updated); the view is re-run.
    pub fn merge(&mut self, books: Vec<Book>) {
        let keep = self.selected().map(|b| b.id.clone());
        if !books.is_empty() {
            self.narrowing.clear();
            self.scan = None;
            self.order = None;
        }
        for b in books {
            self.place(b);
        }
        self.rebuild(keep);
    }

    pub fn update_book(&mut self, id: &BookId, f: impl FnOnce(&mut Book)) {
        if let Some(i) = self.position(id) {
            self.order = None;
            f(&mut self.books[i]);
            self.narrowing.clear();
            // A running scan may have scored the old key: start it again.
            match self.scan.as_ref().map(Scan::done) {
                Some(false) => {
                    self.scan = None;
                    let keep = self.selected().map(|b| b.id.clone());
                    self.rebuild(keep);
                }
                Some(true) => self.scan = None,
                None => {}
            }
        }
    }

    /// How far a running search scan is: (candidates scored, candidates).
    pub fn scan_progress(&self) -> Option<(usize, usize)> {
        self.scan
            .as_ref()
            .filter(|s| !s.done())
            .map(|s| (s.next, s.candidates.len()))
    }

    /// A search scan is still running (more steps will follow).
    pub fn searching(&self) -> bool {
        self.scan.as_ref().is_some_and(|s| !s.done())
    }

    /// Scores the next chunk of a running search; true if it did anything.
    /// A finished scan is kept, so books that arrive later are scored
    /// into it.
    pub fn step_scan(&mut self) -> bool {
        self.searching() && self.step()
    }

    /// Scores the next chunk of the scan (an empty scan finishes at once).
    fn step(&mut self) -> bool {
        // The cursor stays on the best match, or on the book it was moved to.
        let keep = (self.cursor > 0)
            .then(|| self.selected().map(|b| b.id.clone()))
            .flatten();
        let Library {
            scan,
            books,
            matcher,
            ..
        } = self;
        let Some(scan) = scan.as_mut() else {
            return false;
        };
        scan.step(books, matcher);
        self.view = scan.found.iter().map(|&(_, i)| i).collect();
        if scan.done() {
            self.narrowing.push((scan.query.clone(), self.view.clone()));
        }
        self.place_cursor(keep);
        true
    }

    fn place_cursor(&mut self, keep: Option<BookId>) {
        if self.showing_groups() {
            // The group list keeps its row across a refresh.
            self.cursor = self.cursor.min(self.groups.len().saturating_sub(1));
            return;
        }
        self.cursor = keep
            .and_then(|id| self.position(&id))
            .and_then(|bi| self.view.iter().position(|&v| v as usize == bi))
            .unwrap_or(0);
        self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
    }

    fn passes(&self, b: &Book) -> bool {
        self.passes_filter(b) && self.focus.as_ref().is_none_or(|f| f.passes(b))
    }

    /// Of `books` (indices), those that pass.
    fn passing(&self, books: impl Iterator<Item = u32>) -> Vec<u32> {
        books
            .filter(|&i| self.passes(&self.books[i as usize]))
            .collect()
    }

    /// Filter and category (not the focus): what the group list counts.
    fn passes_filter(&self, b: &Book) -> bool {
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
        let query = self
            .search
            .as_ref()
            .map(|s| s.query.trim().to_owned())
            .unwrap_or_default();
        // Remembered views and a running scan hold only books that passed
        // the filter and category they were made with.
        let passing = (self.filter, self.category.clone(), self.focus.clone());
        if self.narrowed_for != passing {
            self.narrowing.clear();
            self.scan = None;
            self.narrowed_for = passing;
        }
        if query.is_empty() {
            self.narrowing.clear();
            self.scan = None;
            if self.order.as_ref().is_none_or(|(s, _)| *s != self.sort) {
                let mut all: Vec<u32> = (0..self.books.len() as u32).collect();
                all.sort_by(order_by(self.sort, &self.books));
                self.order = Some((self.sort, all));
                self.arrival_order = false;
            }
            self.view = self.passing(self.order.iter().flat_map(|(_, o)| o.iter().copied()));
            self.arrange_by_facet();
        } else {
            // Drop remembered views that this query does not extend.
            while self.narrowing.last().is_some_and(|(q, _)| {
                !(query.starts_with(q.as_str()) && narrows(&query[q.len()..]))
            }) {
                self.narrowing.pop();
            }
            // A running scan for a shorter query narrows too: its matches so
            // far plus what it has not scored yet.
            let running = self.scan.take().filter(|sc| {
                query.starts_with(sc.query.as_str()) && narrows(&query[sc.query.len()..])
            });
            if let Some(sc) = running.as_ref().filter(|sc| sc.query == query) {
                self.view = sc.found.iter().map(|&(_, i)| i).collect();
                self.scan = running;
                self.place_cursor(keep);
                return;
            }
            if let Some((q, v)) = self.narrowing.last()
                && q == &query
            {
                self.view = v.clone();
                self.place_cursor(keep);
                return;
            }
            let candidates: Vec<u32> = match (running, self.narrowing.last()) {
                (Some(sc), _) => {
                    let mut c: Vec<u32> = sc.found.iter().map(|&(_, i)| i).collect();
                    c.extend_from_slice(&sc.candidates[sc.next..]);
                    c
                }
                (None, Some((_, v))) => v.clone(),
                (None, None) => self.passing(0..self.books.len() as u32),
            };
            let pattern = Pattern::parse(&query, CaseMatching::Smart, Normalization::Smart);
            self.scan = Some(Scan {
                query,
                pattern,
                candidates,
                next: 0,
                found: Vec::new(),
                key: String::new(),
                key_chars: Vec::new(),
            });
            self.cursor = 0;
            self.step();
            self.place_cursor(keep);
            return;
        }
        self.place_cursor(keep);
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
        if self.is_empty() {
            self.cursor = 0;
            return;
        }
        let max = self.len() - 1;
        self.cursor = self.cursor.saturating_add_signed(delta).min(max);
    }

    pub fn move_to(&mut self, i: usize) {
        self.cursor = i.min(self.len().saturating_sub(1));
    }

    /// Keeps the cursor inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        let height = height.max(1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height;
        }
        self.offset = self.offset.min(self.len().saturating_sub(height));
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
mod tests;
