//! The pure rules of a download: which files a manifest needs, what a
//! Range answer means for a partial file, and sizes in words. No I/O, so
//! they are tested (and property-tested) on their own.

use super::store::FileEntry;
use crate::domain::{Manifest, ManifestItem};

/// Files of a manifest in server order: one per distinct stream (chapters
/// embedded in one file share it). `url_of` is the stream URL, no token.
pub fn plan(manifest: &Manifest, url_of: impl Fn(&ManifestItem) -> String) -> Vec<FileEntry> {
    let mut files: Vec<FileEntry> = Vec::new();
    for item in &manifest.items {
        let source = url_of(item);
        match files.iter_mut().find(|f| f.source == source) {
            Some(f) => f.chapters.push(item.chapter_id.clone()),
            None => files.push(FileEntry {
                source,
                chapters: vec![item.chapter_id.clone()],
                length: None,
            }),
        }
    }
    files
}

/// How to treat an answer to `Range: bytes=HAVE-` for a file of which
/// `have` bytes are on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// 206 from `have`: append; the whole file is `total`.
    Append { total: u64 },
    /// 200: the server sent the whole file; start over.
    Restart { total: u64 },
}

/// Reads the status and length headers of an answer. Fails closed when the
/// length cannot be known: a file whose length is unknown cannot be checked.
pub fn resume_from(
    have: u64,
    status: u16,
    content_range: Option<&str>,
    content_length: Option<u64>,
) -> Result<Resume, String> {
    match status {
        206 => {
            let cr = content_range.ok_or("a partial answer (206) without Content-Range")?;
            let (first, last, total) = parse_content_range(cr)
                .ok_or_else(|| format!("Content-Range {cr:?} is not `bytes FIRST-LAST/TOTAL`"))?;
            if first != have {
                return Err(format!(
                    "asked for bytes from {have}, the server sent them from {first}"
                ));
            }
            if last + 1 != total {
                return Err(format!(
                    "asked for bytes to the end, the server sent {first}-{last} of {total}"
                ));
            }
            if let Some(len) = content_length
                && len != total - first
            {
                return Err(format!(
                    "Content-Length {len} does not match Content-Range {cr:?}"
                ));
            }
            Ok(Resume::Append { total })
        }
        200 => content_length
            .map(|total| Resume::Restart { total })
            .ok_or_else(|| {
                "the server did not say how long the file is (no Content-Length)".into()
            }),
        other => Err(format!("unexpected HTTP {other}")),
    }
}

fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes")?.trim();
    let (range, total) = rest.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let (a, b, t) = (
        a.trim().parse().ok()?,
        b.trim().parse().ok()?,
        total.trim().parse().ok()?,
    );
    (a <= b && b < t).then_some((a, b, t))
}

pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1000.0 && i < UNITS.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BookId, ChapterId};

    #[test]
    fn a_range_answer_continues_only_from_the_byte_asked_for() {
        assert_eq!(
            resume_from(100, 206, Some("bytes 100-999/1000"), Some(900)),
            Ok(Resume::Append { total: 1000 })
        );
        assert!(resume_from(100, 206, Some("bytes 0-999/1000"), None).is_err());
        assert!(resume_from(100, 206, Some("bytes 100-499/1000"), None).is_err());
        assert!(resume_from(100, 206, Some("bytes 100-999/1000"), Some(50)).is_err());
        assert!(resume_from(100, 206, Some("bytes 100-999/*"), None).is_err());
        assert!(resume_from(100, 206, None, Some(900)).is_err());
        // Range ignored: start over with the announced length.
        assert_eq!(
            resume_from(100, 200, None, Some(1000)),
            Ok(Resume::Restart { total: 1000 })
        );
        // No length at all: it cannot be checked, so it is refused.
        assert!(resume_from(0, 200, None, None).is_err());
    }

    #[test]
    fn embedded_chapters_share_one_file_in_server_order() {
        let item = |id: &str, url: &str| ManifestItem {
            url: Some(url.into()),
            ..ManifestItem::whole(id, id, None)
        };
        let m = Manifest {
            book_id: BookId::new("b"),
            items: vec![item("c2", "/b"), item("c1", "/a"), item("c3", "/a")],
        };
        let files = plan(&m, |i| i.url.clone().unwrap());
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].source, "/b");
        assert_eq!(
            files[1].chapters,
            vec![ChapterId::new("c1"), ChapterId::new("c3")]
        );
    }

    proptest::proptest! {
        #[test]
        fn only_the_exact_continuation_is_appended(
            have in 0u64..1_000_000,
            extra in 1u64..1_000_000,
            first in 0u64..2_000_000,
        ) {
            let total = have + extra;
            let exact = format!("bytes {have}-{}/{total}", total - 1);
            proptest::prop_assert_eq!(
                resume_from(have, 206, Some(&exact), Some(extra)),
                Ok(Resume::Append { total })
            );
            if first != have && first < total {
                let other = format!("bytes {first}-{}/{total}", total - 1);
                proptest::prop_assert!(resume_from(have, 206, Some(&other), None).is_err());
            }
        }
    }

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_500_000), "1.5 MB");
    }
}
