//! A wait that may have nothing to wait for.

/// `f`'s output, or never without one: a `select!` branch that never
/// fires (no deadline, no signal, no socket, a channel gone).
pub async fn or_never<F: Future>(f: Option<F>) -> F::Output {
    match f {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}
