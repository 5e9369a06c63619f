//! Player benchmarks (see docs/benchmarks.md for the commands and figures).
//!
//! cargo run --release --features bench --example player_bench -- <mode> <file> [args]
//!
//! Modes (each serves <file>'s directory over HTTP on 127.0.0.1 in-process):
//! - `first-audio FILE N`: time from Load to the first sample handed to the
//!   output, N runs (new engine each), median.
//! - `first-audio-local FILE N`: the same with FILE read from disk through
//!   a `file://` URL (a downloaded book), no HTTP.
//! - `seek FILE N`: N seeks to random points of the chapter; time from the
//!   Seek command to the first audio of the target, median.
//! - `throughput FILE SPEED`: decode + stretch the whole file as fast as
//!   possible (null output, untimed clock); prints real-time factor per core.
//! - `serve FILE`: print FILE's URL and serve its directory until killed
//!   (for measuring peers on the same server).
//! - `steady FILE SECS`: real-time playback on the null output; prints CPU
//!   seconds used and peak RSS.

use earmark::domain::{BookId, ChapterId, Manifest, ManifestItem};
use earmark::player::{
    AudioMode, Command, Engine, EngineConfig, EngineHandle, Status, StreamRequest,
};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn serve(dir: &Path) -> (String, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest_service("/files", tower_http::services::ServeDir::new(dir));
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/files"), rt)
}

fn engine(clock: f64) -> EngineHandle {
    let resolve = Arc::new(|item: &ManifestItem| StreamRequest {
        url: item.url.clone().unwrap_or_default(),
        headers: Vec::new(),
    });
    let mut c = EngineConfig::new(AudioMode::Null, resolve);
    c.null_clock_rate = clock;
    Engine::spawn(c).expect("engine")
}

fn manifest(url: String, duration: Option<f64>) -> Manifest {
    Manifest {
        book_id: BookId::new("bk_bench"),
        items: vec![ManifestItem {
            chapter_id: ChapterId::new("ch_bench"),
            title: "bench".into(),
            duration,
            duration_source: Default::default(),
            url: Some(url),
            mime_type: None,
            size_bytes: None,
            start: 0.0,
            end: None,
        }],
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    }
}

fn max_rss_mb() -> f64 {
    // SAFETY: as above.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_maxrss as f64 / 1024.0
    }
}

fn wait_first_audio(e: &EngineHandle, since: Instant) -> f64 {
    let deadline = since + Duration::from_secs(30);
    loop {
        if let Some(t) = e.first_audio_at() {
            return t.duration_since(since).as_secs_f64() * 1000.0;
        }
        if let Status::Error(err) = e.state().status {
            panic!("{err}");
        }
        assert!(Instant::now() < deadline, "no audio after 30 s");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("");
    let file = Path::new(args.get(2).expect("FILE"));
    let arg: f64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let (base, _rt) = serve(file.parent().unwrap());
    let url = format!("{base}/{}", file.file_name().unwrap().to_string_lossy());
    match mode {
        "serve" => {
            // For the peers (mpv): serve FILE's directory until killed.
            println!("{url}");
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        "first-audio" | "first-audio-local" => {
            let url = if mode == "first-audio-local" {
                let path = file.canonicalize().expect("FILE exists");
                url::Url::from_file_path(path).unwrap().to_string()
            } else {
                url.clone()
            };
            let mut v = Vec::new();
            for _ in 0..arg as usize {
                let e = engine(1.0);
                let t = Instant::now();
                e.send(Command::Load {
                    manifest: manifest(url.clone(), None),
                    start: (ChapterId::new("ch_bench"), 0.0),
                    autoplay: true,
                });
                v.push(wait_first_audio(&e, t));
                e.send(Command::Shutdown);
            }
            println!(
                "{mode} {} runs: median {:.2} ms, min {:.2}, max {:.2}",
                v.len(),
                median(v.clone()),
                v.iter().cloned().fold(f64::MAX, f64::min),
                v.iter().cloned().fold(0.0, f64::max)
            );
        }
        "seek" => {
            let dur: f64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(36_000.0);
            let e = engine(1.0);
            e.send(Command::Load {
                manifest: manifest(url.clone(), Some(dur)),
                start: (ChapterId::new("ch_bench"), 60.0),
                autoplay: true,
            });
            wait_first_audio(&e, Instant::now());
            let mut v = Vec::new();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..arg as usize {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let pos = (x % 1_000_000) as f64 / 1_000_000.0 * (dur - 60.0);
                let t = Instant::now();
                e.send(Command::Seek {
                    chapter: ChapterId::new("ch_bench"),
                    position: pos,
                });
                // first_audio_at is reset by the seek; wait for the new one.
                std::thread::sleep(Duration::from_micros(100));
                let ms = loop {
                    if let Some(a) = e.first_audio_at()
                        && a > t
                    {
                        break a.duration_since(t).as_secs_f64() * 1000.0;
                    }
                    std::thread::sleep(Duration::from_micros(200));
                };
                let s = e.state();
                assert!(
                    (s.position - pos).abs() < 1.0,
                    "landed at {} not {pos}",
                    s.position
                );
                v.push(ms);
            }
            e.send(Command::Shutdown);
            println!(
                "seek {} runs: median {:.2} ms, max {:.2}",
                v.len(),
                median(v.clone()),
                v.iter().cloned().fold(0.0, f64::max)
            );
        }
        "throughput" => {
            let e = engine(0.0);
            e.send(Command::SetSpeed(arg as f32));
            let cpu0 = cpu_secs();
            let t = Instant::now();
            e.send(Command::Load {
                manifest: manifest(url.clone(), None),
                start: (ChapterId::new("ch_bench"), 0.0),
                autoplay: true,
            });
            let s = e
                .wait_for(Duration::from_secs(3600), |s| {
                    matches!(s.status, Status::Ended | Status::Error(_))
                })
                .unwrap();
            let wall = t.elapsed().as_secs_f64();
            let cpu = cpu_secs() - cpu0;
            let media = s.position;
            println!(
                "throughput speed {arg}: {media:.0} s of media in {wall:.2} s wall, {cpu:.2} s CPU: {:.0}x real time per core ({:?})",
                media / cpu,
                s.status.name()
            );
        }
        "steady" => {
            let e = engine(1.0);
            let cpu0 = cpu_secs();
            e.send(Command::Load {
                manifest: manifest(url.clone(), None),
                start: (ChapterId::new("ch_bench"), 0.0),
                autoplay: true,
            });
            std::thread::sleep(Duration::from_secs_f64(arg));
            let cpu = cpu_secs() - cpu0;
            let s = e.state();
            println!(
                "steady {arg} s: position {:.1} s, CPU {cpu:.3} s ({:.2}% of a core), max RSS {:.1} MB",
                s.position,
                cpu / arg * 100.0,
                max_rss_mb()
            );
        }
        _ => {
            eprintln!(
                "usage: player_bench first-audio|first-audio-local|seek|throughput|steady FILE [N|SPEED|SECS]"
            )
        }
    }
}
