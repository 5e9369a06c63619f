//! Download throughput on loopback (docs/benchmarks.md): `earmark`'s
//! download (offline::download: Range requests, length checks, fsync,
//! rename) against `curl` fetching the same stream URLs with the same
//! token from the same reference server, interleaved, in one run.
//!
//! cargo run --release --features bench --example download_bench -- LIBRARY_DIR RUNS
//!
//! LIBRARY_DIR holds one book (a directory of audio files, as for `earmark serve`).

use earmark::api::{BaseUrl, BookQuery, Client};
use earmark::offline::{Options, Scope, Store, download};
#[path = "../tests/harness/server.rs"]
#[allow(dead_code)]
mod test_server;
use std::time::Instant;
use test_server::TestServer;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lib = args.get(1).expect("LIBRARY_DIR");
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let server = TestServer::start(lib).await.expect("server");
    let client = Client::new(
        BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    let login = client
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let book = client.books(&BookQuery::default()).await.unwrap()[0]
        .id
        .clone();
    let manifest = client.manifest(&book).await.unwrap();
    let scope = Scope {
        server_id: login.server_id.clone(),
        user_id: login.user_id,
    };
    let requests: Vec<_> = manifest
        .items
        .iter()
        .map(|i| client.stream_request(i))
        .collect();
    let (mut ours, mut curl) = (Vec::new(), Vec::new());
    let mut bytes = 0u64;
    for _ in 0..runs {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let t = Instant::now();
        let o = download(
            &client,
            &store,
            &scope,
            &book,
            &Options::default(),
            &mut |_| {},
        )
        .await
        .expect("download");
        let secs = t.elapsed().as_secs_f64();
        bytes = o.download.bytes;
        ours.push(bytes as f64 / secs / 1e6);
        drop(dir);

        let out = tempfile::tempdir().unwrap();
        let t = Instant::now();
        for (i, r) in requests.iter().enumerate() {
            let mut c = std::process::Command::new("curl");
            c.args(["-s", "-f", "-o"])
                .arg(out.path().join(format!("{i}")));
            for (k, v) in &r.headers {
                c.arg("-H").arg(format!("{k}: {v}"));
            }
            let ok = c.arg(r.url.as_str()).status().expect("curl runs").success();
            assert!(ok, "curl failed");
        }
        let secs = t.elapsed().as_secs_f64();
        curl.push(bytes as f64 / secs / 1e6);
    }
    let (o, c) = (median(ours.clone()), median(curl.clone()));
    println!(
        "{} files, {:.1} MB, {runs} runs: earmark {o:.0} MB/s median ({:?}), curl {c:.0} MB/s median ({:?}); ratio {:.2}",
        requests.len(),
        bytes as f64 / 1e6,
        ours.iter().map(|v| v.round()).collect::<Vec<_>>(),
        curl.iter().map(|v| v.round()).collect::<Vec<_>>(),
        o / c
    );
}
