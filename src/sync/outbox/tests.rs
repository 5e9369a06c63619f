use super::*;
use crate::domain::ChapterId;

fn scope(server: &str) -> Scope {
    crate::offline::fixture::account(server, 1)
}

fn write(pos: f64, at: EpochMillis) -> Op {
    Op::ProgressWrite(QueuedProgress {
        chapter_id: ChapterId::new("ch_1"),
        position_sec: pos,
        finished: false,
        reset: false,
        client_updated_at: at,
    })
}

fn book(b: &str) -> BookId {
    BookId::new(b)
}

/// A journal's path in a fresh directory (kept while the guard lives).
fn journal() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    (dir, path)
}

/// Books a, b and c queued (at 10, 20 and 30 s), the journal closed; the
/// length of the file after each record.
fn three_books(path: &std::path::Path) -> Vec<usize> {
    let mut o = Outbox::open(path).unwrap();
    let mut ends = Vec::new();
    for (i, b) in ["a", "b", "c"].into_iter().enumerate() {
        let n = i as i64 + 1;
        o.push(scope("s"), book(b), write(10.0 * n as f64, n), n)
            .unwrap();
        ends.push(std::fs::metadata(path).unwrap().len() as usize);
    }
    ends
}

#[test]
fn push_coalesces_per_scope_book_and_slot() {
    let (_dir, path) = journal();
    let mut o = Outbox::open(&path).unwrap();
    o.push(scope("s1"), book("a"), write(1.0, 1), 1).unwrap();
    o.push(scope("s1"), book("a"), write(2.0, 2), 2).unwrap();
    o.push(scope("s1"), book("b"), write(3.0, 3), 3).unwrap();
    o.push(scope("s2"), book("a"), write(4.0, 4), 4).unwrap();
    o.push(
        scope("s1"),
        book("a"),
        Op::SettingsWrite(QueuedSettings {
            speed: 1.5,
            volume: None,
            client_updated_at: 5,
        }),
        5,
    )
    .unwrap();
    assert_eq!(o.len(), 4);
    let a = o
        .entries()
        .into_iter()
        .find(|e| e.book == book("a") && e.scope == scope("s1") && e.op.slot() == Slot::Progress)
        .unwrap()
        .clone();
    assert_eq!(a.op, write(2.0, 2));
    assert_eq!(o.in_scope(&scope("s1")).len(), 3);
    assert_eq!(o.held(&scope("s1")).len(), 1);
    drop(o);
    let o = Outbox::open(&path).unwrap();
    assert_eq!(o.len(), 4);
    assert_eq!(o.load_report().corrupt_skipped, 0);
}

#[test]
fn complete_removes_only_that_entry_not_a_newer_one() {
    let (_dir, path) = journal();
    let mut o = Outbox::open(&path).unwrap();
    let s1 = o.push(scope("s"), book("a"), write(1.0, 1), 1).unwrap();
    // A newer write arrives while the first is in flight.
    let s2 = o.push(scope("s"), book("a"), write(9.0, 2), 2).unwrap();
    assert!(!o.complete(s1).unwrap(), "already superseded");
    assert_eq!(o.len(), 1);
    assert!(o.complete(s2).unwrap());
    assert!(o.is_empty());
    drop(o);
    assert!(Outbox::open(&path).unwrap().is_empty());
}

#[test]
fn sequence_numbers_keep_increasing_across_restarts() {
    let (_dir, path) = journal();
    let mut o = Outbox::open(&path).unwrap();
    let s = o.push(scope("s"), book("a"), write(1.0, 1), 1).unwrap();
    o.complete(s).unwrap();
    drop(o);
    let mut o = Outbox::open(&path).unwrap();
    let t = o.push(scope("s"), book("a"), write(2.0, 2), 2).unwrap();
    assert!(t > s);
}

#[test]
fn a_second_opener_is_refused_while_locked() {
    let (_dir, path) = journal();
    let _o = Outbox::open(&path).unwrap();
    assert!(matches!(Outbox::open(&path), Err(OutboxError::Locked(_))));
    // Reading without the lock still works.
    assert!(Outbox::peek(&path).unwrap().0.is_empty());
}

#[test]
fn truncation_at_every_byte_of_the_last_record_keeps_the_whole_ones() {
    let (_dir, path) = journal();
    let before_last = three_books(&path)[1] as u64;
    let full = std::fs::read(&path).unwrap();
    for cut in before_last..full.len() as u64 {
        std::fs::write(&path, &full[..cut as usize]).unwrap();
        let mut o = Outbox::open(&path).unwrap();
        let books: Vec<_> = o.entries().iter().map(|e| e.book.to_string()).collect();
        assert_eq!(books, ["a", "b"], "cut at {cut}");
        assert_eq!(o.load_report().torn_tail_bytes, cut - before_last);
        assert_eq!(o.load_report().corrupt_skipped, 0);
        // The torn tail was cut off: appending again gives whole records.
        o.push(scope("s"), book("d"), write(40.0, 4), 4).unwrap();
        drop(o);
        let o = Outbox::open(&path).unwrap();
        assert_eq!(o.len(), 3, "cut at {cut}");
        assert_eq!(o.load_report().torn_tail_bytes, 0);
    }
}

#[test]
fn a_corrupt_middle_record_is_skipped_and_counted() {
    let (_dir, path) = journal();
    let a_end = three_books(&path)[0];
    let mut bytes = std::fs::read(&path).unwrap();
    // Flip a byte in b's payload, then separately a length of c... first b.
    bytes[a_end + HEADER + 5] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let o = Outbox::open(&path).unwrap();
    let books: Vec<_> = o.entries().iter().map(|e| e.book.to_string()).collect();
    assert_eq!(books, ["a", "c"]);
    assert_eq!(o.load_report().corrupt_skipped, 1);
    drop(o);
    // It was compacted away: the next load is clean.
    let o = Outbox::open(&path).unwrap();
    assert_eq!(o.load_report().corrupt_skipped, 0);
    assert_eq!(o.len(), 2);
}

#[test]
fn a_damaged_length_field_resyncs_at_the_next_record() {
    let (_dir, path) = journal();
    let a_end = three_books(&path)[0];
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[a_end + 6] = 0x7f; // b's length now points far past the end
    std::fs::write(&path, &bytes).unwrap();
    let (entries, report) = Outbox::peek(&path).unwrap();
    let books: Vec<_> = entries.iter().map(|e| e.book.to_string()).collect();
    assert_eq!(books, ["a", "c"]);
    assert_eq!(report.corrupt_skipped, 1);
}

#[test]
fn garbage_file_is_not_fatal() {
    let (_dir, path) = journal();
    std::fs::write(&path, b"<html>502 Bad Gateway</html> not a journal").unwrap();
    let mut o = Outbox::open(&path).unwrap();
    assert!(o.is_empty());
    o.push(scope("s"), book("a"), write(1.0, 1), 1).unwrap();
    drop(o);
    assert_eq!(Outbox::open(&path).unwrap().len(), 1);
}

#[test]
fn compaction_bounds_the_file() {
    let (_dir, path) = journal();
    let mut o = Outbox::open(&path).unwrap();
    for i in 0..600 {
        let s = o
            .push(scope("s"), book("a"), write(i as f64, i + 1), i + 1)
            .unwrap();
        if i % 3 == 0 {
            o.complete(s).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 40_000, "journal is {size} bytes");
    drop(o);
    let o = Outbox::open(&path).unwrap();
    assert_eq!(o.len(), 1);
    assert_eq!(o.entries()[0].op, write(599.0, 600));
}

#[test]
fn adopt_moves_held_entries_to_the_new_scope() {
    let (_dir, path) = journal();
    let mut o = Outbox::open(&path).unwrap();
    o.push(scope("old"), book("a"), write(1.0, 1), 1).unwrap();
    o.push(scope("old"), book("b"), write(2.0, 2), 2).unwrap();
    o.push(scope("new"), book("b"), write(3.0, 3), 3).unwrap();
    assert_eq!(o.adopt(&scope("new"), 10).unwrap(), 1);
    assert!(o.held(&scope("new")).is_empty());
    let b = o
        .in_scope(&scope("new"))
        .into_iter()
        .find(|e| e.book == book("b"))
        .unwrap()
        .op
        .clone();
    assert_eq!(b, write(3.0, 3), "the newer entry of the new scope stays");
}

#[test]
fn every_op_round_trips() {
    let (_dir, path) = journal();
    let ops = vec![
        write(1.5, 1),
        Op::ProgressDelete,
        Op::SettingsWrite(QueuedSettings {
            speed: 1.25,
            volume: Some(0.5),
            client_updated_at: 9,
        }),
        Op::SettingsDelete,
        Op::FavoriteSet { favorite: true },
        Op::BookmarkCreate {
            client_id: "c1".into(),
            chapter_id: ChapterId::new("ch"),
            position_sec: 3.0,
            note: Some("EMOB inside a note \u{1F600}".into()),
        },
        Op::BookmarkDelete {
            bookmark_id: "bm_1".into(),
        },
    ];
    let mut o = Outbox::open(&path).unwrap();
    for (i, op) in ops.iter().enumerate() {
        o.push(scope("s"), book(&format!("b{i}")), op.clone(), 1)
            .unwrap();
        assert!(!op.describe().is_empty());
    }
    drop(o);
    let o = Outbox::open(&path).unwrap();
    let got: Vec<Op> = o.entries().iter().map(|e| e.op.clone()).collect();
    assert_eq!(got, ops);
}

#[test]
fn a_journal_that_named_addresses_is_one_queue_per_server_and_account() {
    let (_dir, path) = journal();
    // Records from before addresses: each names the address it was queued for.
    let put = |seq: u64, base: &str, pos: f64| {
        let record = serde_json::json!({"put": {
            "seq": seq, "book": "b1", "queuedAt": seq,
            "scope": {"base": base, "serverId": "s", "userId": 1},
            "op": {"op": "progressWrite", "chapterId": "ch_1", "positionSec": pos,
                   "finished": false, "reset": false, "clientUpdatedAt": seq},
        }});
        crate::durable::encode(&MAGIC, &serde_json::to_vec(&record).unwrap())
    };
    let mut bytes = put(1, "http://nas.local:8686/api/v1", 10.0);
    bytes.extend(put(2, "https://vpn.example/nas/api/v1", 20.0));
    std::fs::write(&path, bytes).unwrap();
    let o = Outbox::open(&path).unwrap();
    let mine = o.in_scope(&scope("s"));
    assert_eq!(mine.len(), 1, "the later write of the same book wins");
    assert_eq!(mine[0].op, write(20.0, 2));
    assert!(o.held(&scope("s")).is_empty());
}
