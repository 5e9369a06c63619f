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
    pub cursor: Option<String>,
    /// A `next` / `links.next` that is a URL (absolute, root-relative or
    /// relative), as the server gave it.
    pub next_url: Option<String>,
    pub total_pages: Option<u64>,
    /// `first: true|false` (Spring), when said as a boolean.
    pub first: Option<bool>,
    /// Whether a page before this one exists (`hasPrevious`, a `prev` link).
    pub has_previous: Option<bool>,
}

/// A `next` value that is a URL rather than an opaque cursor.
pub fn url_like(s: &str) -> bool {
    let s = s.trim();
    s.starts_with("http://")
        || s.starts_with("https://")
        || s.starts_with('/')
        || s.starts_with('?')
        || s.starts_with("./")
        || (s.contains('?') && s.contains('='))
}

impl PageInfo {
    fn absorb(&mut self, o: &Obj, depth: u8) {
        self.total = self.total.or_else(|| {
            unsigned(
                o,
                &[
                    "total",
                    "totalCount",
                    "total_count",
                    "totalElements",
                    "count",
                    "totalItems",
                    "totalResults",
                ],
            )
        });
        self.page = self.page.or_else(|| {
            unsigned(
                o,
                &["page", "pageNum", "pageNumber", "currentPage", "page_no"],
            )
        });
        self.page_size = self.page_size.or_else(|| {
            unsigned(
                o,
                &[
                    "pageSize",
                    "page_size",
                    "perPage",
                    "per_page",
                    "size",
                    "limit",
                ],
            )
        });
        self.offset = self
            .offset
            .or_else(|| unsigned(o, &["offset", "skip", "start"]));
        self.has_more = self.has_more.or_else(|| {
            boolean(o, &["hasMore", "has_more", "hasNext", "has_next", "more"])
                .or_else(|| boolean(o, &["last", "isLast"]).map(|l| !l))
        });
        for k in [
            "nextCursor",
            "next_cursor",
            "nextPageToken",
            "cursor",
            "next",
        ] {
            match o.get(k) {
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    if url_like(s) {
                        self.next_url.get_or_insert_with(|| s.trim().to_owned());
                    } else {
                        self.cursor.get_or_insert_with(|| s.clone());
                    }
                }
                // `"next": null` is how link-style servers say "last page".
                Some(Value::Null) if k == "next" && self.has_more.is_none() => {
                    self.has_more = Some(false)
                }
                _ => {}
            }
        }
        self.total_pages = self
            .total_pages
            .or_else(|| unsigned(o, &["totalPages", "total_pages", "pages", "pageCount"]));
        // Strictly a boolean: `first: 0` may be an index.
        self.first = self.first.or_else(|| {
            ["first", "isFirst", "is_first", "firstPage"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_bool))
        });
        self.has_previous = self.has_previous.or_else(|| {
            boolean(
                o,
                &[
                    "hasPrevious",
                    "has_previous",
                    "hasPrev",
                    "has_prev",
                    "hasPreviousPage",
                ],
            )
        });
        for k in ["prev", "previous"] {
            match o.get(k) {
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    self.has_previous.get_or_insert(true);
                }
                Some(Value::Null) => {
                    self.has_previous.get_or_insert(false);
                }
                _ => {}
            }
        }
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
                    });
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
    if let Some(c) = &info.cursor {
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
mod tests {
    use super::*;
    use serde_json::json;

    fn info(v: Value) -> PageInfo {
        find_list(&v, "GET /t").unwrap().info
    }

    #[test]
    fn next_urls_links_and_meta() {
        let i = info(json!({"data": [1], "next": "http://h/api/v1/books?page=2"}));
        assert_eq!(
            next_page(&i, 1, 1, 1, 50),
            Some(NextPage::Url("http://h/api/v1/books?page=2".into()))
        );
        let i = info(
            json!({"data": [1], "links": {"next": "/api/v1/books?page=2"}, "meta": {"total": 9}}),
        );
        assert_eq!(i.total, Some(9));
        assert_eq!(i.next_url.as_deref(), Some("/api/v1/books?page=2"));
        let i = info(json!({"data": [1], "links": {"next": null}, "meta": {"total": 9}}));
        assert_eq!(next_page(&i, 1, 1, 1, 50), None);
        let i = info(json!({"items": [1], "_links": {"next": {"href": "?cursor=x&n=1"}}}));
        assert_eq!(i.next_url.as_deref(), Some("?cursor=x&n=1"));
        let i = info(json!({"items": [1], "next": "b64+/cursor"}));
        assert_eq!(i.cursor.as_deref(), Some("b64+/cursor"));
    }

    #[test]
    fn a_zero_based_numbering_is_learned_from_the_first_answer() {
        let first = |v: Value, n: usize| skipped_first_page(&info(v), n, 100);
        // Spring: `number` 1 of a zero-based list, `first: false`.
        assert!(first(
            json!({"content": [1], "first": false, "last": true, "total": 3}),
            1
        ));
        assert!(first(json!({"items": [1], "hasPrevious": true}), 1));
        assert!(first(
            json!({"items": [1], "links": {"prev": "/books?page=0"}}),
            1
        ));
        assert!(first(json!({"items": [1], "offset": 100, "limit": 100}), 1));
        assert!(first(json!({"items": [1], "page": 2}), 1));
        // Counts: 3 books, 2 a page; page "1" holds the third.
        assert!(first(
            json!({"items": [1], "page": 1, "pageSize": 2, "total": 3}),
            1
        ));
        // A one-based first page says nothing of the kind.
        for v in [
            json!({"items": [1, 2], "page": 1, "pageSize": 2, "total": 3, "first": true}),
            json!({"items": [1], "prev": null, "first": 0}),
            json!({"items": [1, 2], "total": 5}),
            json!([1, 2]),
        ] {
            let n = v.get("items").map_or(2, |i| i.as_array().unwrap().len());
            assert!(!first(v.clone(), n), "{v}");
        }
    }

    #[test]
    fn a_short_page_without_paging_facts_does_not_end_the_list() {
        let i = info(json!({"items": [1, 2]}));
        assert_eq!(next_page(&i, 2, 2, 1, 100), Some(NextPage::Page(2)));
        let i = info(json!({"items": [1, 2], "pageSize": 20}));
        assert_eq!(next_page(&i, 2, 2, 1, 100), None);
    }

    #[test]
    fn bad_items_are_skipped_and_counted() {
        let v = json!([{"id": "a"}, {"nope": 1}, {"id": "c"}]);
        let list = find_list(&v, "GET /t").unwrap();
        let (good, skipped) = decode_items_skipping(&list, "GET /t", |v, ep| {
            v.get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ApiError::Decode {
                    endpoint: ep.into(),
                    field: "id".into(),
                    problem: "is missing".into(),
                })
        });
        assert_eq!(good, ["a", "c"]);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].place.ends_with("items[1]"), "{}", skipped[0]);
        assert_eq!(item_key(&json!({"data": {"id": 4}})), "id:4");
    }
}
