//! Login abuse limits (docs/contract.md, "Limits"): a cap on concurrent
//! password hashes (argon2 reserves ~19 MiB each), and a failure limit per
//! client address and per user name with exponential back-off. Both answer
//! 429 `too_many_requests` with `Retry-After`. A login admitted ([`Attempt`])
//! counts as a failure until it is found right, and one that those in
//! flight could lock out waits for them, so a concurrent burst gets no more
//! guesses hashed than the same logins one after another.

use crate::domain::locks::lock;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

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
    /// 429s because no hash slot was free in time (or too many logins in flight).
    pub rejected_busy: u64,
    /// 429s because of back-off: a lock-out, or failures presumed from logins
    /// still in flight for the same address or user.
    pub rejected_backoff: u64,
    /// Addresses and names with logins in flight now.
    pub keys_in_flight: usize,
    /// Addresses and names whose failures are remembered now.
    pub keys_remembered: usize,
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

/// What the limiter remembers, under one lock so that a failure is recorded
/// and its attempt leaves the in-flight count in one step.
#[derive(Default)]
struct Ledger {
    failures: HashMap<Key, Failures>,
    /// Logins admitted and not yet answered, per key (no zero entries).
    in_flight: HashMap<Key, u32>,
}

impl Ledger {
    fn locked_for(&self, keys: &[Key], now: Instant) -> Option<Duration> {
        keys.iter()
            .filter_map(|k| self.failures.get(k)?.locked_until)
            .filter(|until| *until > now)
            .map(|until| until - now)
            .max()
    }

    /// Failures recorded (still remembered) plus logins in flight: each
    /// login in flight counts as a failure until it is found right.
    fn presumed(&self, key: &Key, now: Instant, forget: Duration) -> u32 {
        let failed = self
            .failures
            .get(key)
            .filter(|f| now.duration_since(f.last) < forget)
            .map_or(0, |f| f.count);
        failed.saturating_add(self.in_flight.get(key).copied().unwrap_or(0))
    }

    fn leave(&mut self, keys: &[Key]) {
        for key in keys {
            if let Some(n) = self.in_flight.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    self.in_flight.remove(key);
                }
            }
        }
    }
}

pub struct LoginGuard {
    limits: LoginLimits,
    slots: Semaphore,
    running: AtomicUsize,
    peak: AtomicUsize,
    hashes: AtomicU64,
    rejected_busy: AtomicU64,
    rejected_backoff: AtomicU64,
    ledger: Mutex<Ledger>,
    /// Woken whenever a login leaves flight (logins waiting in `admit`).
    left_flight: Notify,
}

enum Check<'a> {
    Admitted(Attempt<'a>),
    Refused(Refusal),
    InFlight(Duration),
}

/// One admitted login, counted in flight for its user and address until it
/// is answered or dropped (a client that hangs up mid-hash).
#[must_use = "an attempt is in flight until it is answered or dropped"]
pub struct Attempt<'a> {
    guard: &'a LoginGuard,
    keys: Vec<Key>,
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
            ledger: Mutex::new(Ledger::default()),
            left_flight: Notify::new(),
        }
    }

    pub fn stats(&self) -> LoginStats {
        let (keys_in_flight, keys_remembered) = {
            let ledger = self.ledger();
            (ledger.in_flight.len(), ledger.failures.len())
        };
        LoginStats {
            keys_in_flight,
            keys_remembered,
            peak_hashes: self.peak.load(Ordering::SeqCst),
            hashes: self.hashes.load(Ordering::SeqCst),
            rejected_busy: self.rejected_busy.load(Ordering::SeqCst),
            rejected_backoff: self.rejected_backoff.load(Ordering::SeqCst),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        lock(&self.ledger)
    }

    fn keys(addr: Option<IpAddr>, user: &str) -> Vec<Key> {
        let mut keys = vec![Key::User(user.trim().to_lowercase())];
        keys.extend(addr.map(Key::Address));
        keys
    }

    fn forget_after(&self) -> Duration {
        self.limits.max_backoff * 2
    }

    /// Admits a login before any hashing, or refuses it. A locked-out
    /// address or user is refused at once. One with logins in flight that,
    /// were they all to fail, would lock it out waits (at most `hash_wait`)
    /// for them to be answered, and is then checked again: after wrong
    /// passwords it is locked out, after a right one it goes ahead. A burst
    /// thus gets no more guesses hashed than the same logins one after
    /// another (the free failures and the one that starts the back-off),
    /// and right passwords arriving together only wait.
    pub async fn admit(&self, addr: Option<IpAddr>, user: &str) -> Result<Attempt<'_>, Refusal> {
        let deadline = tokio::time::Instant::now() + self.limits.hash_wait;
        loop {
            // Registered before the check, so a login leaving flight between
            // the check and the wait still wakes this one.
            let left = self.left_flight.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            let wait = match self.check(addr, user) {
                Check::Admitted(attempt) => return Ok(attempt),
                Check::Refused(refusal) => return Err(self.count(refusal)),
                Check::InFlight(wait) => wait,
            };
            if tokio::time::timeout_at(deadline, left).await.is_err() {
                return Err(self.count(Refusal::BackOff(wait)));
            }
        }
    }

    fn count(&self, refusal: Refusal) -> Refusal {
        match refusal {
            Refusal::BackOff(_) => &self.rejected_backoff,
            Refusal::Busy => &self.rejected_busy,
        }
        .fetch_add(1, Ordering::SeqCst);
        refusal
    }

    /// One look at the ledger: admitted (and counted in flight), refused,
    /// or to wait for the logins in flight (with the back-off they would
    /// start if they all failed).
    fn check(&self, addr: Option<IpAddr>, user: &str) -> Check<'_> {
        let now = Instant::now();
        let keys = Self::keys(addr, user);
        let mut ledger = self.ledger();
        if let Some(wait) = ledger.locked_for(&keys, now) {
            return Check::Refused(Refusal::BackOff(wait));
        }
        let presumed = keys
            .iter()
            .filter(|k| ledger.in_flight.contains_key(*k))
            .filter_map(|k| backoff(&self.limits, ledger.presumed(k, now, self.forget_after())))
            .max();
        if let Some(wait) = presumed {
            return Check::InFlight(wait);
        }
        if ledger.in_flight.len() >= MAX_KEYS {
            // A flood of distinct names: refuse rather than remember more.
            return Check::Refused(Refusal::Busy);
        }
        Check::Admitted(self.enter(&mut ledger, keys))
    }

    /// An attempt for `keys`, counted in flight.
    fn enter(&self, ledger: &mut Ledger, keys: Vec<Key>) -> Attempt<'_> {
        for key in &keys {
            *ledger.in_flight.entry(key.clone()).or_insert(0) += 1;
        }
        Attempt { guard: self, keys }
    }

    /// An attempt counted in flight without the checks (tests only).
    #[cfg(test)]
    fn admit_unchecked(&self, addr: Option<IpAddr>, user: &str) -> Attempt<'_> {
        self.enter(&mut self.ledger(), Self::keys(addr, user))
    }

    fn record_failure(&self, ledger: &mut Ledger, keys: &[Key]) {
        let now = Instant::now();
        let forget = self.forget_after();
        let map = &mut ledger.failures;
        if map.len() >= MAX_KEYS {
            map.retain(|_, f| now.duration_since(f.last) < forget);
            if map.len() >= MAX_KEYS {
                // Flooded with fresh keys: keep the worst offenders.
                let mut counts: Vec<u32> = map.values().map(|f| f.count).collect();
                counts.sort_unstable();
                let median = counts[counts.len() / 2];
                map.retain(|_, f| f.count > median);
            }
        }
        for key in keys {
            let entry = map.entry(key.clone()).or_insert(Failures {
                count: 0,
                locked_until: None,
                last: now,
            });
            if now.duration_since(entry.last) >= forget {
                entry.count = 0;
            }
            entry.count = entry.count.saturating_add(1);
            entry.last = now;
            entry.locked_until = backoff(&self.limits, entry.count).map(|d| now + d);
        }
    }
}

impl Attempt<'_> {
    /// Runs `check` (the password hash) on a blocking thread once a slot is
    /// free, waiting at most `hash_wait`. The lock-out is checked again once
    /// the slot is had: failures recorded while this login waited count.
    pub async fn hash<T: Send + 'static>(
        &self,
        check: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refusal> {
        let guard = self.guard;
        let Ok(Ok(_permit)) =
            tokio::time::timeout(guard.limits.hash_wait, guard.slots.acquire()).await
        else {
            return Err(guard.count(Refusal::Busy));
        };
        if let Some(wait) = guard.ledger().locked_for(&self.keys, Instant::now()) {
            return Err(guard.count(Refusal::BackOff(wait)));
        }
        let now_running = guard.running.fetch_add(1, Ordering::SeqCst) + 1;
        guard.peak.fetch_max(now_running, Ordering::SeqCst);
        guard.hashes.fetch_add(1, Ordering::SeqCst);
        let result = tokio::task::spawn_blocking(check).await;
        guard.running.fetch_sub(1, Ordering::SeqCst);
        // A panicking hash counts as busy rather than taking the server down.
        result.map_err(|_| Refusal::Busy)
    }

    /// A wrong password: counted against the user and the address, in the
    /// same step as the login leaves the in-flight count.
    pub fn failed(mut self) {
        let mut ledger = self.guard.ledger();
        self.guard.record_failure(&mut ledger, &self.keys);
        ledger.leave(&std::mem::take(&mut self.keys));
    }

    /// A successful login clears its user's and its address's failures.
    pub fn succeeded(mut self) {
        let mut ledger = self.guard.ledger();
        for key in &self.keys {
            ledger.failures.remove(key);
        }
        ledger.leave(&std::mem::take(&mut self.keys));
    }
}

impl Drop for Attempt<'_> {
    /// Leaves flight (if `failed`/`succeeded` did not) and wakes the logins
    /// waiting for it, after the ledger's lock is released.
    fn drop(&mut self) {
        if !self.keys.is_empty() {
            self.guard.ledger().leave(&self.keys);
        }
        self.guard.left_flight.notify_waiters();
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

    /// `admit` without the wait: admitted, or why not.
    fn try_admit<'a>(
        guard: &'a LoginGuard,
        ip: IpAddr,
        user: &str,
    ) -> Result<Attempt<'a>, Refusal> {
        match guard.check(Some(ip), user) {
            Check::Admitted(a) => Ok(a),
            Check::Refused(r) => Err(guard.count(r)),
            Check::InFlight(wait) => Err(guard.count(Refusal::BackOff(wait))),
        }
    }

    fn fail(guard: &LoginGuard, ip: IpAddr, user: &str) {
        try_admit(guard, ip, user).expect("admitted").failed();
    }

    #[test]
    fn failures_lock_out_the_address_and_the_user_until_a_success() {
        let guard = LoginGuard::new(LoginLimits::default());
        let ip: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..6 {
            fail(&guard, ip, "alice");
        }
        assert!(matches!(
            try_admit(&guard, ip, "bob"),
            Err(Refusal::BackOff(_))
        ));
        let other: IpAddr = [10, 0, 0, 2].into();
        assert!(matches!(
            try_admit(&guard, other, "ALICE "),
            Err(Refusal::BackOff(_))
        ));
        assert!(try_admit(&guard, other, "bob").is_ok());
        guard.admit_unchecked(Some(ip), "alice").succeeded();
        assert!(try_admit(&guard, ip, "alice").is_ok());
        assert_eq!(guard.stats().rejected_backoff, 2);
    }

    #[test]
    fn a_burst_is_admitted_only_as_far_as_logins_in_a_row_would_be() {
        let limits = LoginLimits::default();
        let guard = LoginGuard::new(limits.clone());
        let ip: IpAddr = [10, 0, 0, 1].into();
        let admitted: Vec<_> = (0..60)
            .filter_map(|_| try_admit(&guard, ip, "alice").ok())
            .collect();
        assert_eq!(admitted.len() as u32, limits.free_failures + 1);
        // Another user from another address is not held up by the burst.
        let other: IpAddr = [10, 0, 0, 2].into();
        assert!(try_admit(&guard, other, "bob").is_ok());
        for attempt in admitted {
            attempt.failed();
        }
        assert_eq!(guard.stats().keys_in_flight, 0);
        assert!(matches!(
            try_admit(&guard, ip, "alice"),
            Err(Refusal::BackOff(_))
        ));
    }

    #[test]
    fn an_attempt_dropped_unanswered_leaves_the_flight_without_counting_as_a_failure() {
        let guard = LoginGuard::new(LoginLimits::default());
        let ip: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..100 {
            drop(try_admit(&guard, ip, "alice").expect("admitted"));
        }
        assert_eq!(guard.stats().keys_in_flight, 0);
        assert!(try_admit(&guard, ip, "alice").is_ok());
    }

    #[tokio::test]
    async fn a_login_held_by_logins_in_flight_goes_ahead_after_a_right_password() {
        let guard = LoginGuard::new(LoginLimits::default());
        let ip: IpAddr = [10, 0, 0, 1].into();
        let burst: Vec<_> = (0..6)
            .map(|_| try_admit(&guard, ip, "alice").unwrap())
            .collect();
        let waiting = guard.admit(Some(ip), "alice");
        tokio::pin!(waiting);
        assert!(futures_util::poll!(&mut waiting).is_pending());
        let mut burst = burst.into_iter();
        burst.next().unwrap().succeeded();
        assert!(waiting.await.is_ok(), "admitted once one was found right");
    }

    #[tokio::test]
    async fn a_login_held_by_logins_in_flight_is_refused_once_they_fail() {
        let guard = LoginGuard::new(LoginLimits::default());
        let ip: IpAddr = [10, 0, 0, 1].into();
        let burst: Vec<_> = (0..6)
            .map(|_| try_admit(&guard, ip, "alice").unwrap())
            .collect();
        let waiting = guard.admit(Some(ip), "alice");
        tokio::pin!(waiting);
        assert!(futures_util::poll!(&mut waiting).is_pending());
        for attempt in burst {
            attempt.failed();
        }
        assert!(matches!(waiting.await, Err(Refusal::BackOff(_))));
        assert_eq!(guard.stats().rejected_backoff, 1);
    }

    #[tokio::test]
    async fn a_login_waiting_for_a_slot_is_refused_once_it_has_one_if_others_locked_it_out() {
        let limits = LoginLimits {
            max_concurrent_hashes: 1,
            hash_wait: Duration::from_secs(30),
            ..LoginLimits::default()
        };
        let guard = LoginGuard::new(limits);
        let ip: IpAddr = [10, 0, 0, 1].into();
        let waiting = try_admit(&guard, ip, "alice").expect("admitted");
        let held = guard.slots.acquire().await.expect("slot");
        let hash = waiting.hash(|| true);
        tokio::pin!(hash);
        // Polled once: it now waits for the slot.
        assert!(futures_util::poll!(&mut hash).is_pending());
        for _ in 0..6 {
            guard.admit_unchecked(Some(ip), "alice").failed();
        }
        drop(held);
        assert!(matches!(hash.await, Err(Refusal::BackOff(_))));
        assert_eq!(guard.stats().hashes, 0);
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
