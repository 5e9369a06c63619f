//! Ids: opaque strings chosen by the server (never parsed, never derived
//! from list positions), and the user's id, kept as the server's digits.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! opaque_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
    };
}

opaque_id!(
    /// A book, as the server names it (the empty id: `Book::default`).
    #[derive(Default)]
    BookId
);
opaque_id!(
    /// A chapter: the persistent identity of a manifest item.
    ChapterId
);
opaque_id!(
    /// A category.
    CategoryId
);
opaque_id!(
    /// A bookmark.
    BookmarkId
);
opaque_id!(
    /// The server instance; changes when the instance is rebuilt.
    ServerId
);

/// The logged-in user's id: numeric by contract, and kept as the server's
/// digits exactly (`0042` stays `0042`; a number beyond 2^64 keeps every
/// digit), so the identity header names the user as the server does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserId(String);

impl UserId {
    /// The id in `s` (surrounding spaces aside): one or more ASCII digits.
    pub fn parse(s: &str) -> Option<UserId> {
        let t = s.trim();
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| UserId(t.to_owned()))
    }

    /// The server's digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<u64> for UserId {
    fn from(n: u64) -> Self {
        UserId(n.to_string())
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A JSON number when the digits are one as written (what earlier versions
/// stored, so session files and journals read the same), else a string.
impl Serialize for UserId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.parse::<u64>() {
            Ok(n) if n.to_string() == self.0 => s.serialize_u64(n),
            _ => s.serialize_str(&self.0),
        }
    }
}

impl<'de> Deserialize<'de> for UserId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Digits;
        impl serde::de::Visitor<'_> for Digits {
            type Value = UserId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a user id: a number, or a string of digits")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<UserId, E> {
                Ok(UserId::from(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<UserId, E> {
                u64::try_from(n)
                    .map(UserId::from)
                    .map_err(|_| E::custom(format!("user id {n} is negative")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<UserId, E> {
                UserId::parse(s).ok_or_else(|| E::custom(format!("user id {s:?} is not digits")))
            }
        }
        d.deserialize_any(Digits)
    }
}

#[cfg(test)]
mod user_id_tests {
    use super::UserId;

    #[test]
    fn a_user_id_keeps_the_servers_digits() {
        for s in ["0042", "42", "123456789012345678901234567890"] {
            let id = UserId::parse(s).unwrap();
            assert_eq!(id.to_string(), s);
            let back: UserId = serde_json::from_str(&serde_json::to_string(&id).unwrap()).unwrap();
            assert_eq!(back, id);
        }
        // The form earlier versions stored reads and writes the same.
        assert_eq!(serde_json::to_string(&UserId::from(7)).unwrap(), "7");
        assert_eq!(
            serde_json::from_str::<UserId>("7").unwrap(),
            UserId::from(7)
        );
        assert_eq!(
            serde_json::to_string(&UserId::parse("0042").unwrap()).unwrap(),
            "\"0042\""
        );
        for bad in ["", "4a", "-1", "4 2"] {
            assert_eq!(UserId::parse(bad), None, "{bad:?}");
        }
        assert!(serde_json::from_str::<UserId>("-3").is_err());
    }
}
