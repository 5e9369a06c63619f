//! Offline listening: books downloaded to the data directory and played
//! from there without the server.
//!
//! - `store`: the layout per scope (serverId, user: every address of the
//!   server shares it) and per book,
//!   the manifest snapshot kept with the files, and each download's state
//!   (only a complete download is ever played);
//! - `fetch`: downloading through the play endpoint with Range resume,
//!   length checks, rename-when-whole and the size limit;
//! - `plan`: its pure rules (files of a manifest, Range answers, sizes);
//! - here: which queue to play (the server's, or the snapshot's). The
//!   stream resolver that plays the local files, and the index of their
//!   mp3 frames, belong to the playback owner (`crate::playback`).
//!
//! Sits at the `sync` level: it uses `api`, `config` and `player`, never
//! `sync` or anything above. Progress of offline playback goes through
//! sync's front door like any other.

pub mod fetch;
#[cfg(test)]
pub(crate) mod fixture;
pub mod plan;
pub mod store;

pub use fetch::{DownloadError, Options, Outcome, Progress, download};
pub use plan::human_bytes;
pub use store::{Download, DownloadState, Scope, Snapshot, Store, StoreError};

use crate::api::ApiError;
use crate::domain::Manifest;

/// Where the audio of a book comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Stream the server's manifest.
    Stream(Manifest),
    /// Play the complete download; its snapshot is the queue.
    Local(Manifest),
}

/// What to tell the user alongside the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The snapshot matches the server's manifest.
    Current,
    /// The server could not be reached: the snapshot is the queue.
    ServerUnreachable,
    /// The server's manifest differs from the snapshot: streaming the
    /// server's queue; the download should be updated.
    Outdated,
    /// No complete download.
    NotDownloaded,
}

/// Chooses the queue from the server's answer and the download, if any.
/// Never a stale queue silently: a snapshot that differs from the server's
/// manifest is not played. The license and every other refusal of a
/// reachable server win over the download.
pub fn choose(
    server: Result<Manifest, ApiError>,
    local: Option<&Download>,
) -> Result<(Source, Why), ApiError> {
    let complete = local.filter(|d| d.state == DownloadState::Complete);
    match (server, complete) {
        (Ok(m), Some(d)) if d.snapshot.manifest == m => Ok((Source::Local(m), Why::Current)),
        (Ok(m), Some(_)) => Ok((Source::Stream(m), Why::Outdated)),
        (Ok(m), None) => Ok((Source::Stream(m), Why::NotDownloaded)),
        (Err(e), Some(d)) if e.is_transient() => Ok((
            Source::Local(d.snapshot.manifest.clone()),
            Why::ServerUnreachable,
        )),
        (Err(e), _) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BookId, ChapterId, ManifestItem};
    use store::FileEntry;

    fn manifest(ids: &[&str]) -> Manifest {
        Manifest {
            book_id: BookId::new("b"),
            items: ids
                .iter()
                .map(|id| ManifestItem::whole(*id, *id, Some(10.0)))
                .collect(),
        }
    }

    fn download(m: &Manifest, state: DownloadState) -> Download {
        Download {
            dir: "/tmp/x".into(),
            snapshot: Snapshot {
                book_id: m.book_id.clone(),
                title: None,
                manifest: m.clone(),
                files: vec![FileEntry {
                    source: "s".into(),
                    chapters: m.items.iter().map(|i| i.chapter_id.clone()).collect(),
                    length: Some(1),
                }],
                saved_at: 0,
            },
            state,
            bytes: 1,
        }
    }

    fn offline() -> ApiError {
        ApiError::Network {
            address: "http://127.0.0.1:1".into(),
            message: "connection refused".into(),
        }
    }

    #[test]
    fn the_download_plays_only_when_it_matches_or_the_server_is_away() {
        let m = manifest(&["a", "b"]);
        let done = download(&m, DownloadState::Complete);
        assert_eq!(
            choose(Ok(m.clone()), Some(&done)).unwrap(),
            (Source::Local(m.clone()), Why::Current)
        );
        assert_eq!(
            choose(Err(offline()), Some(&done)).unwrap(),
            (Source::Local(m.clone()), Why::ServerUnreachable)
        );
        // The server's queue changed: never the stale one.
        let changed = manifest(&["a", "c", "b"]);
        assert_eq!(
            choose(Ok(changed.clone()), Some(&done)).unwrap(),
            (Source::Stream(changed), Why::Outdated)
        );
    }

    #[test]
    fn a_partial_download_is_never_played() {
        let m = manifest(&["a"]);
        let part = download(
            &m,
            DownloadState::Partial {
                have: 0,
                want: Some(1),
            },
        );
        assert!(choose(Err(offline()), Some(&part)).is_err());
        assert_eq!(
            choose(Ok(m.clone()), Some(&part)).unwrap(),
            (Source::Stream(m), Why::NotDownloaded)
        );
        assert_eq!(part.local_file(&ChapterId::new("a")), None);
    }

    #[test]
    fn a_license_refusal_wins_over_the_download() {
        let m = manifest(&["a"]);
        let done = download(&m, DownloadState::Complete);
        let license = ApiError::LicenseRequired {
            message: "expired".into(),
        };
        assert!(choose(Err(license), Some(&done)).unwrap_err().is_license());
    }
}
