//! How a place and a length are shown as clocks, in one rule for every
//! screen and command: each in whole seconds, rounded down (a clock shows
//! the seconds that have passed), the place never past the length, and
//! what is left their difference, so elapsed plus remaining is always the
//! length shown.

/// Whole seconds of `secs`, rounded down; negative and non-finite are 0.
pub fn whole_secs(secs: f64) -> u64 {
    if secs.is_finite() && secs > 0.0 {
        secs as u64
    } else {
        0
    }
}

/// `h:mm:ss`, or `m:ss` under an hour, of whole seconds.
pub fn clock_of(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// `h:mm:ss`, always with hours (a script's or a spreadsheet's column
/// reads alike): `earmark play`'s lines, `ctl status`, the journal, CSV.
pub fn hms(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// `secs` as a clock ([`whole_secs`], [`clock_of`]).
pub fn clock(secs: f64) -> String {
    clock_of(whole_secs(secs))
}

/// A place in something `length` long, as clocks show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockTimes {
    pub elapsed: u64,
    pub length: u64,
    /// `length - elapsed`: what is left, in media time.
    pub remaining: u64,
}

impl ClockTimes {
    pub fn new(elapsed: f64, length: f64) -> ClockTimes {
        let length = whole_secs(length);
        let elapsed = whole_secs(elapsed).min(length);
        ClockTimes {
            elapsed,
            length,
            remaining: length - elapsed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn clocks() {
        assert_eq!(clock(0.0), "0:00");
        assert_eq!(clock(751.9), "12:31");
        assert_eq!(clock(3723.0), "1:02:03");
        assert_eq!(clock(f64::NAN), "0:00");
        assert_eq!(clock(-5.0), "0:00");
    }

    #[test]
    fn the_case_of_issue_29_adds_up() {
        // 17.6 s into 22.4 s once showed "0:17 / 0:22 -0:04".
        let t = ClockTimes::new(17.6, 22.4);
        assert_eq!((t.elapsed, t.length, t.remaining), (17, 22, 5));
        // A place past a server's length is shown at the end.
        assert_eq!(ClockTimes::new(95.0, 90.0).remaining, 0);
    }

    proptest! {
        #[test]
        fn elapsed_plus_remaining_is_the_length_shown(
            pos in -10.0f64..100_000.0, len in 0.0f64..100_000.0
        ) {
            let t = ClockTimes::new(pos, len);
            prop_assert_eq!(t.elapsed + t.remaining, t.length);
            prop_assert_eq!(clock_of(t.length), clock(len));
            prop_assert!(t.elapsed <= t.length);
        }
    }
}
