//! `GET /auth/reading-progress/{bookId}` (never fails: what it cannot
//! read is `Unreadable`), and the answers to progress writes.
#![no_main]
use earmark::api::wire;
use earmark::domain::BookId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(v) = earmark_fuzz::answer(data) else {
        return;
    };
    let _ = wire::decode_progress_read(&v);
    let _ = wire::decode_settings_lenient(&v);
    let _ = wire::describe_shape(&v);
    let _ = wire::decode_progress_write(&v, "POST /auth/reading-progress/{bookId}");
    let _ = wire::decode_settings_write(&v, "POST /auth/playback-settings/{bookId}");
    let book = BookId::new("bk_fuzz");
    let _ = wire::decode_bookmark(&v, Some(&book), "POST bookmarks");
});
