//! The controllable loopback proxy (forward, refuse, 500, 400; request
//! log) is the library's test support, shared with the bench.

pub use crate::harness::proxy::*;
