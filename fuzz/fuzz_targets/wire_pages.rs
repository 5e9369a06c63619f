//! A page of a list (`GET /books`, search, categories): the list, its
//! paging info and the next page, each item decoded or skipped.
#![no_main]
use earmark::api::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(v) = earmark_fuzz::answer(data) else {
        return;
    };
    let Ok(list) = wire::find_list(&v, "GET /books") else {
        return;
    };
    for (page, size) in [(1, 50), (3, 1), (u64::MAX, u64::MAX)] {
        let _ = wire::next_page(&list.info, list.items.len(), 0, page, size);
    }
    for item in list.items.iter() {
        let _ = wire::item_key(item);
    }
    let _ = wire::decode_items_skipping(&list, "GET /books", wire::decode_book);
    let _ = wire::decode_items_skipping(&list, "GET /categories", wire::decode_category);
});
