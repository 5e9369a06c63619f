//! `./run bench`: the figures of docs/benchmarks.md's summary table, with
//! their peers, in one run on this machine (issue 13).
//!
//! bench EARMARK PLAYER_BENCH WORKDIR
//!
//! Generates speech-like mp3s from the demo library (cached in WORKDIR),
//! starts the reference server on 127.0.0.1, and measures whole processes:
//! `earmark play` and the `earmark` player in a pseudo-terminal against
//! mpv and ffmpeg on the same files, through the same server. Prints one
//! markdown table of medians and ratios. Every loop is bounded in count and
//! every wait has a deadline; nothing talks to anything but 127.0.0.1.

#[path = "bench/capture.rs"]
mod capture;
#[path = "bench/ctl.rs"]
mod ctl;
#[path = "bench/measure.rs"]
mod measure;
#[path = "../tests/harness/proxy.rs"]
#[allow(dead_code)]
mod proxy;
#[path = "bench/remote.rs"]
mod remote;
#[path = "bench/setup.rs"]
mod setup;
#[path = "bench/tui.rs"]
mod tui;

use measure::{Row, Table, median};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs per start-up case (median quoted); `BENCH_QUICK=1` (a smoke run
/// of the bench itself, figures meaningless) makes every loop short.
fn startup_runs() -> usize {
    if quick() { 2 } else { 10 }
}
/// Seconds of wall time per CPU sample of `earmark play` and mpv.
fn cpu_secs() -> f64 {
    if quick() { 4.0 } else { 30.0 }
}
/// Seconds per CPU sample of the player in a terminal.
fn tui_secs() -> f64 {
    if quick() { 3.0 } else { 20.0 }
}
/// `BENCH_ONLY=startup,playing,decode,tui,remote,ctl,big` runs only those
/// sections; by default everything.
fn wanted(section: &str) -> bool {
    match std::env::var("BENCH_ONLY") {
        Ok(list) => list.split(',').any(|s| s.trim() == section),
        Err(_) => true,
    }
}
fn quick() -> bool {
    std::env::var_os("BENCH_QUICK").is_some_and(|v| v == "1")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: bench EARMARK PLAYER_BENCH WORKDIR");
        std::process::exit(2);
    }
    let abs = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    let earmark = abs(&args[1]);
    let player_bench = abs(&args[2]);
    // Absolute: ffmpeg's concat lists resolve paths from the list's folder.
    let _ = std::fs::create_dir_all(&args[3]);
    let work = abs(&args[3]);
    let began = Instant::now();
    if let Err(e) = run(&earmark, &player_bench, &work) {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
    eprintln!("bench: done in {:.0} s", began.elapsed().as_secs_f64());
}

fn run(earmark: &Path, player_bench: &Path, work: &Path) -> Result<(), String> {
    // Code pages come from the disk's read-ahead, whatever wrote the
    // executables last (docs/benchmarks.md, "Memory"); the server, started
    // next, keeps what it maps.
    measure::uncache(&[earmark, &measure::on_path("mpv")]);
    let peers = setup::Peers::find();
    let audio = setup::Audio::generate(&work.join("audio"))?;
    let run_dir = work.join(format!("run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run_dir);
    let server = setup::Server::start(earmark, &audio, &run_dir)?;
    let client = setup::Client::login(earmark, &server, &run_dir)?;
    let mut table = Table::new(setup::header(&peers));

    // 1. Start-up: `fork` to the first sample handed to the output.
    let cases = [
        ("1 MB chapter from 0", &client.small, 0.0),
        ("317 MB chapter from 0", &client.long, 0.0),
        ("317 MB chapter from 10 h in", &client.long, 36_000.0),
    ];
    for (name, book, at) in cases.into_iter().filter(|_| wanted("startup")) {
        eprintln!(
            "bench: start-up overhead, {name} ({} runs each)",
            startup_runs()
        );
        let mut ours: Vec<[f64; 6]> = Vec::new();
        let mut mpv = Vec::new();
        for _ in 0..startup_runs() {
            ours.push(client.startup(book, at)?);
            if peers.mpv {
                mpv.push(measure::mpv_startup(&client.stream_url(book), at)?);
            }
        }
        let phase = |i: usize| median(&ours.iter().map(|p| p[i]).collect::<Vec<_>>());
        let last = setup::PHASES.len() - 1;
        table.push(Row::time(
            &format!(
                "start-up to first audio, {name} (ms, median of {})",
                startup_runs()
            ),
            phase(last),
            (!mpv.is_empty()).then(|| median(&mpv) * 1000.0),
            "≤ 25",
        ));
        let mut row = Row::time(
            &format!(
                "… its phases, each's end: {} (ms since fork, medians)",
                setup::PHASES.join(" / ")
            ),
            0.0,
            None,
            "where the time goes",
        );
        row.ours = (0..=last)
            .map(|i| format!("{:.1}", phase(i)))
            .collect::<Vec<_>>()
            .join(" / ");
        table.push(row);
    }

    // 2. Playing: CPU of a core and max RSS, whole process, null output;
    // each the median of 3 runs (one 30 s sample moves by a tick or two).
    for speed in [1.0, 2.0].into_iter().filter(|_| wanted("playing")) {
        eprintln!("bench: playing {} s at {speed}×, 3 runs", cpu_secs());
        let (mut ours, mut peer) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            ours.push(client.playing(&client.hour, speed, cpu_secs())?);
            if peers.mpv {
                let url = client.stream_url(&client.hour);
                peer.push(measure::mpv_playing(&url, speed, cpu_secs())?);
            }
        }
        let med = |v: &[measure::Cost], f: fn(&measure::Cost) -> f64| {
            (!v.is_empty()).then(|| median(&v.iter().map(f).collect::<Vec<_>>()))
        };
        let cpu = |c: &measure::Cost| c.cpu_percent();
        let rss = |c: &measure::Cost| c.max_rss_mb;
        let target = if speed == 1.0 { "≤ 0.6" } else { "≤ 1.0" };
        table.push(Row::time(
            &format!(
                "playing {:.0} s at {speed}×, CPU (% of a core, median of 3)",
                cpu_secs()
            ),
            med(&ours, cpu).unwrap_or_default(),
            med(&peer, cpu),
            target,
        ));
        table.push(Row::time(
            &format!("playing at {speed}×, max RSS (MB, median of 3)"),
            med(&ours, rss).unwrap_or_default(),
            med(&peer, rss),
            "≤ 20",
        ));
    }

    // 3. Decode + stretch on one core, against ffmpeg's atempo.
    for speed in [1.0, 1.5, 2.0, 3.0]
        .into_iter()
        .filter(|_| wanted("decode"))
    {
        eprintln!("bench: decode + stretch at {speed}×");
        let mut ours = Vec::new();
        let mut peer = Vec::new();
        for _ in 0..3 {
            ours.push(measure::throughput(player_bench, &audio.quarter, speed)?);
            if peers.ffmpeg {
                peer.push(measure::ffmpeg_throughput(&audio.quarter, speed)?);
            }
        }
        let (o, p) = (median(&ours), (!peer.is_empty()).then(|| median(&peer)));
        table.push(Row::speed(
            &format!("decode + stretch at {speed}×, one core (× real time, median of 3)"),
            o,
            p,
            if speed == 1.0 {
                "report"
            } else {
                "≥ 1.0× ffmpeg"
            },
        ));
    }

    // 4. The player in a pseudo-terminal: idle, playing, paused.
    if wanted("tui") {
        eprintln!(
            "bench: the player idle / playing / paused, {} s each",
            tui_secs()
        );
        let states = tui::states(earmark, &client, tui_secs())?;
        let mpv_states = if peers.mpv {
            Some(measure::mpv_states(
                &client.stream_url(&client.small),
                tui_secs(),
            )?)
        } else {
            None
        };
        for (i, (name, v)) in states.iter().enumerate() {
            let peer = mpv_states.as_ref().and_then(|m| m[i]);
            table.push(Row::time(
                &format!("player {name}, CPU (% of a core, whole process)"),
                *v,
                peer,
                if *name == "playing" {
                    "report"
                } else {
                    "keep (0.00 / 0.05)"
                },
            ));
        }
    }

    // 5. A slow link: earmark and mpv through a delaying proxy.
    if wanted("remote") {
        let runs = remote::Runs {
            first_audio: if quick() { 2 } else { 5 },
            seeks: if quick() { 1 } else { 3 },
            screens: if quick() { 2 } else { 6 },
            playing_secs: if quick() { 10.0 } else { 60.0 },
        };
        for row in remote::rows(earmark, &server, &run_dir, &peers, &runs)? {
            table.push(row);
        }
    }

    // 6. The control socket: `earmark ctl`, a detached session, watchers.
    if wanted("ctl") {
        eprintln!("bench: the control socket and a detached session");
        for row in ctl::rows(&client, cpu_secs(), quick())? {
            table.push(row);
        }
    }

    // 7. A cached library of 100k books, server stopped (offline start).
    drop(server);
    if wanted("big") {
        big_library(earmark, &client, &mut table)?;
    }

    let text = table.render(&setup::load_average());
    println!("{text}");
    let _ = std::fs::write(work.join("last.md"), &text);
    Ok(())
}

fn big_library(earmark: &Path, client: &setup::Client, table: &mut Table) -> Result<(), String> {
    eprintln!("bench: the player with 100k cached books");
    let big = tui::big_library(earmark, client, 100_000)?;
    table.push(Row::time(
        "player, 100k cached books: first frame (ms, start of the process to the first book row)",
        big.first_frame_ms,
        None,
        "≤ 50",
    ));
    table.push(Row::time(
        "player, 100k cached books: RSS (MB)",
        big.rss_mb,
        None,
        "≤ 80",
    ));
    table.push(Row::time(
        &format!(
            "player, 100k cached books: keystroke to frame, fuzzy search, p50 / p99 (ms, n = {})",
            big.keys
        ),
        big.key_p99_ms,
        None,
        "p99 ≤ 8",
    ));
    let mut last = table.pop_last();
    last.ours = format!("{:.1} / {:.1}", big.key_p50_ms, big.key_p99_ms);
    table.push(last);
    Ok(())
}
