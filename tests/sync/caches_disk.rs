//! The player's caches on a full or read-only disk (issue 21): the library
//! cache and the cover cache are replaced whole or not at all, so what was
//! cached before still reads, the error names the fault and the file, and
//! no temporary file is left.

use crate::small_disk::SmallDisk;
use earmark::domain::{Book, BookId, ServerId, UserId};
use earmark::durable::Fault;
use earmark::runtime::cache::{self, Scope};
use earmark::runtime::covers::{CACHE_CAP, CoverCache, CoverKey};
use std::path::Path;

fn scope() -> Scope {
    Scope {
        server_id: ServerId::new("srv"),
        user_id: UserId::from(7),
    }
}

fn books(n: usize) -> Vec<Book> {
    (0..n)
        .map(|i| Book {
            id: BookId::new(format!("b{i}")),
            title: format!("Book number {i:05} with a long enough title"),
            ..Book::default()
        })
        .collect()
}

/// Names under `dir` that look like a temporary file.
fn temporary_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            out.extend(temporary_files(&e.path()));
        } else if name.starts_with('.') || name.ends_with(".part") || name.contains("tmp") {
            out.push(name);
        }
    }
    out
}

/// A library cache and one cover written, then `break_disk`; every write
/// after it fails with `fault` and changes nothing.
fn caches_survive(disk: &SmallDisk, break_disk: impl FnOnce(&SmallDisk), fault: Fault) {
    let dir = disk.path();
    let before = books(3);
    cache::save(dir, &scope(), &before).unwrap();
    let covers = CoverCache::new(dir.join("covers"), CACHE_CAP);
    let key = CoverKey::new(&scope(), &BookId::new("b0"));
    covers.write(&key, &[1u8; 2000]).unwrap();
    break_disk(disk);

    let e = cache::save(dir, &scope(), &books(400)).unwrap_err();
    assert_eq!(e.fault, fault, "{e}");
    assert!(e.to_string().contains("library-"), "{e}");
    let kept = cache::load(dir, &scope()).expect("the old cache still reads");
    assert_eq!(kept.len(), before.len());

    let e = covers.write(&key, &[2u8; 8000]).unwrap_err();
    assert_eq!(e.fault, fault, "{e}");
    let other = CoverKey::new(&scope(), &BookId::new("b1"));
    assert_eq!(covers.write(&other, &[3u8; 8000]).unwrap_err().fault, fault);
    assert_eq!(covers.read(&key), Some(vec![1u8; 2000]), "the old cover");
    assert_eq!(covers.read(&other), None);

    assert_eq!(temporary_files(dir), Vec::<String>::new());
}

#[test]
fn a_full_disk_leaves_the_library_and_cover_caches_as_they_were() {
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&root.path().join("cache"), 128 * 1024, "caches full") else {
        return;
    };
    caches_survive(
        &disk,
        |d| {
            d.fill();
        },
        Fault::DiskFull,
    );
    // Room again: both caches are written whole.
    disk.free();
    cache::save(disk.path(), &scope(), &books(400)).unwrap();
    assert_eq!(cache::load(disk.path(), &scope()).unwrap().len(), 400);
}

#[test]
fn a_read_only_disk_leaves_the_library_and_cover_caches_as_they_were() {
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&root.path().join("cache"), 512 * 1024, "caches read-only")
    else {
        return;
    };
    caches_survive(&disk, SmallDisk::read_only, Fault::ReadOnly);
}
