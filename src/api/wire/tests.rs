//! Payload variants the decoders must accept, and the ones they must
//! reject with an error naming the endpoint and field.

use super::*;
use serde_json::json;

const EP: &str = "GET /test";

/// A manifest of chapters `(id, seconds)`.
pub(super) fn chapters(items: &[(&str, f64)]) -> Manifest {
    Manifest {
        book_id: BookId::new("b"),
        items: items
            .iter()
            .map(|(id, d)| ManifestItem::whole(*id, "", Some(*d)))
            .collect(),
    }
}

#[test]
fn bodies_html_empty_garbage_bom() {
    assert_eq!(parse_body(None, b""), Err(BodyKind::Empty));
    assert_eq!(parse_body(None, b"  \n"), Err(BodyKind::Empty));
    let html = |b: &[u8]| parse_body(Some("text/html"), b);
    let page = html(b"<!DOCTYPE html><html>502 Bad Gateway</html>");
    assert_eq!(page, Err(BodyKind::Html));
    assert_eq!(parse_body(None, b"\n <html>"), Err(BodyKind::Html));
    assert_eq!(html(b"Bad gateway"), Err(BodyKind::Html));
    assert_eq!(parse_body(None, b"Bad gateway"), Err(BodyKind::Garbage));
    assert_eq!(parse_body(None, b"{\"a\":"), Err(BodyKind::Garbage));
    assert_eq!(
        parse_body(None, b"\xEF\xBB\xBF{\"a\":1}"),
        Ok(json!({"a": 1}))
    );
}

#[test]
fn ids_are_kept_exactly_as_sent() {
    let big = "123456789012345678901234567890";
    let body = format!(
        r#"{{"data": {{"items": [{{"id": {big}, "title": "A \"{big}\" 1", "durationSec": 1e3}},
            {{"id": 9007199254740993, "title": "B"}}, {{"id": "0042", "title": "C"}},
            {{"id": -99999999999999999999, "n": [1.5, -2, 18446744073709551615]}}]}}}}"#
    );
    let v = parse_body(None, body.as_bytes()).unwrap();
    let list = find_list(&v, EP).unwrap();
    let (books, _) = decode_items_skipping(&list, EP, decode_book);
    let ids: Vec<&str> = books.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(
        ids,
        [big, "9007199254740993", "0042", "-99999999999999999999"]
    );
    assert_eq!(
        books[0].title,
        format!("A \"{big}\" 1"),
        "strings untouched"
    );
    assert_eq!(books[0].duration, Some(1000.0), "floats untouched");
    assert_eq!(
        v["data"]["items"][3]["n"],
        json!([1.5, -2, 18446744073709551615u64])
    );
    let login = parse_body(
        None,
        br#"{"data": {"token": "t", "serverId": 98765432109876543210, "user": {"id": "0042"}}}"#,
    )
    .unwrap();
    let l = decode_login(&login, EP).unwrap();
    assert_eq!(
        (l.server_id.as_str(), l.user_id.as_str()),
        ("98765432109876543210", "0042")
    );
    let login = parse_body(
        None,
        format!(r#"{{"token": "t", "serverId": "s", "user": {{"id": {big}}}}}"#).as_bytes(),
    )
    .unwrap();
    assert_eq!(decode_login(&login, EP).unwrap().user_id.as_str(), big);
}

#[test]
fn error_codes_and_messages_from_every_shape() {
    let cases = [
        (
            json!({"code": "license_required", "message": "renew"}),
            "license_required",
            "renew",
        ),
        (
            json!({"error": {"code": "not_found", "message": "no book"}}),
            "not_found",
            "no book",
        ),
        (
            json!({"errorCode": "LISTENING_SCOPE_MISMATCH", "msg": "x"}),
            "listening_scope_mismatch",
            "x",
        ),
        (
            json!({"error": "unauthorized", "detail": "expired"}),
            "unauthorized",
            "expired",
        ),
        (
            json!({"error_code": "listening-scope-required", "error_description": "d"}),
            "listening_scope_required",
            "d",
        ),
    ];
    for (v, code, msg) in cases {
        let (c, m) = error_parts(&v);
        assert_eq!(c.as_deref(), Some(code), "{v}");
        assert_eq!(m.as_deref(), Some(msg), "{v}");
    }
    assert_eq!(
        error_parts(&json!({"detail": "only"})),
        (None, Some("only".into()))
    );
    assert_eq!(error_parts(&json!("plain")), (None, Some("plain".into())));
    assert_eq!(error_parts(&json!([1])), (None, None));
}

#[test]
fn success_false_envelopes_are_errors() {
    let v = json!({"success": false, "code": 401, "msg": "token expired"});
    assert_eq!(
        envelope_error(&v),
        Some((401, None, Some("token expired".into())))
    );
    let v = json!({"ok": false, "error": "license_required"});
    assert_eq!(
        envelope_error(&v).unwrap().1.as_deref(),
        Some("license_required")
    );
    assert_eq!(envelope_error(&json!({"success": true, "data": {}})), None);
}

#[test]
fn login_variants() {
    let ours = json!({"data": {"token": "t1", "serverId": "srv_1", "user": {"id": 1, "username": "alice"}}});
    let l = decode_login(&ours, EP).unwrap();
    assert_eq!(
        (l.token.expose(), l.server_id.as_str(), l.user_id.as_str()),
        ("t1", "srv_1", "1")
    );
    assert_eq!(l.user_name.as_deref(), Some("alice"));

    let nested = json!({"code": 0, "data": {"auth": {"accessToken": "t2", "expiresIn": 3600},
        "serverId": 77, "user": {"id": "42", "name": "bob"}}});
    let l = decode_login(&nested, EP).unwrap();
    assert_eq!(
        (l.token.expose(), l.server_id.as_str(), l.user_id.as_str()),
        ("t2", "77", "42")
    );

    let top = json!({"access_token": "t3", "server_id": "s", "userId": 9});
    let l = decode_login(&top, EP).unwrap();
    assert_eq!((l.token.expose(), l.user_id.as_str()), ("t3", "9"));

    let jwt = json!({"result": {"jwt": "t4", "instanceId": "i", "user": {"userId": 5}}});
    assert_eq!(decode_login(&jwt, EP).unwrap().token.expose(), "t4");
}

#[test]
fn login_errors_name_the_field() {
    let e = decode_login(&json!({"data": {"serverId": "s", "user": {"id": 1}}}), EP).unwrap_err();
    assert!(
        matches!(&e, ApiError::Decode { field, .. } if field == "data.token"),
        "{e}"
    );
    let e = decode_login(&json!({"data": {"token": "t", "user": {"id": 1}}}), EP).unwrap_err();
    assert!(
        matches!(&e, ApiError::Decode { field, .. } if field == "data.serverId"),
        "{e}"
    );
    let e = decode_login(
        &json!({"data": {"token": "t", "serverId": "s", "user": {"id": "abc"}}}),
        EP,
    )
    .unwrap_err();
    assert!(e.to_string().contains("not a number"), "{e}");
    assert!(e.to_string().contains(EP), "{e}");
}

#[test]
fn license_variants() {
    let l = decode_license(
        &json!({"data": {"status": "valid", "valid": true, "message": "ok"}}),
        EP,
    )
    .unwrap();
    assert_eq!((l.state, l.valid), (LicenseState::Valid, true));
    let l = decode_license(&json!({"licensed": false, "msg": "buy"}), EP).unwrap();
    assert_eq!(
        (l.state, l.valid, l.message.as_deref()),
        (LicenseState::Invalid, false, Some("buy"))
    );
    let l = decode_license(&json!({"data": {"license": {"state": "EXPIRED"}}}), EP).unwrap();
    assert_eq!((l.state, l.valid), (LicenseState::Expired, false));
    assert!(decode_license(&json!({"data": {}}), EP).is_err());
}

#[test]
fn lists_under_every_key_and_envelope() {
    let item = json!({"id": "b1", "title": "T"});
    let shapes = [
        json!([item]),
        json!({"data": [item], "total": 1}),
        json!({"data": {"items": [item], "total": 1, "page": 1, "pageSize": 50, "hasMore": false}}),
        json!({"list": [item]}),
        json!({"books": [item]}),
        json!({"code": 0, "data": {"records": [item], "totalCount": 1}}),
        json!({"rows": [item], "count": 1}),
        json!({"results": [item]}),
        json!({"content": [item], "totalElements": 1, "last": true}),
        json!({"result": {"data": {"list": [item]}}}),
    ];
    for s in shapes {
        let list = find_list(&s, EP).unwrap_or_else(|e| panic!("{s}: {e}"));
        let books = decode_items(&list, EP, decode_book).unwrap();
        assert_eq!(books.len(), 1, "{s}");
        assert_eq!(books[0].id.as_str(), "b1");
    }
    let e = find_list(&json!({"data": {"nothing": 1}}), EP).unwrap_err();
    assert!(e.to_string().contains("items"), "{e}");
}

#[test]
fn paging_styles() {
    let info = |v: Value| find_list(&v, EP).unwrap().info;
    // page/pageSize with hasMore
    let i = info(json!({"data": {"items": [1], "page": 2, "pageSize": 1, "hasMore": true}}));
    assert_eq!(next_page(&i, 1, 2, 2, 1), Some(NextPage::Page(3)));
    // total tells us we are done
    let i = info(json!({"items": [1, 2], "total": 2}));
    assert_eq!(next_page(&i, 2, 2, 1, 2), None);
    let i = info(json!({"items": [1, 2], "total": 5}));
    assert_eq!(next_page(&i, 2, 2, 1, 2), Some(NextPage::Page(2)));
    // offset/limit
    let i = info(json!({"items": [1, 2], "offset": 4, "limit": 2, "total": 10}));
    assert_eq!(next_page(&i, 2, 6, 1, 2), Some(NextPage::Offset(6)));
    // cursor
    let i = info(json!({"items": [1], "nextCursor": "abc"}));
    assert_eq!(
        next_page(&i, 1, 1, 1, 50),
        Some(NextPage::Cursor("abc".into()))
    );
    let i = info(json!({"items": [1], "nextCursor": "abc", "hasMore": false}));
    assert_eq!(next_page(&i, 1, 1, 1, 50), None);
    // Spring-style `last`
    let i = info(json!({"content": [1], "last": false}));
    assert_eq!(next_page(&i, 1, 1, 1, 50), Some(NextPage::Page(2)));
    // nothing said: even a short page may not be the last one (a server
    // may ignore pageSize); the pager stops on an empty or repeated page
    let i = info(json!([1, 2]));
    assert_eq!(next_page(&i, 2, 2, 1, 50), Some(NextPage::Page(2)));
    assert_eq!(next_page(&i, 2, 2, 1, 2), Some(NextPage::Page(2)));
    // an empty page always ends the list
    let i = info(json!({"items": [], "hasMore": true}));
    assert_eq!(next_page(&i, 0, 0, 1, 50), None);
}

#[test]
fn book_variants() {
    let ours = json!({"data": {"id": "bk_1", "title": "Der Sandmann", "author": "E. T. A. Hoffmann",
        "narrator": null, "durationSec": 312.4, "chapterCount": 3,
        "categories": [{"id": "cat_1", "name": "Classics"}], "coverUrl": "/books/bk_1/cover",
        "favorite": true, "addedAt": 1795000000000i64,
        "progress": {"chapterId": "ch_1", "positionSec": 12.5, "bookPositionSec": 130.0,
                     "finished": false, "clientUpdatedAt": 1795000000000i64}}});
    let b = decode_book(&ours, EP).unwrap();
    assert_eq!(b.id.as_str(), "bk_1");
    assert_eq!(b.authors, ["E. T. A. Hoffmann"]);
    assert!(b.narrators.is_empty());
    assert_eq!(b.duration, Some(312.4));
    assert_eq!(b.chapter_count, Some(3));
    assert_eq!(b.categories[0].name, "Classics");
    assert!(b.favorite);
    assert_eq!(b.progress.as_ref().unwrap().position, 12.5);

    let other = json!({"bookId": 17, "name": "Numbers", "authors": [{"name": "A"}, {"name": "B"}],
        "durationMs": 61000, "genres": ["Sci-Fi"], "unknownField": {"x": 1}});
    let b = decode_book(&other, EP).unwrap();
    assert_eq!((b.id.as_str(), b.title.as_str()), ("17", "Numbers"));
    assert_eq!(b.authors, ["A", "B"]);
    assert_eq!(b.duration, Some(61.0));
    assert_eq!(b.categories[0].id.as_str(), "Sci-Fi");

    let clock = json!({"id": "x", "title": "C", "author": ["A", "B"], "duration": "01:00:01"});
    let b = decode_book(&clock, EP).unwrap();
    assert_eq!(b.duration, Some(3601.0));
    assert_eq!(b.authors, ["A", "B"]);

    let fav = json!({"bookId": "bk_9", "createdAt": 1, "book": {"id": "bk_9", "title": "F"}});
    assert_eq!(decode_book(&fav, EP).unwrap().title, "F");

    let e = decode_book(&json!({"title": "no id"}), EP).unwrap_err();
    assert!(
        matches!(&e, ApiError::Decode { endpoint, field, .. } if endpoint == EP && field == "id"),
        "{e}"
    );
    let e = decode_book(&json!("str"), EP).unwrap_err();
    assert!(e.to_string().contains("not an object"), "{e}");
}

#[test]
fn manifest_variants_keep_server_order() {
    let ours = json!({"data": {"bookId": "bk_1", "items": [
        {"chapterId": "ch_b", "title": "Two", "durationSec": 2.0, "url": "/chapters/ch_b/play?raw=1",
         "mimeType": "audio/mpeg", "sizeBytes": 10, "startSec": 0.0, "endSec": null},
        {"chapterId": "ch_a", "title": "One", "durationSec": 1.0}]}});
    let m = decode_manifest(&ours, &BookId::new("bk_1"), EP).unwrap();
    let ids: Vec<_> = m.items.iter().map(|i| i.chapter_id.as_str()).collect();
    assert_eq!(ids, ["ch_b", "ch_a"]);
    assert_eq!(m.items[0].mime_type.as_deref(), Some("audio/mpeg"));
    assert_eq!(m.items[1].url, None);

    let manifest = |v: Value| decode_manifest(&v, &BookId::new("b"), EP);
    let numeric =
        json!([{"id": 3, "name": "c", "durationMs": 1500, "startMs": 500, "endMs": 2000}]);
    let m = manifest(numeric).unwrap();
    assert_eq!(m.book_id.as_str(), "b");
    assert_eq!(m.items[0].chapter_id.as_str(), "3");
    assert_eq!(
        (m.items[0].duration, m.items[0].start, m.items[0].end),
        (Some(1.5), 0.5, Some(2.0))
    );

    // `"duration": 90000` names no unit: not a length until checked, never 25 h.
    let unitless = json!({"items": [{"chapterId": "c1", "duration": 90000}]});
    let m = manifest(unitless).unwrap();
    assert_eq!(m.items[0].duration, None);
    assert_eq!(
        m.items[0]
            .duration_source
            .unchecked()
            .map(|u| (u.key.as_str(), u.value)),
        Some(("duration", 90000.0))
    );
    assert_eq!(m.total_duration(), None);

    let tracks = json!({"manifest": {"tracks": [{"chapter_id": "x", "playUrl": "http://cdn/x"}]}});
    let m = manifest(tracks).unwrap();
    assert_eq!(m.items[0].url.as_deref(), Some("http://cdn/x"));

    let e = manifest(json!({"items": [{"chapterId": "a"}, {"title": "no id"}]})).unwrap_err();
    assert!(
        e.to_string().contains("items[1]") && e.to_string().contains("chapterId"),
        "{e}"
    );
    let e = manifest(json!({"items": [{"chapterId": "a"}, {"chapterId": "a"}]})).unwrap_err();
    assert!(e.to_string().contains("repeats"), "{e}");
}

#[test]
fn progress_variants() {
    let ours = json!({"data": {"bookId": "b", "progress": {"chapterId": "c", "positionSec": 7.5,
        "finished": false, "clientUpdatedAt": 1795000000000i64, "serverUpdatedAt": 1795000000450i64},
        "playbackSettings": {"speed": 1.25, "volume": 0.8, "clientUpdatedAt": 1795000000000i64}}});
    let b = BookId::new("b");
    let m = chapters(&[("c", 100.0), ("4", 100.0)]);
    let r = decode_progress_read(&ours, &b, &m);
    assert_eq!(r.progress().unwrap().position, 7.5);
    assert_eq!(r.settings().unwrap().speed, 1.25);

    let none = json!({"data": {"bookId": "b", "progress": null, "playbackSettings": null}});
    for v in [none, json!({"data": null})] {
        let read = decode_progress_read(&v, &b, &m);
        assert_eq!(read, ProgressRead::NoProgress { settings: None }, "{v}");
    }

    let bare = json!({"chapter_id": 4, "positionMs": 90500, "isFinished": "true"});
    let p = decode_progress_read(&bare, &b, &m)
        .progress()
        .cloned()
        .unwrap();
    assert_eq!(
        (p.chapter_id.as_str(), p.position, p.finished),
        ("4", 90.5, true)
    );

    let ProgressRead::Unreadable { shape } =
        decode_progress_read(&json!({"progress": {"positionSec": 3}}), &b, &m)
    else {
        panic!()
    };
    assert!(shape.contains("position without a chapter"), "{shape}");

    let w = decode_progress_write(
        &json!({"data": {"applied": false, "progress": {"chapterId": "c", "positionSec": 9}}}),
        EP,
    )
    .unwrap();
    assert!(!w.applied);
    assert_eq!(w.record.unwrap().position, 9.0);
    assert!(decode_progress_write(&Value::Null, EP).unwrap().applied);
}

#[test]
fn batch_results_mix_success_and_errors() {
    let v = json!({"data": {"results": [
        {"bookId": "b1", "status": 200, "applied": true, "progress": {"chapterId": "c", "positionSec": 1}},
        {"bookId": "bk_nope", "status": 404, "code": "not_found", "message": "no such book"},
        {"bookId": "b3", "status": 403, "code": "license_required", "message": "renew"},
        {"bookId": "b4", "status": "error",
         "error": {"type": "https://errors.example/listening-scope-mismatch"}}]}});
    let r = decode_batch(&v, EP, "http://h").unwrap();
    assert!(
        matches!(r[3].outcome, Err(ApiError::ScopeMismatch { .. })),
        "a result reporting a failure in any shape is that error: {:?}",
        r[3].outcome
    );
    assert!(r[0].outcome.as_ref().unwrap().applied);
    assert!(matches!(r[1].outcome, Err(ApiError::NotFound { .. })));
    assert!(matches!(
        r[2].outcome,
        Err(ApiError::LicenseRequired { .. })
    ));
    assert_eq!(r[1].book_id.as_ref().unwrap().as_str(), "bk_nope");
}

#[test]
fn bookmarks_categories_chapters() {
    let b = decode_bookmark(
        &json!({"data": {"id": "bm_1", "bookId": "b", "chapterId": "c",
        "positionSec": 73.5, "note": "great line", "createdAt": 1795000000000i64}}),
        None,
        EP,
    )
    .unwrap();
    assert_eq!(
        (b.id.as_str(), b.position, b.note.as_deref()),
        ("bm_1", 73.5, Some("great line"))
    );
    let b = decode_bookmark(
        &json!({"id": 5, "chapter_id": 2, "position": "12"}),
        Some(&BookId::new("b")),
        EP,
    )
    .unwrap();
    assert_eq!(
        (b.book_id.as_str(), b.chapter_id.as_str(), b.position),
        ("b", "2", 12.0)
    );
    assert!(decode_bookmark(&json!({"id": 5}), Some(&BookId::new("b")), EP).is_err());

    let c = decode_category(
        &json!({"id": "cat_1", "name": "Classics", "bookCount": 2}),
        EP,
    )
    .unwrap();
    assert_eq!((c.id.as_str(), c.book_count), ("cat_1", Some(2)));
    let c = decode_category(&json!("Poetry"), EP).unwrap();
    assert_eq!(c.name, "Poetry");
    let c = decode_category(&json!({"title": "Drama"}), EP).unwrap();
    assert_eq!(c.id.as_str(), "Drama");

    let ch = decode_chapter(
        &json!({"chapterId": 1, "name": "One", "duration": "1:01"}),
        EP,
    )
    .unwrap();
    assert_eq!(
        (ch.id.as_str(), ch.title.as_str(), ch.duration),
        ("1", "One", Some(61.0))
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn arb_json() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "data",
            "items",
            "id",
            "bookId",
            "chapterId",
            "title",
            "name",
            "token",
            "user",
            "serverId",
            "durationMs",
            "duration",
            "total",
            "page",
            "hasMore",
            "nextCursor",
            "progress",
            "positionSec",
            "code",
            "message",
            "error",
            "list",
            "offset",
            "result",
            "authors",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            "[ -~]{0,12}".prop_map(Value::String),
            "[0-9:.]{1,9}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        /// No payload makes a decoder panic; each answers a value or an error.
        #[test]
        fn decoders_never_panic(v in arb_json()) {
            let _ = decode_login(&v, EP);
            let _ = decode_license(&v, EP);
            let _ = decode_book(&v, EP);
            let _ = decode_manifest(&v, &BookId::new("b"), EP);
            let _ = decode_progress_read(&v, &BookId::new("b"), &chapters(&[("c", 5.0)]));
            let _ = progress_in_answer(&v);
            let _ = error_body(&v);
            let _ = decode_progress_write(&v, EP);
            let _ = decode_batch(&v, EP, "http://h");
            let _ = decode_bookmark(&v, None, EP);
            let _ = error_parts(&v);
            let _ = envelope_error(&v);
            if let Ok(list) = find_list(&v, EP) {
                let _ = decode_items(&list, EP, decode_chapter);
                let _ = next_page(&list.info, list.items.len(), 3, 1, 2);
            }
        }

        /// Any bytes: JSON, or a classified non-JSON body; never a panic.
        #[test]
        fn bodies_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_body(Some("text/html"), &bytes);
            let _ = parse_body(None, &bytes);
        }

        /// Decoded durations are finite and never negative.
        #[test]
        fn durations_are_sane(v in arb_json()) {
            if let Ok((b, source)) = decode_book_and_length(&v, EP) {
                prop_assert!(b.duration.is_none_or(|d| d.is_finite() && d >= 0.0));
                prop_assert!(source.unchecked().is_none() || b.duration.is_none());
            }
            if let Ok(m) = decode_manifest(&v, &BookId::new("b"), EP) {
                for i in &m.items {
                    prop_assert!(i.duration_source.unchecked().is_none() || i.duration.is_none());
                }
            }
        }
    }
}
