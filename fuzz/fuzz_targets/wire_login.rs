//! `POST /auth/login` and `GET /license/status` answers.
#![no_main]
use earmark::api::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(v) = earmark_fuzz::answer(data) {
        let _ = wire::decode_login(&v, "POST /auth/login");
        let _ = wire::decode_license(&v, "GET /license/status");
    }
});
