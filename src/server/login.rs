//! Login abuse limits (docs/contract.md, "Limits"): a cap on concurrent
//! password hashes (argon2 reserves ~19 MiB each), and a failure limit per
//! client address and per user name with exponential back-off. Both answer
//! 429 `too_many_requests` with `Retry-After`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The limits of one server instance.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginLimits {
    /// Password hashes running at once (default: the number of cores).
    pub max_concurrent_hashes: usize,
    /// How long a login waits for a hash slot before 429.
    pub hash_wait: Duration,
    /// Failed logins allowed (per address, per user) before back-off starts.
    pub free_failures: u32,
    /// The first back-off; each further failure doubles it.
    pub first_backoff: Duration,
    /// The longest back-off; a key is forgotten after twice this without failures.
    pub max_backoff: Duration,
}

impl Default for LoginLimits {
    fn default() -> Self {
        Self {
            max_concurrent_hashes: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .clamp(1, 16),
            hash_wait: Duration::from_secs(2),
            free_failures: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(300),
        }
    }
}

/// How long a key is locked out after its `failures`-th failure in a row.
pub fn backoff(limits: &LoginLimits, failures: u32) -> Option<Duration> {
    let over = failures.checked_sub(limits.free_failures)?.checked_sub(1)?;
    let factor = 1u32.checked_shl(over.min(31)).unwrap_or(u32::MAX);
    Some(
        limits
            .first_backoff
            .saturating_mul(factor)
            .min(limits.max_backoff),
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Address(IpAddr),
    User(String),
}

#[derive(Debug)]
struct Failures {
    count: u32,
    locked_until: Option<Instant>,
    last: Instant,
}

/// Counters for tests and the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoginStats {
    /// Most hashes that ever ran at once.
    pub peak_hashes: usize,
    /// Hashes run in all.
    pub hashes: u64,
    /// 429s because no hash slot was free in time.
    pub rejected_busy: u64,
    /// 429s because of back-off.
    pub rejected_backoff: u64,
}

/// Why a login was refused before its password was checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal {
    /// Locked out by back-off; retry after this long.
    BackOff(Duration),
    /// Every hash slot stayed busy.
    Busy,
}

/// Entries kept at most; expired ones are dropped first when over.
const MAX_KEYS: usize = 10_000;

pub struct LoginGuard {
    limits: LoginLimits,
    slots: Semaphore,
    running: AtomicUsize,
    peak: AtomicUsize,
    hashes: AtomicU64,
    rejected_busy: AtomicU64,
    rejected_backoff: AtomicU64,
    failures: Mutex<HashMap<Key, Failures>>,
}

impl LoginGuard {
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            slots: Semaphore::new(limits.max_concurrent_hashes.max(1)),
            limits,
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            hashes: AtomicU64::new(0),
            rejected_busy: AtomicU64::new(0),
            rejected_backoff: AtomicU64::new(0),
            failures: Mutex::new(HashMap::new()),
        }
    }

    pub fn stats(&self) -> LoginStats {
        LoginStats {
            peak_hashes: self.peak.load(Ordering::SeqCst),
            hashes: self.hashes.load(Ordering::SeqCst),
            rejected_busy: self.rejected_busy.load(Ordering::SeqCst),
            rejected_backoff: self.rejected_backoff.load(Ordering::SeqCst),
        }
    }

    fn keys(addr: Option<IpAddr>, user: &str) -> Vec<Key> {
        let mut keys = vec![Key::User(user.trim().to_lowercase())];
        keys.extend(addr.map(Key::Address));
        keys
    }

    /// Refuses a locked-out address or user before any hashing.
    pub fn admit(&self, addr: Option<IpAddr>, user: &str) -> Result<(), Refusal> {
        let now = Instant::now();
        let map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let wait = Self::keys(addr, user)
            .iter()
            .filter_map(|k| map.get(k)?.locked_until)
            .filter(|until| *until > now)
            .map(|until| until - now)
            .max();
        match wait {
            Some(wait) => {
                self.rejected_backoff.fetch_add(1, Ordering::SeqCst);
                Err(Refusal::BackOff(wait))
            }
            None => Ok(()),
        }
    }

    /// Runs `check` (the password hash) on a blocking thread once a slot is
    /// free, waiting at most `hash_wait`.
    pub async fn hash<T: Send + 'static>(
        &self,
        check: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refusal> {
        let Ok(Ok(_permit)) =
            tokio::time::timeout(self.limits.hash_wait, self.slots.acquire()).await
        else {
            self.rejected_busy.fetch_add(1, Ordering::SeqCst);
            return Err(Refusal::Busy);
        };
        let now_running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now_running, Ordering::SeqCst);
        self.hashes.fetch_add(1, Ordering::SeqCst);
        let result = tokio::task::spawn_blocking(check).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        // A panicking hash counts as busy rather than taking the server down.
        result.map_err(|_| Refusal::Busy)
    }

    pub fn record_failure(&self, addr: Option<IpAddr>, user: &str) {
        let now = Instant::now();
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_KEYS {
            let forget = self.limits.max_backoff * 2;
            map.retain(|_, f| now.duration_since(f.last) < forget);
            if map.len() >= MAX_KEYS {
                // Flooded with fresh keys: keep the worst offenders.
                let mut counts: Vec<u32> = map.values().map(|f| f.count).collect();
                counts.sort_unstable();
                let median = counts[counts.len() / 2];
                map.retain(|_, f| f.count > median);
            }
        }
        for key in Self::keys(addr, user) {
            let entry = map.entry(key).or_insert(Failures {
                count: 0,
                locked_until: None,
                last: now,
            });
            if now.duration_since(entry.last) >= self.limits.max_backoff * 2 {
                entry.count = 0;
            }
            entry.count = entry.count.saturating_add(1);
            entry.last = now;
            entry.locked_until = backoff(&self.limits, entry.count).map(|d| now + d);
        }
    }

    /// A successful login clears its user's and its address's failures.
    pub fn record_success(&self, addr: Option<IpAddr>, user: &str) {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for key in Self::keys(addr, user) {
            map.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn backoff_starts_after_the_free_failures_and_doubles() {
        let l = LoginLimits::default();
        assert_eq!(backoff(&l, 0), None);
        assert_eq!(backoff(&l, 5), None);
        assert_eq!(backoff(&l, 6), Some(Duration::from_secs(1)));
        assert_eq!(backoff(&l, 7), Some(Duration::from_secs(2)));
        assert_eq!(backoff(&l, 9), Some(Duration::from_secs(8)));
        assert_eq!(backoff(&l, 100), Some(Duration::from_secs(300)));
    }

    #[test]
    fn failures_lock_out_the_address_and_the_user_until_a_success() {
        let guard = LoginGuard::new(LoginLimits::default());
        let ip: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..6 {
            assert_eq!(guard.admit(Some(ip), "alice"), Ok(()));
            guard.record_failure(Some(ip), "alice");
        }
        assert!(matches!(
            guard.admit(Some(ip), "bob"),
            Err(Refusal::BackOff(_))
        ));
        let other: IpAddr = [10, 0, 0, 2].into();
        assert!(matches!(
            guard.admit(Some(other), "ALICE "),
            Err(Refusal::BackOff(_))
        ));
        assert_eq!(guard.admit(Some(other), "bob"), Ok(()));
        guard.record_success(Some(ip), "alice");
        assert_eq!(guard.admit(Some(ip), "alice"), Ok(()));
        assert_eq!(guard.stats().rejected_backoff, 2);
    }

    proptest! {
        #[test]
        fn backoff_grows_and_stays_capped(n in 0u32..10_000) {
            let l = LoginLimits::default();
            let (a, b) = (backoff(&l, n), backoff(&l, n + 1));
            prop_assert!(a <= b);
            prop_assert!(b.is_none_or(|d| d <= l.max_backoff));
        }
    }
}
