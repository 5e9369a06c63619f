//! mp3 seek benchmarks for issue 14 (docs/benchmarks.md, "VBR mp3 seeks"),
//! earmark against mpv and ffmpeg on the same files over the same HTTP
//! server (in-process, 127.0.0.1, counting requests and bytes sent).
//!
//! cargo run --release --features bench --example mp3_seek_bench -- accuracy DIR
//! cargo run --release --features bench --example mp3_seek_bench -- latency DIR
//!
//! DIR receives the generated files (tests/player/oracle.rs makes them).
//! `accuracy`: seeks into 20 min mp3s (VBR with a Xing TOC, the same without
//! it, CBR); which second plays is told by the chirp's pitch, then by the
//! waveform against ffmpeg's full decode. `latency`: a seek 10 h into a
//! 10 h VBR mp3 (the 20 min one concatenated 30×): time to first audio, and
//! the Range requests and bytes it cost.

#[path = "../tests/player/oracle.rs"]
#[allow(dead_code)]
mod oracle;

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use earmark::domain::{BookId, ChapterId, Manifest, ManifestItem};
use earmark::player::output::{Capture, Captured};
use earmark::player::{AudioMode, Command, Engine, EngineConfig, Status, StreamRequest};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Srv {
    dir: PathBuf,
    requests: AtomicU64,
    bytes: AtomicU64,
    /// Requests with a closed range (`bytes=a-b`) and their bytes.
    bounded: AtomicU64,
    bounded_bytes: AtomicU64,
}

async fn file(
    State(st): State<Arc<Srv>>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let path = st.dir.join(&name);
    let Ok(len) = std::fs::metadata(&path).map(|m| m.len()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    st.requests.fetch_add(1, Ordering::SeqCst);
    let asked = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes="));
    let bounded = asked.is_some_and(|v| !v.ends_with('-'));
    if bounded {
        st.bounded.fetch_add(1, Ordering::SeqCst);
    }
    let range = asked.and_then(|v| {
        let (a, b) = v.split_once('-')?;
        let a: u64 = a.parse().ok()?;
        let b: u64 = b.parse().unwrap_or(len.saturating_sub(1));
        Some((a, b.min(len.saturating_sub(1))))
    });
    let (start, end, status) = match range {
        Some((a, _)) if a >= len => {
            return (
                StatusCode::RANGE_NOT_SATISFIABLE,
                [("content-range", format!("bytes */{len}"))],
            )
                .into_response();
        }
        Some((a, b)) => (a, b, StatusCode::PARTIAL_CONTENT),
        None => (0, len.saturating_sub(1), StatusCode::OK),
    };
    let st2 = st.clone();
    let stream = futures_util::stream::unfold((path, start, end + 1), move |(path, pos, stop)| {
        let st = st2.clone();
        async move {
            if pos >= stop {
                return None;
            }
            let n = (stop - pos).min(64 * 1024) as usize;
            let mut f = std::fs::File::open(&path).ok()?;
            f.seek(SeekFrom::Start(pos)).ok()?;
            let mut buf = vec![0u8; n];
            f.read_exact(&mut buf).ok()?;
            st.bytes.fetch_add(n as u64, Ordering::SeqCst);
            if bounded {
                st.bounded_bytes.fetch_add(n as u64, Ordering::SeqCst);
            }
            Some((
                Ok::<_, std::io::Error>(bytes::Bytes::from(buf)),
                (path, pos + n as u64, stop),
            ))
        }
    });
    let mut r = Response::builder()
        .status(status)
        .header("accept-ranges", "bytes")
        .header("content-length", (end + 1 - start).to_string());
    if status == StatusCode::PARTIAL_CONTENT {
        r = r.header("content-range", format!("bytes {start}-{end}/{len}"));
    }
    r.body(Body::from_stream(stream)).unwrap()
}

fn serve(st: Arc<Srv>) -> (String, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route("/files/{name}", axum::routing::get(file))
        .with_state(st);
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/files"), rt)
}

fn manifest(url: String, duration: f64) -> Manifest {
    Manifest {
        book_id: BookId::new("bk_bench"),
        items: vec![ManifestItem {
            chapter_id: ChapterId::new("ch_bench"),
            title: "bench".into(),
            duration: Some(duration),
            duration_source: Default::default(),
            url: Some(url),
            mime_type: None,
            size_bytes: None,
            start: 0.0,
            end: None,
        }],
    }
}

/// earmark: load at `at`; (first second of audio, reported position,
/// approximate). `count_limit`: how far the seek may count frames first
/// (`Some(0)`: not at all, the estimate alone).
fn earmark_at(
    url: &str,
    duration: f64,
    at: f64,
    count_limit: Option<u64>,
) -> (Vec<f32>, f64, bool) {
    let resolve = Arc::new(|item: &ManifestItem| StreamRequest {
        url: item.url.clone().unwrap_or_default(),
        headers: Vec::new(),
    });
    let capture: Capture = Arc::new(Mutex::new(Captured::default()));
    let mut c = EngineConfig::new(AudioMode::Null, resolve);
    c.null_clock_rate = 20.0;
    c.capture = Some(capture.clone());
    c.mp3_count_limit = count_limit;
    let e = Engine::spawn(c).expect("engine");
    e.send(Command::Load {
        manifest: manifest(url.to_string(), duration),
        start: (ChapterId::new("ch_bench"), at),
        autoplay: true,
    });
    let s = e
        .wait_for(Duration::from_secs(60), |s| {
            s.landed && s.status == Status::Playing
        })
        .expect("landed");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let c = capture.lock().unwrap();
        let need = (1.2 * c.rate.max(1) as f64) as usize * c.channels.max(1);
        if c.rate > 0 && c.samples.len() >= need {
            let x = c.samples.iter().step_by(c.channels).copied().collect();
            e.send(Command::Shutdown);
            return (x, s.position, s.approximate);
        }
        drop(c);
        assert!(Instant::now() < deadline, "no audio");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn s16(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect()
}

fn mpv_at(url: &str, at: f64, tmp: &Path) -> Vec<f32> {
    let wav = tmp.join("mpv.wav");
    let _ = std::fs::remove_file(&wav);
    let st = std::process::Command::new("mpv")
        .args(["--no-config", "--really-quiet", "--no-video"])
        .arg(format!("--start={at}"))
        .args(["--length=1.5", "--ao=pcm", "--audio-format=s16"])
        .args(["--audio-channels=mono", "--audio-samplerate=22050"])
        .arg(format!("--ao-pcm-file={}", wav.display()))
        .arg(url)
        .status()
        .expect("mpv runs");
    assert!(st.success());
    let b = std::fs::read(&wav).unwrap();
    let data = b.windows(4).position(|w| w == b"data").expect("a wav") + 8;
    s16(&b[data..])
}

fn ffmpeg_at(url: &str, at: f64) -> Vec<f32> {
    let out = std::process::Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-ss",
            &at.to_string(),
            "-i",
            url,
            "-t",
            "1.5",
        ])
        .args(["-f", "s16le", "-ac", "1", "-ar", "22050", "-"])
        .output()
        .expect("ffmpeg runs");
    s16(&out.stdout)
}

/// Which second of the reference `x` starts at (pitch, then waveform),
/// measured after any leading silence or decoder warm-up (50 ms past the
/// first sample louder than 0.05) and corrected back to `x`'s start.
fn heard(x: &[f32], reference: &Path) -> f64 {
    let r = oracle::RATE as f64;
    let loud = x.iter().position(|v| v.abs() > 0.05).unwrap_or(0);
    let skip = loud + (0.05 * r) as usize;
    let y = &x[skip.min(x.len())..];
    let coarse = oracle::heard_by_pitch(y, oracle::RATE);
    oracle::heard_exactly(y, reference, coarse, 3.0).unwrap_or(coarse) - skip as f64 / r
}

fn accuracy(dir: PathBuf) {
    let files = oracle::make_files(dir.clone());
    let st = Arc::new(Srv {
        dir: files.dir.clone(),
        requests: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        bounded: AtomicU64::new(0),
        bounded_bytes: AtomicU64::new(0),
    });
    let (base, _rt) = serve(st);
    println!(
        "| file | target s | earmark heard − target | earmark reported − heard | approximate | estimate alone: heard − target, reported − heard | mpv heard − target | ffmpeg heard − target |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for f in ["vbr", "noxing", "cbr"] {
        let reference = files.path(&format!("{f}.s16"));
        let duration = std::fs::metadata(&reference).unwrap().len() as f64 / 2.0 / 22050.0;
        let url = format!("{base}/{f}.mp3");
        for at in [150.0, 450.0, 700.0, 900.0, 1150.0] {
            let (x, reported, approximate) = earmark_at(&url, duration, at, None);
            let e = heard(&x, &reference);
            let (y, guessed, _) = earmark_at(&url, duration, at, Some(0));
            let alone = heard(&y, &reference);
            let m = heard(&mpv_at(&url, at, &dir), &reference);
            let g = heard(&ffmpeg_at(&url, at), &reference);
            println!(
                "| {f}.mp3 | {at} | {:+.3} | {:+.3} | {approximate} | {:+.3}, {:+.3} | {:+.3} | {:+.3} |",
                e - at,
                reported - e,
                alone - at,
                guessed - alone,
                m - at,
                g - at
            );
        }
    }
}

fn concat(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    if out.exists() {
        return out;
    }
    let list = dir.join("list.txt");
    let line = format!("file '{}'\n", dir.join("vbr.mp3").display());
    std::fs::write(&list, line.repeat(30)).unwrap();
    let st = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "concat", "-safe", "0", "-i"])
        .arg(&list)
        .args(["-c", "copy"])
        .args(extra)
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    out
}

fn latency(dir: PathBuf) {
    let files = oracle::make_files(dir.clone());
    let long = concat(&files.dir, "long.mp3", &[]);
    let long_nx = concat(&files.dir, "long-noxing.mp3", &["-write_xing", "0"]);
    let st = Arc::new(Srv {
        dir: files.dir.clone(),
        requests: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        bounded: AtomicU64::new(0),
        bounded_bytes: AtomicU64::new(0),
    });
    let (base, _rt) = serve(st.clone());
    let at = 36_000.0 - 60.0;
    let reset = || {
        st.requests.store(0, Ordering::SeqCst);
        st.bytes.store(0, Ordering::SeqCst);
        st.bounded.store(0, Ordering::SeqCst);
        st.bounded_bytes.store(0, Ordering::SeqCst);
    };
    let counts = || {
        (
            format!(
                "{} ({} bounded)",
                st.requests.load(Ordering::SeqCst),
                st.bounded.load(Ordering::SeqCst)
            ),
            format!(
                "{:.2} ({:.3} bounded)",
                st.bytes.load(Ordering::SeqCst) as f64 / 1e6,
                st.bounded_bytes.load(Ordering::SeqCst) as f64 / 1e6
            ),
        )
    };
    println!("| player | file | to first audio (ms) | requests | MB sent |");
    println!("|---|---|---|---|---|");
    for path in [&long, &long_nx] {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mb = std::fs::metadata(path).unwrap().len() as f64 / 1e6;
        let url = format!("{base}/{name}");
        for run in 0..3 {
            reset();
            let resolve = Arc::new(|item: &ManifestItem| StreamRequest {
                url: item.url.clone().unwrap_or_default(),
                headers: Vec::new(),
            });
            let e = Engine::spawn(EngineConfig::new(AudioMode::Null, resolve)).unwrap();
            let t0 = Instant::now();
            e.send(Command::Load {
                manifest: manifest(url.clone(), 36_000.0),
                start: (ChapterId::new("ch_bench"), at),
                autoplay: true,
            });
            let first = loop {
                if let Some(t) = e.first_audio_at() {
                    break t.duration_since(t0).as_secs_f64() * 1000.0;
                }
                assert!(t0.elapsed() < Duration::from_secs(120), "no audio");
                std::thread::sleep(Duration::from_micros(200));
            };
            let (n, sent) = counts();
            e.send(Command::Shutdown);
            println!(
                "| earmark (engine) #{run} | {name} ({mb:.0} MB) | {first:.0} | {n} | {sent} |"
            );
            std::thread::sleep(Duration::from_millis(300));
            for (who, args) in [
                (
                    "mpv (whole process)",
                    vec![
                        "mpv".to_string(),
                        "--no-config".into(),
                        "--really-quiet".into(),
                        "--ao=null".into(),
                        format!("--start={at}"),
                        "--length=0.05".into(),
                        url.clone(),
                    ],
                ),
                (
                    "ffmpeg (whole process)",
                    vec![
                        "ffmpeg".to_string(),
                        "-v".into(),
                        "error".into(),
                        "-ss".into(),
                        at.to_string(),
                        "-i".into(),
                        url.clone(),
                        "-t".into(),
                        "0.05".into(),
                        "-f".into(),
                        "null".into(),
                        "-".into(),
                    ],
                ),
            ] {
                reset();
                let t0 = Instant::now();
                let ok = std::process::Command::new(&args[0])
                    .args(&args[1..])
                    .status()
                    .unwrap()
                    .success();
                let ms = t0.elapsed().as_secs_f64() * 1000.0;
                std::thread::sleep(Duration::from_millis(200));
                let (n, sent) = counts();
                println!(
                    "| {who} #{run} | {name} | {ms:.0}{} | {n} | {sent} |",
                    if ok { "" } else { " (failed)" }
                );
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(2).expect("DIR"));
    match args.get(1).map(String::as_str) {
        Some("accuracy") => accuracy(dir),
        Some("latency") => latency(dir),
        _ => eprintln!("usage: mp3_seek_bench accuracy|latency DIR"),
    }
}
