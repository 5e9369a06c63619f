//! `GET /books/{bookId}/chapters`.
#![no_main]
use earmark::api::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(v) = earmark_fuzz::answer(data) else {
        return;
    };
    if let Ok(list) = wire::find_list(&v, "GET /books/{bookId}/chapters") {
        let _ = wire::decode_items_skipping(&list, "chapters", wire::decode_chapter);
    }
    let _ = wire::decode_chapter(wire::content(&v), "chapter");
});
