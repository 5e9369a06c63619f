//! `GET /books/{bookId}`.
#![no_main]
use earmark::api::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(v) = earmark_fuzz::answer(data) {
        let _ = wire::decode_book(&v, "GET /books/{bookId}");
    }
});
