//! A chapter stream's answer that is not audio never reaches the audio
//! decoder: the engine looks at a success answer's first bytes and type,
//! and hands what is not audio to its judge, built here on
//! `Client::stream_refusal` as the player's is (the player's own judge
//! maps the class in the playback owner). Real HTTP on 127.0.0.1.

use crate::harness::authed;
use crate::support::{fast_options, serve};
use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use earmark::api::{ApiError, Client, ErrorClass};
use earmark::domain::*;
use earmark::player::{
    AudioMode, Command, Engine, EngineConfig, ErrorKind, Judgement, Refusal, RefusalJudge, Status,
    StreamRequest,
};
use std::sync::Arc;
use std::time::Duration;

/// 8-bit mono PCM at 2 kHz, `secs` long.
fn wav(secs: u32) -> Vec<u8> {
    let (rate, n) = (2000u32, 2000 * secs);
    let mut b = Vec::with_capacity(44 + n as usize);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    for v in [1u16, 1] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [rate, rate] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [1u16, 8] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(b"data");
    b.extend_from_slice(&n.to_le_bytes());
    b.resize(44 + n as usize, 128);
    b
}

const LICENSE_URI: &str = "https://errors.example/license-required";

fn answer(status: u16, ct: &str, body: Vec<u8>) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, ct.to_owned())],
        body,
    )
        .into_response()
}

/// `/api/v1/chapters/{case}/play`: one way of answering per case.
async fn stream_server() -> String {
    let app = Router::new().route(
        "/api/v1/chapters/{case}/play",
        get(|Path(case): Path<String>| async move {
            let problem = format!(r#"{{"type": "{LICENSE_URI}", "title": "License"}}"#);
            match case.as_str() {
                "json-200" => answer(200, "application/json", problem.into_bytes()),
                "json-as-audio-200" => answer(
                    200,
                    "audio/mpeg",
                    b" \n{\"code\": \"LICENSE_REQUIRED\"}".to_vec(),
                ),
                "html-200" => answer(200, "text/html", b"<html>Sign in</html>".to_vec()),
                "html-license-403" => answer(
                    403,
                    "text/html",
                    format!("<html><a href=\"{LICENSE_URI}\">why</a></html>").into_bytes(),
                ),
                "problem-403" => answer(403, "application/problem+json", problem.into_bytes()),
                "scope-409" => answer(
                    409,
                    "application/problem+json",
                    br#"{"type": "https://errors.example/listening-scope-mismatch"}"#.to_vec(),
                ),
                "text-200" => answer(200, "text/plain", b"License required".to_vec()),
                "mislabeled-wav" => answer(200, "application/json", wav(3)),
                "wav" => answer(200, "audio/wav", wav(3)),
                _ => answer(404, "application/json", br#"{"code":"not_found"}"#.to_vec()),
            }
        }),
    );
    serve(app).await
}

/// The player's judge as the layer above builds it: the API reads the
/// refusal, its class names the kind.
fn api_judge(c: Client) -> RefusalJudge {
    Arc::new(move |r: &Refusal| {
        let e = c.stream_refusal(r.status, r.content_type.as_deref(), &r.body);
        let kind = match e.class() {
            ErrorClass::License => ErrorKind::LicenseRequired,
            ErrorClass::Auth => ErrorKind::Unauthorized,
            ErrorClass::Forbidden => ErrorKind::Forbidden,
            ErrorClass::NotFound => ErrorKind::NotFound,
            ErrorClass::Scope => ErrorKind::Scope,
            ErrorClass::Request | ErrorClass::NetworkOrServer => ErrorKind::Http,
        };
        Judgement {
            kind,
            message: e.to_string(),
        }
    })
}

fn item(case: &str) -> ManifestItem {
    ManifestItem::whole(case, case, Some(3.0))
}

/// Plays `case` on a null-output engine until it plays or stops.
fn play(c: &Client, case: &str) -> Status {
    let resolver = c.clone();
    let resolve = Arc::new(move |i: &ManifestItem| {
        let r = resolver.stream_request(i);
        StreamRequest {
            url: r.url.to_string(),
            headers: r.headers,
        }
    });
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = 0.0;
    config.judge = api_judge(c.clone());
    let engine = Engine::spawn(config).expect("engine starts");
    engine.send(Command::Load {
        manifest: Manifest {
            book_id: BookId::new("b"),
            items: vec![item(case)],
        },
        start: (ChapterId::new(case), 0.0),
        autoplay: true,
    });
    let s = engine
        .wait_for(Duration::from_secs(20), |s| {
            (matches!(s.status, Status::Playing) && s.landed)
                || matches!(s.status, Status::Error(_) | Status::Ended)
        })
        .unwrap_or_else(|| panic!("{case}: no outcome: {:?}", engine.state()));
    engine.send(Command::Shutdown);
    s.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_answer_that_is_not_audio_is_judged_never_decoded() {
    let c = authed(&stream_server().await, fast_options());
    for (case, want) in [
        ("json-200", ErrorKind::LicenseRequired),
        ("json-as-audio-200", ErrorKind::LicenseRequired),
        ("problem-403", ErrorKind::LicenseRequired),
        ("html-license-403", ErrorKind::LicenseRequired),
        ("scope-409", ErrorKind::Scope),
        ("html-200", ErrorKind::Http),
        ("text-200", ErrorKind::Http),
        ("gone", ErrorKind::NotFound),
    ] {
        let c = c.clone();
        let status = tokio::task::spawn_blocking(move || play(&c, case))
            .await
            .unwrap();
        let Status::Error(e) = &status else {
            panic!("{case}: {status:?}")
        };
        assert_eq!(e.kind, want, "{case}: {e}");
        assert!(
            !e.message.contains("unsupported") && !e.message.contains("format reader"),
            "{case}: never the decoder's words: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_under_a_wrong_content_type_still_plays() {
    let c = authed(&stream_server().await, fast_options());
    let c2 = c.clone();
    let status = tokio::task::spawn_blocking(move || play(&c2, "wav"))
        .await
        .unwrap();
    assert!(
        matches!(status, Status::Playing | Status::Ended),
        "{status:?}"
    );
    let status = tokio::task::spawn_blocking(move || play(&c, "mislabeled-wav"))
        .await
        .unwrap();
    assert!(
        matches!(status, Status::Playing | Status::Ended),
        "{status:?}"
    );
}

#[test]
fn stream_refusals_are_read_as_every_endpoints_errors() {
    let c = authed("http://127.0.0.1:9", fast_options());
    let problem = format!(r#"{{"type": "{LICENSE_URI}"}}"#);
    let e = c.stream_refusal(200, Some("application/json"), problem.as_bytes());
    assert!(e.is_license(), "{e:?}");
    let e = c.stream_refusal(403, Some("application/problem+json"), problem.as_bytes());
    assert!(e.is_license(), "{e:?}");
    let e = c.stream_refusal(
        409,
        Some("application/json"),
        br#"{"errors": [{"type": "https://e.example/ListeningScopeMismatch"}]}"#,
    );
    assert!(
        e.needs_login(),
        "a scope mismatch asks to log in again: {e:?}"
    );
    let e = c.stream_refusal(200, Some("text/html"), b"<html>Sign in</html>");
    assert!(
        matches!(e, ApiError::NotAudio { status: 200, .. }) && e.is_transient(),
        "{e:?}"
    );
    assert!(e.to_string().contains("instead of audio"), "{e}");
    let e = c.stream_refusal(200, Some("application/json"), br#"{"hello": 1}"#);
    assert!(
        matches!(e, ApiError::NotAudio { kind: None, .. }) && !e.is_transient(),
        "{e:?}"
    );
    let e = c.stream_refusal(
        200,
        Some("application/json"),
        br#"{"success": false, "code": 401}"#,
    );
    assert!(e.needs_login(), "{e:?}");
}

#[tokio::test]
async fn opening_a_chapter_that_answers_json_or_html_is_its_refusal_never_audio() {
    let c = authed(&stream_server().await, fast_options());
    let open = |case: &str| {
        let c = c.clone();
        let req = c.stream_request(&item(case));
        async move { c.open_stream(&req, None).await }
    };
    let e = open("json-200").await.unwrap_err();
    assert!(e.is_license(), "{e:?}");
    let e = open("html-200").await.unwrap_err();
    assert!(matches!(e, ApiError::NotAudio { .. }), "{e:?}");
    let e = open("problem-403").await.unwrap_err();
    assert!(e.is_license(), "{e:?}");
    let resp = open("wav").await.unwrap();
    assert_eq!(&resp.bytes().await.unwrap()[..4], b"RIFF");
}
