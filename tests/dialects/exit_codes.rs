//! Every exit code of docs/cli.md, through the real binary, against a
//! server that triggers it through each path that can raise it: an API
//! call (`earmark book`), the chapter stream (`earmark play`) and a write
//! (`earmark favorites add`, and the progress `earmark play` reports). The
//! refusals come in the error shapes and stream forms of the dialects,
//! codes inside URIs included.
//!
//! The stream cases and the 428-during-play case need the playback owner's
//! one classification of a stop (issue 21) to pass: `earmark play` maps
//! the engine's stop and sync's notices to exit codes there.

use crate::cli::{configured, login};
use crate::harness::{Home, text};
use crate::server::*;

/// A server of dialect `d` with a logged-in home.
async fn logged_in(d: Dialect) -> (DialectServer, Home) {
    let s = DialectServer::start(d).await;
    let home = configured(&s.address, s.dialect.prefix, "");
    let o = login(&home).await;
    assert!(o.status.success(), "{}", text(&o));
    (s, home)
}

/// The command that goes through `place`.
fn command(d: &Dialect, place: Place) -> Vec<String> {
    let b = |i| book_id(d, i);
    match place {
        Place::Api => vec!["book".into(), b(1)],
        Place::Stream => ["play", &b(1), "--for", "3", "--audio", "null"]
            .map(str::to_owned)
            .to_vec(),
        Place::Write => vec!["favorites".into(), "add".into(), b(2)],
    }
}

/// Runs `place`'s command against `d` refusing it with `status`/`code`;
/// asserts the exit code and that the message says `says` (any case).
async fn expect(d: Dialect, place: Place, status: u16, code: &'static str, want: i32, says: &str) {
    let (s, home) = logged_in(d.clone()).await;
    s.trigger(Trigger {
        place,
        status,
        code,
    });
    let args = command(&d, place);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = home.run_async(&args, None).await;
    let t = text(&o);
    assert_eq!(
        o.status.code(),
        Some(want),
        "{place:?} {status} {code:?} in {:?}/{:?}: {t}",
        d.error,
        d.stream_refusal
    );
    assert!(
        t.to_lowercase().contains(&says.to_lowercase()),
        "{place:?} {status} {code:?}: says {says:?}: {t}"
    );
}

/// `earmark play` whose progress writes are refused with `status`/`code`.
async fn play_with_writes_refused(d: Dialect, status: u16, code: &'static str, want: i32) {
    let (s, home) = logged_in(d.clone()).await;
    s.trigger(Trigger {
        place: Place::Write,
        status,
        code,
    });
    let b1 = book_id(&d, 1);
    let before = s.stored(&b1);
    let o = home
        .run_async(&["play", &b1, "--for", "6", "--audio", "null"], None)
        .await;
    assert_eq!(
        o.status.code(),
        Some(want),
        "play, writes refused {status} {code}: {}",
        text(&o)
    );
    assert_eq!(s.stored(&b1), before, "nothing written");
}

fn dialect(error: ErrorShape, stream_refusal: StreamRefusal) -> Dialect {
    Dialect {
        error,
        stream_refusal,
        ..Dialect::default()
    }
}

fn plain() -> Dialect {
    Dialect::default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_0_when_everything_works() {
    let (s, home) = logged_in(plain()).await;
    for args in [
        command(&s.dialect, Place::Api),
        command(&s.dialect, Place::Stream),
        command(&s.dialect, Place::Write),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = home.run_async(&args, None).await;
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    }
}

#[tokio::test]
async fn exit_1_when_the_session_cannot_be_written() {
    let s = DialectServer::start(plain()).await;
    let home = configured(&s.address, "X-Service", "");
    // The data directory is a file: nothing can be stored under it.
    std::fs::write(home.dir.path().join("data"), "not a directory").unwrap();
    let o = login(&home).await;
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_when_the_server_rejects_an_api_call_or_a_write() {
    expect(plain(), Place::Api, 400, "bad_request", 2, "rejected").await;
    expect(plain(), Place::Write, 400, "bad_request", 2, "rejected").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_when_the_server_rejects_the_stream() {
    expect(plain(), Place::Stream, 400, "bad_request", 2, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_3_when_an_api_call_or_a_write_is_not_logged_in_or_not_permitted() {
    for (status, code, says) in [(401, "unauthorized", "log in"), (403, "forbidden", "")] {
        expect(plain(), Place::Api, status, code, 3, says).await;
        expect(plain(), Place::Write, status, code, 3, says).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_3_when_the_stream_is_not_logged_in_or_not_permitted() {
    for (status, code, says) in [(401, "unauthorized", "log in"), (403, "forbidden", "")] {
        expect(plain(), Place::Stream, status, code, 3, says).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_4_when_a_license_code_is_anywhere_in_an_api_call_or_a_write() {
    for error in [
        ErrorShape::CodeMessage,
        ErrorShape::ProblemUri,
        ErrorShape::UriFragment,
    ] {
        let d = dialect(error, StreamRefusal::Status);
        expect(d.clone(), Place::Api, 403, "license_required", 4, "license").await;
        expect(
            d.clone(),
            Place::Write,
            403,
            "license_required",
            4,
            "license",
        )
        .await;
        play_with_writes_refused(d, 403, "license_required", 4).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_4_when_the_stream_names_a_license_code_in_any_form() {
    // In every form a server refuses a stream: never decoded as audio.
    for form in [
        StreamRefusal::Status,
        StreamRefusal::Json200,
        StreamRefusal::Html200,
        StreamRefusal::Html4xx,
    ] {
        for error in [ErrorShape::ProblemUri, ErrorShape::In200Envelope] {
            let d = dialect(error, form);
            expect(d, Place::Stream, 403, "license_required", 4, "license").await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_5_when_an_api_call_or_a_write_names_nothing_that_exists() {
    expect(plain(), Place::Api, 404, "not_found", 5, "").await;
    expect(plain(), Place::Write, 404, "not_found", 5, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_5_when_the_stream_does_not_exist() {
    expect(plain(), Place::Stream, 404, "not_found", 5, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_6_when_the_server_fails_an_api_call_or_a_write() {
    expect(plain(), Place::Api, 500, "", 6, "failed").await;
    expect(plain(), Place::Write, 500, "", 6, "failed").await;
    let page = dialect(ErrorShape::CodeMessage, StreamRefusal::Html200);
    expect(page, Place::Api, 502, "", 6, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_6_when_a_page_comes_where_the_audio_should_be() {
    let page = dialect(ErrorShape::CodeMessage, StreamRefusal::Html200);
    expect(page, Place::Stream, 502, "", 6, "instead of audio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_7_when_the_identity_scope_of_an_api_call_or_a_write_is_wrong() {
    for error in [
        ErrorShape::CodeMessage,
        ErrorShape::ProblemUri,
        ErrorShape::UriFragment,
    ] {
        let d = dialect(error, StreamRefusal::Status);
        let mismatch = "listening_scope_mismatch";
        // A scope mismatch asks to log in again, whatever its shape.
        expect(d.clone(), Place::Api, 409, mismatch, 7, "log in again").await;
        expect(d.clone(), Place::Write, 409, mismatch, 7, "log in again").await;
        expect(
            d.clone(),
            Place::Write,
            428,
            "listening_scope_required",
            7,
            "identity",
        )
        .await;
        play_with_writes_refused(d, 409, mismatch, 7).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_7_when_play_writes_lack_the_identity_headers_the_server_wants() {
    for error in [ErrorShape::CodeMessage, ErrorShape::ProblemUri] {
        let d = dialect(error, StreamRefusal::Status);
        play_with_writes_refused(d, 428, "listening_scope_required", 7).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_7_when_the_stream_names_a_scope_mismatch() {
    for error in [ErrorShape::CodeMessage, ErrorShape::ProblemUri] {
        let d = dialect(error, StreamRefusal::Status);
        expect(
            d,
            Place::Stream,
            409,
            "listening_scope_mismatch",
            7,
            "log in again",
        )
        .await;
    }
}
