//! Progress sync: the pure reconciler, the durable outbox and the worker
//! that reports to the server.
