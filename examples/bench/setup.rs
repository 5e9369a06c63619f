//! The bench's audio, its reference server and its logged-in client.

use crate::measure::{Cost, run};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Peers {
    pub mpv: bool,
    pub ffmpeg: bool,
}

impl Peers {
    pub fn find() -> Peers {
        let has = |name: &str| {
            Command::new(name)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok()
        };
        let p = Peers {
            mpv: has("mpv"),
            ffmpeg: has("ffmpeg") && has("ffprobe"),
        };
        if !p.mpv {
            eprintln!("bench: mpv is missing: its column stays empty (./run installs it)");
        }
        p
    }
}

pub fn header(p: &Peers) -> String {
    let v = |name: &str| -> String {
        Command::new(name)
            .arg(if name == "ffmpeg" {
                "-version"
            } else {
                "--version"
            })
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| {
                let words: Vec<&str> = s.lines().next()?.split_whitespace().collect();
                // "mpv 0.35.1 Copyright…", "ffmpeg version 5.1.9…"
                let version = words
                    .iter()
                    .skip(1)
                    .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
                Some(format!("{name} {version}"))
            })
            .unwrap_or_else(|| format!("{name} (missing)"))
    };
    let mut names = Vec::new();
    if p.mpv {
        names.push(v("mpv"));
    }
    if p.ffmpeg {
        names.push(v("ffmpeg"));
    }
    format!("peer ({})", names.join("; decode rows: "))
}

pub fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "Load average at the end: {} ({cores} cores).",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Speech-like test audio made from the demo library's Aesop fables.
pub struct Audio {
    pub library: PathBuf,
    /// 15 min, for decode throughput (ratios do not need the hour).
    pub quarter: PathBuf,
}

/// Seconds of each chapter of the seam book (two tones, no silence).
pub const SEAM_CHAPTER_SECS: f64 = 4.0;

impl Audio {
    /// Generates what is missing; kept between runs.
    pub fn generate(dir: &Path) -> Result<Audio, String> {
        let lib = dir.join("library");
        let small = lib.join("Bench Small").join("small.mp3");
        let hour = lib.join("Bench Hour").join("hour.mp3");
        let long = lib.join("Bench Long").join("long.mp3");
        let quarter = dir.join("quarter.mp3");
        for d in [&small, &hour, &long] {
            std::fs::create_dir_all(d.parent().unwrap()).map_err(|e| e.to_string())?;
        }
        let ff = |args: &[&str]| -> Result<(), String> {
            run(Command::new("ffmpeg")
                .args(["-v", "error", "-y"])
                .args(args))
            .map(|_| ())
        };
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let wav = dir.join("speech.wav");
        if !hour.exists() {
            eprintln!("bench: generating test audio (once, about a minute)");
            let fables =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/Fables/Aesop's Fables");
            let mut files: Vec<PathBuf> = std::fs::read_dir(&fables)
                .map_err(|e| format!("{}: {e}", fables.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "mp3"))
                .collect();
            files.sort();
            let list: String = files
                .iter()
                .map(|p| format!("file '{}'\n", s(p).replace('\'', "'\\''")))
                .collect();
            let list_path = dir.join("fables.txt");
            std::fs::write(&list_path, list).map_err(|e| e.to_string())?;
            ff(&[
                "-f",
                "concat",
                "-safe",
                "0",
                "-i",
                &s(&list_path),
                "-ac",
                "1",
                "-ar",
                "22050",
                &s(&wav),
            ])?;
            let tmp = dir.join("hour.tmp.mp3");
            ff(&[
                "-stream_loop",
                "-1",
                "-i",
                &s(&wav),
                "-t",
                "3600",
                "-ac",
                "2",
                "-ar",
                "44100",
                "-c:a",
                "libmp3lame",
                "-b:a",
                "64k",
                &s(&tmp),
            ])?;
            std::fs::rename(&tmp, &hour).map_err(|e| e.to_string())?;
        }
        if !small.exists() {
            ff(&["-i", &s(&hour), "-t", "131", "-c", "copy", &s(&small)])?;
        }
        if !quarter.exists() {
            ff(&["-i", &s(&hour), "-t", "900", "-c", "copy", &s(&quarter)])?;
        }
        let concat = |of: &Path, times: usize, to: &Path, extra: &[&str]| -> Result<(), String> {
            if to.exists() {
                return Ok(());
            }
            std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| e.to_string())?;
            let list: String = (0..times).map(|_| format!("file '{}'\n", s(of))).collect();
            let list_path = dir.join("concat.txt");
            std::fs::write(&list_path, list).map_err(|e| e.to_string())?;
            let tmp = dir.join("concat.tmp.mp3");
            let mut args = vec!["-f", "concat", "-safe", "0", "-i"];
            let (list_s, tmp_s) = (s(&list_path), s(&tmp));
            args.extend([list_s.as_str(), "-c", "copy"]);
            args.extend(extra);
            args.push(&tmp_s);
            ff(&args)?;
            std::fs::rename(&tmp, to).map_err(|e| e.to_string())
        };
        concat(&hour, 11, &long, &[])?;
        // The slow-link rows (issue 23): a 10 h VBR book with the Xing TOC
        // ffmpeg writes, the same frames without it, and a book of two
        // tone chapters whose seam is the only place a gap can be.
        let hour_vbr = dir.join("hour-vbr.mp3");
        if !hour_vbr.exists() {
            let tmp = dir.join("hour-vbr.tmp.mp3");
            ff(&["-i", &s(&hour), "-c:a", "libmp3lame", "-q:a", "6", &s(&tmp)])?;
            std::fs::rename(&tmp, &hour_vbr).map_err(|e| e.to_string())?;
        }
        concat(&hour_vbr, 10, &lib.join("Bench Seek TOC/seek.mp3"), &[])?;
        concat(
            &hour_vbr,
            10,
            &lib.join("Bench Seek No TOC/seek.mp3"),
            &["-write_xing", "0"],
        )?;
        for (i, hz) in [440, 550].into_iter().enumerate() {
            let ch = lib.join(format!("Bench Seam/{:02}.mp3", i + 1));
            if ch.exists() {
                continue;
            }
            std::fs::create_dir_all(ch.parent().unwrap()).map_err(|e| e.to_string())?;
            let src = format!("sine=frequency={hz}:duration={SEAM_CHAPTER_SECS}");
            ff(&[
                "-f",
                "lavfi",
                "-i",
                &src,
                "-af",
                "volume=0.5",
                "-ac",
                "2",
                "-ar",
                "44100",
                "-c:a",
                "libmp3lame",
                "-b:a",
                "64k",
                &s(&ch),
            ])?;
        }
        Ok(Audio {
            library: lib,
            quarter,
        })
    }
}

/// `earmark serve` on a free 127.0.0.1 port; killed on drop.
pub struct Server {
    child: Child,
    pub url: String,
    pub addr: std::net::SocketAddr,
}

pub const USER: &str = "bench";
const PASSWORD: &str = "bench-password";

/// Runs `cmd` (its stdin piped) with the password written to it.
fn with_password(cmd: &mut Command, what: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PASSWORD.as_bytes())
        .map_err(|e| e.to_string())?;
    if !child.wait().map_err(|e| e.to_string())?.success() {
        return Err(format!("{what} failed"));
    }
    Ok(())
}

impl Server {
    pub fn start(earmark: &Path, audio: &Audio, run_dir: &Path) -> Result<Server, String> {
        let data = run_dir.join("server");
        std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
        let mut add = Command::new(earmark);
        add.args(["serve", "user", "add", USER, "--password-stdin", "--data"])
            .arg(&data)
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        with_password(&mut add, "earmark serve user add")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new(earmark)
            .args(["serve", "--library"])
            .arg(&audio.library)
            .arg("--data")
            .arg(&data)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start earmark serve: {e}"))?;
        let server = Server {
            child,
            url: format!("http://127.0.0.1:{port}/api/v1"),
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        };
        // Ready once it answers (the first scan reads the three files).
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("earmark serve did not listen within 120 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A book of the bench library: its id and chapters (`chapter`: the first).
#[derive(Default)]
pub struct Book {
    pub id: String,
    pub chapter: String,
    pub chapters: Vec<String>,
    /// The first chapter's duration, as the server says.
    pub duration: Option<f64>,
}

/// A logged-in `earmark` under its own XDG directories.
pub struct Client {
    pub earmark: PathBuf,
    pub home: PathBuf,
    pub server_url: String,
    token: String,
    pub small: Book,
    pub hour: Book,
    pub long: Book,
    /// 10 h of VBR speech with a Xing TOC, and the same without one.
    pub seek_toc: Book,
    pub seek_no_toc: Book,
    /// Two tone chapters of [`SEAM_CHAPTER_SECS`].
    pub seam: Book,
}

impl Client {
    pub fn login(earmark: &Path, server: &Server, run_dir: &Path) -> Result<Client, String> {
        Client::login_at(earmark, &server.url, &run_dir.join("client"))
    }

    /// A client of the server at `url` (a proxy's, say) in `home`.
    pub fn login_at(earmark: &Path, url: &str, home: &Path) -> Result<Client, String> {
        std::fs::create_dir_all(home).map_err(|e| e.to_string())?;
        let mut c = Client {
            earmark: earmark.to_owned(),
            home: home.to_owned(),
            server_url: url.to_owned(),
            token: String::new(),
            small: Book::default(),
            hour: Book::default(),
            long: Book::default(),
            seek_toc: Book::default(),
            seek_no_toc: Book::default(),
            seam: Book::default(),
        };
        let mut login = c.command();
        login
            .args(["login", "--server", url, "--user", USER, "--password-stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        with_password(&mut login, "earmark login")?;
        let token_file = c.home.join("data/earmark/tokens/default.token");
        c.token = std::fs::read_to_string(&token_file)
            .map_err(|e| format!("{}: {e}", token_file.display()))?
            .trim()
            .to_owned();
        let (books, _) = run(c.command().args(["--json", "books"]))?;
        let books: serde_json::Value =
            serde_json::from_str(&books).map_err(|e| format!("earmark --json books: {e}"))?;
        let list = books
            .as_array()
            .or_else(|| books["items"].as_array())
            .ok_or("books: no list")?;
        for b in list {
            let title = b["title"].as_str().unwrap_or_default();
            let id = b["id"].as_str().unwrap_or_default().to_owned();
            let (m, _) = run(c.command().args(["--json", "manifest", &id]))?;
            let m: serde_json::Value = serde_json::from_str(&m).map_err(|e| e.to_string())?;
            let items = m["items"].as_array().ok_or("manifest: no items")?;
            let chapters: Vec<String> = items
                .iter()
                .map(|i| {
                    i["chapterId"]
                        .as_str()
                        .or_else(|| i["chapter_id"].as_str())
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect();
            let book = Book {
                id,
                chapter: chapters.first().cloned().unwrap_or_default(),
                chapters,
                duration: items[0]["durationSec"].as_f64(),
            };
            match title {
                t if t.contains("Small") => c.small = book,
                t if t.contains("Hour") => c.hour = book,
                t if t.contains("Long") => c.long = book,
                t if t.contains("Seek No TOC") => c.seek_no_toc = book,
                t if t.contains("Seek TOC") => c.seek_toc = book,
                t if t.contains("Seam") => c.seam = book,
                _ => {}
            }
        }
        let all = [&c.small, &c.hour, &c.long, &c.seek_toc, &c.seek_no_toc];
        if all.iter().any(|b| b.id.is_empty()) || c.seam.chapters.len() != 2 {
            return Err(format!(
                "the bench library's books were not all listed: {books}"
            ));
        }
        Ok(c)
    }

    /// `earmark` with this client's directories and file token store.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.earmark);
        c.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env("EARMARK_TOKEN_STORE", "file")
            .env_remove("EARMARK_SERVER")
            .env_remove("EARMARK_PROFILE")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            // The session's socket under this client's data directory.
            .env_remove("XDG_RUNTIME_DIR");
        c
    }

    pub fn stream_url(&self, book: &Book) -> String {
        self.chapter_url(&book.chapter)
    }

    /// The chapter's raw stream with the token in the URL (for peers).
    pub fn chapter_url(&self, chapter: &str) -> String {
        format!(
            "{}/chapters/{chapter}/play?raw=1&access_token={}",
            self.server_url, self.token
        )
    }

    fn play(&self, book: &Book, at: f64, speed: f64, secs: f64) -> Result<Played, String> {
        self.play_on(book, at, speed, secs, "null")
    }

    /// `earmark play` of `book` from its first chapter's `at` for `secs`
    /// to `audio` (`null`, or `device`: ALSA's default device).
    fn play_on(
        &self,
        book: &Book,
        at: f64,
        speed: f64,
        secs: f64,
        audio: &str,
    ) -> Result<Played, String> {
        let at = at.to_string();
        let (speed, secs) = (speed.to_string(), secs.to_string());
        let args = [
            "--chapter",
            &book.chapter,
            "--at",
            &at,
            "--speed",
            &speed,
            "--for",
            &secs,
            "--audio",
            audio,
        ];
        self.play_args(book, &args).map(|(p, _)| p)
    }

    /// `earmark play BOOK` as a listener types it, resuming where this
    /// device last played: its phases, and where its first state was.
    pub fn resume_startup(&self, book: &Book) -> Result<([f64; 6], f64), String> {
        let args = ["--for", "1.5", "--audio", "null"];
        self.play_args(book, &args).map(|(p, at)| (p.phases, at))
    }

    /// `earmark --json play BOOK ARGS`, its cost, phases and first place.
    fn play_args(&self, book: &Book, args: &[&str]) -> Result<(Played, f64), String> {
        let spawned = crate::measure::monotonic_ms();
        let (out, cost) = run(self.command().args(["--json", "play", &book.id]).args(args))?;
        let first_place = out
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| v["position"].as_f64())
            .unwrap_or(f64::NAN);
        let last = out
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .rfind(|v| v["state"].is_string())
            .ok_or_else(|| format!("earmark play printed no state: {out:?}"))?;
        // `--for` pauses at its end and prints where the audio stopped.
        if last["state"] != "paused" && last["state"] != "playing" {
            return Err(format!("earmark play ended in {last}"));
        }
        // `--json` prints when each start-up phase ended (ms since `main`)
        // and the first audio's instant on CLOCK_MONOTONIC.
        let startup = out
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| v.get("startup").cloned())
            .ok_or_else(|| format!("earmark play printed no start-up line: {out:?}"))?;
        let ms = |k: &str| startup[k].as_f64().unwrap_or(f64::NAN);
        let first = ms("firstAudioMonotonicMs") - spawned;
        let main = first - ms("firstAudioMs");
        let phases = [
            main,
            main + ms("sessionMs"),
            main + ms("engineMs"),
            main + ms("manifestMs"),
            main + ms("loadMs"),
            first,
        ];
        Ok((Played { cost, phases }, first_place))
    }

    /// Whole process from `fork` to the first sample handed to the output
    /// (ms), and when each phase before it ended ([`PHASES`]).
    pub fn startup(&self, book: &Book, at: f64) -> Result<[f64; 6], String> {
        Ok(self.play(book, at, 1.0, 1.5)?.phases)
    }

    pub fn playing(&self, book: &Book, speed: f64, secs: f64) -> Result<Cost, String> {
        self.play(book, 0.0, speed, secs).map(|p| p.cost)
    }

    /// `book` from its start for `secs` on ALSA's default device (what
    /// $HOME/.asoundrc of this client makes of it).
    pub fn play_on_device(&self, book: &Book, secs: f64) -> Result<(), String> {
        self.play_on(book, 0.0, 1.0, secs, "device").map(|_| ())
    }
}

/// The start-up phases, each's end in ms since the bench's `fork`.
pub const PHASES: [&str; 6] = [
    "main",
    "session + token",
    "engine + output",
    "manifest (the place and the stream asked beside it)",
    "Load (sync's progress read)",
    "first audio",
];

/// One `earmark play` run.
struct Played {
    cost: Cost,
    phases: [f64; 6],
}
