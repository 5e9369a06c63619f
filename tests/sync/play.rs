//! `earmark play` syncs through the worker: the real binary, the real
//! engine (null output, paced in real time) and the reference server.

use crate::harness::TestServer;
use crate::harness::{logged_in, text, titled};
use crate::support::library;
use earmark::api::{BaseUrl, ProgressWrite};
use earmark::domain::now_millis;
use earmark::server::LicenseSetting;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_restores_the_server_place_and_reports_it_on_quit() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let alpha = titled(&books, "Alpha").id.clone();
    let m = direct.manifest(&alpha).await.unwrap();
    let ch2 = m.items[1].chapter_id.clone();
    direct
        .post_progress(
            &alpha,
            &ProgressWrite {
                chapter_id: ch2.clone(),
                position: 30.0,
                client_updated_at: now_millis() - 60_000,
                finished: false,
                device_id: None,
                reset: false,
            },
        )
        .await
        .unwrap();

    let o = home.run(
        &[
            "--json",
            "play",
            alpha.as_str(),
            "--audio",
            "null",
            "--for",
            "2",
        ],
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // It played from where the server said, never from 0.
    let lines: Vec<serde_json::Value> = t
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| !v["chapter_id"].is_null())
        .collect();
    assert!(!lines.is_empty(), "{t}");
    for v in &lines {
        assert_eq!(v["chapter_id"].as_str(), Some(ch2.as_str()), "{t}");
        assert!(v["position"].as_f64().unwrap() >= 30.0, "{t}");
    }
    let p = direct.progress(&alpha).await.unwrap().progress.unwrap();
    assert_eq!(p.chapter_id, ch2);
    assert!(
        (30.5..=32.5).contains(&p.position),
        "the quit report: {} ({t})",
        p.position
    );

    // The license is revoked: play refuses with the server's message and
    // queues nothing wrong.
    server.set_license(LicenseSetting::Expired).unwrap();
    let o = home.run(
        &["play", alpha.as_str(), "--audio", "null", "--for", "2"],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(4),
        "exit code 4 is the license's: {}",
        text(&o)
    );
    assert!(text(&o).to_lowercase().contains("license"), "{}", text(&o));
    server.set_license(LicenseSetting::Valid).unwrap();
    let after = direct.progress(&alpha).await.unwrap().progress.unwrap();
    assert_eq!(after.position, p.position);

    // Ctrl-C ends playback gracefully: the last place reaches the server.
    let mut child = home
        .command(&["--json", "play", alpha.as_str(), "--audio", "null"])
        .spawn()
        .unwrap();
    // Wait until it has played a second past the restored place.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<f64>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                && let Some(p) = v["position"].as_f64()
            {
                let _ = tx.send(p);
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let p = rx.recv_timeout(left).expect("play prints its position");
        if p >= after.position + 1.0 {
            break;
        }
    }
    // SAFETY: signalling our own child process by its id.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let last = direct.progress(&alpha).await.unwrap().progress.unwrap();
    assert!(
        last.position > after.position + 0.5,
        "{} then {}",
        after.position,
        last.position
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_applies_the_sound_the_player_saved_for_the_book() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let url = server.base_url().to_owned();
    let (home, _, books) = logged_in(&server).await;
    let id = |title: &str| titled(&books, title).id.to_string();
    let (alpha, other) = (
        id("Alpha"),
        books
            .iter()
            .find(|b| b.title != "Alpha")
            .unwrap()
            .id
            .to_string(),
    );
    // What the player wrote (before addresses: the server's address and
    // the user name) when the listener set Alpha's sound.
    let key = |book: &str| format!("{}|alice|{book}", BaseUrl::parse(&url).unwrap());
    // Where it is kept now: the server instance and the account.
    let s = server.login().await.unwrap();
    let kept = |book: &str| format!("{}|{}|{book}", s.server_id, s.user_id);
    let data = home.dir.path().join("data/earmark");
    std::fs::create_dir_all(&data).unwrap();
    let saved = serde_json::json!({
        key(&alpha): {"boostDb": 6.0, "normalize": true, "skipSilence": true, "silenceSavedSec": 4.0},
    });
    std::fs::write(data.join("sound.json"), saved.to_string()).unwrap();

    // Status lines: (sound, silence skipped) of each with a chapter.
    let play = |book: &str| {
        let o = home.run(
            &["--json", "play", book, "--audio", "null", "--for", "1.5"],
            None,
        );
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        let lines: Vec<(serde_json::Value, f64)> = t
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| !v["chapter_id"].is_null())
            .map(|v| (v["sound"].clone(), v["silence_skipped"].as_f64().unwrap()))
            .collect();
        assert!(!lines.is_empty(), "no status line: {t}");
        (lines, t)
    };
    let (lines, t) = play(&alpha);
    let want = serde_json::json!({"boostDb": 6.0, "normalize": true, "skipSilence": true});
    assert!(lines.iter().all(|(s, _)| *s == want), "{t}");
    assert!(
        t.contains("this book's sound: boost +6 dB, normalised, skip silence."),
        "{t}"
    );
    // The test library's chapters are silent: skip silence shortens them.
    let skipped = lines.iter().map(|(_, k)| *k).fold(0.0, f64::max);
    assert!(skipped > 1.0, "{t}");
    // Another book keeps the defaults.
    let (lines, t) = play(&other);
    let neutral = serde_json::json!({"boostDb": 0.0, "normalize": false, "skipSilence": false});
    assert!(lines.iter().all(|(s, k)| *s == neutral && *k == 0.0), "{t}");
    assert!(!t.contains("this book's sound"), "{t}");
    // The file keeps the settings and adds the silence skipped.
    let after: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("sound.json")).unwrap()).unwrap();
    assert_eq!(after[kept(&alpha)]["boostDb"], 6.0, "{after}");
    assert!(
        after.get(key(&alpha)).is_none(),
        "moved, not copied: {after}"
    );
    let total = after[kept(&alpha)]["silenceSavedSec"].as_f64().unwrap();
    assert!(
        (total - (4.0 + skipped)).abs() < 0.01,
        "{after} (skipped {skipped})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sound_shows_and_sets_a_books_sound_and_refuses_bad_values() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, _, books) = logged_in(&server).await;
    let alpha = titled(&books, "Alpha").id.to_string();
    let json = |args: &[&str]| {
        let o = home.run(&[&["--json", "sound", alpha.as_str()], args].concat(), None);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let v = json(&[]);
    assert_eq!(
        (
            v["boostDb"].as_f64(),
            v["normalize"].as_bool(),
            v["changed"].as_bool()
        ),
        (Some(0.0), Some(false), Some(false)),
        "{v}"
    );
    let v = json(&["--boost", "7.5", "--skip-silence", "on"]);
    assert_eq!(v["boostDb"], 7.5, "{v}");
    assert_eq!(v["skipSilence"], true, "{v}");
    assert_eq!(v["changed"], true, "{v}");
    // Kept under the key the player uses (server instance, account, book).
    let file = home.dir.path().join("data/earmark/sound.json");
    let stored: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let s = server.login().await.unwrap();
    let key = format!("{}|{}|{alpha}", s.server_id, s.user_id);
    assert_eq!(stored[&key]["boostDb"], 7.5, "{stored}");
    // Shown again as set; one flag changes only itself.
    let v = json(&["--normalize", "on"]);
    assert_eq!(
        (v["boostDb"].as_f64(), v["normalize"].as_bool()),
        (Some(7.5), Some(true))
    );
    let o = home.run(&["sound", alpha.as_str()], None);
    assert!(
        text(&o).contains("boost +7.5 dB, normalised, skip silence."),
        "{}",
        text(&o)
    );

    // Bad values: exit 2, the value named, the file untouched.
    let before = std::fs::read(&file).unwrap();
    for (args, named) in [
        (&["--boost", "13"][..], "13"),
        (&["--boost", "loud"][..], "loud"),
        (&["--normalize", "maybe"][..], "maybe"),
    ] {
        let o = home.run(&[&["sound", alpha.as_str()], args].concat(), None);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(named), "{}", text(&o));
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A damaged file is moved aside, said, and not lost.
    std::fs::write(&file, b"{\"half\": ").unwrap();
    let o = home.run(&["sound", alpha.as_str()], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("moved to"), "{}", text(&o));
    let aside = home.dir.path().join("data/earmark/sound.json.damaged");
    assert_eq!(std::fs::read(aside).unwrap(), b"{\"half\": ");
}

/// Issue 29, item 7: `--audio` is one global flag: before the subcommand it
/// is not shadowed by the subcommand's own (the device was tried, and on a
/// machine without one the notice said so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_audio_flag_reaches_play() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, _direct, books) = logged_in(&server).await;
    let alpha = titled(&books, "Alpha").id.clone();
    let mut c = home.command(&["--audio", "null", "play", alpha.as_str(), "--for", "1"]);
    c.env_remove("EARMARK_AUDIO");
    let o = c.output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // The null output, as asked: no device is tried.
    assert!(!t.contains("no audio device"), "{t}");
    assert!(!t.contains("playing silently"), "{t}");
}
