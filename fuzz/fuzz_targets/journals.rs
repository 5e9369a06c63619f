//! The outbox and the listening journal read back from damaged files, as
//! `earmark sync pending` and `earmark history | stats` read them: the
//! first byte picks the journal, the rest is its file.
#![no_main]
use earmark::domain::BookId;
use earmark::sync::{Records, SyncConfig};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let dir = dir().path();
    if pick % 2 == 0 {
        let path = SyncConfig::new(dir).outbox_path;
        std::fs::write(&path, file).unwrap();
        let _ = Records::new(dir).pending(None);
    } else {
        std::fs::write(dir.join("listening.journal"), file).unwrap();
        let records = Records::new(dir);
        let _ = records.history(&BookId::new("bk1"));
        let _ = records.stats(1_800_000_000_000);
    }
});
