//! A manifest entry and an account for the tests of the modules that
//! keep them.

use crate::domain::{Account, ChapterId, ManifestItem, ServerId, UserId};

/// Chapter `id`, a whole stream with no URL of its own.
pub(crate) fn item(
    id: impl Into<String>,
    title: impl Into<String>,
    secs: Option<f64>,
) -> ManifestItem {
    ManifestItem {
        chapter_id: ChapterId::new(id),
        title: title.into(),
        duration: secs,
        duration_source: Default::default(),
        url: None,
        mime_type: None,
        size_bytes: None,
        start: 0.0,
        end: None,
    }
}

/// User `user` of server `server`.
pub(crate) fn account(server: &str, user: u64) -> Account {
    Account {
        server_id: ServerId::new(server),
        user_id: UserId::from(user),
    }
}
