//! A mp4 chapter through the player's decode path.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    earmark_fuzz::decode_chapter(data, "audio/mp4");
});
