//! Issue 4's "done when": every demo book (assets/demo, served by the
//! reference server) plays headlessly from start to end in server order.
//! Untimed null output, so the whole library takes seconds.

use crate::harness::TestServer as RefServer;
use crate::harness::direct;
use earmark::domain::ChapterId;
use earmark::player::output::{Capture, Captured};
use earmark::player::{AudioMode, Command, Engine, EngineConfig, Status, StreamRequest};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_demo_book_plays_to_the_end_in_server_order() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let server = RefServer::start(&demo).await.unwrap();
    let client = direct(&server).await;
    let books = client.books(&Default::default()).await.unwrap();
    assert_eq!(books.len(), 7, "the demo library has seven books");
    for book in &books {
        let manifest = client.manifest(&book.id).await.unwrap();
        let title = &book.title;
        assert!(!manifest.items.is_empty(), "{title}: empty manifest");
        let ids: Vec<ChapterId> = manifest
            .items
            .iter()
            .map(|i| i.chapter_id.clone())
            .collect();
        let total = manifest
            .total_duration()
            .unwrap_or_else(|| panic!("{title}: the manifest has no durations"));

        let c2 = client.clone();
        let resolve = Arc::new(move |item: &earmark::domain::ManifestItem| {
            let r = c2.stream_request(item);
            StreamRequest {
                url: r.url.to_string(),
                headers: r.headers,
            }
        });
        let capture: Capture = Arc::new(Mutex::new(Captured {
            count_only: true,
            ..Default::default()
        }));
        let mut config = EngineConfig::new(AudioMode::Null, resolve);
        config.null_clock_rate = 0.0;
        config.capture = Some(capture.clone());
        let engine = Engine::spawn(config).unwrap();
        engine.send(Command::Load {
            manifest: manifest.clone(),
            start: (ids[0].clone(), 0.0),
            autoplay: true,
        });
        let handle = engine.clone();
        let (end, errors) = tokio::task::spawn_blocking(move || {
            let mut errors = Vec::new();
            let end = handle.wait_for(Duration::from_secs(60), |s| {
                if let Status::Error(e) = &s.status {
                    errors.push(e.to_string());
                }
                matches!(s.status, Status::Ended | Status::Error(_))
            });
            (end, errors)
        })
        .await
        .unwrap();
        engine.send(Command::Shutdown);
        assert!(errors.is_empty(), "{title}: {errors:?}");
        let end = end.unwrap_or_else(|| panic!("{title}: did not end within 60 s"));
        assert_eq!(end.status, Status::Ended, "{title}");
        let c = capture.lock().unwrap();
        let played: Vec<ChapterId> = c.chapters.iter().map(|(id, _)| id.clone()).collect();
        assert_eq!(played, ids, "{title}: chapters out of manifest order");
        assert!(
            (c.seconds - total).abs() <= 0.01 * total,
            "{title}: rendered {:.2} s, manifest says {total:.2} s",
            c.seconds
        );
        eprintln!(
            "{title}: {} chapters, {:.2} s rendered of {total:.2} s",
            ids.len(),
            c.seconds
        );
    }
}
