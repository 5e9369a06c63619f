use super::*;
use crate::api::wire::tests::chapters;
use crate::domain::{DurationSource, Unitless};
use serde_json::json;

fn read(v: Value) -> ProgressRead {
    decode_progress_read(
        &v,
        &BookId::new("b"),
        &chapters(&[("c", 120.0), ("d", 120.0)]),
    )
}

fn place(v: Value) -> (String, f64) {
    let r = read(v.clone());
    let p = r.progress().unwrap_or_else(|| panic!("{v} read as {r:?}"));
    (p.chapter_id.to_string(), p.position)
}

#[test]
fn every_empty_answer_is_no_progress_yet() {
    for v in [
        json!(null),
        json!({}),
        json!([]),
        json!({"data": null}),
        json!({"data": {}}),
        json!({"data": []}),
        json!({"code": 0, "data": null, "msg": "ok"}),
        json!({"code": 0, "data": [], "msg": "ok", "total": 0}),
        json!({"data": {"bookId": "b", "progress": null, "playbackSettings": null}}),
        json!({"data": {"bookId": "b", "chapterId": null, "positionSec": null}}),
        json!({"lastProgress": null}),
        json!({"progress": {}}),
        json!({"progress": [], "finished": false, "userId": 4}),
        json!({"data": [], "offset": 0, "limit": 20, "hasMore": false}),
    ] {
        assert!(
            matches!(read(v.clone()), ProgressRead::NoProgress { .. }),
            "{v}: {:?}",
            read(v.clone())
        );
    }
}

#[test]
fn the_record_is_found_wherever_it_is() {
    for v in [
        json!({"chapterId": "c", "positionSec": 30, "bookId": "b"}),
        json!({"data": {"progress": {"chapterId": "c", "positionSec": 30}}}),
        json!({"data": {"lastProgress": {"chapterId": "c", "positionSec": 30}}}),
        json!({"data": {"state": {"track": "c", "offset_s": 30}}}),
        json!({"record": {"chapter_id": "c", "positionMs": 30000}}),
        json!({"data": [{"chapterId": "c", "positionSec": 30}]}),
        json!([{"bookId": "x", "chapterId": "d", "positionSec": 99},
               {"bookId": "b", "chapterId": "c", "currentTime": "0:30"}]),
        json!({"result": {"items": [{"book_id": "b", "chapter": {"id": "c"}, "position": 30}]}}),
        json!({"chapter": {"id": "c", "title": "One", "positionSeconds": 30}}),
        json!({"data": {"progress": {"chapterId": "c", "positionSec": 30},
                        "history": {"chapterId": "c", "positionMs": 30000}}}),
        json!({"currentChapterId": "c", "currentChapterPosition": 30}),
        json!({"lastListened": {"chapter": {"id": "c"}, "seconds": 30}}),
        json!({"chapterId": "c", "progressSec": 30, "progress": 0.25}),
    ] {
        assert_eq!(place(v.clone()), ("c".into(), 30.0), "{v}");
    }
}

#[test]
fn anything_else_is_unknown_never_none() {
    for (v, why) in [
        (json!({"data": "c:5"}), "plain value"),
        (
            json!({"lastProgress": {"chapter": 3, "seconds": 5}}),
            "not in this book",
        ),
        (
            json!({"progress": {"positionSec": 3}}),
            "position without a chapter",
        ),
        (
            json!({"progress": {"chapterId": "c"}}),
            "without a position",
        ),
        (json!({"data": {"finished": true}}), "finished"),
        (json!({"data": {"loc": "c@5"}}), "does not recognise"),
        (
            json!({"chapterId": "zz", "positionSec": 5}),
            "not in this book",
        ),
        (
            json!([{"chapterId": "c", "positionSec": 5}, {"chapterId": "d", "positionSec": 9}]),
            "several places",
        ),
        (
            json!({"bookId": "other", "chapterId": "c", "positionSec": 5}),
            "another book",
        ),
        (
            json!({"chapterId": "c", "positionSec": 5, "positionMs": 9000}),
            "disagree",
        ),
        // A share of the book is no place in a chapter.
        (
            json!({"chapterId": "c", "progress": 0.25}),
            "without a position",
        ),
        // Audiobookshelf-like: a time in the whole book, no chapter.
        (
            json!({"libraryItemId": "b", "currentTime": 30, "progress": 0.1, "isFinished": false}),
            "position without a chapter",
        ),
    ] {
        let r = read(v.clone());
        let ProgressRead::Unreadable { shape } = &r else {
            panic!("{v} read as {r:?}");
        };
        assert!(shape.contains(why), "{v}: {shape}");
    }
}

#[test]
fn milliseconds_by_key_and_no_bare_number_beyond_the_chapter() {
    let in_c = |key: &str, n: Value| place(json!({"chapterId": "c", key: n}));
    assert_eq!(in_c("positionMillis", json!(61500)), ("c".into(), 61.5));
    assert_eq!(in_c("position_ms", json!(500)), ("c".into(), 0.5));
    // 90500 "seconds" in a 120 s chapter: not trusted (milliseconds? unsaid).
    let r = read(json!({"chapterId": "c", "position": 90500}));
    let ProgressRead::Unreadable { shape } = &r else {
        panic!("{r:?}")
    };
    assert!(shape.contains("beyond the chapter"), "{shape}");
    assert!(read(json!({"chapterId": "c", "currentTime": 121.0 * 60.0})).is_unreadable());
    // A unit in the key says what the number is.
    assert_eq!(in_c("positionSec", json!(121)), ("c".into(), 121.0));
}

#[test]
fn a_bare_position_in_a_chapter_whose_length_names_no_unit_is_not_trusted() {
    let mut m = chapters(&[("c", 120.0)]);
    m.items[0].duration = None;
    m.items[0].duration_source = DurationSource::Unchecked(Unitless {
        key: "duration".into(),
        value: 120_000.0,
    });
    let read = |v: Value, m: &Manifest| decode_progress_read(&v, &BookId::new("b"), m);
    let r = read(json!({"chapterId": "c", "position": 30000}), &m);
    assert!(r.is_unreadable(), "{r:?}");
    // A position that names its unit is read as it says.
    let r = read(json!({"chapterId": "c", "positionMs": 30000}), &m);
    assert_eq!(r.progress().map(|p| p.position), Some(30.0));
    // A server that gives no length at all: a bare position is seconds.
    m.items[0].duration_source = DurationSource::Server;
    let r = read(json!({"chapterId": "c", "position": 30}), &m);
    assert_eq!(r.progress().map(|p| p.position), Some(30.0));
}

#[test]
fn settings_are_read_beside_any_answer_and_never_fail_it() {
    let v = json!({"data": {"progress": {"chapterId": "c", "positionSec": 5},
        "playbackSettings": {"volume": 0.5, "eq": "rock"}}});
    let r = read(v);
    assert!(r.progress().is_some());
    assert!(r.settings().is_none());
    let v = json!({"data": {"progress": null, "playbackSettings": {"speed": 1.5, "pitch": 2}}});
    assert_eq!(read(v).settings().unwrap().speed, 1.5);
}

#[test]
fn a_writes_answer_is_read_without_the_manifest() {
    let v = json!({"data": {"applied": false, "progress": {"chapterId": "zz", "positionSec": 9}}});
    assert_eq!(progress_in_answer(&v).unwrap().chapter_id.as_str(), "zz");
    assert_eq!(progress_in_answer(&json!({"applied": true})), None);
    assert!(says_nothing(&json!({"data": null})));
    assert!(!says_nothing(
        &json!({"data": {"chapterId": "c", "positionSec": 1}})
    ));
}
