//! The slow link (issue 23, `BENCH_ONLY=remote`): earmark and mpv through
//! the tests' proxy (tests/harness/proxy.rs), which holds each direction back by
//! half the round trip (and a new connection's first bytes by one more
//! round trip, its handshake), at 0, 50 and 150 ms of round trip, in one
//! run. Each row says what the proxy counted: requests and connections,
//! and how many round trips the time is. The proxy lets HTTP/2 through, so
//! the bench's login learns that the server speaks h2c and every session
//! uses it; the connections row also plays over HTTP/1.1 (a second login,
//! through the proxy refusing HTTP/2 as an HTTP/1.1 proxy does).

use crate::capture::{Capture, heard_secs, longest_inner_gap};
use crate::measure::{self, Row, median};
use crate::proxy::{Proxy, Request};
use crate::setup::{Book, Client, Peers, SEAM_CHAPTER_SECS, Server};
use earmark::domain::{BookId, ChapterId, Manifest, ManifestItem};
use earmark::player::{
    AudioMode, Command, Engine, EngineConfig, Status, StreamPool, StreamRequest,
};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The round trips measured, ms.
pub const RTTS: [u64; 3] = [0, 50, 150];
/// Where the seek rows jump to: 10 h into the 10 h books, less a minute.
const SEEK_TO: f64 = 36_000.0 - 60.0;

/// The proxy in front of the bench server, on its own runtime.
struct Link {
    proxy: Proxy,
    /// The engines' streams for the seek rows: HTTP/2 with prior
    /// knowledge, one pool across runs (as a session's).
    h2c: reqwest::Client,
    rtt_ms: u64,
    /// An instant and the same on CLOCK_MONOTONIC (ms): the proxy's times
    /// against `earmark play --json`'s.
    origin: (Instant, f64),
    _rt: tokio::runtime::Runtime,
}

impl Link {
    fn start(server: &Server) -> Result<Link, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("bench-proxy")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let proxy = rt.block_on(Proxy::start(server.addr));
        proxy.pass_h2(true);
        let h2c = reqwest::Client::builder()
            .http2_prior_knowledge()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Link {
            proxy,
            h2c,
            rtt_ms: 0,
            origin: (Instant::now(), measure::monotonic_ms()),
            _rt: rt,
        })
    }

    fn set_rtt(&mut self, ms: u64) {
        self.rtt_ms = ms;
        self.proxy.set_delay(Duration::from_micros(ms * 500));
    }

    fn monotonic_ms(&self, t: Instant) -> f64 {
        self.origin.1 + (t - self.origin.0).as_secs_f64() * 1000.0
    }

    /// "1220 ms = 8.1 RTT · 5 req / 3 conn".
    fn cell(&self, ms: f64, seen: &Seen) -> String {
        let rtts = if self.rtt_ms > 0 {
            format!(" = {:.1} RTT", ms / self.rtt_ms as f64)
        } else {
            String::new()
        };
        format!(
            "{} ms{rtts} · {} req / {} conn",
            fmt_ms(ms),
            seen.requests,
            seen.connections
        )
    }
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
    }
}

/// What the proxy saw of one action.
#[derive(Clone, Copy, Default)]
struct Seen {
    requests: usize,
    connections: usize,
}

impl Seen {
    /// Counts `reqs`; `BENCH_VERBOSE=1` lists them on stderr.
    fn of(reqs: &[Request]) -> Seen {
        if std::env::var_os("BENCH_VERBOSE").is_some_and(|v| v == "1") {
            for r in reqs {
                let path = r.path.split("access_token").next().unwrap_or(&r.path);
                eprintln!(
                    "bench:     conn {} {} {path} {}",
                    r.connection,
                    r.method,
                    r.range.as_deref().unwrap_or("")
                );
            }
        }
        let mut conns: Vec<u64> = reqs.iter().map(|r| r.connection).collect();
        conns.sort_unstable();
        conns.dedup();
        Seen {
            requests: reqs.len(),
            connections: conns.len(),
        }
    }

    /// The medians of `runs`, rounded up.
    fn median(runs: &[Seen]) -> Seen {
        let m = |f: fn(&Seen) -> usize| {
            median(&runs.iter().map(|s| f(s) as f64).collect::<Vec<_>>()).ceil() as usize
        };
        Seen {
            requests: m(|s| s.requests),
            connections: m(|s| s.connections),
        }
    }
}

/// Runs of each measured action (`quick`: a smoke run of the bench).
pub struct Runs {
    pub first_audio: usize,
    pub seeks: usize,
    pub screens: usize,
    /// Seconds of playback for the connections row.
    pub playing_secs: f64,
}

pub fn rows(
    earmark: &Path,
    server: &Server,
    run_dir: &Path,
    peers: &Peers,
    runs: &Runs,
) -> Result<Vec<Row>, String> {
    let mut link = Link::start(server)?;
    let client = Client::login_at(earmark, &link.proxy.base_url(), &run_dir.join("remote"))?;
    // A login that learns HTTP/1.1: the proxy refuses HTTP/2 meanwhile.
    link.proxy.pass_h2(false);
    let h1 = Client::login_at(earmark, &link.proxy.base_url(), &run_dir.join("remote-h1"));
    link.proxy.pass_h2(true);
    let h1 = h1?;
    let mut out = Vec::new();
    for rtt in RTTS {
        link.set_rtt(rtt);
        let tag = format!("RTT {rtt} ms");
        eprintln!("bench: slow link, {tag}: first audio");
        out.extend(first_audio(&link, &client, peers, runs.first_audio, &tag)?);
        for (what, book) in [
            ("with a TOC", &client.seek_toc),
            ("without a TOC", &client.seek_no_toc),
        ] {
            eprintln!("bench: slow link, {tag}: seek 10 h in, {what}");
            out.push(seek(
                &link, &client, book, peers, runs.seeks, &tag, what, run_dir,
            )?);
        }
        eprintln!("bench: slow link, {tag}: the chapter seam");
        out.push(seam(&client, peers, &tag, run_dir)?);
        eprintln!("bench: slow link, {tag}: the book screen");
        out.push(book_screen(&link, &client, runs.screens, &tag)?);
    }
    let rtt = *RTTS.last().unwrap_or(&0);
    link.set_rtt(rtt);
    eprintln!(
        "bench: slow link, RTT {rtt} ms: {} s of playback",
        runs.playing_secs
    );
    out.push(connections(&link, &client, &h1, peers, runs.playing_secs)?);
    Ok(out)
}

fn row(measure: String, ours: String, peer: Option<String>, ratio: String, target: &str) -> Row {
    Row {
        measure,
        ours,
        peer: peer.unwrap_or_else(|| "—".into()),
        ratio,
        target: target.into(),
    }
}

/// `earmark play` of the 1 MB book with a stored session, two ways: as a
/// listener types it (`earmark play BOOK`: resuming where this device last
/// played, its chapter opened ahead) and with `--chapter CH --at 0`; fork
/// to first audio, and the requests sent before it. mpv given the URL, at
/// the same place.
fn first_audio(
    link: &Link,
    client: &Client,
    peers: &Peers,
    runs: usize,
    tag: &str,
) -> Result<Vec<Row>, String> {
    // This device's place, in the chapter: what a resume opens ahead.
    client.startup(&client.small, 0.0)?;
    let url = client.stream_url(&client.small);
    let before_first = |first: f64| -> Vec<Request> {
        link.proxy
            .requests()
            .into_iter()
            .filter(|r| link.monotonic_ms(r.sent) <= first)
            .collect()
    };
    let mut rows = Vec::new();
    for resume in [true, false] {
        let (mut ours, mut seen, mut mpv, mut mpv_seen) = (vec![], vec![], vec![], vec![]);
        for _ in 0..runs {
            link.proxy.clear();
            let spawned = measure::monotonic_ms();
            let (phases, at) = match resume {
                true => client.resume_startup(&client.small)?,
                false => (client.startup(&client.small, 0.0)?, 0.0),
            };
            let first = spawned + phases[phases.len() - 1];
            ours.push(phases[phases.len() - 1]);
            seen.push(Seen::of(&before_first(first)));
            if peers.mpv {
                link.proxy.clear();
                let at = if at.is_finite() { at } else { 0.0 };
                mpv.push(measure::mpv_startup(&url, at)? * 1000.0);
                mpv_seen.push(Seen::of(&link.proxy.requests()));
            }
        }
        let o = median(&ours);
        let p = (!mpv.is_empty()).then(|| median(&mpv));
        let how = match resume {
            true => "`earmark play BOOK` resuming this device's place",
            false => "`earmark play BOOK --chapter CH --at 0`",
        };
        rows.push(row(
            format!(
                "{tag}: first audio, cold {how} with a stored session, 1 MB chapter (median of {runs}; requests before it)"
            ),
            link.cell(o, &Seen::median(&seen)),
            p.map(|p| link.cell(p, &Seen::median(&mpv_seen))),
            p.map_or("—".into(), |p| measure::ratio(o, p, false)),
            "≤ 3 RTT + 1 s of audio",
        ));
    }
    Ok(rows)
}

/// A seek 10 h into `book` while it plays: earmark's engine (Seek to the
/// first audio there), mpv over its JSON IPC (`seek` to `playback-restart`).
#[allow(clippy::too_many_arguments)]
fn seek(
    link: &Link,
    client: &Client,
    book: &Book,
    peers: &Peers,
    runs: usize,
    tag: &str,
    what: &str,
    run_dir: &Path,
) -> Result<Row, String> {
    let url = client.stream_url(book);
    let (mut ours, mut seen, mut mpv, mut mpv_seen) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        let (ms, reqs) = engine_seek(link, &url, book)?;
        ours.push(ms);
        seen.push(Seen::of(&reqs));
        if peers.mpv {
            let (ms, reqs) = mpv_seek(link, &url, run_dir)?;
            mpv.push(ms);
            mpv_seen.push(Seen::of(&reqs));
        }
    }
    let o = median(&ours);
    let p = (!mpv.is_empty()).then(|| median(&mpv));
    Ok(row(
        format!(
            "{tag}: seek 10 h into a 10 h VBR mp3 {what}, over h2c, while playing (median of {runs}; its requests)"
        ),
        link.cell(o, &Seen::median(&seen)),
        p.map(|p| link.cell(p, &Seen::median(&mpv_seen))),
        p.map_or("—".into(), |p| measure::ratio(o, p, false)),
        if what == "with a TOC" {
            "≤ 1 RTT"
        } else {
            "≤ 2 RTT"
        },
    ))
}

fn engine_seek(link: &Link, url: &str, book: &Book) -> Result<(f64, Vec<Request>), String> {
    let resolve = Arc::new(|item: &ManifestItem| StreamRequest {
        url: item.url.clone().unwrap_or_default(),
        headers: Vec::new(),
    });
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    let h2c: Arc<dyn StreamPool> = Arc::new(link.h2c.clone());
    config.pool = Some(Arc::new(move || Some(h2c.clone())));
    let e = Engine::spawn(config)?;
    let chapter = ChapterId::new(&book.chapter);
    let manifest = Manifest {
        book_id: BookId::new(&book.id),
        items: vec![ManifestItem {
            chapter_id: chapter.clone(),
            title: "seek".into(),
            duration: book.duration,
            duration_source: Default::default(),
            url: Some(url.to_owned()),
            mime_type: Some("audio/mpeg".into()),
            size_bytes: None,
            start: 0.0,
            end: None,
        }],
    };
    e.send(Command::Load {
        manifest,
        start: (chapter.clone(), 0.0),
        autoplay: true,
    });
    let deadline = Duration::from_secs(60);
    e.wait_for(deadline, |s| s.landed && s.status == Status::Playing)
        .ok_or("the 10 h book did not start playing within 60 s")?;
    link.proxy.clear();
    let t0 = Instant::now();
    e.send(Command::Seek {
        chapter,
        position: SEEK_TO,
    });
    let first = loop {
        if let Some(t) = e.first_audio_at().filter(|t| *t > t0) {
            break t;
        }
        if t0.elapsed() > deadline {
            return Err("no audio within 60 s of the seek".into());
        }
        std::thread::sleep(Duration::from_micros(500));
    };
    let ms = (first - t0).as_secs_f64() * 1000.0;
    let reqs = link
        .proxy
        .requests()
        .into_iter()
        .filter(|r| r.sent <= first)
        .collect();
    e.send(Command::Shutdown);
    Ok((ms, reqs))
}

/// mpv playing `url`; once it plays, a `seek` over its IPC socket to the
/// `playback-restart` event that says it plays there.
fn mpv_seek(link: &Link, url: &str, run_dir: &Path) -> Result<(f64, Vec<Request>), String> {
    let sock = run_dir.join("mpv.sock");
    let _ = std::fs::remove_file(&sock);
    let mut child = Process::new("mpv")
        .args(["--no-config", "--really-quiet", "--no-video", "--ao=null"])
        .args(["--keep-open=yes", "--cache=yes"])
        .arg(format!("--input-ipc-server={}", sock.display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start mpv: {e}"))?;
    let result = (|| {
        let deadline = Instant::now() + Duration::from_secs(60);
        let conn = loop {
            match std::os::unix::net::UnixStream::connect(&sock) {
                Ok(c) => break c,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => return Err(format!("mpv's IPC socket: {e}")),
            }
        };
        conn.set_read_timeout(Some(Duration::from_millis(200)))
            .map_err(|e| e.to_string())?;
        let mut w = conn.try_clone().map_err(|e| e.to_string())?;
        let mut lines = BufReader::new(conn);
        let mut wait_restart = |what: &str| -> Result<Instant, String> {
            let mut line = String::new();
            loop {
                line.clear();
                match lines.read_line(&mut line) {
                    Ok(n) if n > 0 && line.contains("\"playback-restart\"") => {
                        return Ok(Instant::now());
                    }
                    Ok(0) => return Err(format!("mpv closed its IPC before {what}")),
                    _ if Instant::now() > deadline => {
                        return Err(format!("mpv did not {what} within 60 s"));
                    }
                    _ => {}
                }
            }
        };
        wait_restart("start playing")?;
        link.proxy.clear();
        let t0 = Instant::now();
        writeln!(w, r#"{{"command": ["seek", {SEEK_TO}, "absolute"]}}"#)
            .map_err(|e| e.to_string())?;
        let landed = wait_restart("land after the seek")?;
        let _ = writeln!(w, r#"{{"command": ["quit"]}}"#);
        let reqs = link
            .proxy
            .requests()
            .into_iter()
            .filter(|r| r.sent <= landed)
            .collect();
        Ok(((landed - t0).as_secs_f64() * 1000.0, reqs))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// The seam of two tone chapters, heard through ALSA paced in real time:
/// the longest silence inside the sound (earmark: `play --audio device`
/// of the book; mpv: `--ao=alsa` given both chapters' URLs).
fn seam(client: &Client, peers: &Peers, tag: &str, run_dir: &Path) -> Result<Row, String> {
    let heard_gap = |heard: crate::capture::Heard, who: &str| -> Result<f64, String> {
        let secs = heard_secs(&heard.mono, heard.rate);
        if secs < SEAM_CHAPTER_SECS + 1.0 {
            return Err(format!(
                "{who}: only {secs:.1} s of sound; the seam was not heard"
            ));
        }
        Ok(longest_inner_gap(&heard.mono, heard.rate).0 * 1000.0)
    };
    let cap = Capture::start(&client.home, run_dir)?;
    let played = client.play_on_device(&client.seam, SEAM_CHAPTER_SECS + 3.0);
    let heard = cap.finish();
    let ours = heard_gap(heard?, "earmark")
        .map_err(|e| format!("{e} ({})", played.err().unwrap_or_default()))?;
    let peer = if peers.mpv {
        let cap = Capture::start(&client.home, run_dir)?;
        let urls: Vec<String> = client
            .seam
            .chapters
            .iter()
            .map(|c| client.chapter_url(c))
            .collect();
        let ran = measure::run(
            Process::new("mpv")
                .env("HOME", &client.home)
                .args(["--no-config", "--really-quiet", "--no-video", "--ao=alsa"])
                .args(["--audio-format=float", "--audio-samplerate=48000"])
                .args(["--audio-channels=stereo", "--gapless-audio=yes"])
                .args(&urls),
        );
        let heard = cap.finish();
        ran?;
        Some(heard_gap(heard?, "mpv")?)
    } else {
        None
    };
    Ok(row(
        format!("{tag}: gap at a chapter seam, longest silence inside the sound (ms, one run)"),
        format!("{:.1}", ours),
        peer.map(|p| format!("{p:.1}")),
        "—".into(),
        "no gap beyond the file's own silence (0)",
    ))
}

/// The player in a pty: Enter on a book row to its screen complete (the
/// chapter list in place of "Loading chapters…"), two books in turn.
fn book_screen(link: &Link, client: &Client, runs: usize, tag: &str) -> Result<Row, String> {
    link.proxy.clear();
    let opens = crate::tui::book_screens(client, runs)?;
    let log = link.proxy.requests();
    let mut ms = Vec::new();
    let mut seen = Vec::new();
    for (at, done) in &opens {
        ms.push((*done - *at).as_secs_f64() * 1000.0);
        let reqs: Vec<Request> = log
            .iter()
            .filter(|r| r.sent >= *at && r.sent <= *done)
            .cloned()
            .collect();
        seen.push(Seen::of(&reqs));
    }
    Ok(row(
        format!(
            "{tag}: book screen complete after Enter (median of {}; its requests)",
            opens.len()
        ),
        link.cell(median(&ms), &Seen::median(&seen)),
        None,
        "—".into(),
        "≤ 1 RTT",
    ))
}

/// Connections and requests while playing the 1 h book for `secs`: those
/// opened at start-up (the first 5 s: requests sent together each need
/// one over HTTP/1.1, share one over h2c) and those opened after it, per
/// minute; over h2c (`client`), then over HTTP/1.1 (`h1`).
fn connections(
    link: &Link,
    client: &Client,
    h1: &Client,
    peers: &Peers,
    secs: f64,
) -> Result<Row, String> {
    const START_UP: Duration = Duration::from_secs(5);
    let rest_min = (secs - START_UP.as_secs_f64()).max(1.0) / 60.0;
    let seen = || {
        let log = link.proxy.requests();
        let t0 = log.iter().map(|r| r.sent).min();
        let mut first: Vec<(u64, Instant)> = Vec::new();
        for r in &log {
            match first.iter_mut().find(|(c, _)| *c == r.connection) {
                Some((_, at)) => *at = (*at).min(r.sent),
                None => first.push((r.connection, r.sent)),
            }
        }
        let later = first
            .iter()
            .filter(|(_, at)| t0.is_some_and(|t0| *at > t0 + START_UP))
            .count();
        (first.len() - later, later, log.len())
    };
    link.proxy.clear();
    client.playing(&client.hour, 1.0, secs)?;
    let ours = seen();
    link.proxy.clear();
    h1.playing(&h1.hour, 1.0, secs)?;
    let ours_h1 = seen();
    let peer = if peers.mpv {
        link.proxy.clear();
        measure::mpv_playing(&client.stream_url(&client.hour), 1.0, secs)?;
        Some(seen())
    } else {
        None
    };
    let cell = |(start, later, reqs): &(usize, usize, usize)| {
        format!(
            "{start} at start-up, then {:.1}/min ({:.1} req/min)",
            *later as f64 / rest_min,
            *reqs as f64 * 60.0 / secs
        )
    };
    Ok(row(
        format!(
            "RTT {} ms: connections opened while playing the 1 h book from 0 ({secs:.0} s of `earmark play` over h2c, then over HTTP/1.1 / mpv; at start-up, then per minute)",
            link.rtt_ms
        ),
        format!("h2c: {} · HTTP/1.1: {}", cell(&ours), cell(&ours_h1)),
        peer.as_ref().map(cell),
        peer.map_or("—".into(), |p| {
            measure::ratio((ours.0 + ours.1) as f64, (p.0 + p.1) as f64, false)
        }),
        "no new one after start-up",
    ))
}
