//! A manifest entry for the tests of the modules that read manifests.

use crate::domain::{ChapterId, ManifestItem};

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
