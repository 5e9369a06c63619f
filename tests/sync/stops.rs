//! Every stop reason through the real binary: `earmark play` exits with
//! the code of the reason (docs/cli.md: 3 login, 4 license, 5 not found,
//! 6 network, 7 identity scope) whichever path raised it: an API call, a
//! write of sync, or the chapter stream (behind a gate that refuses the
//! stream once every API call went through). The player shows the same
//! reasons (tests/ui/stops.rs).

use crate::gate::Gate;
use crate::harness::TestServer;
use crate::harness::{Home, log_in_and_find, text};
use crate::support::library;
use earmark::api::{Auth, BaseUrl, Client, Token};
use earmark::domain::{ServerId, UserId};
use earmark::server::LicenseSetting;
use std::process::Output;

/// `earmark play BOOK` for at most `secs` (a stop ends it sooner).
fn play(home: &Home, book: &str, secs: &str, more: &[&str]) -> Output {
    let mut args = vec!["play", book, "--audio", "null", "--for", secs];
    args.extend_from_slice(more);
    home.run(&args, None)
}

fn assert_stopped(o: &Output, code: i32, word: &str, why: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(code), "{why}: {t}");
    assert!(t.to_lowercase().contains(word), "{why}: {word:?} in {t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_on_the_chapter_stream_exits_with_its_reasons_code() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let gate = Gate::start(server.base_url()).await;
    let (home, alpha) = log_in_and_find(&server, &gate.base_url(), "Alpha").await;
    let cases = [
        (
            403,
            r#"{"code":"license_required","message":"The license expired."}"#,
            4,
            "license",
        ),
        // Without the license code, the license status decides: valid.
        (
            403,
            r#"{"code":"forbidden","message":"not in your plan"}"#,
            3,
            "no permission",
        ),
        (
            401,
            r#"{"code":"unauthorized","message":"token revoked"}"#,
            3,
            "not valid",
        ),
        (
            409,
            r#"{"code":"listening_scope_mismatch","message":"another instance"}"#,
            7,
            "instance",
        ),
        (
            404,
            r#"{"code":"not_found","message":"no such chapter"}"#,
            5,
            "not found",
        ),
        // A 429 is no stop: the stream waits for the server (see
        // tests/dialects/throttle.rs).
    ];
    for (status, body, code, word) in cases {
        gate.refuse_streams(status, body);
        let before = gate.streams();
        let o = play(&home, alpha.as_str(), "20", &[]);
        assert!(
            gate.streams() > before,
            "HTTP {status}: the refusal came on the stream: {}",
            text(&o)
        );
        assert_stopped(&o, code, word, &format!("HTTP {status} on the stream"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_refused_by_the_api_exits_4() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, alpha) = log_in_and_find(&server, server.base_url(), "Alpha").await;
    server.set_license(LicenseSetting::Expired).unwrap();
    let o = play(&home, alpha.as_str(), "20", &[]);
    assert_stopped(&o, 4, "license", "an expired license");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_exits_3() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, alpha) = log_in_and_find(&server, server.base_url(), "Alpha").await;
    // The token earmark stored, revoked on the server.
    let file = home.dir.path().join("data/earmark/tokens/default.token");
    let token = std::fs::read_to_string(&file).unwrap();
    let session = server.login().await.unwrap();
    let c = Client::new(
        BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    c.set_auth(Some(Auth {
        token: Token::new(token.trim()),
        server_id: ServerId::new(session.server_id),
        user_id: UserId::from(session.user_id),
    }));
    c.logout().await.unwrap();
    let o = play(&home, alpha.as_str(), "20", &[]);
    assert_stopped(&o, 3, "log in again", "a revoked token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuilt_instance_exits_7_on_the_first_write() {
    let lib = library();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let (home, alpha) = log_in_and_find(&server, server.base_url(), "Alpha").await;
    let chapter = {
        let c = crate::harness::direct(&server).await;
        c.manifest(&alpha).await.unwrap().items[0]
            .chapter_id
            .clone()
    };
    // The instance gets a new id and keeps its accounts and tokens: reads
    // work, every write of the old scope is refused (409).
    server.stop().await;
    let db = rusqlite::Connection::open(server.data_path().join("earmark.sqlite3")).unwrap();
    db.execute("DELETE FROM meta WHERE key = 'server_id'", [])
        .unwrap();
    drop(db);
    server.restart().await.unwrap();
    // A place picked by the user is written as soon as it plays.
    let o = play(
        &home,
        alpha.as_str(),
        "30",
        &["--chapter", chapter.as_str(), "--at", "5"],
    );
    assert_stopped(&o, 7, "instance", "a rebuilt instance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_book_exits_5_and_a_stopped_server_6() {
    let lib = library();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let (home, alpha) = log_in_and_find(&server, server.base_url(), "Alpha").await;
    let o = play(&home, "no-such-book", "20", &[]);
    assert_stopped(&o, 5, "not found", "an unknown book");
    server.stop().await;
    let o = play(&home, alpha.as_str(), "20", &[]);
    assert_stopped(&o, 6, "cannot reach", "a stopped server");
}
