//! One named test per finding of issue 31 that the wire side owns: a
//! value's role comes from its name and from what the server said, never
//! from how it looks (a cursor that begins with `/` is a cursor); a number
//! without a unit is read by earmark's own measure of the audio (a 120 s
//! chapter given as `"duration": 120000` is 2:00, never 33 h); and text
//! output names chapters by number and title.

use crate::cli::{configured, login};
use crate::findings::logged_in;
use crate::harness::{Home, text};
use crate::matrix::{assert_length_true, cli_lengths};
use crate::server::*;
use earmark::api::BookQuery;
use earmark::domain::*;
use serde_json::Value;

async fn home_of(s: &DialectServer) -> Home {
    let home = configured(&s.address, s.dialect.prefix, "");
    let o = login(&home).await;
    assert!(o.status.success(), "{}", text(&o));
    home
}

fn json_of(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

fn ids(doc: &Value) -> Vec<String> {
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Issue 31, finding 1: under `nextCursor`, a base64 cursor that begins
/// with `/` was asked as `GET /api/v1////eyJ…`, and `earmark search` exited
/// 5 with no results and no word of an incomplete list.
#[tokio::test]
async fn a_cursor_is_sent_back_whatever_its_characters() {
    for cursor in [
        CursorChars::Symbols,
        CursorChars::LeadingSlash,
        CursorChars::LeadingSlashUnderNext,
    ] {
        for gateway in [false, true] {
            let s = DialectServer::start(Dialect {
                paging: Paging::Cursor,
                cursor,
                gateway,
                ..Dialect::default()
            })
            .await;
            let want: Vec<String> = (1..=BOOKS).map(|i| book_id(&s.dialect, i)).collect();
            let c = logged_in(&s).await;
            let l = c.books_listing(&BookQuery::default()).await.unwrap();
            let got: Vec<String> = l.items.iter().map(|b| b.id.to_string()).collect();
            assert_eq!(got, want, "{cursor:?} gateway {gateway}");
            assert!(l.complete(), "{cursor:?}: {:?}", l.shortfall);

            let home = home_of(&s).await;
            let doc = json_of(&home.run_async(&["search", "Book", "--json"], None).await);
            assert_eq!(ids(&doc), want, "{cursor:?}: {doc}");
            assert_eq!(doc["complete"], true, "{doc}");
            // Every page was asked of the list itself, the cursor as a
            // parameter, exactly as the server wrote it.
            let asked = s.store.lock().unwrap().requests.clone();
            let pages: Vec<&String> = asked.iter().filter(|r| r.contains("/books")).collect();
            assert!(
                pages
                    .iter()
                    .all(|r| r.contains("/api/v1/books?") || r.contains("/api/v1/books/search?")),
                "{cursor:?}: {pages:?}"
            );
            let sent: Vec<String> = pages
                .iter()
                .filter_map(|r| {
                    let q = r.split_once('?')?.1;
                    url::form_urlencoded::parse(q.as_bytes())
                        .find(|(k, _)| k == "cursor")
                        .map(|(_, v)| v.into_owned())
                })
                .collect();
            assert!(
                sent.contains(&s.dialect.cursor_for(2)) && sent.contains(&s.dialect.cursor_for(4)),
                "{cursor:?}: {sent:?}"
            );
        }
    }
}

/// A bare `next` that addresses the list is still followed as a link,
/// root-relative, relative or absolute, behind a gateway too.
#[tokio::test]
async fn a_bare_next_that_addresses_the_list_is_followed() {
    for paging in [
        Paging::NextAbsolute,
        Paging::NextRootRelative,
        Paging::NextRelative,
    ] {
        for gateway in [false, true] {
            let s = DialectServer::start(Dialect {
                paging,
                gateway,
                ..Dialect::default()
            })
            .await;
            let c = logged_in(&s).await;
            let q = BookQuery {
                text: Some("Book".into()),
                ..BookQuery::default()
            };
            let l = c.search_listing(&q).await.unwrap();
            assert_eq!(l.items.len(), BOOKS, "{paging:?} gateway {gateway}");
            let asked = s.store.lock().unwrap().requests.clone();
            assert!(
                asked.iter().any(|r| r.contains("/books/search?p=")),
                "followed as a link: {asked:?}"
            );
        }
    }
}

/// Issue 31, finding 2: `"duration": 90000` on a 90 s chapter was shown as
/// 25 h by `manifest`, `chapters` and `book`. Here a 120 s chapter, given
/// without a unit in milliseconds, seconds and minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duration_without_a_unit_is_read_in_the_unit_the_audio_fits() {
    for lengths in [
        Lengths::UnitlessMillis,
        Lengths::UnitlessSeconds,
        Lengths::UnitlessMinutes,
        Lengths::UnitlessNoUnitFits,
    ] {
        let s = DialectServer::start(Dialect {
            lengths,
            ..Dialect::default()
        })
        .await;
        let d = s.dialect.clone();
        let home = home_of(&s).await;
        cli_lengths(&d, &home, "bk1").await;
        // The text shows the length as a clock, or `?` where it is unknown.
        let o = home.run_async(&["manifest", "bk1"], None).await;
        let want = if d.lengths_readable() {
            "\t2:00\t"
        } else {
            "\t?\t"
        };
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(want),
            "{lengths:?}: {}",
            text(&o)
        );
        let o = home.run_async(&["book", "bk1"], None).await;
        let want = if d.lengths_readable() {
            "Duration:   4:00"
        } else {
            "Duration:   ?"
        };
        assert!(text(&o).contains(want), "{lengths:?}: {}", text(&o));
    }
}

/// The unit is learned once per address and field: the second book's
/// manifest is read at once, without measuring its audio again.
#[tokio::test]
async fn the_unit_is_measured_once_per_address_and_field() {
    let s = DialectServer::start(Dialect {
        lengths: Lengths::UnitlessMillis,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let streams = || {
        let r = s.store.lock().unwrap().requests.clone();
        r.iter().filter(|r| r.contains("/play")).count()
    };
    let mut m = c.manifest(&BookId::new("bk1")).await.unwrap();
    assert_eq!(
        m.items[0].duration, None,
        "unknown until checked, never 33 h"
    );
    assert!(c.check_lengths(&mut m).await.is_none());
    assert_eq!(streams(), 1);
    for b in ["bk1", "bk2", "bk3"] {
        let m = c.manifest(&BookId::new(b)).await.unwrap();
        for i in &m.items {
            assert_length_true(&s.dialect, b, i.duration, f64::from(CHAPTER_SECS));
            assert_eq!(i.duration_source, DurationSource::Server);
        }
    }
    assert_eq!(streams(), 1, "one measurement for every manifest");
}

/// Issue 29 item 7: `earmark progress` and `history` printed raw chapter
/// ids. They name the chapter by number and title; `--json` keeps the id
/// and adds both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_history_name_chapters_by_number_and_title() {
    let s = DialectServer::start(Dialect::default()).await;
    let home = home_of(&s).await;
    let o = home.run_async(&["progress", "bk1"], None).await;
    assert!(
        text(&o).contains("ch 2 · Chapter 2 at 0:30"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("bk1-c2"), "no raw id: {}", text(&o));
    let doc = json_of(&home.run_async(&["progress", "bk1", "--json"], None).await);
    let p = &doc["progress"];
    assert_eq!(
        (&p["chapterId"], &p["chapterNumber"], &p["chapterTitle"]),
        (&"bk1-c2".into(), &2.into(), &"Chapter 2".into()),
        "{doc}"
    );
    // Played here in chapter 2, then a chapter picked on the command line:
    // a jump from chapter 2.
    let o = home
        .run_async(&["play", "bk1", "--for", "1", "--audio", "null"], None)
        .await;
    assert!(o.status.success(), "{}", text(&o));
    let o = home
        .run_async(
            &[
                "play",
                "bk1",
                "--chapter",
                "bk1-c1",
                "--at",
                "1",
                "--for",
                "1",
                "--audio",
                "null",
            ],
            None,
        )
        .await;
    assert!(o.status.success(), "{}", text(&o));
    let o = home.run_async(&["history", "bk1"], None).await;
    assert!(text(&o).contains("ch 2 · Chapter 2"), "{}", text(&o));
    assert!(!text(&o).contains("bk1-c2"), "no raw id: {}", text(&o));
    let doc = json_of(&home.run_async(&["history", "bk1", "--json"], None).await);
    let mark = &doc["marks"][0];
    assert_eq!(
        (
            &mark["chapterId"],
            &mark["chapterNumber"],
            &mark["chapterTitle"]
        ),
        (&"bk1-c2".into(), &2.into(), &"Chapter 2".into()),
        "{doc}"
    );
}
