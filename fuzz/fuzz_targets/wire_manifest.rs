//! `GET /books/{bookId}/download-manifest`.
#![no_main]
use earmark::api::wire;
use earmark::domain::BookId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(v) = earmark_fuzz::answer(data) {
        let book = BookId::new("bk_fuzz");
        let _ = wire::decode_manifest(&v, &book, "GET /books/{bookId}/download-manifest");
    }
});
