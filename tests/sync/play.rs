//! `earmark play` syncs through the worker: the real binary, the real
//! engine (null output, paced in real time) and the reference server.

use crate::support::{Home, library, text};
use earmark::api::{BaseUrl, Client, ProgressWrite};
use earmark::domain::now_millis;
use earmark::server::LicenseSetting;
use earmark::server::testing::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_restores_the_server_place_and_reports_it_on_quit() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let url = server.base_url().to_owned();
    let home = Home::new(&url);
    let o = home.run(&["login", "--password-stdin"], Some(&server.password));
    assert!(o.status.success(), "{}", text(&o));
    let direct = Client::new(BaseUrl::parse(&url).unwrap(), Default::default()).unwrap();
    direct
        .login(&server.username, &server.password)
        .await
        .unwrap();
    let books = direct.books(&Default::default()).await.unwrap();
    let alpha = books
        .iter()
        .find(|b| b.title == "Alpha")
        .unwrap()
        .id
        .clone();
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
