//! A cover's bytes through the player's decode (JPEG or PNG, with the
//! decode limits); run with -malloc_limit_mb to catch a large allocation.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = earmark::runtime::covers::decode(data);
});
