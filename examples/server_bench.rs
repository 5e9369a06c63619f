//! Reference-server benchmarks (docs/benchmarks.md, "Reference server").
//!
//! cargo run --release --features bench --example server_bench -- <mode> [args]
//!
//! Modes:
//! - `gen DIR BOOKS FOLDERS SOURCE...`: a library of BOOKS one-file books
//!   spread over FOLDERS top-level folders, each book a folder with a hard
//!   link to one of the SOURCE audio files and a `book.toml` (generated
//!   title and author). Deterministic.
//! - `latency BASE USER PASSWORD N`: N sequential `GET /books` of 50 at the
//!   first, middle and last page, and N 3-letter searches; p50/p99 each.
//! - `load BASE USER PASSWORD CLIENTS SECS`: CLIENTS concurrent clients,
//!   each listing a page, reading a progress and writing a progress in a
//!   loop for SECS (at most 1,000,000 rounds); then checks that every
//!   client's last accepted write is what the server returns. Chapters
//!   must be at least 6 s long (positions 1–5 s are written). Closed loop:
//!   each client sends its next request when the last one is answered, so
//!   this measures saturation (req/s), and its latency is mostly queueing.
//! - `open BASE USER PASSWORD CLIENTS SECS INTERVAL_MS`: the same requests
//!   and checks at a fixed offered load: each client sends one request
//!   every INTERVAL_MS (clients staggered), and a request's latency runs
//!   from when it was *meant* to be sent, so a slow answer that delays the
//!   client's next requests counts against them too (no coordinated
//!   omission).
//!
//! BASE must be an `http://127.0.0.1:…/api/v1` address: the bench never
//! talks to anything but this machine.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "night", "river", "stone", "garden", "winter", "letters", "silent", "house", "iron", "glass",
    "empire", "shadow", "summer", "journey", "ocean", "secret", "mountain", "crown", "forest",
    "mirror", "poèmes", "élan", "über", "zeit", "château", "north", "harbor", "lantern", "orchard",
    "thunder", "velvet", "willow", "amber", "bridge", "candle", "desert", "ember", "falcon",
];
const NAMES: &[&str] = &[
    "Ada", "Émile", "Jules", "Mary", "Leo", "Anna", "Ōe", "Zadie", "Chinua", "Jorge", "Italo",
    "Virginia", "Fyodor", "Selma", "Naguib", "Doris", "Halldór", "Wisława", "Kazuo", "Olga",
];
const SURNAMES: &[&str] = &[
    "Lovelace",
    "Zola",
    "Verne",
    "Shelley",
    "Tolstoy",
    "Seghers",
    "Kenzaburō",
    "Smith",
    "Achebe",
    "Borges",
    "Calvino",
    "Woolf",
    "Dostoevsky",
    "Lagerlöf",
    "Mahfouz",
    "Lessing",
    "Laxness",
    "Szymborska",
    "Ishiguro",
    "Tokarczuk",
];

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

fn capitalize(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn generate(dir: &Path, books: usize, folders: usize, sources: &[PathBuf]) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..books {
        let top = format!("Shelf {:05}", i % folders);
        let book = dir.join(&top).join(format!("Book {i:06}"));
        std::fs::create_dir_all(&book).unwrap();
        let source = &sources[i % sources.len()];
        let ext = source.extension().and_then(|e| e.to_str()).unwrap_or("mp3");
        std::fs::hard_link(source, book.join(format!("01.{ext}"))).unwrap();
        let words = 2 + rng.below(3);
        let title: Vec<String> = (0..words).map(|_| capitalize(rng.pick(WORDS))).collect();
        let author = format!("{} {}", rng.pick(NAMES), rng.pick(SURNAMES));
        std::fs::write(
            book.join("book.toml"),
            format!(
                "title = \"{} {}\"\nauthor = \"{author}\"\n",
                title.join(" "),
                i % 997
            ),
        )
        .unwrap();
    }
    println!(
        "generated {books} books in {folders} folders under {}",
        dir.display()
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<28} n={:<6} p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms",
        samples.len(),
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().unwrap_or(&Duration::ZERO)),
    );
}

#[derive(Clone)]
struct Session {
    http: reqwest::Client,
    base: String,
    token: String,
    server_id: String,
    user_id: u64,
}

impl Session {
    async fn login(base: &str, user: &str, password: &str) -> Session {
        assert!(
            base.starts_with("http://127.0.0.1:"),
            "the bench only talks to 127.0.0.1, not {base}"
        );
        let http = reqwest::Client::new();
        let v: Value = http
            .post(format!("{base}/auth/login"))
            .json(&json!({"username": user, "password": password}))
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .await
            .unwrap();
        Session {
            http,
            base: base.to_owned(),
            token: v["data"]["token"].as_str().unwrap().to_owned(),
            server_id: v["data"]["serverId"].as_str().unwrap().to_owned(),
            user_id: v["data"]["user"]["id"].as_u64().unwrap(),
        }
    }

    /// (status, body, time to the whole body)
    async fn get(&self, path: &str) -> (u16, Value, Duration) {
        let t = Instant::now();
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await;
        match res {
            Ok(res) => {
                let status = res.status().as_u16();
                let body = res.json().await.unwrap_or(Value::Null);
                (status, body, t.elapsed())
            }
            Err(_) => (0, Value::Null, t.elapsed()),
        }
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value, Duration) {
        let t = Instant::now();
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("X-Service-Expected-Server-Id", &self.server_id)
            .header("X-Service-Expected-User-Id", self.user_id.to_string())
            .json(&body)
            .send()
            .await;
        match res {
            Ok(res) => {
                let status = res.status().as_u16();
                let body = res.json().await.unwrap_or(Value::Null);
                (status, body, t.elapsed())
            }
            Err(_) => (0, Value::Null, t.elapsed()),
        }
    }
}

async fn latency(base: &str, user: &str, password: &str, n: usize) {
    let s = Session::login(base, user, password).await;
    let (_, first, _) = s.get("/books?pageSize=50").await;
    let total = first["data"]["total"].as_u64().unwrap() as usize;
    let last = total.div_ceil(50).max(1);
    println!("{total} books, {last} pages of 50");
    for (name, page) in [("first", 1), ("middle", last / 2), ("last", last)] {
        for sort in ["title", "author"] {
            let mut samples = Vec::with_capacity(n);
            for _ in 0..n {
                let (status, body, t) = s
                    .get(&format!("/books?page={page}&pageSize=50&sort={sort}"))
                    .await;
                assert_eq!(status, 200, "{body}");
                assert!(!body["data"]["items"].as_array().unwrap().is_empty());
                samples.push(t);
            }
            report(&format!("GET /books {name} page ({sort})"), samples);
        }
    }
    let mut rng = Rng(42);
    let mut samples = Vec::with_capacity(n);
    let mut hits = 0u64;
    for _ in 0..n {
        let word: Vec<char> = rng.pick(WORDS).chars().collect();
        let at = rng.below(word.len() - 2);
        let q: String = word[at..at + 3].iter().collect();
        let q: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
        let (status, body, t) = s.get(&format!("/books/search?q={q}&pageSize=50")).await;
        assert_eq!(status, 200, "{body}");
        hits += body["data"]["total"].as_u64().unwrap();
        samples.push(t);
    }
    report("search, 3 letters", samples);
    println!("  (mean matches per search: {})", hits / n as u64);
}

#[derive(Default)]
struct ClientResult {
    list: Vec<Duration>,
    read: Vec<Duration>,
    write: Vec<Duration>,
    errors: u64,
    /// book id → (positionSec, clientUpdatedAt) of the last accepted write
    last: std::collections::HashMap<String, (f64, i64)>,
}

/// `pace`: `None` = closed loop; `Some(interval)` = open loop, one request
/// per client per interval.
async fn load(
    base: &str,
    user: &str,
    password: &str,
    clients: usize,
    secs: u64,
    pace: Option<Duration>,
) {
    let first = Session::login(base, user, password).await;
    let (_, page, _) = first.get("/books?pageSize=500").await;
    let books: Vec<String> = page["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(books.len() >= clients, "need at least one book per client");
    let mut chapters = Vec::new();
    for b in &books {
        let (_, m, _) = first.get(&format!("/books/{b}/download-manifest")).await;
        chapters.push(
            m["data"]["items"][0]["chapterId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let pages = page["data"]["total"].as_u64().unwrap().div_ceil(50).max(1) as usize;
    let (books, chapters) = (Arc::new(books), Arc::new(chapters));
    // Every client logs in first (password hashing is not what is measured).
    let mut logged_in = Vec::with_capacity(clients);
    for _ in 0..clients {
        logged_in.push(Session::login(base, user, password).await);
    }
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, s) in logged_in.into_iter().enumerate() {
        let (books, chapters) = (books.clone(), chapters.clone());
        tasks.push(tokio::spawn(async move {
            let mut r = ClientResult::default();
            let mut rng = Rng(c as u64 + 1);
            // Each client owns the books at c, c + clients, …: its writes
            // are the only ones to those books, so it knows what must stay.
            let mine: Vec<usize> = (c..books.len()).step_by(clients).collect();
            // An hour ago, one ms per round: newer than any earlier run's
            // writes, never in the future (the server clamps those).
            let base_time = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64
                - 3_600_000;
            // Open loop: request k of this client is due at
            // `first + k × interval`, and is timed from then.
            let first = started + pace.unwrap_or_default().mul_f64(c as f64 / clients as f64);
            let mut k = 0u32;
            let mut due = || {
                let at = pace.map(|p| first + p * k);
                k += 1;
                async move {
                    match at {
                        Some(at) => {
                            tokio::time::sleep_until(at.into()).await;
                            at
                        }
                        None => Instant::now(),
                    }
                }
            };
            for round in 0..1_000_000i64 {
                if Instant::now() >= deadline {
                    break;
                }
                let page = 1 + rng.below(pages);
                let at = due().await;
                let (st, _, _) = s.get(&format!("/books?page={page}&pageSize=50")).await;
                r.list.push(at.elapsed());
                r.errors += u64::from(st != 200);
                let b = mine[rng.below(mine.len())];
                let at = due().await;
                let (st, _, _) = s.get(&format!("/auth/reading-progress/{}", books[b])).await;
                r.read.push(at.elapsed());
                r.errors += u64::from(st != 200);
                let at = base_time + round;
                // Past the first second (no zero guard), inside a 6 s chapter.
                let pos = 1.0 + (round % 5) as f64;
                let at_write = due().await;
                let (st, body, _) = s
                    .post(
                        &format!("/auth/reading-progress/{}", books[b]),
                        json!({"chapterId": chapters[b], "positionSec": pos, "clientUpdatedAt": at}),
                    )
                    .await;
                r.write.push(at_write.elapsed());
                if st == 200 && body["data"]["applied"] == true {
                    r.last.insert(books[b].clone(), (pos, at));
                } else {
                    r.errors += 1;
                }
            }
            (s, r)
        }));
    }
    let mut all = ClientResult::default();
    let mut lost = 0;
    let mut checked = 0;
    let mut sessions = Vec::new();
    for t in tasks {
        let (s, r) = t.await.unwrap();
        all.list.extend(r.list);
        all.read.extend(r.read);
        all.write.extend(r.write);
        all.errors += r.errors;
        sessions.push((s, r.last));
    }
    let elapsed = started.elapsed();
    for (s, last) in sessions {
        for (book, (pos, at)) in last {
            let (_, body, _) = s.get(&format!("/auth/reading-progress/{book}")).await;
            let p = &body["data"]["progress"];
            checked += 1;
            if p["positionSec"].as_f64() != Some(pos) || p["clientUpdatedAt"].as_i64() != Some(at) {
                lost += 1;
            }
        }
    }
    let requests = all.list.len() + all.read.len() + all.write.len();
    let mut every: Vec<Duration> = Vec::with_capacity(requests);
    every.extend(&all.list);
    every.extend(&all.read);
    every.extend(&all.write);
    report("list a page", all.list);
    report("read progress", all.read);
    report("write progress", all.write);
    report("all requests", every);
    let offered = pace.map_or_else(
        || "closed loop".to_owned(),
        |p| {
            format!(
                "open loop, offered {:.0} req/s",
                clients as f64 / p.as_secs_f64()
            )
        },
    );
    println!(
        "{clients} clients, {offered}, {:.1} s: {requests} requests, {:.0} req/s, {} errors, {lost} of {checked} last writes lost",
        elapsed.as_secs_f64(),
        requests as f64 / elapsed.as_secs_f64(),
        all.errors
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_else(|| usage());
    let rt = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    match args.first().map(String::as_str) {
        Some("gen") => {
            let sources: Vec<PathBuf> = args[4..].iter().map(PathBuf::from).collect();
            assert!(!sources.is_empty(), "give at least one SOURCE file");
            generate(
                Path::new(&arg(1)),
                arg(2).parse().unwrap(),
                arg(3).parse().unwrap(),
                &sources,
            );
        }
        Some("latency") => {
            rt().block_on(latency(&arg(1), &arg(2), &arg(3), arg(4).parse().unwrap()))
        }
        Some("load") => rt().block_on(load(
            &arg(1),
            &arg(2),
            &arg(3),
            arg(4).parse().unwrap(),
            arg(5).parse().unwrap(),
            None,
        )),
        Some("open") => rt().block_on(load(
            &arg(1),
            &arg(2),
            &arg(3),
            arg(4).parse().unwrap(),
            arg(5).parse().unwrap(),
            Some(Duration::from_millis(arg(6).parse().unwrap())),
        )),
        _ => {
            usage();
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: server_bench gen DIR BOOKS FOLDERS SOURCE... | latency BASE USER PASSWORD N | load BASE USER PASSWORD CLIENTS SECS | open BASE USER PASSWORD CLIENTS SECS INTERVAL_MS"
    );
    std::process::exit(2)
}
