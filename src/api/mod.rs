//! The contract client: one HTTP client for the whole stable interface of
//! the Audiobook Library Service, with tolerant decoding of payloads.
