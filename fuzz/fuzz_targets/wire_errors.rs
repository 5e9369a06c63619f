//! Error answers: any status's body (JSON, HTML, empty, garbage), its
//! code and message, an error inside a 200, and `Retry-After`.
#![no_main]
use earmark::api::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for ct in [None, Some("text/html; charset=utf-8")] {
        if let Ok(v) = wire::parse_body(ct, data) {
            let (code, _) = wire::error_parts(&v);
            if let Some(c) = code {
                let _ = wire::status_of_code(&wire::normalize_code(&c));
            }
            let _ = wire::error_body(&v);
            let _ = wire::envelope_error(&v);
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = wire::retry_after_secs(s, 1_800_000_000);
        let _ = wire::normalize_code(s);
    }
});
