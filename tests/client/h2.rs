//! HTTP/2 where the server offers it: what an address speaks is learned by
//! a prior-knowledge probe (the reference server answers h2c unless
//! `http1_only`; an HTTP/1.1 proxy refuses it), a learned address carries
//! every request on one connection, in parallel, and an h2c request to a
//! server that no longer speaks it goes again over HTTP/1.1 at once, the
//! flag forgotten. Counted through the loopback proxy (counts, not times).

use crate::harness::TestServer;
use crate::harness::proxy::Proxy;
use earmark::api::{Address, BaseUrl, BookQuery, Client, ClientOptions, Speaks};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn demo_library() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo")
}

fn options() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(20),
        retries: 0,
        ..ClientOptions::default()
    }
}

fn client_of(base: &str) -> Client {
    let a = Address::new(BaseUrl::parse(base).unwrap());
    Client::with_addresses(vec![a], None, options(), None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_learns_h2c_from_the_reference_server_and_http1_from_an_h1_only_one_or_an_h1_proxy()
 {
    let h2 = TestServer::start(demo_library()).await.unwrap();
    let h1 = TestServer::start_with(demo_library(), |c| c.http1_only = true)
        .await
        .unwrap();
    let h1_proxy = Proxy::start(h2.addr()).await;
    for (base, expected) in [
        (h2.base_url().to_owned(), Speaks::H2c),
        (h1.base_url().to_owned(), Speaks::Http1),
        (h1_proxy.base_url(), Speaks::Http1),
    ] {
        let c = client_of(&base);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = heard.clone();
        c.on_speaks(move |b, s| h.lock().unwrap().push((b.to_string(), s)));
        let b = c.base();
        assert_eq!(c.learn_protocol(&b).await, Some(expected), "{base}");
        assert_eq!(c.addresses()[0].speaks, Some(expected), "{base}");
        assert_eq!(
            *heard.lock().unwrap(),
            vec![(b.to_string(), Some(expected))]
        );
        // Whatever it speaks, the API answers.
        c.login(&h2.username, &h2.password).await.unwrap();
        assert!(!c.books(&BookQuery::default()).await.unwrap().is_empty());
    }
    // Nothing answering tells nothing: nothing is kept.
    let gone = client_of("http://127.0.0.1:9/api/v1");
    let b = gone.base();
    assert_eq!(gone.learn_protocol(&b).await, None);
    assert_eq!(gone.addresses()[0].speaks, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_h2c_learned_api_calls_and_a_stream_go_out_together_on_one_connection() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let proxy = Proxy::start(server.addr()).await;
    proxy.pass_h2(true);
    proxy.set_delay(Duration::from_millis(30));
    let c = client_of(&proxy.base_url());
    let b = c.base();
    assert_eq!(c.learn_protocol(&b).await, Some(Speaks::H2c));
    c.login(&server.username, &server.password).await.unwrap();
    let books = c.books(&BookQuery::default()).await.unwrap();
    let manifest = c.manifest(&books[0].id).await.unwrap();
    let stream = c.stream_request(&manifest.items[0]);
    proxy.clear();

    let url = stream.url.to_string();
    let http = c.pool_for(&url);
    let mut get = http.get(&url).header("Range", "bytes=0-16383");
    for (k, v) in &stream.headers {
        get = get.header(k, v);
    }
    let (progress, details, audio) =
        tokio::join!(c.progress(&books[0].id), c.book(&books[0].id), get.send());
    progress.unwrap();
    details.unwrap();
    let audio = audio.unwrap();
    assert_eq!(audio.version(), reqwest::Version::HTTP_2);
    assert_eq!(audio.status(), 206);

    let seen = proxy.requests();
    // The progress read may take two requests (its book's manifest too).
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.iter().all(|r| r.http2), "{seen:?}");
    assert_eq!(
        proxy.connections(),
        0,
        "the probe's connection carries them all"
    );
    assert!(
        proxy.max_in_flight() >= 3,
        "sent together: {}",
        proxy.max_in_flight()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_on_another_origin_never_gets_prior_knowledge() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let cdn = Proxy::start(server.addr()).await; // an HTTP/1.1 proxy
    let c = client_of(server.base_url());
    let b = c.base();
    assert_eq!(c.learn_protocol(&b).await, Some(Speaks::H2c));
    let url = format!("{}/license/status", cdn.base_url());
    let resp = c.pool_for(&url).get(&url).send().await.unwrap();
    assert_eq!(resp.version(), reqwest::Version::HTTP_11);
    let same = format!("{}/license/status", server.base_url());
    let resp = c.pool_for(&same).get(&same).send().await.unwrap();
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_h2c_request_to_a_server_that_dropped_h2_goes_again_over_http1_and_the_flag_is_forgotten()
 {
    let mut server = TestServer::start(demo_library()).await.unwrap();
    let c = client_of(server.base_url());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h = heard.clone();
    c.on_speaks(move |_, s| h.lock().unwrap().push(s));
    let b = c.base();
    assert_eq!(c.learn_protocol(&b).await, Some(Speaks::H2c));
    c.login(&server.username, &server.password).await.unwrap();

    server.restart_with(|c| c.http1_only = true).await.unwrap();
    let books = c.books(&BookQuery::default()).await.unwrap();
    assert!(!books.is_empty(), "answered over HTTP/1.1");
    assert_eq!(c.addresses()[0].speaks, None, "forgotten");
    assert_eq!(*heard.lock().unwrap(), vec![Some(Speaks::H2c), None]);

    // Asked again, it says so.
    assert_eq!(c.learn_protocol(&b).await, Some(Speaks::Http1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_h2c_write_that_got_no_answer_is_not_sent_again_over_http1_but_the_flag_is_forgotten() {
    let mut server = TestServer::start(demo_library()).await.unwrap();
    let c = client_of(server.base_url());
    let b = c.base();
    assert_eq!(c.learn_protocol(&b).await, Some(Speaks::H2c));
    c.login(&server.username, &server.password).await.unwrap();
    let books = c.books(&BookQuery::default()).await.unwrap();
    let book = books[0].id.clone();

    // The server stops speaking h2: the write gets no answer. It may have
    // reached a server, so it is not sent again here (the outbox decides).
    server.restart_with(|c| c.http1_only = true).await.unwrap();
    assert!(
        c.add_favorite(&book).await.is_err(),
        "a write without an answer is not re-sent on another protocol"
    );
    assert_eq!(c.addresses()[0].speaks, None, "the flag is forgotten");
    assert!(
        !c.favorites().await.unwrap().iter().any(|f| f.id == book),
        "nothing was written"
    );
    // The next write goes over HTTP/1.1.
    c.add_favorite(&book).await.unwrap();
    assert!(c.favorites().await.unwrap().iter().any(|f| f.id == book));
}
