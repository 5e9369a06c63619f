//! Round trips of `earmark play`'s start-up with a stored session, counted
//! at the slow-link proxy between the real binary and the reference
//! server (issue 23): which requests went out together, never times.

use crate::support::{Env, Home, text};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_asks_for_the_manifest_the_place_and_the_stream_together() {
    let env = Env::start().await;
    let home = Home::new(&env.proxy.base_url());
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
