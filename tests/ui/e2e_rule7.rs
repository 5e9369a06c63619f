//! Contract rule 7 end to end (issue 25, scenarios 1–3): the player in a
//! real pty as device A, `earmark play` as device B (same user), the
//! reference server stopped and restarted on the same port and data. The
//! screen shows the server's place, and the server still holds B's place
//! after A's Space unless the listener chose A's.

use crate::e2e::{Tui, demo_library};
use crate::harness::TestServer;
use crate::harness::proxy::{Mode, Proxy};
use earmark::api::Client;
use earmark::domain::{BookId, Manifest, Progress};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `earmark ARGS` in `home` against `server` as alice, to the end.
pub(crate) fn earmark(home: &Path, server: &str, args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_earmark"))
        .args(["--server", server, "--user", "alice"])
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("EARMARK_TOKEN_STORE", "file")
        .env_remove("EARMARK_PROFILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).unwrap();
    }
    drop(input);
    let o = c.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "earmark {args:?}: {text}");
    text
}

/// Two devices of alice: A (the player, at `a_base`) and B.
struct Devices {
    server: TestServer,
    a: tempfile::TempDir,
    b: tempfile::TempDir,
    direct: Client,
    book: BookId,
    manifest: Manifest,
}

impl Devices {
    /// With `via_proxy`, A reaches the server through a proxy the test
    /// controls (its network comes back when the test says).
    async fn start(via_proxy: bool) -> (Devices, String, Option<Proxy>) {
        let server = TestServer::start(demo_library()).await.unwrap();
        let direct = crate::harness::direct(&server).await;
        let books = direct.books(&Default::default()).await.unwrap();
        let book = books
            .iter()
            .find(|b| b.title.contains("Aesop"))
            .unwrap()
            .id
            .clone();
        let manifest = direct.manifest(&book).await.unwrap();
        let proxy = match via_proxy {
            true => Some(Proxy::start(server.addr()).await),
            false => None,
        };
        let a_base = proxy
            .as_ref()
            .map_or_else(|| server.base_url().to_owned(), Proxy::base_url);
        let d = Devices {
            a: tempfile::tempdir().unwrap(),
            b: tempfile::tempdir().unwrap(),
            direct,
            book,
            manifest,
            server,
        };
        let password = d.server.password.clone();
        let login = ["login", "--password-stdin"];
        earmark(d.a.path(), &a_base, &login, Some(&password));
        earmark(d.b.path(), d.server.base_url(), &login, Some(&password));
        (d, a_base, proxy)
    }

    /// Device B plays chapter `n` (1-based) from `at` for a second, and
    /// quits (its place is written).
    fn b_plays(&self, n: usize, at: f64) {
        let chapter = self.manifest.items[n - 1].chapter_id.to_string();
        let book = self.book.to_string();
        let at = at.to_string();
        let args = [
            "play",
            &book,
            "--chapter",
            &chapter,
            "--at",
            &at,
            "--for",
            "1",
            "--audio",
            "null",
        ];
        earmark(self.b.path(), self.server.base_url(), &args, None);
    }

    async fn held(&self) -> Progress {
        self.direct
            .progress(&self.book)
            .await
            .unwrap()
            .progress
            .expect("a place on the server")
    }

    fn chapter_of(&self, p: &Progress) -> usize {
        self.manifest.position_of(&p.chapter_id).unwrap() + 1
    }
}

/// A, the player: Aesop's Fables from its start, playing, then paused a
/// few seconds in.
fn a_plays_and_pauses(home: PathBuf, base: String) -> Tui {
    let mut tui = Tui::start(&home, &base, "alice", &["--audio", "null"]);
    tui.wait_for("filter: all");
    tui.wait_for("Aesop");
    tui.keys("/aesop");
    tui.wait_for("found");
    tui.keys("\r");
    tui.keys("\r");
    tui.wait_for("The Fox and the Grapes");
    tui.keys(" ");
    tui.wait_for("▶ Playing");
    tui.wait_for("0:04 /");
    tui
}

/// Runs `f` on the pty's side, off the test's runtime.
async fn on_a(tui: Tui, f: impl FnOnce(&mut Tui) + Send + 'static) -> Tui {
    tokio::task::spawn_blocking(move || {
        let mut tui = tui;
        f(&mut tui);
        tui
    })
    .await
    .unwrap()
}

fn quit(mut tui: Tui) {
    tui.keys("Q");
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
}

/// 1. A's pause is queued while the server is away; the server comes
/// back, B writes chapter 6, then A's queued write arrives: the server
/// keeps B's newer place, and A moves there and says so. Space resumes
/// B's place, which the server still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_a_queued_write_older_than_bs_moves_a_to_bs_place() {
    // A reaches the server through a proxy: its network comes back last.
    let (mut d, a_base, proxy) = Devices::start(true).await;
    let proxy = proxy.unwrap();
    let home = d.a.path().to_owned();
    let tui = tokio::task::spawn_blocking(move || a_plays_and_pauses(home, a_base))
        .await
        .unwrap();
    proxy.set_mode(Mode::Refuse);
    d.server.stop().await;
    let tui = on_a(tui, |t| {
        t.keys(" ");
        t.wait_for("Paused");
        t.wait_for("1 queued");
        t.wait_for("· offline");
    })
    .await;
    d.server.restart().await.unwrap();
    d.b_plays(6, 30.0);
    let b = d.held().await;
    assert_eq!(d.chapter_of(&b), 6, "{b:?}");
    proxy.set_mode(Mode::Forward);
    let tui = on_a(tui, |t| {
        // The queued write is sent after a back-off, and kept out.
        t.wait_for_within("newer place", Duration::from_secs(60));
        t.wait_for("Aesop's Fables · The Lion and the Mouse");
        t.wait_gone("1 queued");
    })
    .await;
    let held = d.held().await;
    assert_eq!(d.chapter_of(&held), 6, "B's place stays: {held:?}");
    let tui = on_a(tui, |t| {
        t.keys(" ");
        t.wait_for("▶ Playing");
        t.wait_for("Aesop's Fables · The Lion and the Mouse");
        t.keys(" ");
        t.wait_for("Paused");
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = d.held().await;
    assert_eq!(d.chapter_of(&after), 6, "A resumed B's place: {after:?}");
    assert!(after.position >= 25.0, "{after:?}");
    tokio::task::spawn_blocking(move || quit(tui))
        .await
        .unwrap();
}

/// 2 (and 4). Nothing queued: A paused in chapter 1, the server went away
/// and came back, B wrote chapter 5. A's `r` reads the server's place and
/// asks; A keeps its own place, which the library row, the book screen
/// and the bar all show, and which the server then holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s2_after_a_restart_a_refresh_asks_and_a_keeps_its_own_place() {
    let (mut d, a_base, _) = Devices::start(false).await;
    let home = d.a.path().to_owned();
    let tui = tokio::task::spawn_blocking(move || {
        let mut t = a_plays_and_pauses(home, a_base);
        t.keys(" ");
        t.wait_for("Paused");
        t
    })
    .await
    .unwrap();
    wait_until(&d, |p| d.chapter_of(p) == 1 && p.position >= 4.0).await;
    d.server.stop().await;
    d.server.restart().await.unwrap();
    d.b_plays(5, 20.0);
    let tui = on_a(tui, |t| {
        t.keys("r");
        t.wait_for("Where do you want to continue?");
        t.wait_for("server: ch 5 0:2");
        t.wait_for("this device: ch 1 0:0");
    })
    .await;
    let held = d.held().await;
    assert_eq!(
        d.chapter_of(&held),
        5,
        "nothing written meanwhile: {held:?}"
    );
    let tui = on_a(tui, |t| {
        t.keys("j"); // this device
        t.keys("\r");
        t.wait_gone("Where do you want to continue?");
        t.keys(" ");
        t.wait_for("▶ Playing");
        t.wait_for("The Fox and the Grapes");
        t.keys(" ");
        t.wait_for("Paused");
        // One place: the book screen's share is the library row's.
        let screen = t.text();
        let share = percent_in(
            screen
                .lines()
                .find(|l| l.contains(" of 6:06 ("))
                .unwrap_or_else(|| panic!("{screen}")),
        );
        t.keys("q");
        t.wait_for("earmark · library");
        let lib = t.text();
        let row = lib.lines().find(|l| l.contains("Aesop's Fables")).unwrap();
        assert_eq!(
            percent_in(row),
            share,
            "row {row:?} vs book screen\n{screen}"
        );
    })
    .await;
    wait_until(&d, |p| d.chapter_of(p) == 1).await;
    tokio::task::spawn_blocking(move || quit(tui))
        .await
        .unwrap();
}

/// 3. A sits paused online; B writes chapter 10. A's Space reads the
/// server's place first and asks; the server keeps B's place while it
/// waits, and after "server" A plays chapter 10.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_space_after_another_device_moved_on_asks_first() {
    let (d, a_base, _) = Devices::start(false).await;
    let home = d.a.path().to_owned();
    let tui = tokio::task::spawn_blocking(move || {
        let mut t = a_plays_and_pauses(home, a_base);
        t.keys(" ");
        t.wait_for("Paused");
        t
    })
    .await
    .unwrap();
    wait_until(&d, |p| d.chapter_of(p) == 1 && p.position >= 4.0).await;
    d.b_plays(10, 15.0);
    let tui = on_a(tui, |t| {
        t.keys(" ");
        t.wait_for("Where do you want to continue?");
        t.wait_for("server: ch 10 0:1");
    })
    .await;
    let held = d.held().await;
    assert_eq!(d.chapter_of(&held), 10, "B's place stays: {held:?}");
    let tui = on_a(tui, |t| {
        t.keys("\r"); // the server's place
        t.wait_for("▶ Playing");
        t.wait_for("The Wolf in Sheep's Clothing");
        t.keys(" ");
        t.wait_for("Paused");
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = d.held().await;
    assert_eq!(d.chapter_of(&after), 10, "{after:?}");
    assert!(after.position >= 14.0, "{after:?}");
    tokio::task::spawn_blocking(move || quit(tui))
        .await
        .unwrap();
}

/// The number before the first `%` of a line.
fn percent_in(line: &str) -> u32 {
    let end = line.find('%').unwrap_or_else(|| panic!("no % in {line:?}"));
    let digits: String = line[..end]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap_or_else(|_| panic!("{line:?}"))
}

/// Waits until the server holds a place satisfying `f`.
async fn wait_until(d: &Devices, f: impl Fn(&Progress) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(s) = d.direct.progress(&d.book).await
            && let Some(p) = s.progress
            && f(&p)
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server does not hold the place expected"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
