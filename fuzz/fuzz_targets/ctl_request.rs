//! The control socket's request decoder (`ctl::protocol::decode`), as the
//! session reads a line from any client; what it decodes is encoded again
//! (a client's side) and must decode to the same request.
#![no_main]
use earmark::ctl::protocol::{decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = decode(data) {
        let line = encode(1, &r.ask);
        let again = decode(line.trim_end().as_bytes()).expect("our own encoding decodes");
        assert_eq!(again.ask, r.ask);
    }
});
