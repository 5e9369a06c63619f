//! The audio-truth test (issue 31): `earmark play BOOK --chapter C --at T`
//! as a listener runs it, through the reference server and the device path
//! (rodio → cpal → ALSA), ALSA's `file` plugin writing into a FIFO that is
//! read at the stream's rate (`examples/bench/capture.rs`), so playback
//! runs in real time. The audio names its own place (`oracle::tone_place`:
//! a tone of 200 + 10·minute Hz and one of 1000 + 20·second Hz). Every
//! format the player plays, at the start, mid-file and near the end: the
//! place heard is the place asked and the place `--json` reports, within
//! 1 s. The files are 2.5 min, made with ffmpeg on first use.

use crate::capture::Capture;
use crate::harness::TestServer;
use crate::harness::{Home, direct, titled};
use crate::oracle::{ffmpeg, tone_place};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};

const LENGTH: f64 = 150.0;
/// The start, mid-file, near the end.
const PLACES: [f64; 3] = [0.0, 75.0, 140.0];
const TOLERANCE: f64 = 1.0;
/// `earmark play` processes at once.
const AT_ONCE: usize = 6;

/// One book per format: (folder, file name, ffmpeg output flags). The
/// source is 44.1 kHz mono; `-ar 22050` makes MPEG-2 layer III mp3s.
const FORMATS: [(&str, &str, &[&str]); 12] = [
    (
        "mp3-cbr-44k",
        "a.mp3",
        &["-c:a", "libmp3lame", "-b:a", "64k"],
    ),
    (
        "mp3-cbr-22k",
        "a.mp3",
        &["-ar", "22050", "-c:a", "libmp3lame", "-b:a", "32k"],
    ),
    (
        "mp3-vbr-xing-44k",
        "a.mp3",
        &["-c:a", "libmp3lame", "-q:a", "5"],
    ),
    // The two without a Xing frame in stereo at LAME's best (1.6 and
    // 2.7 MB): mid-file and the end lie past what a seek walks from the
    // start (1 MiB), so their frames are counted first (an estimate from
    // the bitrate lands 7 and 13 s off at 44.1 kHz).
    (
        "mp3-vbr-bare-44k",
        "a.mp3",
        &[
            "-ac",
            "2",
            "-c:a",
            "libmp3lame",
            "-q:a",
            "0",
            "-write_xing",
            "0",
        ],
    ),
    (
        "mp3-vbr-xing-22k",
        "a.mp3",
        &["-ar", "22050", "-c:a", "libmp3lame", "-q:a", "7"],
    ),
    (
        "mp3-vbr-bare-22k",
        "a.mp3",
        &[
            "-ar",
            "22050",
            "-ac",
            "2",
            "-c:a",
            "libmp3lame",
            "-q:a",
            "0",
            "-write_xing",
            "0",
        ],
    ),
    ("aac-moov-end", "a.m4b", &["-c:a", "aac", "-b:a", "64k"]),
    (
        "aac-moov-start",
        "a.m4b",
        &["-c:a", "aac", "-b:a", "64k", "-movflags", "+faststart"],
    ),
    ("flac", "a.flac", &["-c:a", "flac"]),
    ("vorbis", "a.ogg", &["-c:a", "libvorbis", "-q:a", "3"]),
    ("opus", "a.opus", &["-c:a", "libopus", "-b:a", "32k"]),
    ("wav", "a.wav", &["-c:a", "pcm_s16le"]),
];

/// The library of [`FORMATS`], made once per target dir.
fn library() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("earmark-truth-v3");
        let lib = dir.join("lib");
        if dir.join("done").exists() {
            return lib;
        }
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("src.wav");
        // The minute and the second as two tones; noise 3.5 s out of every
        // 7 (as speech pauses), so that a VBR encode's bitrate swings
        // between probes of it: an estimated seek lands seconds off.
        let expr = "0.4*sin(2*PI*(200+10*floor(t/60))*t)\
                    +0.3*sin(2*PI*(1000+20*floor(mod(t,60)))*t)\
                    +if(lt(mod(t,7),3.5),0.3*(random(0)-0.5),0)";
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            &format!("aevalsrc='{expr}':s=44100:d={LENGTH}"),
            "-c:a",
            "pcm_s16le",
            src.to_str().unwrap(),
        ]);
        std::thread::scope(|s| {
            for (book, file, flags) in FORMATS {
                let (src, out) = (&src, lib.join(book).join(file));
                s.spawn(move || {
                    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
                    let mut args = vec!["-i", src.to_str().unwrap()];
                    args.extend_from_slice(flags);
                    args.push(out.to_str().unwrap());
                    ffmpeg(&args);
                });
            }
        });
        std::fs::remove_file(&src).unwrap();
        std::fs::write(dir.join("done"), "").unwrap();
        lib
    })
}

/// One `earmark play` and what it played.
struct Case {
    book: &'static str,
    asked: f64,
    /// Where the audio heard starts and ends, by its tones.
    heard: (f64, f64),
    /// The last place `--json` reported (at `--for`'s pause).
    reported: f64,
    /// Every `landed` value printed.
    landed: Vec<serde_json::Value>,
}

impl Case {
    fn wrong(&self) -> Option<String> {
        let (start, end) = self.heard;
        let off = |a: f64, b: f64| (a - b).abs() > TOLERANCE;
        let said_estimate = self.landed.iter().any(|l| l == "approximate");
        (off(start, self.asked) || off(end, self.reported) || said_estimate).then(|| {
            format!(
                "{} at {}: heard {start:.2}–{end:.2}, reported {:.2}, landed {:?}",
                self.book, self.asked, self.reported, self.landed
            )
        })
    }
}

/// Plays `book` (chapter `chapter`) at `at` for 2 s in a copy of `home`.
fn play(
    home: &Home,
    (book, id, chapter): (&'static str, &str, &str),
    at: f64,
) -> Result<Case, String> {
    let copy = home.copy();
    let capture = Capture::start(&copy.home(), copy.dir.path())?;
    let at_arg = at.to_string();
    let out = copy
        .command(&[
            "play",
            id,
            "--chapter",
            chapter,
            "--at",
            &at_arg,
            "--for",
            "2",
        ])
        .args(["--json", "--audio", "device"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let heard = capture.finish()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{book} at {at}: earmark play failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let states: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["state"].is_string())
        .collect();
    let reported = states
        .last()
        .and_then(|s| s["position"].as_f64())
        .ok_or_else(|| format!("{book} at {at}: no place printed: {text}"))?;
    let heard = tone_place(&heard.mono, heard.rate)
        .ok_or_else(|| format!("{book} at {at}: no tones heard"))?;
    Ok(Case {
        book,
        asked: at,
        heard,
        reported,
        landed: states.iter().map(|s| s["landed"].clone()).collect(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_format_plays_the_place_asked_and_reported() {
    let server = TestServer::start(library()).await.unwrap();
    // One listener per place: a place one case reports is never another
    // case's (the same book, played at once by the same account, is a
    // conflict that sync settles by moving one of them). The body runs
    // outside the runtime's workers (they serve): blocking here is fine.
    let homes: Vec<Home> = (0..PLACES.len())
        .map(|i| {
            let (user, pw) = (format!("listener{i}"), format!("password-{i}"));
            server.add_user(&user, &pw).unwrap();
            let home = Home::at(server.base_url()).with_user(&user);
            home.log_in(&pw);
            home
        })
        .collect();
    // Each format's book and chapter, by the API.
    let client = direct(&server).await;
    let books = client.books(&Default::default()).await.unwrap();
    let mut cases = Vec::new();
    for (folder, _, _) in FORMATS {
        let b = titled(&books, folder);
        let m = client.manifest(&b.id).await.unwrap();
        let chapter = m.items[0].chapter_id.to_string();
        for (i, at) in PLACES.into_iter().enumerate() {
            cases.push((folder, b.id.to_string(), chapter.clone(), at, i));
        }
    }
    let queue = Mutex::new(cases);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..AT_ONCE {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().pop();
                    let Some((book, id, chapter, at, i)) = next else {
                        return;
                    };
                    let case = play(&homes[i], (book, &id, &chapter), at);
                    done.lock().unwrap().push(case);
                }
            });
        }
    });
    let done = done.into_inner().unwrap();
    for c in done.iter().flatten() {
        eprintln!(
            "{:18} asked {:5.1} heard {:7.2}–{:7.2} reported {:7.2}",
            c.book, c.asked, c.heard.0, c.heard.1, c.reported
        );
    }
    assert_eq!(done.len(), FORMATS.len() * PLACES.len());
    let wrong: Vec<String> = done
        .iter()
        .filter_map(|c| match c {
            Ok(c) => c.wrong(),
            Err(e) => Some(e.clone()),
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
