use super::*;
use crate::domain::session::{Landing, LengthFrom, PlayState};
use crate::domain::{Book, BookId, ChapterId, Manifest, ManifestItem, StopReason};
use std::sync::Arc;

fn playing(chapter: &str, position: f64) -> Snapshot {
    let book = Book {
        id: BookId::new("b1"),
        title: "Long".into(),
        authors: vec!["Test".into()],
        ..Book::default()
    };
    let manifest = Manifest {
        book_id: BookId::new("b1"),
        items: vec![
            ManifestItem::whole("c1", "Part c1", Some(1300.0)),
            ManifestItem::whole("c2", "Part c2", Some(200.0)),
        ],
    };
    Snapshot {
        listening: Some(Listening {
            book: Arc::new(book),
            manifest: Arc::new(manifest),
            chapter: ChapterId::new(chapter),
            position,
            duration: Some(if chapter == "c1" { 1300.0 } else { 200.0 }),
            duration_from: LengthFrom::Server,
            book_position: None,
            state: PlayState::Playing,
            landed: Landing::Exact,
            confirmed: true,
            speed: 1.25,
            volume: 1.0,
            sound: Default::default(),
            load: 1,
            from_download: false,
        }),
        ..Snapshot::default()
    }
}

#[test]
fn the_status_names_the_book_chapter_places_state_speed_and_sleep() {
    let mut snap = playing("c2", 12.5);
    snap.sleep = Some(SleepTimer::Timed {
        left_ms: 60_000,
        since: Some(1_000),
    });
    let s = status(&snap, "default", 11_000);
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["book"]["id"], "b1");
    assert_eq!(v["book"]["position"], 1312.5);
    assert_eq!(v["book"]["duration"], 1500.0);
    assert_eq!(v["chapter"]["id"], "c2");
    assert_eq!(v["chapter"]["number"], 2);
    assert_eq!(v["chapter"]["count"], 2);
    assert_eq!(v["chapter"]["title"], "Part c2");
    assert_eq!(v["chapter"]["position"], 12.5);
    assert_eq!(v["state"], "playing");
    assert_eq!(v["speed"], 1.25);
    assert_eq!(v["sleep"]["kind"], "timed");
    assert_eq!(v["sleep"]["leftSec"], 50.0);
    assert_eq!(v["link"], "online");
    let text = text(&s).join("\n");
    assert!(
        text.contains("2/2 Part c2 (c2)  0:00:12 / 0:03:20"),
        "{text}"
    );
    assert!(text.contains("0:21:52 / 0:25:00"), "{text}");
    assert!(text.contains("0:00:50 left"), "{text}");
    // It reads back as what was sent.
    assert_eq!(serde_json::from_value::<Status>(v).unwrap(), s);
}

#[test]
fn nothing_playing_is_state_none_with_no_book() {
    let snap = Snapshot {
        stop: Some(Stop::new(StopReason::License, "The license expired.")),
        ..Snapshot::default()
    };
    let v = serde_json::to_value(status(&snap, "p", 0)).unwrap();
    assert_eq!(v["state"], "none");
    assert!(v["book"].is_null() && v["chapter"].is_null());
    assert_eq!(v["stop"]["reason"], "license");
    assert_eq!(v["stop"]["exitCode"], 4);
}

#[test]
fn a_watcher_hears_each_change_once_and_the_place_by_the_second() {
    let mut w = Watched::default();
    // The kinds of event a watcher hears of `snap` at `now`.
    let mut hear = |snap: &Snapshot, now: i64| -> Vec<String> {
        let v = w.changes(&status(snap, "p", now));
        v.iter()
            .map(|e| e["event"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = hear(&playing("c1", 10.0), 0);
    assert_eq!(first, ["chapter", "state", "place", "sleep", "link"]);
    assert!(hear(&playing("c1", 10.4), 0).is_empty());
    assert_eq!(hear(&playing("c1", 11.0), 0), ["place"]);
    let mut paused = playing("c1", 11.2);
    paused.listening.as_mut().unwrap().state = PlayState::Paused;
    assert_eq!(hear(&paused, 0), ["state", "place"]);
    assert_eq!(hear(&playing("c2", 0.0), 0), ["chapter", "state", "place"]);
    // A timed timer running down is no news; set, or held, it is.
    let mut timed = playing("c2", 0.2);
    timed.sleep = Some(SleepTimer::Timed {
        left_ms: 60_000,
        since: Some(0),
    });
    assert_eq!(hear(&timed, 0), ["sleep"]);
    assert!(hear(&timed, 5_000).is_empty());
    timed.link = Link::Offline;
    assert_eq!(hear(&timed, 6_000), ["link"]);
}
