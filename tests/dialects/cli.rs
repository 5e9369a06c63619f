//! Running the `earmark` binary in a home configured for a dialect server,
//! and the invariants every write must keep.

use crate::harness::Home;
use crate::server::{self, DialectServer, Write};
use std::process::Output;

/// A home (`harness::Home`) whose config.toml points the default profile
/// at `address` with identity header prefix `prefix`, and the extra
/// profile `toml`.
pub fn configured(address: &str, prefix: &str, extra: &str) -> Home {
    Home::with_config(&format!(
        "default_profile = \"d\"\n[profiles.d]\nserver = \"{address}\"\nuser = \"{}\"\nidentity_header_prefix = \"{prefix}\"\n{extra}",
        server::USER
    ))
}

/// `earmark login` in `home` with the dialect server's password.
pub async fn login(home: &Home) -> Output {
    home.run_async(&["login", "--password-stdin"], Some(server::PASSWORD))
        .await
}

/// Every write carries both identity headers under `prefix`, naming the
/// logged-in server and `user` with exactly the server's digits (no write
/// crosses scope).
pub fn assert_writes_in_scope(writes: &[Write], prefix: &str, user: &str) {
    let p = prefix.to_ascii_lowercase();
    for w in writes {
        let sid = w.headers.get(&format!("{p}-expected-server-id"));
        let uid = w.headers.get(&format!("{p}-expected-user-id"));
        assert_eq!(
            (sid.map(String::as_str), uid.map(String::as_str)),
            (Some(server::SERVER_ID), Some(user)),
            "a write without both identity headers or out of scope: {w:?}"
        );
    }
}

/// No progress write moves a stored place back (to the start, to 0, or
/// before the stored place) unless it says `reset`.
pub fn assert_no_regress(s: &DialectServer, before: &[(String, (String, f64))], writes: &[Write]) {
    let d = &s.dialect;
    let order = |book: &str, ch: &str| -> usize {
        (1..=server::BOOKS)
            .find(|i| server::book_id(d, *i) == book)
            .and_then(|i| (1..=2).find(|c| server::chapter_id(d, i, *c) == ch))
            .unwrap_or(0)
    };
    for w in writes.iter().filter(|w| w.method == "POST") {
        let items: Vec<(String, serde_json::Value)> = if w.path.ends_with("/batch") {
            w.body["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|i| (plain(&i["bookId"]), i))
                .collect()
        } else if w.path.starts_with("/auth/reading-progress/") {
            let book = w
                .path
                .trim_start_matches("/auth/reading-progress/")
                .to_owned();
            vec![(book, w.body.clone())]
        } else {
            continue;
        };
        for (book, b) in items {
            if b["reset"] == true {
                continue;
            }
            let Some((_, (sch, spos))) = before.iter().find(|(k, _)| *k == book) else {
                continue;
            };
            let (ch, pos) = (
                plain(&b["chapterId"]),
                b["positionSec"].as_f64().unwrap_or(0.0),
            );
            let back = (order(&book, &ch), pos) < (order(&book, sch), spos - 1.0);
            assert!(
                !back,
                "a write moved {book} back from {sch}@{spos} to {ch}@{pos}: {w:?}"
            );
        }
    }
}

pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// No path at the throttled place was asked again sooner than the wait
/// its last refusal told, or without one the least first step of
/// earmark's back-off (within `window`, the run of one process: the
/// back-off is a process's own). Returns the refusals counted.
pub fn assert_waits_kept(s: &DialectServer, window: std::ops::Range<std::time::Instant>) -> usize {
    // The clocks of a request's arrival: a little early is the loopback's.
    let slack = std::time::Duration::from_millis(30);
    let knocks: Vec<server::Knock> = s
        .knocks()
        .into_iter()
        .filter(|k| window.contains(&k.at))
        .collect();
    for (i, k) in knocks.iter().enumerate() {
        if !k.refused {
            continue;
        }
        // Without `Retry-After`, the first step of earmark's own back-off
        // (1 s, of which at least half).
        let told = k.told.unwrap_or(std::time::Duration::from_millis(500));
        if let Some(next) = knocks[i + 1..].iter().find(|n| n.path == k.path) {
            let gap = next.at - k.at;
            assert!(
                gap + slack >= told,
                "{} asked again {gap:?} after it was told to wait {told:?}: {:?} {knocks:#?}",
                k.path,
                s.dialect.throttle
            );
        }
    }
    knocks.iter().filter(|k| k.refused).count()
}
