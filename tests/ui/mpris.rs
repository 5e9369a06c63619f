//! MPRIS end to end: the `earmark` binary in a real pseudo-terminal on a
//! private D-Bus session bus (`dbus-run-session`), driven with `dbus-send`
//! like media keys and `playerctl` would: play, pause, next chapter and
//! seek, asserting on the properties read back and on the player's screen.

use crate::e2e::{Tui, demo_library};
use crate::harness::TestServer;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEST: &str = "org.mpris.MediaPlayer2.earmark";

/// A private session bus; it ends when dropped.
struct Bus {
    child: Child,
    address: String,
}

impl Bus {
    fn start() -> Bus {
        let mut child = Command::new("dbus-run-session")
            .args([
                "--",
                "sh",
                "-c",
                "echo \"$DBUS_SESSION_BUS_ADDRESS\"; exec cat",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-run-session (Debian package dbus; ./run installs it)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line.trim().to_owned();
        assert!(address.contains('='), "no bus address: {line:?}");
        Bus { child, address }
    }

    fn send(&self, args: &[&str]) -> String {
        let out = Command::new("dbus-send")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .args(["--session", "--print-reply", &format!("--dest={DEST}")])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "dbus-send {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn call(&self, method: &str, args: &[&str]) {
        let member = format!("org.mpris.MediaPlayer2.Player.{method}");
        let mut all = vec!["/org/mpris/MediaPlayer2", member.as_str()];
        all.extend_from_slice(args);
        self.send(&all);
    }

    fn prop(&self, name: &str) -> String {
        self.send(&[
            "/org/mpris/MediaPlayer2",
            "org.freedesktop.DBus.Properties.Get",
            "string:org.mpris.MediaPlayer2.Player",
            &format!("string:{name}"),
        ])
    }

    fn position_secs(&self) -> f64 {
        let reply = self.prop("Position");
        let n = reply
            .split("int64 ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse::<i64>().ok())
            .unwrap_or_else(|| panic!("no position in {reply}"));
        n as f64 / 1e6
    }

    fn name_owned(&self) -> bool {
        let out = Command::new("dbus-send")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.ListNames",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains(&format!("\"{DEST}\""))
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // `cat` ends, and the bus with it
        let _ = self.child.wait();
    }
}

/// The `mpris:trackid` in a `Metadata` reply.
fn track_id(meta: &str) -> String {
    let at = meta.find("mpris:trackid").expect("a track id");
    let rest = &meta[at..];
    let path = rest.split("object path \"").nth(1).expect("its path");
    path.split('"').next().unwrap().to_owned()
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool, tui: &Tui) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}; screen:\n{}", tui.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_keys_play_pause_next_and_seek_through_mpris() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let client = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    client
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let books = client.books(&Default::default()).await.unwrap();
    let aesop = books.iter().find(|b| b.title.contains("Aesop")).unwrap();
    let manifest = client.manifest(&aesop.id).await.unwrap();
    let titles: Vec<String> = manifest.items.iter().map(|i| i.title.clone()).collect();
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let (user, password) = (server.username.clone(), server.password.clone());
    tokio::task::spawn_blocking(move || {
        let bus = Bus::start();
        let mut tui = Tui::start_on_bus(
            home.path(),
            &base,
            &user,
            &["--audio", "null"],
            Some(&bus.address),
        );
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("Aesop");
        tui.keys("/aesop");
        tui.wait_for("found");
        tui.keys("\r");
        tui.keys("\r"); // opens the book
        tui.wait_for(&titles[1]);
        wait_until("the MPRIS name on the bus", || bus.name_owned(), &tui);
        assert!(bus.prop("PlaybackStatus").contains("\"Stopped\""));

        // Nothing in the session yet (a fresh device): the session says so.
        bus.call("PlayPause", &[]);
        tui.wait_for("Nothing is playing");
        // Space plays the book on screen (chapter 1); MPRIS sees it.
        tui.keys(" ");
        tui.wait_for("▶ Playing");
        wait_until(
            "PlaybackStatus Playing",
            || bus.prop("PlaybackStatus").contains("\"Playing\""),
            &tui,
        );
        let meta = bus.prop("Metadata");
        assert!(meta.contains(&format!("\"{}\"", titles[0])), "{meta}");
        assert!(meta.contains("Aesop's Fables"), "album: {meta}");
        assert!(meta.contains("mpris:artUrl"), "cover: {meta}");
        // The book screen cached the cover: its file, not the server's
        // address (which needs the token).
        wait_until(
            "mpris:artUrl of the cached cover",
            || bus.prop("Metadata").contains("file://"),
            &tui,
        );
        let meta = bus.prop("Metadata");
        let covers = home.path().join("cache/earmark/covers");
        let cached = std::fs::read_dir(&covers).unwrap().next().unwrap().unwrap();
        let path = cached.path().to_string_lossy().into_owned();
        assert!(meta.contains(&format!("file://{path}")), "{path}: {meta}");

        // Pause, then play again.
        bus.call("Pause", &[]);
        tui.wait_for("Paused");
        wait_until(
            "PlaybackStatus Paused",
            || bus.prop("PlaybackStatus").contains("\"Paused\""),
            &tui,
        );
        bus.call("Play", &[]);
        tui.wait_for("▶ Playing");

        let first_track = track_id(&bus.prop("Metadata"));
        // Next is the next chapter.
        bus.call("Next", &[]);
        tui.wait_for(&format!("· {}", titles[1]));
        wait_until(
            "Metadata of chapter 2",
            || bus.prop("Metadata").contains(&format!("\"{}\"", titles[1])),
            &tui,
        );

        // Seek +15 s (microseconds), within chapter 2.
        let before = bus.position_secs();
        bus.call("Seek", &["int64:15000000"]);
        wait_until(
            "the position past the seek",
            || bus.position_secs() >= before + 14.0,
            &tui,
        );
        assert!(bus.prop("Metadata").contains(&format!("\"{}\"", titles[1])));
        // A stale track id (chapter 1's) or a place before 0 moves nothing.
        let here = bus.position_secs();
        bus.call(
            "SetPosition",
            &[&format!("objpath:{first_track}"), "int64:1000000"],
        );
        let track = track_id(&bus.prop("Metadata"));
        bus.call(
            "SetPosition",
            &[&format!("objpath:{track}"), "int64:-5000000"],
        );
        // A good seek after them: once it shows, they were taken (in order).
        bus.call("Seek", &["int64:5000000"]);
        wait_until(
            "the seek after them, from where it was",
            || bus.position_secs() >= here + 4.0,
            &tui,
        );
        assert!(bus.prop("Metadata").contains(&format!("\"{}\"", titles[1])));
        // The chapter and the skip went to the place history, as keys' do.
        tui.keys("U");
        tui.wait_for("History (2)");

        tui.keys(" "); // pause, then quit
        tui.keys("\x1b");
        tui.keys("q");
        tui.keys("q");
        tui.keys("q");
        let status = tui.wait_exit();
        assert!(status.success(), "{status:?}");
    })
    .await
    .unwrap();
}

/// MPRIS's Next in the last chapter of a book: the book ends (finished on
/// the server, as listening to its end does) and the next book of its
/// series starts at once, from the place the server holds for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_in_the_last_chapter_goes_on_to_the_next_book_of_the_series() {
    use crate::up_next_live::{place, saga_library};
    let lib = saga_library(40);
    let server = TestServer::start(lib.path()).await.unwrap();
    let client = earmark::api::Client::new(
        earmark::api::BaseUrl::parse(server.base_url()).unwrap(),
        Default::default(),
    )
    .unwrap();
    client
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let books = client.books(&Default::default()).await.unwrap();
    let one = crate::harness::titled(&books, "Saga One").id.clone();
    let two = crate::harness::titled(&books, "Saga Two").id.clone();
    place(&client, &two, 12.0).await;
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url().to_owned();
    let (user, password) = (server.username.clone(), server.password.clone());
    tokio::task::spawn_blocking(move || {
        let bus = Bus::start();
        let mut tui = Tui::start_on_bus(
            home.path(),
            &base,
            &user,
            &["--audio", "null"],
            Some(&bus.address),
        );
        tui.wait_for("Log in to your audiobook server");
        tui.keys(&password);
        tui.keys("\r");
        tui.wait_for("Saga Two");
        tui.keys("j"); // Beta, Saga One, Saga Two
        tui.keys("\r");
        tui.wait_for("01 - Saga One 1");
        tui.keys("\r"); // chapter 1
        tui.wait_for("▶ Playing");
        wait_until("the MPRIS name on the bus", || bus.name_owned(), &tui);
        bus.call("Next", &[]);
        tui.wait_for("Saga One · 02 - Saga One 2");
        bus.call("Next", &[]);
        tui.wait_for("Saga Two · 02 - Saga Two 2");
        wait_until(
            "the album of the next book",
            || bus.prop("Metadata").contains("\"Saga Two\""),
            &tui,
        );
        wait_until(
            "its place (chapter 2 past 0:12)",
            || bus.position_secs() >= 12.0,
            &tui,
        );
        tui.keys(" ");
        tui.keys("Q");
        assert!(tui.wait_exit().success());
    })
    .await
    .unwrap();
    let p = client.progress(&one).await.unwrap().progress.unwrap();
    assert!(p.finished, "Saga One is finished: {p:?}");
}
