//! A gate in front of the reference server: every request is forwarded,
//! except the chapter streams (`…/play`), which the test can have refused
//! with the status and body it picks. So a refusal arrives on the stream,
//! after every API call (login, manifest, progress) went through.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
struct State {
    upstream: String,
    http: reqwest::Client,
    refusal: Arc<Mutex<Option<(u16, String)>>>,
    streams: Arc<Mutex<usize>>,
}

pub struct Gate {
    addr: SocketAddr,
    state: State,
}

impl Gate {
    /// In front of `upstream` (`http://127.0.0.1:PORT/api/v1`).
    pub async fn start(upstream: &str) -> Gate {
        let origin = upstream
            .split("/api/")
            .next()
            .expect("an /api/ base")
            .to_owned();
        let state = State {
            upstream: origin,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            refusal: Default::default(),
            streams: Default::default(),
        };
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Gate { addr, state }
    }

    /// `http://127.0.0.1:PORT/api/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    /// From now on every chapter stream is answered `status` with a JSON
    /// `body`.
    pub fn refuse_streams(&self, status: u16, body: &str) {
        *self.state.refusal.lock().unwrap() = Some((status, body.to_owned()));
    }

    /// Chapter streams asked for so far.
    pub fn streams(&self) -> usize {
        *self.state.streams.lock().unwrap()
    }
}

async fn forward(
    axum::extract::State(s): axum::extract::State<State>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if uri.path().ends_with("/play") {
        *s.streams.lock().unwrap() += 1;
        let refusal = s.refusal.lock().unwrap().clone();
        if let Some((status, body)) = refusal {
            return Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(body))
                .unwrap();
        }
    }
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut req = s
        .http
        .request(method, format!("{}{path}", s.upstream))
        .body(body);
    for (k, v) in &headers {
        if k != "host" {
            req = req.header(k, v);
        }
    }
    let Ok(resp) = req.send().await else {
        return Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .body(Body::empty())
            .unwrap();
    };
    let mut out = Response::builder().status(resp.status().as_u16());
    for (k, v) in resp.headers() {
        if k != "transfer-encoding" && k != "connection" && k != "content-length" {
            out = out.header(k, v);
        }
    }
    let bytes = resp.bytes().await.unwrap_or_default();
    out.body(Body::from(bytes)).unwrap()
}
