use super::*;
use serde_json::json;

fn info(v: Value) -> PageInfo {
    find_list(&v, "GET /t").unwrap().info
}

/// `info` with a bare `next` settled as the client settles it, for a
/// list at `/api/v1/books` on `http://h`.
fn settled(v: Value) -> PageInfo {
    let mut i = info(v);
    i.settle_next(|s| {
        let here = url::Url::parse("http://h/api/v1/books").unwrap();
        here.join(s).is_ok_and(|u| u.path() == here.path())
    });
    i
}

#[test]
fn next_urls_links_and_meta() {
    let link = "http://h/api/v1/books?page=2";
    let i = settled(json!({"data": [1], "next": link}));
    assert_eq!(next_page(&i, 1, 1, 1, 50), Some(NextPage::Url(link.into())));
    let i =
        info(json!({"data": [1], "links": {"next": "/api/v1/books?page=2"}, "meta": {"total": 9}}));
    assert_eq!(i.total, Some(9));
    assert_eq!(i.next_url.as_deref(), Some("/api/v1/books?page=2"));
    let i = info(json!({"data": [1], "links": {"next": null}, "meta": {"total": 9}}));
    assert_eq!(next_page(&i, 1, 1, 1, 50), None);
    let i = info(json!({"items": [1], "_links": {"next": {"href": "?cursor=x&n=1"}}}));
    assert_eq!(i.next_url.as_deref(), Some("?cursor=x&n=1"));
    let i = settled(json!({"items": [1], "next": "b64+/cursor"}));
    assert_eq!(i.cursor.as_deref(), Some("b64+/cursor"));
}

#[test]
fn a_cursor_is_a_cursor_whatever_its_characters() {
    for c in [
        "/eyJvIjoyfQ==",
        "a+b/c=",
        "/",
        "?x=1",
        "http://h/api/v1/books?p=2",
        "./x",
    ] {
        for key in ["nextCursor", "next_page_token", "cursor", "nextKey"] {
            let v = json!({"items": [1], key: c});
            let i = settled(v.clone());
            assert_eq!(
                (next_page(&i, 1, 1, 1, 50), i.next_url.as_deref()),
                (Some(NextPage::Cursor(c.into())), None),
                "{v}"
            );
        }
    }
    let i = settled(json!({"items": [1], "nextCursor": 12345}));
    assert_eq!(i.cursor.as_deref(), Some("12345"), "a number is its digits");
}

#[test]
fn a_bare_next_is_a_link_only_when_it_addresses_this_list() {
    for link in [
        "?page=2",
        "/api/v1/books?p=2",
        "books?p=2",
        "http://h/api/v1/books?p=2",
    ] {
        let i = settled(json!({"items": [1], "next": link}));
        assert_eq!(i.next_url.as_deref(), Some(link), "{link}");
    }
    for cursor in ["/eyJvIjoyfQ==", "/", "eyJ+b/c=", "/api/v1/other?p=2"] {
        let i = settled(json!({"items": [1], "nextPage": cursor}));
        assert_eq!(i.cursor.as_deref(), Some(cursor), "{cursor}");
        assert_eq!(i.next_url, None, "{cursor}");
    }
    // Unsettled, a bare `next` is sent back, never followed.
    let link = "/api/v1/books?p=2";
    let i = info(json!({"items": [1], "next": link}));
    assert_eq!(
        next_page(&i, 1, 1, 1, 50),
        Some(NextPage::Cursor(link.into()))
    );
}

#[test]
fn a_key_that_names_a_link_is_followed_as_given() {
    for key in ["next_page_url", "@odata.nextLink", "nextHref", "next_uri"] {
        let i = info(json!({"items": [1], key: "/eyJ"}));
        assert_eq!(i.next_url.as_deref(), Some("/eyJ"), "{key}");
    }
}

#[test]
fn paging_facts_are_read_by_the_words_of_their_keys() {
    // Laravel
    let i = info(
        json!({"data": [{"id": 1}], "current_page": 1, "last_page": 3,
        "per_page": 15, "total": 40, "next_page_url": "http://h/api/v1/books?page=2",
        "prev_page_url": null, "from": 1, "to": 15}),
    );
    assert_eq!(
        (i.page, i.total_pages, i.page_size, i.total, i.has_previous),
        (Some(1), Some(3), Some(15), Some(40), Some(false))
    );
    assert_eq!(i.next_url.as_deref(), Some("http://h/api/v1/books?page=2"));
    // OData: the list under `value`, the link and count under `@odata.…`
    let i = info(json!({"value": [{"id": 1}], "@odata.count": 9,
        "@odata.nextLink": "https://h/api/v1/books?$skip=1"}));
    assert_eq!((i.total, i.next_url.is_some()), (Some(9), true));
    // nestjs-paginate: a page's item count never passes for the total
    let i = info(json!({"data": [{"id": 1}],
        "meta": {"itemCount": 1, "totalItems": 50, "itemsPerPage": 1, "totalPages": 50,
                 "currentPage": 1}}));
    assert_eq!(
        (i.total, i.page_size, i.total_pages, i.page),
        (Some(50), Some(1), Some(50), Some(1))
    );
    // Spring
    let i = info(
        json!({"content": [{"id": 1}], "totalElements": 3, "totalPages": 2,
        "size": 2, "number": 1, "first": false, "last": true, "numberOfElements": 1}),
    );
    assert_eq!(
        (i.total, i.first, i.has_more, i.page_size),
        (Some(3), Some(false), Some(false), Some(2))
    );
    // Algolia-like: an unknown list key, the only array
    let v = json!({"hits": [{"id": 1}], "nbPages": 2, "hitsPerPage": 1});
    let i = find_list(&v, "GET /t").unwrap();
    assert_eq!((i.items.len(), i.info.total_pages), (1, Some(2)));
    assert!(find_list(&json!({"a": [1], "b": [2]}), "GET /t").is_err());
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
