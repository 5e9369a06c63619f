//! One named test per finding of issue 20 that the api layer owns: a
//! partial list is never presented as the whole, a refusal on the stream
//! is read as an error, codes inside URIs count, progress is found by what
//! it says, and ids are kept exactly as sent.

use crate::cli::{assert_writes_in_scope, configured, login};
use crate::findings::logged_in;
use crate::harness::{Home, text};
use crate::server::*;
use earmark::api::{Auth, BookQuery, Client, ProgressRead};
use earmark::domain::*;
use serde_json::Value;

async fn home_of(s: &DialectServer) -> Home {
    let home = configured(&s.address, s.dialect.prefix, "");
    let o = login(&home).await;
    assert!(o.status.success(), "{}", text(&o));
    home
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

fn want_ids(d: &Dialect) -> Vec<String> {
    (1..=BOOKS).map(|i| book_id(d, i)).collect()
}

fn ids(books: &[Book]) -> Vec<String> {
    books.iter().map(|b| b.id.to_string()).collect()
}

#[tokio::test]
async fn a_server_numbering_pages_from_0_gives_every_book_once() {
    let s = DialectServer::start(Dialect {
        paging: Paging::ZeroBasedEcho,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let l = c.books_listing(&BookQuery::default()).await.unwrap();
    assert_eq!(ids(&l.items), want_ids(&s.dialect));
    assert!(l.complete() && l.total == Some(BOOKS as u64), "{l:?}");
    // The answer to page 1 said it was not the first: asked from 0 on.
    let asked: Vec<String> = s.store.lock().unwrap().requests.clone();
    let pages: Vec<&str> = asked
        .iter()
        .filter_map(|r| r.split("page=").nth(1)?.split('&').next())
        .collect();
    assert_eq!(pages, ["1", "0", "1", "2"], "{asked:?}");

    let home = home_of(&s).await;
    let doc = json_of(&home.run_async(&["books", "--json"], None).await);
    assert_eq!((&doc["total"], &doc["complete"]), (&5.into(), &true.into()));
    let o = home.run_async(&["doctor"], None).await;
    assert!(
        text(&o).contains("pages counted from 0"),
        "the doctor says how pages are numbered: {}",
        text(&o)
    );
}

#[tokio::test]
async fn a_server_numbering_pages_from_0_that_echoes_nothing_is_completed_from_page_0() {
    let s = DialectServer::start(Dialect {
        paging: Paging::ZeroBasedTotalOnly,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let l = c.books_listing(&BookQuery::default()).await.unwrap();
    assert_eq!(ids(&l.items), want_ids(&s.dialect), "in order, each once");
    assert!(l.complete(), "{l:?}");
    // Page by page, the missing first page comes last, never twice.
    let mut pager = c.book_pager(&BookQuery::default());
    let mut seen = Vec::new();
    while let Some(p) = pager.next_page().await.unwrap() {
        seen.extend(ids(&p.items));
    }
    seen.sort();
    assert_eq!(seen, want_ids(&s.dialect));
    assert!(pager.shortfall().is_none());
}

#[tokio::test]
async fn a_list_short_of_the_servers_total_says_incomplete_with_both_counts() {
    let s = DialectServer::start(Dialect {
        paging: Paging::Overcounts,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s).await;
    let l = c.books_listing(&BookQuery::default()).await.unwrap();
    assert_eq!(ids(&l.items), want_ids(&s.dialect));
    let short = l.shortfall.expect("incomplete");
    assert_eq!((short.read, short.reported), (5, Some(7)));

    let home = home_of(&s).await;
    let o = home.run_async(&["books", "--json"], None).await;
    assert!(o.status.success(), "{}", text(&o));
    let doc = json_of(&o);
    assert_eq!(
        (&doc["complete"], &doc["total"], &doc["read"]),
        (&false.into(), &7.into(), &5.into()),
        "{doc}"
    );
    let o = home.run_async(&["books"], None).await;
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("the library is incomplete: the server reports 7 books, earmark read 5"),
        "{}",
        text(&o)
    );
    let o = home.run_async(&["books", "--json", "--stream"], None).await;
    let last: Value = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap();
    assert_eq!(
        last,
        serde_json::json!({"complete": false, "total": 7, "read": 5})
    );
    let doc = json_of(&home.run_async(&["doctor", "--json"], None).await);
    let books = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "books")
        .unwrap()
        .clone();
    assert_eq!(books["recognised"], false, "{books}");
    assert!(
        books["detail"]
            .as_str()
            .unwrap()
            .contains("the server reports 7 books, earmark read 5"),
        "{books}"
    );
}

#[tokio::test]
async fn a_license_refusal_on_the_stream_is_a_license_stop_in_every_form() {
    for stream_refusal in [
        StreamRefusal::Status,
        StreamRefusal::Json200,
        StreamRefusal::Html200,
        StreamRefusal::Html4xx,
    ] {
        for error in [
            ErrorShape::CodeMessage,
            ErrorShape::Nested,
            ErrorShape::FastApiDetail,
            ErrorShape::JsonApi,
            ErrorShape::NumericCodeAndErrorCode,
            ErrorShape::In200Envelope,
            ErrorShape::ProblemUri,
            ErrorShape::UriFragment,
        ] {
            for code_style in [CodeStyle::Upper, CodeStyle::Kebab, CodeStyle::Camel] {
                let s = DialectServer::start(Dialect {
                    stream_refusal,
                    error,
                    code_style,
                    ..Dialect::default()
                })
                .await;
                let c = logged_in(&s).await;
                let m = c.manifest(&BookId::new("bk1")).await.unwrap();
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
                let r = get.send().await.unwrap();
                let (status, ct) = (
                    r.status().as_u16(),
                    r.headers()
                        .get("content-type")
                        .map(|v| v.to_str().unwrap().to_owned()),
                );
                let body = r.bytes().await.unwrap();
                let e = c.stream_refusal(status, ct.as_deref(), &body);
                assert!(
                    e.is_license(),
                    "{stream_refusal:?} {error:?} {code_style:?}: {status} → {e:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_scope_mismatch_named_only_in_a_uri_asks_to_log_in_again() {
    for error in [ErrorShape::ProblemUri, ErrorShape::UriFragment] {
        let s = DialectServer::start(Dialect {
            error,
            ..Dialect::default()
        })
        .await;
        let c = logged_in(&s).await;
        let stale = Auth {
            server_id: ServerId::new("rebuilt"),
            ..c.auth().unwrap()
        };
        let other =
            Client::with_auth(c.base().clone(), crate::findings::opts("X-Service"), stale).unwrap();
        let e = other.add_favorite(&BookId::new("bk2")).await.unwrap_err();
        assert!(e.needs_login(), "{error:?}: {e:?}");
        assert!(e.to_string().contains("log in again"), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_in_a_list_is_found_and_synced_forward() {
    for progress in [ProgressShape::ListUnderData, ProgressShape::ListOfAllBooks] {
        for no_progress in [NoProgress::EmptyList, NoProgress::EmptyObject] {
            let s = DialectServer::start(Dialect {
                progress,
                no_progress,
                ..Dialect::default()
            })
            .await;
            let c = logged_in(&s).await;
            let read = c
                .progress_read_fetching_manifest(&BookId::new("bk1"))
                .await
                .unwrap();
            let p = read.progress().unwrap_or_else(|| panic!("{read:?}"));
            assert_eq!((p.chapter_id.as_str(), p.position), ("bk1-c2", 30.0));
            let none = c
                .progress_read_fetching_manifest(&BookId::new("bk2"))
                .await
                .unwrap();
            assert!(matches!(none, ProgressRead::NoProgress { .. }), "{none:?}");
            let home = home_of(&s).await;
            let o = home
                .run_async(&["play", "bk1", "--for", "2", "--audio", "null"], None)
                .await;
            assert!(o.status.success(), "{progress:?}: {}", text(&o));
            let (ch, pos) = s.stored("bk1").unwrap();
            assert!(
                ch == "bk1-c2" && pos >= 30.0,
                "{progress:?}: synced forward, not from 0: {ch}@{pos}"
            );
        }
    }
}

#[tokio::test]
async fn ids_beyond_2_64_and_zero_padded_are_kept_exactly_as_sent() {
    for ids_kind in [Ids::Big, Ids::Padded] {
        let s = DialectServer::start(Dialect {
            ids: ids_kind,
            ..Dialect::default()
        })
        .await;
        let d = s.dialect.clone();
        let c = logged_in(&s).await;
        assert_eq!(c.auth().unwrap().user_id.as_str(), user_id(&d));
        let l = c.books_listing(&BookQuery::default()).await.unwrap();
        assert_eq!(ids(&l.items), want_ids(&d), "{ids_kind:?}");
        let b1 = BookId::new(book_id(&d, 1));
        let m = c.manifest(&b1).await.unwrap();
        assert_eq!(m.items[1].chapter_id.as_str(), chapter_id(&d, 1, 2));
        let p = c.progress(&b1).await.unwrap().progress.unwrap();
        assert_eq!(p.chapter_id.as_str(), chapter_id(&d, 1, 2));

        // Through the binary: the identity header names the user with the
        // server's own digits, and the book and chapter ids go back as sent.
        let home = home_of(&s).await;
        let doc = json_of(&home.run_async(&["status", "--json"], None).await);
        assert_eq!(doc["userId"].to_string().trim_matches('"'), user_id(&d));
        let o = home
            .run_async(
                &["play", &book_id(&d, 1), "--for", "2", "--audio", "null"],
                None,
            )
            .await;
        assert!(o.status.success(), "{ids_kind:?}: {}", text(&o));
        let writes = s.writes();
        assert!(!writes.is_empty(), "play reported its place");
        assert_writes_in_scope(&writes, d.prefix, &user_id(&d));
        let (ch, _) = s.stored(&book_id(&d, 1)).unwrap();
        assert_eq!(ch, chapter_id(&d, 1, 2), "{ids_kind:?}");
    }
}

/// The player's backends (`Live`) against a server that says it has more
/// books than it sends: what arrived stays, the player says the library
/// is incomplete with both counts, and the partial list is never taken
/// for the library.
#[test]
fn the_player_says_the_library_is_incomplete_with_both_counts() {
    use earmark::config::{Dirs, Profile, ProfileSelector};
    use earmark::ui::event_loop::{Backends, UiSender};
    use earmark::ui::state::{Answer, Event};
    use earmark::ui::terminal::LoopEvent;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(DialectServer::start(Dialect {
        paging: Paging::Overcounts,
        ..Dialect::default()
    }));
    let home = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        config: home.path().join("config"),
        data: home.path().join("data"),
        cache: home.path().join("cache"),
    };
    let select = ProfileSelector {
        server: Some(s.address.clone()),
        user: Some(USER.into()),
        ..Default::default()
    };
    let profile = Profile::resolve_in(&select, dirs).unwrap();
    let done = rt
        .block_on(earmark::config::login(&profile, None, PASSWORD))
        .unwrap();
    let (ui, rx) = UiSender::channel();
    let mut live = earmark::runtime::Live::start(
        ui,
        profile,
        Some(done.session),
        earmark::player::AudioMode::Null,
        earmark::config::ListeningRules::default(),
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let why = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(LoopEvent::App(Event::Answer(Answer::LibraryIncomplete(why)))) => break why,
            Ok(LoopEvent::App(Event::Answer(Answer::Library {
                from_cache: false,
                books,
            }))) => panic!(
                "a partial list taken for the library: {} books",
                books.len()
            ),
            Ok(_) => {}
            Err(_) => panic!("timed out waiting for the incomplete library"),
        }
    };
    assert!(
        why.contains("The library is incomplete: the server reports 7 books, earmark read 5"),
        "{why}"
    );
    live.shutdown();
}
