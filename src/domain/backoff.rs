//! Back-off: the one rule for when a server is asked again after it
//! failed or said "slow down". The API client keeps one state per address
//! and kind of request ([`Throttles`]); sync's link to the server, its
//! refused changes, the player's streams and downloads each keep a
//! [`Backoff`] of their own; all of them wait by the same [`Ladder`] and
//! read `Retry-After` with [`retry_after`].
//!
//! - A server that said how long to wait (`Retry-After`, seconds or an
//!   HTTP date) is not asked again before then, up to [`MAX_ASKED`].
//! - Otherwise the wait doubles from the ladder's first step up to its
//!   cap, and only its upper half is fixed: the lower half is drawn at
//!   random ("equal jitter"), so many clients refused together do not come
//!   back together.
//! - A success resets only the state it belongs to: a read that succeeds
//!   does not open the way for the writes the server refused.
//!
//! Pure but for the clock and the dice, which the callers hand in.

use super::locks::lock;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A `Retry-After` longer than this is read as this: a header gone wrong
/// (a date far in the future, a clock off by years) must not stop sync
/// for good.
pub const MAX_ASKED: Duration = Duration::from_secs(3600);

/// What a request is, for its back-off state (and its time-out, see
/// docs/contract.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A GET of the API: lists, books, manifests, the place.
    Read,
    /// A write of a place (one book or a batch).
    ProgressWrite,
    /// Any other write: settings, favorites, bookmarks, logout.
    Write,
    /// A chapter's audio: the player's streams and downloads.
    Audio,
}

/// Waits that double from `first` up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ladder {
    pub first: Duration,
    pub cap: Duration,
}

impl Ladder {
    pub const fn new(first: Duration, cap: Duration) -> Ladder {
        Ladder { first, cap }
    }

    /// The wait after `failures` failures in a row (1 for the first):
    /// `first · 2^(failures − 1)`, at most `cap`, of which the lower half
    /// is `unit` (in [0, 1)) of it.
    pub fn wait_at(&self, failures: u32, unit: f64) -> Duration {
        let step = self
            .first
            .saturating_mul(1u32 << failures.saturating_sub(1).min(20))
            .min(self.cap.max(self.first));
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.5
        };
        step / 2 + (step / 2).mul_f64(unit)
    }

    /// [`Ladder::wait_at`] with the dice thrown here.
    pub fn wait(&self, failures: u32) -> Duration {
        self.wait_at(failures, rand::random::<f64>())
    }
}

/// How long a `Retry-After` value asks to wait: delta seconds, or an HTTP
/// date (IMF-fixdate, RFC 850 or asctime) counted from the answer's own
/// `Date` when it has a readable one (both are the server's clock), else
/// from `now`. A date in the past is no wait. `None` when it says neither.
pub fn retry_after(value: &str, date: Option<&str>, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = v.parse().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs).min(MAX_ASKED));
    }
    let at = http_date(v)?;
    let from = date.and_then(http_date).unwrap_or_else(|| {
        now.duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    });
    Some(Duration::from_secs(at.saturating_sub(from)).min(MAX_ASKED))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Seconds since the epoch of an HTTP date in any of its three forms.
fn http_date(s: &str) -> Option<u64> {
    let s = s.trim();
    let (day, month, year, time) = if let Some((_, rest)) = s.split_once(", ") {
        let parts: Vec<&str> = rest.split_whitespace().collect();
        match parts.as_slice() {
            // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
            [d, m, y, t, "GMT"] => (*d, *m, y.parse::<i64>().ok()?, *t),
            // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT".
            [dmy, t, "GMT"] => {
                let mut it = dmy.split('-');
                let (d, m, y) = (it.next()?, it.next()?, it.next()?);
                let y: i64 = y.parse().ok()?;
                // Two digits: the year within 50 years of now (RFC 9110).
                (d, m, if y < 70 { 2000 + y } else { 1900 + y }, *t)
            }
            _ => return None,
        }
    } else {
        // asctime: "Sun Nov  6 08:49:37 1994".
        let parts: Vec<&str> = s.split_whitespace().collect();
        let [_, m, d, t, y] = parts.as_slice() else {
            return None;
        };
        (*d, *m, y.parse().ok()?, *t)
    };
    let day: i64 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *sec > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// One back-off state: how many failures in a row, and until when to wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backoff {
    failures: u32,
    until: Option<Instant>,
    asked: Option<Duration>,
}

impl Backoff {
    /// Another failure at `now`: wait what the server `asked`, else the
    /// ladder's next step. Never earlier than a wait already set. Returns
    /// when to try again.
    pub fn failed(&mut self, ladder: Ladder, asked: Option<Duration>, now: Instant) -> Instant {
        self.failures = self.failures.saturating_add(1);
        let wait = match asked {
            Some(a) => a.min(MAX_ASKED),
            None => ladder.wait(self.failures),
        };
        let until = (now + wait).max(self.until.unwrap_or(now));
        self.until = Some(until);
        self.asked = asked;
        until
    }

    /// It worked: the next failure starts the ladder again.
    pub fn succeeded(&mut self) {
        *self = Backoff::default();
    }

    /// How long is still to wait at `now` (`None`: go ahead).
    pub fn left(&self, now: Instant) -> Option<Duration> {
        self.until.filter(|u| *u > now).map(|u| u - now)
    }

    pub fn until(&self) -> Option<Instant> {
        self.until
    }

    /// What the server said to wait the last time, if it said.
    pub fn asked(&self) -> Option<Duration> {
        self.asked
    }
}

/// A server asked to be left alone for a kind of request: until when,
/// and what it said (`None`: it gave no `Retry-After`; the wait is ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    pub until: Instant,
    pub asked: Option<Duration>,
}

impl Throttle {
    /// What to tell the listener.
    pub fn slowdown(&self) -> Slowdown {
        match self.asked {
            Some(a) => Slowdown::Asked {
                secs: a.as_secs_f64().ceil() as u64,
            },
            None => Slowdown::Busy,
        }
    }
}

/// A server's "slow down", as data for whoever words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Slowdown {
    /// It said how long: `Retry-After` in seconds.
    Asked { secs: u64 },
    /// It said nothing of how long (a 429 or 503 without `Retry-After`).
    Busy,
}

/// One back-off state per address (an origin, `scheme://host:port`) and
/// kind of request: what the server answered to one kind never holds back
/// another, and a success resets only its own.
#[derive(Debug)]
pub struct Throttles {
    ladder: Ladder,
    states: Mutex<HashMap<(String, Kind), Backoff>>,
}

impl Throttles {
    /// States that wait by `ladder` when the server gives no `Retry-After`.
    pub fn new(ladder: Ladder) -> Throttles {
        Throttles {
            ladder,
            states: Mutex::new(HashMap::new()),
        }
    }

    fn states(&self) -> std::sync::MutexGuard<'_, HashMap<(String, Kind), Backoff>> {
        lock(&self.states)
    }

    /// The wait still in force for `kind` at `origin`, if any.
    pub fn closed(&self, origin: &str, kind: Kind, now: Instant) -> Option<Throttle> {
        let states = self.states();
        let b = states.get(&(origin.to_owned(), kind))?;
        b.left(now)?;
        Some(Throttle {
            until: b.until()?,
            asked: b.asked(),
        })
    }

    /// `origin` refused `kind` (429, 503, another 5xx), asking to wait
    /// `asked` or not: the wait from now.
    pub fn refused(
        &self,
        origin: &str,
        kind: Kind,
        asked: Option<Duration>,
        now: Instant,
    ) -> Throttle {
        let mut states = self.states();
        let b = states.entry((origin.to_owned(), kind)).or_default();
        let until = b.failed(self.ladder, asked, now);
        Throttle { until, asked }
    }

    /// `origin` answered `kind`: its state starts over.
    pub fn passed(&self, origin: &str, kind: Kind) {
        let mut states = self.states();
        if let Some(b) = states.get_mut(&(origin.to_owned(), kind)) {
            b.succeeded();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn retry_after_reads_seconds_and_each_date_form() {
        let now = UNIX_EPOCH + S(784_111_770);
        assert_eq!(retry_after("7", None, now), Some(S(7)));
        assert_eq!(retry_after(" 0 ", None, now), Some(S(0)));
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(retry_after(date, None, now), Some(S(7)), "{date}");
        }
        assert_eq!(retry_after("soon", None, now), None);
        assert_eq!(retry_after("-3", None, now), None);
        assert_eq!(retry_after("", None, now), None);
        // Past: no wait; far: capped.
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:00:00 GMT", None, now),
            Some(S(0))
        );
        assert_eq!(retry_after("99999999999", None, now), Some(MAX_ASKED));
    }

    #[test]
    fn a_date_counts_from_the_answers_own_date_not_this_clock() {
        // This machine's clock is a day ahead of the server's.
        let now = UNIX_EPOCH + S(784_111_777 + 86_400);
        let wait = retry_after(
            "Sun, 06 Nov 1994 08:49:47 GMT",
            Some("Sun, 06 Nov 1994 08:49:37 GMT"),
            now,
        );
        assert_eq!(wait, Some(S(10)));
    }

    #[test]
    fn a_refusal_of_one_kind_holds_back_only_that_kind_at_that_address() {
        let t = Throttles::new(Ladder::new(S(1), S(60)));
        let now = Instant::now();
        let a = "http://a:1";
        let th = t.refused(a, Kind::ProgressWrite, Some(S(30)), now);
        assert_eq!(th.until, now + S(30));
        assert!(t.closed(a, Kind::ProgressWrite, now + S(29)).is_some());
        assert!(t.closed(a, Kind::ProgressWrite, now + S(30)).is_none());
        assert!(t.closed(a, Kind::Read, now).is_none());
        assert!(t.closed("http://b:1", Kind::ProgressWrite, now).is_none());
        // A read that works does not open the writes.
        t.passed(a, Kind::Read);
        assert!(t.closed(a, Kind::ProgressWrite, now + S(1)).is_some());
        t.passed(a, Kind::ProgressWrite);
        assert!(t.closed(a, Kind::ProgressWrite, now + S(1)).is_none());
    }

    #[test]
    fn a_shorter_wait_never_shortens_one_in_force() {
        let mut b = Backoff::default();
        let now = Instant::now();
        let l = Ladder::new(S(1), S(60));
        b.failed(l, Some(S(30)), now);
        let until = b.failed(l, Some(S(2)), now + S(1));
        assert_eq!(until, now + S(30));
    }

    proptest! {
        #[test]
        fn each_wait_is_within_the_upper_half_of_its_doubled_step(
            first_ms in 1u64..5_000,
            cap_ms in 1u64..120_000,
            n in 1u32..40,
            unit in 0.0f64..1.0,
        ) {
            let l = Ladder::new(Duration::from_millis(first_ms), Duration::from_millis(cap_ms));
            let step = Duration::from_millis(first_ms)
                .saturating_mul(1 << (n - 1).min(20))
                .min(Duration::from_millis(cap_ms.max(first_ms)));
            let w = l.wait_at(n, unit);
            prop_assert!(w >= step / 2 && w <= step, "{w:?} for step {step:?}");
            // Never less than the step before's least.
            if n > 1 {
                prop_assert!(l.wait_at(n, 0.0) >= l.wait_at(n - 1, 0.0));
            }
        }

        #[test]
        fn a_retry_after_in_seconds_is_waited_whole(secs in 0u64..3600) {
            let mut b = Backoff::default();
            let now = Instant::now();
            let until = b.failed(Ladder::new(S(1), S(60)), Some(S(secs)), now);
            prop_assert_eq!(until, now + S(secs));
            prop_assert_eq!(b.left(now), (secs > 0).then(|| S(secs)));
        }
    }
}
