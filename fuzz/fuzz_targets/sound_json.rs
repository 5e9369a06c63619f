//! sound.json as the player and `earmark sound` read it (the real file in
//! a temp dir): load (a damaged file is moved aside), read a book, and a
//! save over what the file holds.
#![no_main]
use earmark::config::SoundBooks;
use earmark::domain::SoundSettings;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let path = dir().path().join("sound.json");
    std::fs::write(&path, data).unwrap();
    let books = SoundBooks::load(path.clone());
    let _ = books.settings("s|u|bk");
    let _ = books.saved("s|u|bk");
    std::fs::write(&path, data).unwrap();
    books.set("s|u|bk2".into(), SoundSettings::default());
    let _ = books.save();
});
