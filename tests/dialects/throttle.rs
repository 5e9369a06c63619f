//! A server that says "slow down" gets less traffic, never more (issue
//! 31): 429 and 503 with `Retry-After` in seconds or as a date, on reads,
//! writes and streams, through the client and through `earmark play`. No
//! path is asked again before the wait it was told; a success of another
//! kind does not open the way for the one refused; the place is stored in
//! the end. And what is asked compressed: API answers, never audio.

use crate::cli::{assert_waits_kept, configured, login};
use crate::harness::{self, text};
use crate::server::*;
use earmark::api::{ApiError, Client, ClientOptions, ProgressWrite};
use earmark::domain::backoff::Kind;
use earmark::domain::*;
use std::time::{Duration, Instant};

fn options(retries: u32) -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        retries,
        backoff: Duration::from_millis(200),
        ..ClientOptions::default()
    }
}

async fn logged_in(s: &DialectServer, retries: u32) -> Client {
    harness::client_logged_in(&s.address, options(retries), USER, PASSWORD).await
}

fn throttled(place: Place, status: u16, form: RetryForm, secs: u64, lasts_ms: u64) -> Dialect {
    Dialect {
        throttle: Some(Throttling {
            place,
            status,
            form,
            secs,
            lasts: Duration::from_millis(lasts_ms),
        }),
        ..Dialect::default()
    }
}

/// A read refused twice waits each time, then gets its answer.
async fn read_waits(status: u16, form: RetryForm) {
    let s = DialectServer::start(throttled(Place::Api, status, form, 1, 1500)).await;
    let c = logged_in(&s, 2).await;
    let began = Instant::now();
    let b = c.book(&BookId::new(book_id(&s.dialect, 2))).await;
    assert_eq!(b.unwrap().title, "Book 2", "{status} {form:?}");
    let refused = assert_waits_kept(&s, began..Instant::now());
    assert_eq!(refused, 2, "{status} {form:?}: {:#?}", s.knocks());
    assert!(began.elapsed() >= Duration::from_millis(1900));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_read_is_asked_again_only_after_retry_after_in_either_form() {
    futures_util::future::join_all([
        read_waits(429, RetryForm::Seconds),
        read_waits(429, RetryForm::Date),
        read_waits(503, RetryForm::Seconds),
        read_waits(503, RetryForm::Date),
    ])
    .await;
}

fn write(d: &Dialect, at: f64) -> ProgressWrite {
    ProgressWrite {
        chapter_id: ChapterId::new(chapter_id(d, 2, 1)),
        position: at,
        client_updated_at: now_millis(),
        finished: false,
        device_id: None,
        reset: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_waits_for_retry_after_and_a_read_that_works_does_not_open_it() {
    let s = DialectServer::start(throttled(Place::Write, 503, RetryForm::Date, 1, 1500)).await;
    let d = s.dialect.clone();
    let c = logged_in(&s, 0).await;
    let b2 = BookId::new(book_id(&d, 2));
    let began = Instant::now();
    let e = c.post_progress(&b2, &write(&d, 12.0)).await.unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::RateLimited {
                status: 503,
                retry_after: Some(w),
                ..
            } if w == Duration::from_secs(1)
        ),
        "{e:?}"
    );
    // At once again: not sent, and a read that works leaves it waiting.
    let e = c.post_progress(&b2, &write(&d, 13.0)).await.unwrap_err();
    assert!(e.is_throttle(), "{e:?}");
    assert_eq!(c.book(&b2).await.unwrap().title, "Book 2");
    assert!(c.throttle(Kind::ProgressWrite).is_some());
    assert!(c.throttle(Kind::Read).is_none());
    assert_eq!(s.knocks().len(), 1, "{:#?}", s.knocks());
    // Each time the wait is over, once.
    let mut stored = false;
    for at in [14.0, 15.0, 16.0] {
        if let Some(t) = c.throttle(Kind::ProgressWrite) {
            tokio::time::sleep_until(t.until.into()).await;
        }
        if c.post_progress(&b2, &write(&d, at)).await.is_ok() {
            stored = true;
            break;
        }
    }
    assert!(stored, "{:#?}", s.knocks());
    assert_waits_kept(&s, began..Instant::now());
    assert!(s.stored(b2.as_str()).unwrap().1 >= 14.0);
}

/// `earmark play` with `env` against `s`: the run's output and the
/// refusals it met (each wait kept, asserted).
async fn play(s: &DialectServer, secs: &str, env: &[(&str, &str)]) -> (String, usize) {
    let home = configured(&s.address, s.dialect.prefix, "");
    let o = login(&home).await;
    assert!(o.status.success(), "{}", text(&o));
    let b1 = book_id(&s.dialect, 1);
    let began = Instant::now();
    let o = home
        .run_async_with(&["play", &b1, "--for", secs, "--audio", "null"], None, env)
        .await;
    let refused = assert_waits_kept(s, began..Instant::now());
    assert!(o.status.success(), "{}", text(&o));
    (text(&o), refused)
}

/// The case of issue 31: progress writes answered 429 with `Retry-After:
/// 2` while `earmark play` reports five times a second. At most one write
/// attempt per window, the place stored in the end, and stderr says it
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn earmark_play_sends_at_most_one_write_per_retry_after_window_and_stores_the_place() {
    let s = DialectServer::start(throttled(Place::Write, 429, RetryForm::Seconds, 2, 4500)).await;
    let b1 = book_id(&s.dialect, 1);
    let (out, refused) = play(&s, "6", &[("EARMARK_REPORT_INTERVAL_MS", "200")]).await;
    let attempts = s.knocks().len();
    eprintln!("throttled play: {attempts} write attempts, {refused} refused; {out}");
    assert!(refused >= 1, "{:#?}", s.knocks());
    // 4.5 s of refusals, 2 s apart: one attempt a window.
    assert!(refused <= 3, "{attempts} attempts: {:#?}", s.knocks());
    assert_eq!(
        out.matches("the server asked to wait 2 s").count(),
        1,
        "{out}"
    );
    let (ch, pos) = s.stored(&b1).unwrap();
    assert!(
        ch == chapter_id(&s.dialect, 1, 2) && pos > 30.0,
        "{ch}@{pos}"
    );
}

/// The stream answers 503 with `Retry-After` as a date for two seconds:
/// the player waits, asks again once the wait is over, and plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_stream_is_asked_again_only_after_retry_after_and_then_plays() {
    let s = DialectServer::start(throttled(Place::Stream, 503, RetryForm::Date, 1, 2000)).await;
    let b1 = book_id(&s.dialect, 1);
    let (out, refused) = play(&s, "4", &[]).await;
    assert!(refused >= 1, "{:#?}", s.knocks());
    assert!(s.knocks().iter().any(|k| !k.refused), "{out}");
    let (_, pos) = s.stored(&b1).unwrap();
    assert!(pos > 30.0, "{pos}: {out}");
}

/// A throttle that lasts 30 s (`Retry-After: 5` on every write): the
/// place is stored once it ends, and no write went sooner than told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a soak: 40 s"]
async fn soak_a_thirty_second_throttle_on_writes_is_waited_out_and_the_place_stored() {
    let s = DialectServer::start(throttled(Place::Write, 429, RetryForm::Seconds, 5, 30_000)).await;
    let b1 = book_id(&s.dialect, 1);
    let (_, refused) = play(&s, "36", &[("EARMARK_REPORT_INTERVAL_MS", "200")]).await;
    eprintln!(
        "30 s throttle: {} write attempts, {refused} refused",
        s.knocks().len()
    );
    assert!(refused <= 7, "{:#?}", s.knocks());
    assert!(s.stored(&b1).unwrap().1 > 30.0);
}

/// API answers are asked compressed and read; audio is asked `identity`
/// with its `Range` as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_are_asked_compressed_and_decoded_and_audio_is_not() {
    let s = DialectServer::start(Dialect {
        gzip: true,
        ..Dialect::default()
    })
    .await;
    let c = logged_in(&s, 0).await;
    let b1 = BookId::new(book_id(&s.dialect, 1));
    let m = c.manifest(&b1).await.unwrap();
    assert_eq!(m.items.len(), 2);
    let resp = c
        .open_stream(&c.stream_request(&m.items[0]), Some(100))
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let seen = s.encodings();
    let of = |p: &str| {
        seen.iter()
            .find(|(path, _)| path.contains(p))
            .and_then(|(_, a)| a.clone())
            .unwrap_or_default()
    };
    let api = of("download-manifest");
    for enc in ["gzip", "br", "zstd"] {
        assert!(api.contains(enc), "manifest asked with {api:?}");
    }
    assert_eq!(of("/play"), "identity", "{seen:?}");
}
