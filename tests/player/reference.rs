//! End to end against the reference server (`earmark::server`): the real
//! client's stream requests, natural-sort server order, and the license gate.

use crate::harness::TestServer as RefServer;
use crate::harness::{direct, titled};
use crate::support::*;
use earmark::player::output::{Capture, Captured};
use earmark::player::{AudioMode, Command, Engine, EngineConfig, ErrorKind, Status, StreamRequest};
use earmark::server::LicenseSetting;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("Order");
    std::fs::create_dir_all(&b).unwrap();
    // Natural sort: 1, 2, 10 (string order would be 1, 10, 2).
    for (name, src) in [
        ("1.mp3", "part-330.mp3"),
        ("2.mp3", "part-440.mp3"),
        ("10.mp3", "part-550.mp3"),
    ] {
        std::fs::copy(fixtures().join(src), b.join(name)).unwrap();
    }
    std::fs::write(
        b.join("book.toml"),
        "title = \"Order\"\nauthor = \"Test\"\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_a_reference_server_book_in_server_order_and_stops_on_license() {
    let lib = library();
    let server = RefServer::start(lib.path()).await.unwrap();
    let client = direct(&server).await;
    let books = client.books(&Default::default()).await.unwrap();
    let book = titled(&books, "Order");
    let manifest = client.manifest(&book.id).await.unwrap();
    assert_eq!(manifest.items.len(), 3);
    let ids: Vec<_> = manifest
        .items
        .iter()
        .map(|i| i.chapter_id.clone())
        .collect();

    let c2 = client.clone();
    let resolve = Arc::new(move |item: &earmark::domain::ManifestItem| {
        let r = c2.stream_request(item);
        StreamRequest {
            url: r.url.to_string(),
            headers: r.headers,
        }
    });
    let capture: Capture = Arc::new(Mutex::new(Captured::default()));
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = 8.0;
    config.capture = Some(capture.clone());
    let engine = Engine::spawn(config).unwrap();
    engine.send(Command::Load {
        manifest: manifest.clone(),
        start: (ids[0].clone(), 0.0),
        autoplay: true,
    });
    let handle = engine.clone();
    let seen = tokio::task::spawn_blocking(move || {
        let mut seen: Vec<earmark::domain::ChapterId> = Vec::new();
        let end = handle.wait_for(Duration::from_secs(15), |s| {
            if let Some(c) = &s.chapter_id
                && s.landed
                && seen.last() != Some(c)
            {
                seen.push(c.clone());
            }
            matches!(s.status, Status::Ended | Status::Error(_))
        });
        (seen, end)
    })
    .await
    .unwrap();
    assert_eq!(seen.1.map(|s| s.status), Some(Status::Ended));
    assert_eq!(seen.0, ids, "chapters played out of manifest order");
    let (rate, ch, samples) = {
        let c = capture.lock().unwrap();
        (c.rate, c.channels, c.samples.clone())
    };
    let x = mono(&samples, ch);
    let r = rate as usize;
    let f: Vec<f64> = (0..3)
        .map(|k| frequency(&x[k * r + r / 4..k * r + 3 * r / 4], rate))
        .collect();
    for (got, want) in f.iter().zip([330.0, 440.0, 550.0]) {
        assert!((got - want).abs() < 8.0, "{f:?}");
    }

    // An expired license stops playback with that error.
    server.set_license(LicenseSetting::Expired).unwrap();
    engine.send(Command::Load {
        manifest,
        start: (ids[1].clone(), 0.2),
        autoplay: true,
    });
    let handle = engine.clone();
    let s = tokio::task::spawn_blocking(move || {
        handle.wait_for(Duration::from_secs(10), |s| {
            matches!(s.status, Status::Error(_))
        })
    })
    .await
    .unwrap()
    .expect("an error state");
    match s.status {
        Status::Error(e) => {
            assert_eq!(e.kind, ErrorKind::LicenseRequired, "{e}");
            assert_eq!(e.chapter.as_ref(), Some(&ids[1]));
        }
        other => panic!("{other:?}"),
    }
    engine.send(Command::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_server_stopped_mid_stream_stalls_then_resumes() {
    let lib = tempfile::tempdir().unwrap();
    let b = lib.path().join("Long");
    std::fs::create_dir_all(&b).unwrap();
    crate::positions::write_long_wav(&b.join("01.wav"), 1300);
    let mut server = RefServer::start(lib.path()).await.unwrap();
    let client = direct(&server).await;
    let books = client.books(&Default::default()).await.unwrap();
    let manifest = client.manifest(&books[0].id).await.unwrap();
    let chapter = manifest.items[0].chapter_id.clone();
    let c2 = client.clone();
    let resolve = Arc::new(move |item: &earmark::domain::ManifestItem| {
        let r = c2.stream_request(item);
        StreamRequest {
            url: r.url.to_string(),
            headers: r.headers,
        }
    });
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = 4.0;
    // A small read-ahead (8 kHz 8-bit: 8 KB/s) so the stall comes soon.
    config.read_ahead = 64 * 1024;
    config.stall_after = 0.3;
    let engine = Engine::spawn(config).unwrap();
    engine.send(Command::Load {
        manifest,
        start: (chapter, 10.0),
        autoplay: true,
    });
    let wait = |pred: fn(&earmark::player::PlayerState, f64) -> bool, arg: f64, secs: u64| {
        let h = engine.clone();
        tokio::task::spawn_blocking(move || h.wait_for(Duration::from_secs(secs), |s| pred(s, arg)))
    };
    wait(|s, _| s.status == Status::Playing && s.landed, 0.0, 10)
        .await
        .unwrap()
        .expect("playing");
    server.stop().await;
    let s = wait(|s, _| s.status == Status::Stalled, 0.0, 20)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("never stalled: {:?}", engine.state()));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let s2 = engine.state();
    assert_eq!(s2.status, Status::Stalled);
    assert!(
        (s2.position - s.position).abs() < 0.05,
        "moved while stalled"
    );
    server.restart().await.unwrap();
    let s3 = wait(
        |s, at| s.status == Status::Playing && s.position > at + 0.5,
        s.position,
        10,
    )
    .await
    .unwrap()
    .unwrap_or_else(|| panic!("did not resume: {:?}", engine.state()));
    assert_eq!(s3.playback_id, s.playback_id);
    engine.send(Command::Shutdown);
}
