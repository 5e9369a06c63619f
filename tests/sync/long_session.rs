//! A long session (issue 22): a book of 10-minute mp3 chapters played from
//! start to end by one `earmark play` (one engine, one sync session) as
//! fast as the null output can go, from the reference server over real
//! HTTP. The test reads the child's own `/proc` while it plays: its RSS
//! stays within 5 MB of its value after the first minute, and its open
//! descriptors and threads do not grow. The suite plays 1 hour;
//! `./run soak` plays 24.

use crate::child::{Playing, Resources};
use crate::harness::TestServer;
use crate::harness::{Home, logged_in, text};
use std::process::Command;
use std::time::{Duration, Instant};

const CHAPTER_SECS: f64 = 600.0;

/// RSS may grow this much over its value after the first minute (it may
/// fall any amount).
const RSS_SLACK_KB: u64 = 5 * 1024;

/// Open descriptors and threads may be this many above their count after
/// the first minute (a chapter's next stream opening while the last one
/// closes, a request in flight), never more: a leak of one per chapter
/// shows within the short run's six chapters.
const COUNT_SLACK: usize = 3;

#[derive(Debug)]
struct Figures {
    media_hours: f64,
    wall_secs: f64,
    /// When the baseline was taken (wall seconds, media seconds).
    baseline_at: (f64, f64),
    rss_baseline_kb: u64,
    rss_end_kb: u64,
    rss_max_kb: u64,
    fds_baseline: usize,
    fds_max: usize,
    threads_baseline: usize,
    threads_max: usize,
    samples: usize,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.0} h of media in {:.1} s; RSS {} kB after the first minute (at {:.1} s, {:.0} s \
             of media), {} kB at the end, {} kB at most; fds {} then at most {}; threads {} \
             then at most {}; {} samples",
            self.media_hours,
            self.wall_secs,
            self.rss_baseline_kb,
            self.baseline_at.0,
            self.baseline_at.1,
            self.rss_end_kb,
            self.rss_max_kb,
            self.fds_baseline,
            self.fds_max,
            self.threads_baseline,
            self.threads_max,
            self.samples
        )
    }
}

/// A book of `chapters` 10-minute chapters: one mp3 (22.05 kHz mono,
/// 32 kb/s, a 330 Hz tone) made with ffmpeg, linked under each name.
fn library(chapters: usize) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("earmark-long-")
        .tempdir()
        .unwrap();
    let one = dir.path().join("chapter.mp3");
    let o = Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!(
            "sine=f=330:sample_rate=22050:duration={CHAPTER_SECS}"
        ))
        .args(["-ac", "1", "-c:a", "libmp3lame", "-b:a", "32k"])
        .arg(&one)
        .output()
        .expect("ffmpeg is needed to make the book");
    assert!(o.status.success(), "ffmpeg: {}", text(&o));
    let book = dir.path().join("Day");
    std::fs::create_dir_all(&book).unwrap();
    for i in 1..=chapters {
        let name = book.join(format!("{i:03}.mp3"));
        if std::fs::hard_link(&one, &name).is_err() {
            std::fs::copy(&one, &name).unwrap();
        }
    }
    std::fs::remove_file(&one).unwrap();
    std::fs::write(
        book.join("book.toml"),
        "title = \"Day\"\nauthor = \"Test\"\n",
    )
    .unwrap();
    dir
}

/// How a run is measured: the baseline is taken after the first minute, or
/// after `baseline_media` seconds of media when that comes sooner (the
/// short run lasts seconds).
struct Sampling {
    every: Duration,
    baseline_media: f64,
    deadline: Duration,
}

async fn run(chapters: usize, sampling: Sampling) -> Figures {
    let lib = library(chapters);
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, _direct, books) = logged_in(&server).await;
    let book = books[0].id.clone();
    let length = chapters as f64 * CHAPTER_SECS;
    // The measure runs on a blocking thread: the server lives on this
    // runtime and must keep answering.
    tokio::task::spawn_blocking(move || measure(&home, book.as_str(), length, sampling))
        .await
        .unwrap()
}

fn measure(home: &Home, book: &str, length: f64, sampling: Sampling) -> Figures {
    let began = Instant::now();
    let mut play = Playing::start(
        home,
        &[book, "--audio", "null"],
        &[("EARMARK_NULL_CLOCK_RATE", "0".to_owned())],
    );
    let pid = play.pid();
    let mut samples: Vec<(f64, f64, Resources)> = Vec::new();
    let mut baseline: Option<usize> = None;
    loop {
        let media = play.book_position();
        let Some(r) = Resources::of(pid) else { break };
        let t = began.elapsed().as_secs_f64();
        samples.push((t, media, r));
        if baseline.is_none() && (t >= 60.0 || media >= sampling.baseline_media) {
            baseline = Some(samples.len() - 1);
        }
        if play.exited() {
            break;
        }
        assert!(
            began.elapsed() < sampling.deadline,
            "{length} s of media took longer than {:?} (at {media} s)",
            sampling.deadline
        );
        std::thread::sleep(sampling.every);
    }
    let (status, states, stderr) = play.finish(Duration::from_secs(30));
    let wall_secs = began.elapsed().as_secs_f64();
    assert!(status.success(), "earmark play: {status}: {stderr}");
    let last = states.last().expect("a status line");
    assert_eq!(last["state"], "ended", "{last}");
    assert!(
        (last["book_position"].as_f64().unwrap() - length).abs() < 1.0,
        "played to the end: {last}"
    );
    let b = baseline.expect("a sample after the first minute");
    let after = &samples[b..];
    // The last sample may be of a process already shutting down.
    let end = after[after.len().saturating_sub(2)].2;
    let base = samples[b].2;
    let figures = Figures {
        media_hours: length / 3600.0,
        wall_secs,
        baseline_at: (samples[b].0, samples[b].1),
        rss_baseline_kb: base.rss_kb,
        rss_end_kb: end.rss_kb,
        rss_max_kb: after.iter().map(|s| s.2.rss_kb).max().unwrap(),
        fds_baseline: base.fds,
        fds_max: after.iter().map(|s| s.2.fds).max().unwrap(),
        threads_baseline: base.threads,
        threads_max: after.iter().map(|s| s.2.threads).max().unwrap(),
        samples: samples.len(),
    };
    eprintln!("long session: {figures}");
    assert!(
        figures.samples >= 10 && after.len() >= 5,
        "too few samples to judge: {figures}"
    );
    for (t, media, r) in after {
        assert!(
            r.rss_kb <= base.rss_kb + RSS_SLACK_KB,
            "RSS {} kB at {t:.1} s ({media:.0} s of media), {} kB after the first minute: {figures}",
            r.rss_kb,
            base.rss_kb
        );
        assert!(
            r.fds <= figures.fds_baseline + COUNT_SLACK,
            "{} open descriptors at {t:.1} s ({media:.0} s of media): {figures}",
            r.fds
        );
        assert!(
            r.threads <= figures.threads_baseline + COUNT_SLACK,
            "{} threads at {t:.1} s ({media:.0} s of media): {figures}",
            r.threads
        );
    }
    figures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hour_of_media_through_one_engine_keeps_its_rss_within_5_mb_and_its_descriptors_and_threads_flat()
 {
    let sampling = Sampling {
        every: Duration::from_millis(100),
        baseline_media: CHAPTER_SECS,
        deadline: Duration::from_secs(300),
    };
    run(6, sampling).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a soak: ./run soak"]
async fn soak_twenty_four_hours_of_media_through_one_engine_keeps_its_rss_within_5_mb_and_its_descriptors_and_threads_flat()
 {
    let sampling = Sampling {
        every: Duration::from_millis(500),
        baseline_media: f64::INFINITY,
        deadline: Duration::from_secs(3600),
    };
    run(144, sampling).await;
}
