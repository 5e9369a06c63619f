//! Helpers: in-test HTTP servers and clients with short time-outs.

use axum::Router;
use earmark::api::{BaseUrl, Client, ClientOptions};
use std::net::SocketAddr;
use std::time::Duration;

/// Serve `app` on a free port of 127.0.0.1; returns `http://127.0.0.1:PORT`.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

pub fn fast_options() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        retries: 2,
        backoff: Duration::from_millis(10),
        ..ClientOptions::default()
    }
}

pub fn client(address: &str, opts: ClientOptions) -> Client {
    Client::new(BaseUrl::parse(address).unwrap(), opts).unwrap()
}
