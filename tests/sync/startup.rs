//! Round trips of `earmark play`'s start-up with a stored session, counted
//! at the slow-link proxy between the real binary and the reference
//! server (issue 23): which requests went out together, never times.

use crate::harness::{Home, text};
use crate::support::Env;
use earmark::api::ProgressWrite;
use earmark::domain::now_millis;
use std::time::Duration;

/// What a request the proxy saw asks for.
fn what(path: &str) -> &'static str {
    if path.contains("/reading-progress/") {
        "progress"
    } else if path.contains("/play") {
        "stream"
    } else if path.contains("manifest") {
        "manifest"
    } else {
        "other"
    }
}

/// The stream requests for `chapter` the proxy saw.
fn streams_of<'a>(
    seen: &'a [crate::proxy::Request],
    chapter: &str,
) -> Vec<&'a crate::proxy::Request> {
    seen.iter()
        .filter(|r| what(&r.path) == "stream" && r.path.contains(chapter))
        .collect()
}

/// The chapters of `earmark --json play`'s status lines on stdout.
fn played_chapters(o: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("chapter_id")?.as_str().map(str::to_owned))
        .collect()
}

/// A logged-in home through the proxy that played `chapter` of "Alpha"
/// once (so this device knows a place there), and the book's chapters.
async fn played_once(env: &Env, chapter: usize) -> (Home, earmark::domain::BookId, Vec<String>) {
    let home = Home::at(&env.proxy.base_url());
    let o = home.run(&["login", "--password-stdin"], Some(&env.server.password));
    assert!(o.status.success(), "{}", text(&o));
    let (book, m) = env.book("Alpha").await;
    let chapters: Vec<String> = m
        .items
        .iter()
        .map(|i| i.chapter_id.as_str().to_owned())
        .collect();
    if chapter < chapters.len() {
        let o = home.run(
            &[
                "--json",
                "play",
                book.as_str(),
                "--chapter",
                &chapters[chapter],
                "--at",
                "30",
                "--audio",
                "null",
                "--for",
                "1",
            ],
            None,
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    (home, book, chapters)
}

fn resume(home: &Home, book: &earmark::domain::BookId) -> std::process::Output {
    let o = home.run(
        &[
            "--json",
            "play",
            book.as_str(),
            "--audio",
            "null",
            "--for",
            "1",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_asks_for_the_manifest_the_place_and_the_stream_together() {
    let env = Env::start().await;
    let home = Home::at(&env.proxy.base_url());
    let o = home.run(&["login", "--password-stdin"], Some(&env.server.password));
    assert!(o.status.success(), "{}", text(&o));
    let (book, m) = env.book("Alpha").await;
    let first = m.items[0].chapter_id.as_str().to_owned();
    env.proxy.set_delay(Duration::from_millis(20));
    env.proxy.clear();
    let o = home.run(
        &[
            "--json",
            "play",
            book.as_str(),
            "--chapter",
            &first,
            "--at",
            "0",
            "--audio",
            "null",
            "--for",
            "1",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let seen = env.proxy.requests();
    let what = |path: &str| {
        if path.contains("/reading-progress/") {
            "progress"
        } else if path.contains("/play") {
            "stream"
        } else if path.contains("manifest") {
            "manifest"
        } else {
            "other"
        }
    };
    let mut firsts: Vec<&str> = seen.iter().take(3).map(|r| what(&r.path)).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, ["manifest", "progress", "stream"], "{seen:#?}");
    // Sent one after another they would share one kept-alive connection;
    // together, each needs its own.
    let mut conns: Vec<u64> = seen.iter().take(3).map(|r| r.connection).collect();
    conns.dedup();
    assert_eq!(
        conns.len(),
        3,
        "three requests in flight together: {seen:#?}"
    );
    // The stream asked for at start-up was the one played: no second
    // request for its head.
    let heads = seen
        .iter()
        .filter(|r| what(&r.path) == "stream" && r.path.contains(&first))
        .filter(|r| {
            r.range
                .as_deref()
                .is_some_and(|v| v.starts_with("bytes=0-"))
        })
        .count();
    assert_eq!(heads, 1, "{seen:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_without_a_chapter_asks_for_the_manifest_the_place_and_the_last_played_chapter_together()
 {
    let env = Env::start().await;
    let (home, book, chapters) = played_once(&env, 1).await;
    env.proxy.set_delay(Duration::from_millis(20));
    env.proxy.clear();
    let o = resume(&home, &book);
    let seen = env.proxy.requests();
    let mut firsts: Vec<&str> = seen.iter().take(3).map(|r| what(&r.path)).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, ["manifest", "progress", "stream"], "{seen:#?}");
    let stream = seen
        .iter()
        .take(3)
        .find(|r| what(&r.path) == "stream")
        .unwrap();
    assert!(
        stream.path.contains(&chapters[1]),
        "the chapter played last: {seen:#?}"
    );
    assert!(env.proxy.max_in_flight() >= 3, "{seen:#?}");
    // The stream opened ahead was the one played: its head asked for once.
    let heads = streams_of(&seen, &chapters[1])
        .into_iter()
        .filter(|r| {
            r.range
                .as_deref()
                .is_some_and(|v| v.starts_with("bytes=0-"))
        })
        .count();
    assert_eq!(heads, 1, "{seen:#?}");
    assert!(streams_of(&seen, &chapters[0]).is_empty(), "{seen:#?}");
    let played = played_chapters(&o);
    assert!(
        !played.is_empty() && played.iter().all(|c| *c == chapters[1]),
        "{}",
        text(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_starts_at_the_servers_place_when_it_is_another_chapter_than_the_one_opened_ahead() {
    let env = Env::start().await;
    let (home, book, chapters) = played_once(&env, 1).await;
    // Another device listened since, in the first chapter.
    env.direct()
        .await
        .post_progress(
            &book,
            &ProgressWrite {
                chapter_id: earmark::domain::ChapterId::new(chapters[0].as_str()),
                position: 50.0,
                client_updated_at: now_millis(),
                finished: false,
                device_id: Some("another".into()),
                reset: false,
            },
        )
        .await
        .unwrap();
    env.proxy.set_delay(Duration::from_millis(20));
    env.proxy.clear();
    let o = resume(&home, &book);
    let seen = env.proxy.requests();
    // Opened ahead as this device last knew it…
    assert_eq!(streams_of(&seen, &chapters[1]).len(), 1, "{seen:#?}");
    // …but rule 7: the server's place plays, never the ahead stream.
    assert!(!streams_of(&seen, &chapters[0]).is_empty(), "{seen:#?}");
    let played = played_chapters(&o);
    assert!(
        !played.is_empty() && played.iter().all(|c| *c == chapters[0]),
        "{}",
        text(&o)
    );
    let first: serde_json::Value = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("position").is_some())
        .unwrap();
    assert!(first["position"].as_f64().unwrap() >= 50.0, "{}", text(&o));
    let server = env.server_progress(&book).await.unwrap();
    assert_eq!(server.chapter_id.as_str(), chapters[0]);
    assert!(
        server.position >= 50.0,
        "never a place before the server's: {server:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_with_no_place_known_here_opens_no_stream_before_the_place_is_read() {
    let env = Env::start().await;
    let (home, book, chapters) = played_once(&env, usize::MAX).await;
    env.proxy.set_delay(Duration::from_millis(20));
    env.proxy.clear();
    let o = resume(&home, &book);
    let seen = env.proxy.requests();
    let mut firsts: Vec<&str> = seen.iter().take(2).map(|r| what(&r.path)).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, ["manifest", "progress"], "{seen:#?}");
    // The only stream is the first chapter's (the book was never played),
    // asked for once the place was read: two in flight, never three.
    let streams: Vec<_> = seen.iter().filter(|r| what(&r.path) == "stream").collect();
    assert!(
        streams.iter().all(|r| r.path.contains(&chapters[0])),
        "{seen:#?}"
    );
    assert_eq!(env.proxy.max_in_flight(), 2, "{seen:#?}");
    assert!(!played_chapters(&o).is_empty(), "{}", text(&o));
}
