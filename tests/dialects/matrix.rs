//! Many dialects, chosen by proptest: the flow works, or fails closed with
//! a clear message; every book exactly once, or a clear "incomplete" with
//! both counts; no write moves stored progress back; every write has both
//! identity headers with the server's own digits; no write crosses scope;
//! a license code anywhere (the stream included) is a license stop and a
//! scope mismatch asks to log in again, whatever the error's shape; no
//! length is shown off by more than 1 % from the audio (issue 31).

use crate::cli::{assert_no_regress, assert_waits_kept, assert_writes_in_scope, configured, login};
use crate::harness::{Home, text};
use crate::server::*;
use earmark::api::{
    ApiError, Auth, BaseUrl, BookQuery, Client, ClientOptions, ProgressRead, ProgressWrite,
};
use earmark::domain::*;
use proptest::prelude::*;
use std::time::Duration;

pub fn arb_dialect() -> impl Strategy<Value = Dialect> {
    let a = (
        prop_oneof![
            Just(Envelope::Data),
            Just(Envelope::CodeData),
            Just(Envelope::Result),
            Just(Envelope::Bare)
        ],
        prop_oneof![
            Just(TokenKey::Token),
            Just(TokenKey::AccessToken),
            Just(TokenKey::NestedAuth),
            Just(TokenKey::Jwt)
        ],
        prop_oneof![
            Just(Ids::Strings),
            Just(Ids::Numbers),
            Just(Ids::Big),
            Just(Ids::Padded)
        ],
        prop_oneof![
            Just(ListKey::Items),
            Just(ListKey::Content),
            Just(ListKey::Records),
            Just(ListKey::Data)
        ],
        prop_oneof![
            Just(Paging::Page),
            Just(Paging::Offset),
            Just(Paging::Cursor),
            Just(Paging::NextAbsolute),
            Just(Paging::NextRootRelative),
            Just(Paging::NextRelative),
            Just(Paging::LinksNext),
            Just(Paging::IgnoresPageSize),
            Just(Paging::None),
            Just(Paging::ZeroBasedEcho),
            Just(Paging::ZeroBasedTotalOnly),
            Just(Paging::TotalInWrapper),
            Just(Paging::Overcounts)
        ],
        prop_oneof![
            Just(ErrorShape::CodeMessage),
            Just(ErrorShape::Nested),
            Just(ErrorShape::FastApiDetail),
            Just(ErrorShape::JsonApi),
            Just(ErrorShape::NumericCodeAndErrorCode),
            Just(ErrorShape::NumericCodeAndError),
            Just(ErrorShape::In200Envelope),
            Just(ErrorShape::ProblemUri),
            Just(ErrorShape::UriFragment)
        ],
    );
    let b = (
        prop_oneof![
            Just(CodeStyle::Snake),
            Just(CodeStyle::Upper),
            Just(CodeStyle::Camel),
            Just(CodeStyle::Kebab)
        ],
        prop_oneof![
            Just(NoProgress::NotFound),
            Just(NoProgress::NoContent),
            Just(NoProgress::Null),
            Just(NoProgress::EmptyObject),
            Just(NoProgress::EmptyRecord),
            Just(NoProgress::EmptyList)
        ],
        prop_oneof![
            Just(ProgressShape::Ours),
            Just(ProgressShape::Bare),
            Just(ProgressShape::LastProgress),
            Just(ProgressShape::ListUnderData),
            Just(ProgressShape::UnknownWrapper),
            Just(ProgressShape::ListOfAllBooks),
            Just(ProgressShape::Opaque),
            Just(ProgressShape::ChapterIndex),
            Just(ProgressShape::BareMillis)
        ],
        prop_oneof![
            Just(LicenseWords::StatusValid),
            Just(LicenseWords::StateActive),
            Just(LicenseWords::ValidFlag),
            Just(LicenseWords::Licensed)
        ],
        prop_oneof![Just("X-Service"), Just("X-Acme")],
        any::<bool>(),
        prop_oneof![
            Just(People::Ours),
            Just(People::FlatStrings),
            Just(People::SnakeNumbers),
            Just(People::SeriesList),
            Just(People::Unreadable)
        ],
        prop_oneof![
            Just(StreamRefusal::Status),
            Just(StreamRefusal::Json200),
            Just(StreamRefusal::Html200),
            Just(StreamRefusal::Html4xx)
        ],
        any::<bool>(),
    );
    (a, b, arb_wire_axes()).prop_map(
        |(
            (envelope, token, ids, list_key, paging, error),
            (
                code_style,
                no_progress,
                progress,
                license,
                prefix,
                gateway,
                people,
                stream_refusal,
                gzip,
            ),
            (cursor, lengths),
        )| {
            Dialect {
                envelope,
                token,
                ids,
                list_key,
                paging,
                error,
                code_style,
                no_progress,
                progress,
                license,
                people,
                prefix,
                gateway,
                stream_refusal,
                throttle: None,
                gzip,
                cursor,
                lengths,
            }
        },
    )
}

/// A throttle of a second on reads, writes or streams, with 429 or 503
/// and `Retry-After` in either form or none, lasting a little longer.
pub fn arb_throttle() -> impl Strategy<Value = Throttling> {
    (
        prop_oneof![Just(Place::Api), Just(Place::Stream), Just(Place::Write)],
        prop_oneof![Just(429u16), Just(503u16)],
        prop_oneof![
            Just(RetryForm::Seconds),
            Just(RetryForm::Date),
            Just(RetryForm::Absent)
        ],
    )
        .prop_map(|(place, status, form)| Throttling {
            place,
            status,
            form,
            secs: 1,
            lasts: Duration::from_millis(1200),
        })
}

/// Issue 31's axes: a cursor's characters, and lengths without a unit.
pub fn arb_wire_axes() -> impl Strategy<Value = (CursorChars, Lengths)> {
    (
        prop_oneof![
            Just(CursorChars::Plain),
            Just(CursorChars::Symbols),
            Just(CursorChars::LeadingSlash),
            Just(CursorChars::LeadingSlashUnderNext)
        ],
        prop_oneof![
            Just(Lengths::NamedSeconds),
            Just(Lengths::UnitlessSeconds),
            Just(Lengths::UnitlessMillis),
            Just(Lengths::UnitlessMinutes),
            Just(Lengths::UnitlessNoUnitFits)
        ],
    )
}

/// No length is shown off by more than 1 % from the audio: each is the
/// audio's, or unknown (never a guess) where no unit fits.
pub fn assert_length_true(d: &Dialect, what: &str, shown: Option<f64>, audio: f64) {
    match shown {
        Some(secs) => assert!(
            (secs - audio).abs() <= audio * 0.01,
            "{what}: {secs} s shown for {audio} s of audio: {d:?}"
        ),
        None => assert!(
            !d.lengths_readable(),
            "{what}: unknown, although the audio fits a unit: {d:?}"
        ),
    }
}

/// Lengths through the client: never wrong before a check, and the
/// audio's after one (or unknown where no unit fits).
async fn lengths_flow(d: &Dialect, c: &Client, book: &BookId) {
    let audio = f64::from(CHAPTER_SECS);
    let mut m = c.manifest(book).await.unwrap();
    for i in &m.items {
        if let Some(secs) = i.duration {
            assert_length_true(d, "manifest before a check", Some(secs), audio);
        }
    }
    let unknown = c.check_lengths(&mut m).await;
    assert_eq!(
        unknown.is_some(),
        !d.lengths_readable(),
        "{d:?}: {unknown:?}"
    );
    for i in &m.items {
        assert_length_true(d, "manifest", i.duration, audio);
    }
    let (chapters, _) = c.chapters_checked(book).await.unwrap();
    for ch in &chapters {
        assert_length_true(d, "chapters", ch.duration, audio);
    }
    let (b, _, _) = c.book_checked(book).await.unwrap();
    assert_length_true(d, "book", b.duration, 2.0 * audio);
}

/// Every book exactly once, in server order; or, from a server that says
/// it has more than it sends, a clear shortfall with both counts.
fn assert_every_book_or_incomplete(d: &Dialect, l: &earmark::api::Listing<Book>) {
    let ids: Vec<String> = l.items.iter().map(|b| b.id.to_string()).collect();
    let want: Vec<String> = (1..=BOOKS).map(|i| book_id(d, i)).collect();
    assert_eq!(
        ids, want,
        "every book once, in order, each id as sent: {d:?}"
    );
    match d.reported_books() {
        Some(n) => {
            let s = l.shortfall.unwrap_or_else(|| panic!("{d:?}: no shortfall"));
            assert_eq!(
                (s.read, s.reported),
                (BOOKS as u64, Some(n as u64)),
                "{d:?}"
            );
            assert!(!l.complete());
        }
        None => assert!(l.complete(), "{d:?}: {:?}", l.shortfall),
    }
}

fn options(prefix: &str) -> ClientOptions {
    ClientOptions {
        identity_header_prefix: prefix.to_owned(),
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        retries: 0,
        backoff: Duration::from_millis(10),
        ..ClientOptions::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The contract flow through the client for one dialect.
async fn client_flow(d: Dialect) {
    let s = DialectServer::start(d.clone()).await;
    let base = BaseUrl::parse(&s.address).unwrap();
    let c = Client::new(base.clone(), options(d.prefix)).unwrap();
    let login = c
        .login(USER, PASSWORD)
        .await
        .unwrap_or_else(|e| panic!("{d:?}: {e}"));
    assert_eq!(
        (login.server_id.as_str(), login.user_id.as_str()),
        (SERVER_ID, user_id(&d).as_str())
    );
    assert!(c.license_status().await.unwrap().valid, "{d:?}");

    let listing = c.books_listing(&BookQuery::default()).await.unwrap();
    assert_every_book_or_incomplete(&d, &listing);
    let found = BookQuery {
        text: Some("Book".into()),
        ..BookQuery::default()
    };
    let found = c.search_listing(&found).await.unwrap();
    assert_every_book_or_incomplete(&d, &found);
    assert!(listing.skipped.is_empty(), "{:?}", listing.skipped);
    for (i, b) in (1..).zip(&listing.items) {
        let labels: Vec<String> = b.series.iter().map(SeriesRef::label).collect();
        assert_eq!((b.narrators.clone(), labels), want_people(&d, i), "{d:?}");
        assert_eq!(b.authors, ["Ann"], "{d:?}");
    }
    // In series order 1 < 1.5 < 2 < 10 < 11, which is the list order here.
    let seqs: Vec<&Sequence> = listing
        .items
        .iter()
        .filter_map(|b| b.series.first()?.sequence.as_ref())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    let b1 = BookId::new(book_id(&d, 1));
    let b2 = BookId::new(book_id(&d, 2));
    assert_eq!(c.book(&b2).await.unwrap().title, "Book 2");
    let e = c.book(&BookId::new("locked")).await.unwrap_err();
    assert!(e.is_license(), "{d:?}: {e:?}");
    lengths_flow(&d, &c, &b1).await;
    let m = c.manifest(&b1).await.unwrap();
    let url = c.stream_url(&m.items[0]);
    let want_path = if d.gateway {
        "/gw/api/v1/chapters/"
    } else {
        "/api/v1/chapters/"
    };
    assert!(url.path().starts_with(want_path), "{url}");
    assert!(c.base().same_origin(&url));

    assert!(
        matches!(
            c.progress_read(&b2, &c.manifest(&b2).await.unwrap())
                .await
                .unwrap(),
            ProgressRead::NoProgress { .. }
        ),
        "{d:?}"
    );
    let r = c.progress_read(&b1, &m).await.unwrap();
    if d.progress_readable() {
        let p = r.progress().unwrap_or_else(|| panic!("{d:?}: {r:?}"));
        assert_eq!(
            (p.chapter_id.to_string(), p.position),
            (chapter_id(&d, 1, 2), 30.0)
        );
    } else {
        assert!(r.is_unreadable(), "{d:?}: {r:?}");
        let e = c.progress(&b1).await.unwrap_err();
        assert!(e.to_string().contains("could not be read"), "{e}");
    }

    // A write under the wrong header names says which setting to change.
    let other = if d.prefix == "X-Acme" {
        "X-Service"
    } else {
        "X-Acme"
    };
    let wrong = Client::with_auth(base, options(other), c.auth().unwrap()).unwrap();
    let w = ProgressWrite {
        chapter_id: ChapterId::new(chapter_id(&d, 2, 1)),
        position: 12.0,
        client_updated_at: now_millis(),
        finished: false,
        device_id: None,
        reset: false,
    };
    let e = wrong.post_progress(&b2, &w).await.unwrap_err();
    assert!(
        matches!(&e, ApiError::IdentityHeadersIgnored { prefix, .. } if prefix == other),
        "{d:?}: {e:?}"
    );
    let right_before = s.writes().len();
    c.post_progress(&b2, &w).await.unwrap();
    assert_eq!(s.stored(b2.as_str()).unwrap().1, 12.0);
    assert_writes_in_scope(&s.writes()[right_before..], d.prefix, &user_id(&d));

    // Another instance's id on a write: a scope mismatch, in whatever shape
    // the server says it, asks to log in again.
    let stale = Auth {
        server_id: ServerId::new("another-instance"),
        ..c.auth().unwrap()
    };
    let other = Client::with_auth(c.base().clone(), options(d.prefix), stale).unwrap();
    let e = other.post_progress(&b2, &w).await.unwrap_err();
    assert!(
        e.needs_login() && matches!(e, ApiError::ScopeMismatch { .. }),
        "{d:?}: {e:?}"
    );
    assert_eq!(s.stored(b2.as_str()).unwrap().1, 12.0, "nothing written");

    // A license refusal on the stream, in the dialect's stream form, is
    // read as a license stop (never decoded as audio).
    s.trigger(Trigger {
        place: Place::Stream,
        status: 403,
        code: "license_required",
    });
    let req = c.stream_request(&m.items[0]);
    let mut get = reqwest::Client::new().get(req.url.clone());
    for (k, v) in &req.headers {
        get = get.header(k, v);
    }
    let resp = get.send().await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = resp.bytes().await.unwrap();
    let e = c.stream_refusal(status, ct.as_deref(), &body);
    assert!(e.is_license(), "{d:?}: {status} {ct:?} → {e:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// Through the client: every combination works, or fails closed.
    #[test]
    fn every_dialect_decodes_or_fails_closed_through_the_client(d in arb_dialect()) {
        runtime().block_on(client_flow(d));
    }
}

/// The flow through the binary, `earmark play` included.
async fn cli_flow(d: Dialect) {
    let s = DialectServer::start(d.clone()).await;
    let home = configured(&s.address, d.prefix, "");
    let o = login(&home).await;
    assert!(o.status.success(), "{d:?}: {}", text(&o));
    let o = home.run_async(&["status", "--json"], None).await;
    assert!(o.status.success(), "{d:?}: {}", text(&o));
    let o = home.run_async(&["books", "--json"], None).await;
    assert!(o.status.success(), "{d:?}: {}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<String> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (1..=BOOKS).map(|i| book_id(&d, i)).collect();
    assert_eq!(ids, want, "{d:?}: {doc}");
    let total = d.reported_books().unwrap_or(BOOKS);
    assert_eq!(
        (&doc["total"], &doc["read"], &doc["complete"]),
        (
            &serde_json::json!(total),
            &serde_json::json!(BOOKS),
            &serde_json::json!(d.reported_books().is_none())
        ),
        "{d:?}: {doc}"
    );
    let b1 = book_id(&d, 1);
    let b2 = book_id(&d, 2);
    cli_lengths(&d, &home, &b1).await;
    let o = home.run_async(&["progress", &b2], None).await;
    assert!(text(&o).contains("No progress yet"), "{d:?}: {}", text(&o));
    let o = home.run_async(&["progress", &b1], None).await;
    if d.progress_readable() {
        assert!(o.status.success(), "{d:?}: {}", text(&o));
    } else {
        assert_eq!(o.status.code(), Some(6), "{d:?}: {}", text(&o));
        assert!(text(&o).contains("could not be read"), "{}", text(&o));
    }
    let before: Vec<(String, (String, f64))> = vec![(b1.clone(), s.stored(&b1).unwrap())];
    let began = std::time::Instant::now();
    let o = home
        .run_async(&["play", &b1, "--for", "1", "--audio", "null"], None)
        .await;
    assert_waits_kept(&s, began..std::time::Instant::now());
    let writes = s.writes();
    assert_writes_in_scope(&writes, d.prefix, &user_id(&d));
    assert_no_regress(&s, &before, &writes);
    // A stream held back longer than the play may not have moved the place.
    let moved = d.throttle.is_none_or(|t| t.place != Place::Stream);
    if d.progress_readable() {
        assert!(o.status.success(), "{d:?}: {}", text(&o));
        assert!(
            !moved || writes.iter().any(|w| w.path.contains("reading-progress")),
            "play reported its place: {d:?}: {writes:?}"
        );
        let (ch, pos) = s.stored(&b1).unwrap();
        assert!(
            ch == chapter_id(&d, 1, 2) && pos >= 30.0,
            "{d:?}: {ch}@{pos}"
        );
    } else {
        // Unknown place: nothing is reported for the book.
        let for_b1 = writes
            .iter()
            .filter(|w| w.path.contains(&b1) || w.body.to_string().contains(&b1))
            .count();
        assert_eq!(for_b1, 0, "{d:?}: wrote {writes:?}; {}", text(&o));
    }
}

/// `manifest`, `chapters` and `book --json` through the binary: each
/// length the audio's (or unknown where no unit fits), with its source.
pub async fn cli_lengths(d: &Dialect, home: &Home, book: &str) {
    let audio = f64::from(CHAPTER_SECS);
    let run = |args: [&'static str; 2]| async move {
        let o = home.run_async(&[args[0], book, args[1]], None).await;
        assert!(o.status.success(), "{d:?}: {}", text(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (doc, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let source = |v: &serde_json::Value| match d.lengths_readable() {
        true => assert_eq!(v["durationSource"], "server", "{d:?}: {v}"),
        false => assert!(v["durationSource"].is_null(), "{d:?}: {v}"),
    };
    let (m, err) = run(["manifest", "--json"]).await;
    for i in m["items"].as_array().unwrap() {
        assert_length_true(d, "manifest --json", i["durationSec"].as_f64(), audio);
        source(i);
    }
    // Lengths no unit fits are said once, never silently.
    let said = err.matches("shown as unknown").count();
    assert_eq!(said, usize::from(!d.lengths_readable()), "{d:?}: {err}");
    let (c, _) = run(["chapters", "--json"]).await;
    for ch in c["items"].as_array().unwrap() {
        assert_length_true(d, "chapters --json", ch["durationSec"].as_f64(), audio);
        source(ch);
    }
    let (b, _) = run(["book", "--json"]).await;
    assert_length_true(d, "book --json", b["durationSec"].as_f64(), 2.0 * audio);
    source(&b);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, failure_persistence: None, ..ProptestConfig::default() })]

    /// Through the binary, `earmark play` included, with reads, writes or
    /// streams throttled for a while: no path asked again before its
    /// `Retry-After`, the place stored in the end, never a 0.
    #[test]
    fn every_dialect_keeps_the_write_promises_through_the_binary(
        d in arb_dialect(),
        throttle in proptest::option::of(arb_throttle()),
    ) {
        runtime().block_on(cli_flow(Dialect { throttle, ..d }));
    }
}
