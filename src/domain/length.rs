//! Lengths of chapters: where each came from, and how a server's number
//! under a key that names no unit (`duration`, `length`) is read: by
//! earmark's own measure of the audio, never by its size.
//!
//! A server uses one unit per field, so the unit found for one chapter of
//! an address holds for that field of every chapter ([`Unit`] is learned
//! once, by the client). A number no unit fits is no length: "unknown".

use serde::{Deserialize, Serialize};

/// Where a chapter's length (`duration`) came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DurationSource {
    /// The server's number, in the unit its key or form names
    /// (`durationSec`, `durationMs`, `"1:02:03"`), or in the unit earmark's
    /// measure chose for a key that names none. (Also when there is no
    /// length: then `duration` is `None`.)
    #[default]
    Server,
    /// earmark's own measure: the stream's header, the decoder's count.
    Measured,
    /// A number under a key that names no unit, not yet checked against
    /// the audio: not a length yet (`duration` is `None`).
    Unchecked(Unitless),
}

impl DurationSource {
    /// The word `--json` uses (`durationSource`): `None` when there is no
    /// length to name a source for.
    pub fn word(&self, duration: Option<f64>) -> Option<&'static str> {
        match (self, duration) {
            (_, None) | (DurationSource::Unchecked(_), _) => None,
            (DurationSource::Server, Some(_)) => Some("server"),
            (DurationSource::Measured, Some(_)) => Some("measured"),
        }
    }

    /// The server's number, when it named no unit and is not read yet.
    pub fn unchecked(&self) -> Option<&Unitless> {
        match self {
            DurationSource::Unchecked(u) => Some(u),
            _ => None,
        }
    }
}

/// A number a server gave under a key that names no unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unitless {
    /// The key as the server wrote it (`duration`, `length`).
    pub key: String,
    pub value: f64,
}

/// A unit a number without one may be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Unit {
    Seconds,
    Millis,
    Minutes,
}

impl Unit {
    pub const ALL: [Unit; 3] = [Unit::Seconds, Unit::Millis, Unit::Minutes];

    /// `value` of this unit in seconds.
    pub fn secs(self, value: f64) -> f64 {
        match self {
            Unit::Seconds => value,
            Unit::Millis => value / 1000.0,
            Unit::Minutes => value * 60.0,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Unit::Seconds => "seconds",
            Unit::Millis => "milliseconds",
            Unit::Minutes => "minutes",
        }
    }
}

/// A length earmark measured itself, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    pub secs: f64,
    /// Counted (samples in a header, the decoder's count), not estimated
    /// from the byte count and a bit rate.
    pub exact: bool,
}

impl Measure {
    /// How far a length may be from this measure and still fit: 10 % and
    /// half a second of a count (a server may round, or count a tag), a
    /// factor of 2 of an estimate (a VBR stream's first frames are not its
    /// average). Seconds, milliseconds and minutes are 60 to 60,000 times
    /// apart and each window is at most 4 wide, so at most one unit ever
    /// fits. Under a second of audio tells no unit.
    pub fn fits(&self, secs: f64) -> bool {
        let m = self.secs;
        if !(m.is_finite() && m >= 1.0 && secs.is_finite() && secs > 0.0) {
            return false;
        }
        if self.exact {
            (secs - m).abs() <= m * 0.1 + 0.5
        } else {
            (m / 2.0..=m * 2.0).contains(&secs)
        }
    }
}

/// The unit in which `value` is the measured length; `None` when none fits
/// (then the number is no length: unknown, never a guess).
pub fn unit_of(value: f64, measured: Measure) -> Option<Unit> {
    Unit::ALL.into_iter().find(|u| measured.fits(u.secs(value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const COUNTED: fn(f64) -> Measure = |secs| Measure { secs, exact: true };
    const ESTIMATED: fn(f64) -> Measure = |secs| Measure { secs, exact: false };

    #[test]
    fn a_90_second_chapter_in_every_unit() {
        for m in [COUNTED(90.0), ESTIMATED(70.0)] {
            assert_eq!(unit_of(90.0, m), Some(Unit::Seconds));
            assert_eq!(unit_of(90_000.0, m), Some(Unit::Millis));
            assert_eq!(unit_of(1.5, m), Some(Unit::Minutes));
        }
    }

    #[test]
    fn a_number_no_unit_fits_is_no_length() {
        assert_eq!(unit_of(500.0, COUNTED(90.0)), None);
        assert_eq!(unit_of(0.0, COUNTED(90.0)), None);
        assert_eq!(unit_of(90.0, COUNTED(0.0)), None);
        assert_eq!(unit_of(f64::NAN, COUNTED(90.0)), None);
        assert_eq!(unit_of(90.0, ESTIMATED(f64::INFINITY)), None);
    }

    #[test]
    fn a_short_chapter_is_told_apart_too() {
        // 2 s: as seconds 2, as ms 0.002, as minutes 120.
        assert_eq!(unit_of(2000.0, COUNTED(2.0)), Some(Unit::Millis));
        assert_eq!(unit_of(2.0, COUNTED(2.4)), Some(Unit::Seconds));
        assert_eq!(unit_of(0.5, COUNTED(0.5)), None, "too short to tell");
    }

    #[test]
    fn sources_in_json_words() {
        let u = DurationSource::Unchecked(Unitless {
            key: "duration".into(),
            value: 9.0,
        });
        assert_eq!(DurationSource::Server.word(Some(1.0)), Some("server"));
        assert_eq!(DurationSource::Measured.word(Some(1.0)), Some("measured"));
        assert_eq!(DurationSource::Server.word(None), None);
        assert_eq!(u.word(None), None);
        assert_eq!(u.unchecked().map(|u| u.value), Some(9.0));
    }

    #[test]
    fn a_measured_length_replaces_an_unread_one_and_places_the_book() {
        let item = |id: &str, source: DurationSource| crate::domain::ManifestItem {
            duration_source: source,
            ..crate::domain::ManifestItem::whole(id, id, None)
        };
        let unread = DurationSource::Unchecked(Unitless {
            key: "duration".into(),
            value: 90_000.0,
        });
        let mut m = crate::domain::Manifest {
            book_id: crate::domain::BookId::new("b"),
            items: vec![item("c1", unread), item("c2", DurationSource::Server)],
        };
        let c1 = crate::domain::ChapterId::new("c1");
        assert_eq!(
            m.book_position(&crate::domain::ChapterId::new("c2"), 5.0),
            None
        );
        assert!(m.set_measured(&c1, 90.0));
        assert_eq!(m.items[0].duration_source, DurationSource::Measured);
        assert_eq!(
            m.book_position(&crate::domain::ChapterId::new("c2"), 5.0),
            Some(95.0)
        );
        assert!(!m.set_measured(&crate::domain::ChapterId::new("nope"), 1.0));
        assert!(!m.set_measured(&c1, f64::NAN));
    }

    proptest! {
        /// Whatever the length and however the server writes it, the unit
        /// found is the one it was written in, and the length read is the
        /// audio's.
        #[test]
        fn the_unit_found_is_the_one_written(
            secs in 2.0f64..200_000.0,
            unit in prop_oneof![Just(Unit::Seconds), Just(Unit::Millis), Just(Unit::Minutes)],
            off in 0.6f64..1.6,
            exact in any::<bool>(),
        ) {
            let value = match unit {
                Unit::Seconds => secs,
                Unit::Millis => secs * 1000.0,
                Unit::Minutes => secs / 60.0,
            };
            // A count is close to the truth; an estimate may be far off.
            let m = Measure { secs: if exact { secs * (0.95 + off / 20.0) } else { secs * off }, exact };
            let found = unit_of(value, m);
            prop_assert_eq!(found, Some(unit));
            prop_assert!((found.unwrap().secs(value) - secs).abs() <= secs * 1e-9);
        }

        /// At most one unit fits any measure.
        #[test]
        fn never_two_units(value in 0.0f64..1e9, secs in 0.0f64..1e7, exact in any::<bool>()) {
            let m = Measure { secs, exact };
            let fitting = Unit::ALL.iter().filter(|u| m.fits(u.secs(value))).count();
            prop_assert!(fitting <= 1);
        }
    }
}
