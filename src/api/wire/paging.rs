//! Lists: where the array sits, the paging facts in whatever style the
//! server reports them (page, offset, cursor, `next` URL, `links.next`,
//! `meta.total`), where the next page starts, and decoding items one by
//! one so a bad item is skipped and counted instead of failing the list.

use super::fields::*;
use crate::api::error::ApiError;
use serde_json::Value;

/// Keys under which a list may sit.
const LIST_KEYS: &[&str] = &[
    "items",
    "list",
    "books",
    "records",
    "rows",
    "results",
    "content",
    "data",
    "chapters",
    "categories",
    "bookmarks",
    "favorites",
    "tracks",
    "files",
    "result",
    "manifest",
];
/// Objects that hold paging facts beside the list.
const PAGING_OBJECTS: &[&str] = &["meta", "pagination", "paging", "pageInfo", "page_info"];

/// Paging facts a list answer reported, in whatever style it uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageInfo {
    pub total: Option<u64>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    pub offset: Option<u64>,
    pub has_more: Option<bool>,
    /// Under a key that names a cursor or token (`nextCursor`,
    /// `nextPageToken`, `cursor`): sent back as it is, whatever its
    /// characters (`/`, `+`, `=`).
    pub cursor: Option<String>,
    /// Under a key that names a link (`next_page_url`, `@odata.nextLink`,
    /// `links.next`, `_links.next.href`), as the server gave it.
    pub next_url: Option<String>,
    /// Under a bare `next` (or `nextPage`), whose key says neither: a link
    /// when, read as one, it addresses this very list; else a cursor
    /// ([`PageInfo::settle_next`]).
    pub next_unnamed: Option<String>,
    pub total_pages: Option<u64>,
    /// `first: true|false` (Spring), when said as a boolean.
    pub first: Option<bool>,
    /// Whether a page before this one exists (`hasPrevious`, a `prev` link).
    pub has_previous: Option<bool>,
}

impl PageInfo {
    /// Settle a bare `next` by what it addresses (never by how it looks):
    /// a link when `addresses_this_list` says that, read as a link, it
    /// names the list this page came from (`?page=2`, `/api/v1/books?p=2`,
    /// `https://host/api/v1/books?p=2`); else an opaque cursor
    /// (`/eyJ…`, `a+b/c=`). A key that names its role is never settled.
    pub fn settle_next(&mut self, addresses_this_list: impl Fn(&str) -> bool) {
        let Some(s) = self.next_unnamed.take() else {
            return;
        };
        if addresses_this_list(&s) {
            self.next_url.get_or_insert_with(|| s.trim().to_owned());
        } else {
            self.cursor.get_or_insert(s);
        }
    }
}

/// The role a `next…` key names by its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NextRole {
    /// `nextLink`, `next_page_url`, `nextHref`, `next_uri`.
    Link,
    /// `next`, `nextPage`: the key does not say.
    Unnamed,
    /// `nextCursor`, `nextPageToken`, `cursor`, `next_key`, `nextMarker`.
    Cursor,
}

fn next_role(key: &str) -> NextRole {
    let w = key_words(key);
    let has = |x: &str| w.iter().any(|y| y == x);
    if ["url", "link", "href", "uri"].iter().any(|x| has(x)) {
        NextRole::Link
    } else if w == ["next"] || w == ["next", "page"] {
        NextRole::Unnamed
    } else {
        NextRole::Cursor
    }
}

/// What a key of a list answer says about paging, by its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fact {
    /// A count of items; `rank` 0 names a total (`totalItems`), 1 only a
    /// count (`count`), which may count this page's items.
    Total {
        rank: u8,
    },
    TotalPages,
    Page,
    PageSize,
    Offset,
    HasMore,
    /// `last: true|false`, or Laravel's `last_page` (a page count).
    Last,
    First,
    Previous,
    Next,
}

fn fact(key: &str) -> Option<Fact> {
    let w = key_words(key);
    let has = |x: &str| w.iter().any(|y| y == x);
    let only = |x: &str| w.len() == 1 && w[0] == x;
    Some(if has("prev") || has("previous") {
        Fact::Previous
    } else if has("more") || (has("has") && has("next")) {
        Fact::HasMore
    } else if has("next") || only("cursor") {
        Fact::Next
    } else if has("last") {
        Fact::Last
    } else if has("first") {
        Fact::First
    } else if only("pages")
        || (has("pages") || has("page")) && ["total", "count", "num", "nb"].iter().any(|x| has(x))
    {
        Fact::TotalPages
    } else if has("total") {
        Fact::Total { rank: 0 }
    } else if has("count") {
        Fact::Total { rank: 1 }
    } else if has("size") || has("limit") || has("per") {
        Fact::PageSize
    } else if only("offset") || only("skip") || only("start") {
        Fact::Offset
    } else if has("page")
        && (w.len() == 1
            || ["current", "number", "num", "no", "index"]
                .iter()
                .any(|x| has(x)))
    {
        Fact::Page
    } else {
        return None;
    })
}

impl PageInfo {
    /// The paging facts of one object of a list answer, read by the words
    /// of its keys (`total`, `totalElements`, `per_page`, `next_page_url`,
    /// `@odata.nextLink`, `hasPreviousPage`, …); what an outer level said
    /// first is kept.
    fn absorb(&mut self, o: &Obj, depth: u8) {
        let mut total: Option<(u8, u64)> = None;
        let (number, flag) = (unsigned_value, boolean_value);
        for (k, v) in o {
            let Some(f) = fact(k) else { continue };
            match f {
                Fact::Total { rank } => {
                    if let Some(n) = number(v)
                        && total.is_none_or(|(r, _)| rank < r)
                    {
                        total = Some((rank, n));
                    }
                }
                Fact::TotalPages => {
                    self.total_pages = self.total_pages.or_else(|| number(v));
                }
                Fact::Page => self.page = self.page.or_else(|| number(v)),
                Fact::PageSize => self.page_size = self.page_size.or_else(|| number(v)),
                Fact::Offset => self.offset = self.offset.or_else(|| number(v)),
                Fact::HasMore => self.has_more = self.has_more.or_else(|| flag(v)),
                Fact::Last => match v {
                    Value::Bool(last) => {
                        self.has_more.get_or_insert(!last);
                    }
                    other => self.total_pages = self.total_pages.or_else(|| number(other)),
                },
                // Strictly a boolean: `first: 0` may be an index.
                Fact::First => self.first = self.first.or_else(|| v.as_bool()),
                Fact::Previous => {
                    let before = match v {
                        Value::Null => Some(false),
                        Value::Bool(b) => Some(*b),
                        Value::String(s) => Some(!s.trim().is_empty()),
                        Value::Number(_) | Value::Object(_) => Some(true),
                        Value::Array(_) => None,
                    };
                    self.has_previous = self.has_previous.or(before);
                }
                Fact::Next => match (next_role(k), v) {
                    // A `null` next is how link-style servers say "last page".
                    (_, Value::Null) => {
                        self.has_more.get_or_insert(false);
                    }
                    (NextRole::Link, Value::String(s)) if !s.trim().is_empty() => {
                        self.next_url.get_or_insert_with(|| s.trim().to_owned());
                    }
                    (NextRole::Unnamed, Value::String(s)) if !s.trim().is_empty() => {
                        self.next_unnamed.get_or_insert_with(|| s.clone());
                    }
                    // A cursor is opaque: a number is its digits.
                    (NextRole::Cursor, Value::String(_) | Value::Number(_)) => {
                        if let Some(c) = id_value(v) {
                            self.cursor.get_or_insert(c);
                        }
                    }
                    _ => {}
                },
            }
        }
        self.total = self.total.or(total.map(|(_, n)| n));
        if depth == 0 {
            return;
        }
        for k in ["links", "_links"] {
            if let Some(links) = o.get(k).and_then(Value::as_object) {
                if let Some(p) = links.get("prev").or_else(|| links.get("previous")) {
                    self.has_previous.get_or_insert(!p.is_null());
                }
                match links.get("next") {
                    Some(Value::String(s)) if !s.trim().is_empty() => {
                        self.next_url.get_or_insert_with(|| s.trim().to_owned());
                    }
                    Some(Value::Object(n)) => {
                        if let Some(h) = string(n, &["href", "url"]) {
                            self.next_url.get_or_insert(h);
                        }
                    }
                    Some(Value::Null) if self.has_more.is_none() => self.has_more = Some(false),
                    _ => {}
                }
            }
        }
        for k in PAGING_OBJECTS {
            if let Some(m) = o.get(*k).and_then(Value::as_object) {
                self.absorb(m, depth - 1);
            }
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct RawList<'a> {
    pub items: &'a [Value],
    pub info: PageInfo,
}

/// Find the array of a list answer and its paging facts: a bare array, or
/// under one of the list keys, possibly inside envelopes.
pub fn find_list<'a>(v: &'a Value, endpoint: &str) -> Result<RawList<'a>, ApiError> {
    let mut info = PageInfo::default();
    let mut cur = v;
    for _ in 0..4 {
        match cur {
            Value::Array(items) => return Ok(RawList { items, info }),
            Value::Object(o) => {
                info.absorb(o, 2);
                let next = LIST_KEYS
                    .iter()
                    .filter_map(|k| o.get(*k))
                    .find(|x| x.is_array())
                    .or_else(|| {
                        LIST_KEYS
                            .iter()
                            .filter_map(|k| o.get(*k))
                            .find(|x| x.is_object())
                    })
                    .or_else(|| the_one_list(o));
                match next {
                    Some(n) => cur = n,
                    None => break,
                }
            }
            _ => break,
        }
    }
    Err(ApiError::Decode {
        endpoint: endpoint.to_owned(),
        field: "items".to_owned(),
        problem: "is missing: no list found in the answer".to_owned(),
    })
}

/// The list of an answer that keeps it under a key earmark does not
/// know (`value`, `hits`, …): its only array, when it holds objects (or
/// nothing).
fn the_one_list(o: &Obj) -> Option<&Value> {
    let mut arrays = o.values().filter(|v| v.is_array());
    let one = arrays.next()?;
    let objects = one
        .as_array()
        .is_some_and(|a| a.iter().all(Value::is_object));
    (arrays.next().is_none() && objects).then_some(one)
}

/// Where the next page starts, in the style the server answered with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NextPage {
    Page(u64),
    Offset(u64),
    Cursor(String),
    /// A URL the server gave (`next`, `links.next`); the client resolves it
    /// and follows it only on the server's own origin.
    Url(String),
}

/// The next page to ask for, or `None` when the list is complete.
/// `fetched` counts items received so far including this page;
/// `requested_page` is the page number this answer is for.
///
/// When the server says nothing about paging, a page shorter than asked
/// for does NOT end the list (a server may ignore `pageSize`): the next
/// page is asked for, and the caller stops on an empty page or a page
/// whose items were all seen before.
pub fn next_page(
    info: &PageInfo,
    page_len: usize,
    fetched: u64,
    requested_page: u64,
    _requested_size: u64,
) -> Option<NextPage> {
    if page_len == 0 || info.has_more == Some(false) {
        return None;
    }
    let len = page_len as u64;
    if let Some(u) = &info.next_url {
        return Some(NextPage::Url(u.clone()));
    }
    // A bare `next` nobody settled is sent back, never followed.
    if let Some(c) = info.cursor.as_ref().or(info.next_unnamed.as_ref()) {
        return Some(NextPage::Cursor(c.clone()));
    }
    let more = info
        .has_more
        .unwrap_or_else(|| match (info.total, info.total_pages) {
            (Some(t), _) => fetched < t,
            (None, Some(tp)) => info.page.unwrap_or(requested_page) < tp,
            (None, None) => match info.page_size {
                Some(size) => len >= size.max(1),
                None => true,
            },
        });
    if !more {
        return None;
    }
    if let Some(off) = info.offset {
        return Some(NextPage::Offset(off.saturating_add(len)));
    }
    // The page after the one asked for, in the numbering the requests use
    // (an echo may count from 0 or from 1).
    Some(NextPage::Page(requested_page.saturating_add(1)))
}

/// Whether the answer to `page=1` says it is not the list's first page,
/// i.e. the server numbers its pages from 0: a `first: false` or
/// `hasPrevious` flag, a `prev` link, an offset echo past 0, an echo of
/// page 2, or counts that fit only a zero-based page (with a total `t` and
/// a page size `s`, page 1 holds `min(s, t)` items counted from 1 and
/// `min(s, t - s)` counted from 0).
pub fn skipped_first_page(info: &PageInfo, page_len: usize, asked_size: u64) -> bool {
    if info.first == Some(false)
        || info.has_previous == Some(true)
        || info.offset.is_some_and(|o| o > 0)
        || info.page == Some(2)
    {
        return true;
    }
    let (Some(total), len) = (info.total, page_len as u64) else {
        return false;
    };
    let size = info.page_size.unwrap_or(asked_size).max(1);
    len != size.min(total) && len == total.saturating_sub(size).min(size)
}

/// An item of a list that could not be decoded and was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedItem {
    /// Where it was: `GET /books page 2 items[3]`.
    pub place: String,
    /// Why: the decoder's error.
    pub reason: String,
}

impl std::fmt::Display for SkippedItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
}

/// Decode every item of a list with `item`, naming the endpoint and index
/// of the first bad one.
pub fn decode_items<T>(
    list: &RawList<'_>,
    endpoint: &str,
    mut item: impl FnMut(&Value, &str) -> Result<T, ApiError>,
) -> Result<Vec<T>, ApiError> {
    list.items
        .iter()
        .enumerate()
        .map(|(i, v)| item(v, &format!("{endpoint} items[{i}]")))
        .collect()
}

/// Decode every item with `item`; a bad item is skipped and reported, the
/// rest of the list is kept in order.
pub fn decode_items_skipping<T>(
    list: &RawList<'_>,
    endpoint: &str,
    mut item: impl FnMut(&Value, &str) -> Result<T, ApiError>,
) -> (Vec<T>, Vec<SkippedItem>) {
    let mut good = Vec::with_capacity(list.items.len());
    let mut skipped = Vec::new();
    for (i, v) in list.items.iter().enumerate() {
        let place = format!("{endpoint} items[{i}]");
        match item(v, &place) {
            Ok(t) => good.push(t),
            Err(e) => skipped.push(SkippedItem {
                place,
                reason: e.to_string(),
            }),
        }
    }
    (good, skipped)
}

/// A key that identifies a raw list item, to notice a page that repeats
/// items already seen: its id when it has one, else its whole JSON text.
pub fn item_key(v: &Value) -> String {
    let obj = v.as_object();
    let inner = obj
        .and_then(|o| o.get("data").or_else(|| o.get("book")))
        .and_then(Value::as_object);
    let keys = ["id", "bookId", "book_id", "chapterId", "chapter_id", "uuid"];
    obj.and_then(|o| id(o, &keys))
        .or_else(|| inner.and_then(|o| id(o, &keys)))
        .map(|i| format!("id:{i}"))
        .unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests;
