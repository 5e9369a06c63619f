//! A server that throttles every write for a while at a time (issue 31):
//! `earmark play` plays faster than real time (reporting as often per
//! minute of media as in real use) through a gateway in front of the
//! reference server that answers every write `429` with `Retry-After`
//! during its throttled stretches and passes everything else on. Counted
//! per path: no write came sooner than the wait its last refusal told
//! (at most one per window); afterwards the server holds the last place
//! played and no write carried 0. The short run is in the suite; `./run
//! soak` runs 10 minutes of media against 30 s stretches.

use crate::harness::TestServer;
use crate::harness::{logged_in_at, text, titled};
use crate::support::library;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Schedule {
    /// A stretch of throttling, then `open` of answers, from the first write.
    throttled: Duration,
    open: Duration,
    /// What each refusal asks (`Retry-After` in seconds).
    retry_after: u64,
}

/// One write the gateway saw: its path, when, and the wait it was told
/// (`None`: passed on).
#[derive(Debug, Clone)]
struct Knock {
    path: String,
    at: Instant,
    told: Option<Duration>,
}

struct Gateway {
    upstream: String,
    http: reqwest::Client,
    schedule: Schedule,
    first: Mutex<Option<Instant>>,
    knocks: Mutex<Vec<Knock>>,
}

impl Gateway {
    fn throttling(&self, now: Instant) -> bool {
        let first = *self.first.lock().unwrap().get_or_insert(now);
        let cycle = self.schedule.throttled + self.schedule.open;
        let into = (now - first).as_nanos() % cycle.as_nanos();
        into < self.schedule.throttled.as_nanos()
    }
}

async fn pass(
    State(g): State<Arc<Gateway>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let now = Instant::now();
    // Every write; a login is no write.
    if method != Method::GET && !uri.path().ends_with("/auth/login") {
        let on = g.throttling(now);
        let told = on.then(|| Duration::from_secs(g.schedule.retry_after));
        g.knocks.lock().unwrap().push(Knock {
            path: uri.path().to_owned(),
            at: now,
            told,
        });
        if on {
            let body = r#"{"error":{"code":"too_many_requests","message":"slow down"}}"#;
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    ("retry-after", g.schedule.retry_after.to_string()),
                    ("content-type", "application/json".to_owned()),
                ],
                body,
            )
                .into_response();
        }
    }
    let url = format!(
        "{}{}",
        g.upstream,
        uri.path_and_query().map_or("", |p| p.as_str())
    );
    let mut rb = g.http.request(method, url).body(body);
    for (k, v) in &headers {
        if k != "host" {
            rb = rb.header(k, v);
        }
    }
    let Ok(r) = rb.send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = r.status();
    let mut out = HeaderMap::new();
    for (k, v) in r.headers() {
        // Hop by hop, or set again for the body as it is here.
        if ![
            "connection",
            "transfer-encoding",
            "upgrade",
            "content-length",
        ]
        .contains(&k.as_str())
        {
            out.insert(k.clone(), v.clone());
        }
    }
    let bytes = r.bytes().await.unwrap_or_default();
    (status, out, bytes).into_response()
}

/// Starts a gateway to `server` on a free port: its address.
async fn gateway(server: &TestServer, schedule: Schedule) -> (String, Arc<Gateway>) {
    let g = Arc::new(Gateway {
        upstream: format!("http://{}", server.addr()),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        schedule,
        first: Mutex::new(None),
        knocks: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(pass).with_state(g.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let base = server
        .base_url()
        .replace(&server.addr().to_string(), &addr.to_string());
    (base, g)
}

#[derive(Debug)]
#[allow(dead_code)] // printed with `{:?}`
struct Figures {
    media_secs: f64,
    wall_secs: f64,
    writes: usize,
    refused: usize,
    /// The fewest refusals a path could have had: one per window of each
    /// throttled stretch it was written in.
    paths: usize,
}

async fn run(media_secs: f64, rate: f64, schedule: Schedule) -> Figures {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (base, g) = gateway(&server, schedule).await;
    let (home, direct, books) = logged_in_at(&server, &base).await;
    let book = titled(&books, "Long").id.clone();
    let wall = media_secs / rate;
    let began = Instant::now();
    let mut c = home.command(&[
        "--json",
        "play",
        book.as_str(),
        "--audio",
        "null",
        "--for",
        &format!("{wall:.3}"),
    ]);
    c.env("EARMARK_NULL_CLOCK_RATE", rate.to_string()).env(
        "EARMARK_REPORT_INTERVAL_MS",
        ((10_000.0 / rate).round() as u64).to_string(),
    );
    let o = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    let wall_secs = began.elapsed().as_secs_f64();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let last: serde_json::Value = String::from_utf8_lossy(&o.stdout)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v.get("startup").is_none())
        .expect("a status line");
    let knocks = g.knocks.lock().unwrap().clone();
    for (i, k) in knocks.iter().enumerate() {
        let Some(told) = k.told else { continue };
        if let Some(next) = knocks[i + 1..].iter().find(|n| n.path == k.path) {
            let gap = next.at - k.at;
            assert!(
                gap + Duration::from_millis(30) >= told,
                "{} written again {gap:?} after it was told to wait {told:?}",
                k.path
            );
        }
    }
    // The last place played is on the server (quitting waited for the
    // throttle, or the change is queued and the farewell says so).
    let held = direct.progress(&book).await.unwrap().progress;
    let position = last["position"].as_f64().unwrap();
    if out.contains("could not be sent") {
        assert!(out.contains("the server asked to wait"), "{out}");
    } else {
        let held = held.as_ref().expect("the place reached the server");
        assert!(
            (held.position - position).abs() < 0.002,
            "the server holds {} s, the last place played was {position} s: {out}",
            held.position
        );
    }
    // Never a 0 over the place played.
    assert!(held.as_ref().is_none_or(|h| h.position >= 1.0), "{held:?}");
    let mut paths: Vec<&str> = knocks.iter().map(|k| k.path.as_str()).collect();
    paths.sort();
    paths.dedup();
    Figures {
        media_secs: position,
        wall_secs,
        writes: knocks.len(),
        refused: knocks.iter().filter(|k| k.told.is_some()).count(),
        paths: paths.len(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_throttled_for_stretches_of_three_seconds_come_once_a_window_and_the_place_is_stored()
 {
    let f = run(
        120.0,
        20.0,
        Schedule {
            throttled: Duration::from_secs(3),
            open: Duration::from_secs(1),
            retry_after: 1,
        },
    )
    .await;
    eprintln!("throttled (short): {f:?}");
    // 6 s of play: two stretches, at most one refusal a second each.
    assert!(f.refused <= 7 * f.paths, "{f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a soak: ./run soak"]
async fn soak_ten_minutes_of_media_against_writes_throttled_thirty_seconds_at_a_time() {
    let f = run(
        600.0,
        4.0,
        Schedule {
            throttled: Duration::from_secs(30),
            open: Duration::from_secs(10),
            retry_after: 10,
        },
    )
    .await;
    eprintln!("throttled (soak): {f:?}");
    // 150 s of play: four stretches of three windows each, per path.
    assert!(f.refused <= 13 * f.paths, "{f:?}");
}
