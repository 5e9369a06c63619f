//! Downloading a book: the complete manifest in server order, each stream
//! through the play endpoint (the client's stream request, so the token
//! and the license rule are the API's), into `.part` files that resume
//! with a Range request, checked against the announced length, then
//! renamed. The size limit and the free space are checked before the
//! first audio byte; a disk that fills up on the way stops the download
//! with a clear message and removes the unfinished file (a `.part` is
//! never counted complete).

use super::plan::{Resume, human_bytes, plan, resume_from};
use super::store::{Download, DownloadState, FileEntry, Scope, Snapshot, Store, StoreError};
use crate::api::{ApiError, Client, StreamRequest};
use crate::domain::backoff::{Backoff, Kind, Ladder};
use crate::domain::{BookId, Manifest, now_millis};
use crate::durable::{DiskError, Fault, LockFile, Wait};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// Attempts per file when the network or server fails on the way.
const ATTEMPTS: u32 = 6;

/// Waits between them (`domain::backoff`).
const AGAIN: Ladder = Ladder::new(Duration::from_millis(400), Duration::from_secs(5));

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "downloading this book needs {} more but the download limit is {} and {} is used; remove a download (`earmark downloads remove BOOK_ID`) or raise `max_size` under [downloads] in config.toml",
        human_bytes(*.need), human_bytes(*.limit), human_bytes(*.used)
    )]
    TooLarge { need: u64, used: u64, limit: u64 },
    #[error("the server's answer for {source_url} cannot be checked: {message}")]
    Length { source_url: String, message: String },
    #[error("this book is being downloaded by another earmark already")]
    Busy,
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
    #[error("the book has no chapters to download")]
    Empty,
}

/// What `download` reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the book on disk (complete and partial).
    pub done: u64,
    /// The book's announced size.
    pub total: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `[downloads] max_size`: all downloads together.
    pub limit: Option<u64>,
    /// Bytes per second (`--limit-rate`).
    pub rate: Option<u64>,
}

/// What one run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub download: Download,
    /// Bytes transferred by this run (less than the size after a resume).
    pub fetched: u64,
    /// The previous download was for another manifest and was replaced.
    pub replaced: bool,
}

/// Holds an exclusive lock on a book directory while it is downloaded.
fn lock_dir(dir: &Path) -> Result<LockFile, DownloadError> {
    LockFile::take(&dir.join(".lock"), Wait::No).map_err(|e| match e.fault {
        Fault::Locked => DownloadError::Busy,
        _ => StoreError::Disk(e).into(),
    })
}

fn write_error(path: &Path, e: std::io::Error) -> DownloadError {
    StoreError::Disk(DiskError::new(path, e)).into()
}

/// A write to a `.part` failed. On a full disk the part is removed: its
/// space goes back to the rest of the system (the sync journal first).
fn part_failed(part: &Path, e: std::io::Error) -> DownloadError {
    let e = DiskError::new(part, e);
    if e.fault == Fault::DiskFull {
        if let Err(r) = std::fs::remove_file(part) {
            tracing::warn!("download: cannot remove {}: {r}", part.display());
        }
        return StoreError::Full(e).into();
    }
    StoreError::Disk(e).into()
}

/// Downloads (or resumes, or updates) `book` for `scope`.
pub async fn download(
    client: &Client,
    store: &Store,
    scope: &Scope,
    book: &BookId,
    options: &Options,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Outcome, DownloadError> {
    let manifest = client.manifest(book).await?;
    if manifest.items.is_empty() {
        return Err(DownloadError::Empty);
    }
    let title = client.book(book).await.ok().map(|b| b.title);
    let Planned {
        mut files,
        fresh,
        replaced,
    } = plan_over(client, store, scope, book, &manifest)?;
    let dir = store.prepare(scope, book)?;
    let lock = lock_dir(&dir)?;
    let requests: Vec<StreamRequest> = files
        .iter()
        .map(|f| {
            let item = manifest
                .item(&f.chapters[0])
                .expect("planned from this manifest");
            client.stream_request(item)
        })
        .collect();
    let (total, on_disk) =
        match make_room(client, store, options, &dir, &requests, &mut files).await {
            Ok(sizes) => sizes,
            Err(e) => {
                // Nothing of an earlier download to keep: none is left behind.
                if fresh {
                    drop(lock);
                    let _ = store.remove(scope, book);
                }
                return Err(e);
            }
        };
    let mut snapshot = Snapshot {
        book_id: book.clone(),
        title,
        manifest,
        files,
        saved_at: now_millis(),
    };
    store.save_snapshot(&dir, &snapshot)?;
    let mut meter = Meter {
        done: on_disk,
        total,
        fetched: 0,
        began: Instant::now(),
        rate: options.rate,
    };
    on_progress(meter.progress());
    for (i, req) in requests.iter().enumerate() {
        let complete = snapshot.files[i].length == file_len(&dir.join(snapshot.files[i].name()));
        if complete {
            continue;
        }
        let changed = fetch_file(
            client,
            req,
            &dir,
            &mut snapshot.files[i],
            &mut meter,
            on_progress,
        )
        .await?;
        if changed {
            store.save_snapshot(&dir, &snapshot)?;
        }
    }
    let download = store
        .get(scope, book)?
        .ok_or_else(|| DownloadError::Write {
            path: dir.display().to_string(),
            message: "the download disappeared while it was written".into(),
        })?;
    debug_assert_eq!(download.state, DownloadState::Complete);
    Ok(Outcome {
        download,
        fetched: meter.fetched,
        replaced,
    })
}

/// The files a download fetches, and what is on disk of an earlier one.
struct Planned {
    files: Vec<FileEntry>,
    /// Nothing of an earlier download is kept.
    fresh: bool,
    /// An earlier download of another manifest was removed.
    replaced: bool,
}

/// Plans the files of `manifest`. An earlier download of the same
/// manifest lends what it learnt of the same streams; one of another
/// manifest is removed.
fn plan_over(
    client: &Client,
    store: &Store,
    scope: &Scope,
    book: &BookId,
    manifest: &Manifest,
) -> Result<Planned, DownloadError> {
    // Named as the first address names them, so a download goes on
    // through any address of the server.
    let mut files = plan(manifest, |i| client.stream_key(i).to_string());
    let existing = store.get(scope, book)?;
    let mut replaced = false;
    if let Some(old) = &existing {
        if old.snapshot.manifest == *manifest {
            // Keep what was learnt about the same streams.
            for f in &mut files {
                if let Some(o) = old.snapshot.files.iter().find(|o| o.source == f.source) {
                    f.length = o.length;
                }
            }
        } else {
            store.remove(scope, book)?;
            replaced = true;
        }
    }
    Ok(Planned {
        files,
        fresh: existing.is_none() || replaced,
        replaced,
    })
}

/// Learns the length of every file not known yet, then checks the rest of
/// the book fits: under the download limit and on the disk. Returns the
/// book's size and the bytes of it already on disk.
async fn make_room(
    client: &Client,
    store: &Store,
    options: &Options,
    dir: &Path,
    requests: &[StreamRequest],
    files: &mut [FileEntry],
) -> Result<(u64, u64), DownloadError> {
    for (f, req) in files.iter_mut().zip(requests) {
        if f.length.is_none() {
            f.length = Some(announced_length(client, req, f).await?);
        }
    }
    let total: u64 = files.iter().filter_map(|f| f.length).sum();
    let on_disk = on_disk_bytes(dir, files);
    let need = total.saturating_sub(on_disk);
    if let Some(limit) = options.limit {
        let used = store.used_bytes()?;
        if used + need > limit {
            return Err(DownloadError::TooLarge { need, used, limit });
        }
    }
    store.check_room(dir, need)?;
    Ok((total, on_disk))
}

fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

fn on_disk_bytes(dir: &Path, files: &[FileEntry]) -> u64 {
    files
        .iter()
        .map(|f| file_len(&dir.join(f.name())).or_else(|| file_len(&dir.join(f.part_name()))))
        .map(|l| l.unwrap_or(0))
        .sum()
}

struct Meter {
    done: u64,
    total: u64,
    fetched: u64,
    began: Instant,
    rate: Option<u64>,
}

impl Meter {
    fn progress(&self) -> Progress {
        Progress {
            done: self.done,
            total: self.total.max(self.done),
        }
    }

    /// Counts `n` bytes; with a rate limit, waits until they are due.
    async fn add(&mut self, n: u64) {
        self.done += n;
        self.fetched += n;
        if let Some(rate) = self.rate.filter(|r| *r > 0) {
            let due = self.began + Duration::from_secs_f64(self.fetched as f64 / rate as f64);
            tokio::time::sleep_until(due.into()).await;
        }
    }
}

/// The length the server announces for a stream (asked with a Range from
/// 0; the body is not read).
async fn announced_length(
    client: &Client,
    req: &StreamRequest,
    f: &FileEntry,
) -> Result<u64, DownloadError> {
    let resp = with_retries(client, || client.open_stream(req, Some(0))).await?;
    match resume_answer(&resp, 0, f)? {
        Resume::Append { total } | Resume::Restart { total } => Ok(total),
    }
}

/// What an answer to a Range from `have` means for `f`'s part; an answer
/// whose length can't be known fails (its headers go to the log).
fn resume_answer(
    resp: &reqwest::Response,
    have: u64,
    f: &FileEntry,
) -> Result<Resume, DownloadError> {
    resume_from(
        have,
        resp.status().as_u16(),
        header(resp, "content-range").as_deref(),
        resp.content_length(),
    )
    .map_err(|message| {
        tracing::warn!(
            "download: the answer for {} had {:?}",
            f.source,
            resp.headers()
        );
        DownloadError::Length {
            source_url: f.source.clone(),
            message,
        }
    })
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn with_retries<T, F, Fut>(client: &Client, mut f: F) -> Result<T, ApiError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ApiError>>,
{
    let mut tries = Backoff::default();
    let mut attempt = 1;
    loop {
        match f().await {
            Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                again(client, &e, &mut tries).await;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Waits before a download asks again after `e`: until the server's
/// back-off for audio opens when it asked to wait (429, 503), else a step
/// of [`AGAIN`].
async fn again(client: &Client, e: &ApiError, tries: &mut Backoff) {
    let now = std::time::Instant::now();
    let until = match client.throttle(Kind::Audio) {
        Some(t) if e.is_throttle() || e.slows_down() => t.until,
        _ => tries.failed(AGAIN, None, now),
    };
    tokio::time::sleep_until(until.into()).await;
}

/// Downloads one file into its `.part` (resuming what is there), checks its
/// length and renames it. Returns true when the announced length changed.
async fn fetch_file(
    client: &Client,
    req: &StreamRequest,
    dir: &Path,
    entry: &mut FileEntry,
    meter: &mut Meter,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<bool, DownloadError> {
    let part = dir.join(entry.part_name());
    let done = dir.join(entry.name());
    let mut changed = false;
    let mut tries = Backoff::default();
    for attempt in 1..=ATTEMPTS {
        let have = file_len(&part).unwrap_or(0);
        let resp = match client.open_stream(req, Some(have)).await {
            Ok(r) => r,
            // The part already holds everything (a kill after the last byte).
            Err(ApiError::Status { status: 416, .. }) if Some(have) == entry.length => {
                return finish(&part, &done, have, entry).map(|_| changed);
            }
            Err(ApiError::Status { status: 416, .. }) => {
                remove_part(&part)?;
                continue;
            }
            Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                again(client, &e, &mut tries).await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let resume = resume_answer(&resp, have, entry)?;
        let (append, total) = match resume {
            Resume::Append { total } => (true, total),
            Resume::Restart { total } => (false, total),
        };
        if entry.length != Some(total) {
            // The file on the server is not the one the part was started
            // from: what is on disk cannot be continued.
            entry.length = Some(total);
            changed = true;
            if append && have > 0 {
                drop(resp);
                remove_part(&part)?;
                meter.done = meter.done.saturating_sub(have);
                continue;
            }
        }
        if !append {
            meter.done = meter.done.saturating_sub(have);
        }
        let body = Body {
            part: &part,
            have,
            resume,
            entry,
        };
        let (written, broke) = body.receive(resp, meter, on_progress).await?;
        if written == total {
            return finish(&part, &done, total, entry).map(|_| changed);
        }
        // Cut short: resume from what arrived.
        if !broke {
            tracing::debug!("download: {} ended at {written} of {total}", entry.source);
        }
        if attempt < ATTEMPTS {
            let until = tries.failed(AGAIN, None, std::time::Instant::now());
            tokio::time::sleep_until(until.into()).await;
        }
    }
    Err(DownloadError::Length {
        source_url: entry.source.clone(),
        message: format!(
            "the file stayed incomplete after {ATTEMPTS} attempts; run the download again to resume it"
        ),
    })
}

/// One answer's body on its way into a `.part`.
struct Body<'a> {
    part: &'a Path,
    /// Bytes of the part on disk when it was asked for.
    have: u64,
    /// Appended to them, or written over them.
    resume: Resume,
    entry: &'a FileEntry,
}

impl Body<'_> {
    /// Writes the body into the part as it arrives, counting it, and makes
    /// it durable. Returns the part's length and whether the answer broke
    /// off; more bytes than announced remove the part and fail.
    async fn receive(
        &self,
        mut resp: reqwest::Response,
        meter: &mut Meter,
        on_progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<(u64, bool), DownloadError> {
        let part = self.part;
        let (append, total) = match self.resume {
            Resume::Append { total } => (true, total),
            Resume::Restart { total } => (false, total),
        };
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(append)
            .write(true)
            .truncate(!append)
            .open(part)
            .await
            .map_err(|e| part_failed(part, e))?;
        // Few large writes; flushed every second, so an interrupted
        // download keeps (and resumes from) nearly all it received.
        let mut file = tokio::io::BufWriter::with_capacity(1 << 20, file);
        let mut flushed = Instant::now();
        let mut written = if append { self.have } else { 0 };
        let mut broke = false;
        loop {
            match resp.chunk().await {
                Ok(Some(bytes)) => {
                    if written + bytes.len() as u64 > total {
                        drop(file);
                        remove_part(part)?;
                        return Err(DownloadError::Length {
                            source_url: self.entry.source.clone(),
                            message: format!(
                                "the server sent more than the {total} bytes it announced"
                            ),
                        });
                    }
                    file.write_all(&bytes)
                        .await
                        .map_err(|e| part_failed(part, e))?;
                    written += bytes.len() as u64;
                    // A rate-limited download waits after each chunk: write it first.
                    if meter.rate.is_some() || flushed.elapsed() >= Duration::from_secs(1) {
                        file.flush().await.map_err(|e| part_failed(part, e))?;
                        flushed = Instant::now();
                    }
                    meter.add(bytes.len() as u64).await;
                    on_progress(meter.progress());
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!("download interrupted: {e}");
                    broke = true;
                    break;
                }
            }
        }
        file.flush().await.map_err(|e| part_failed(part, e))?;
        file.get_ref()
            .sync_all()
            .await
            .map_err(|e| part_failed(part, e))?;
        Ok((written, broke))
    }
}

fn remove_part(part: &Path) -> Result<(), DownloadError> {
    match std::fs::remove_file(part) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(write_error(part, e)),
    }
}

/// The part is whole: rename it to its final name.
fn finish(part: &Path, done: &Path, total: u64, entry: &FileEntry) -> Result<(), DownloadError> {
    if file_len(part) != Some(total) {
        return Err(DownloadError::Length {
            source_url: entry.source.clone(),
            message: format!("the file on disk is not {total} bytes long"),
        });
    }
    std::fs::rename(part, done).map_err(|e| write_error(done, e))?;
    // The rename survives a power cut (else the file would come back as
    // a whole `.part`, which the next run renames).
    if let Some(dir) = done.parent()
        && let Err(e) = crate::durable::sync_dir(dir)
    {
        tracing::warn!("download: cannot flush {}: {e}", dir.display());
    }
    Ok(())
}
