//! The client of one server at several addresses, against the reference
//! server reached through loopback proxies (and another instance): which
//! address carries the token, the move to the next when one does not
//! answer, and the knock without the token.

use crate::harness::TestServer;
use crate::harness::proxy::{Mode, Proxy};
use earmark::api::{Address, ApiError, BaseUrl, BookQuery, Client, ClientOptions};
use std::time::Duration;

fn demo_library() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo")
}

fn options() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(10),
        retries: 0,
        ..ClientOptions::default()
    }
}

fn base(p: &Proxy) -> BaseUrl {
    BaseUrl::parse(&p.base_url()).unwrap()
}

fn tokens_seen(p: &Proxy) -> usize {
    p.requests()
        .iter()
        .filter(|r| r.authorization.is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_move_to_the_next_address_that_vouches_and_never_to_one_unchecked() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let other = TestServer::start(demo_library()).await.unwrap();
    let home = Proxy::start(server.addr()).await;
    let away = Proxy::start(server.addr()).await;
    let unchecked = Proxy::start(server.addr()).await;
    let elsewhere = Proxy::start(other.addr()).await;
    let all = [&home, &away, &unchecked, &elsewhere].map(|p| Address::new(base(p)));
    let c = Client::with_addresses(all.to_vec(), None, options(), None).unwrap();
    let (user, pw) = (&server.username, &server.password);
    // What the logins through the second and the fourth said; then the
    // client's own login, through the first.
    let away_said = c.login_through(1, user, pw).await.unwrap().server_id;
    let elsewhere_said = c.login_through(3, user, pw).await.unwrap().server_id;
    let login = c.login(user, pw).await.unwrap();
    assert_eq!(away_said, login.server_id);
    assert_ne!(elsewhere_said, login.server_id);
    assert_eq!(c.base(), base(&home));

    let mut switches = c.watch_base();
    home.set_mode(Mode::Refuse);
    let books = c.books(&BookQuery::default()).await.unwrap();
    assert!(!books.is_empty());
    assert_eq!(c.base(), base(&away), "the next address that vouches");
    assert!(switches.has_changed().unwrap());
    assert_eq!(*switches.borrow_and_update(), base(&away));
    // A write goes there too, with the identity headers.
    c.add_favorite(&books[0].id).await.unwrap();

    away.set_mode(Mode::Refuse);
    let e = c.books(&BookQuery::default()).await.unwrap_err();
    match &e {
        ApiError::Network { address, .. } => {
            assert!(address.contains(home.addr().to_string().as_str()), "{e}");
            assert!(address.contains(away.addr().to_string().as_str()), "{e}");
        }
        other => panic!("not a network error: {other}"),
    }
    assert!(unchecked.requests().is_empty(), "never asked with a token");
    assert_eq!(
        tokens_seen(&elsewhere),
        0,
        "another instance never gets a token"
    );

    home.set_mode(Mode::Forward);
    home.wait_listening().await;
    c.books(&BookQuery::default()).await.unwrap();
    assert_eq!(c.base(), base(&home), "back where it answers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_knock_carries_no_token_and_moves_the_client_on() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = Proxy::start(server.addr()).await;
    let away = Proxy::start(server.addr()).await;
    let c = Client::with_addresses(
        vec![Address::new(base(&home)), Address::new(base(&away))],
        None,
        options(),
        None,
    )
    .unwrap();
    let login = c.login(&server.username, &server.password).await.unwrap();
    c.login_through(1, &server.username, &server.password)
        .await
        .unwrap();
    assert!(
        c.addresses()
            .iter()
            .all(|a| a.vouches_for(&login.server_id))
    );
    assert_eq!(c.knock(&base(&away)).await.unwrap(), 401, "an API answers");
    assert_eq!(c.check_address().await, None, "the address in use answers");
    home.set_mode(Mode::Refuse);
    assert_eq!(c.check_address().await, Some(base(&away)));
    assert_eq!(c.base(), base(&away));
    assert_eq!(tokens_seen(&away), 0, "knocks only");
    // A stream now comes from there, with the token.
    let m = c.books(&BookQuery::default()).await.unwrap();
    let manifest = c.manifest(&m[0].id).await.unwrap();
    let req = c.stream_request(&manifest.items[0]);
    assert_eq!(req.url.port(), Some(away.addr().port()));
    assert!(req.headers.iter().any(|(k, _)| k == "Authorization"));
}
