//! Covers for the book screen and MPRIS: fetched, cached on disk, decoded
//! and encoded for the terminal on the backend runtime, never on the UI
//! thread. The UI gets the encoded image (or `None`: the box stays empty)
//! as `Answer::Cover`.
//!
//! The disk cache (`$XDG_CACHE_HOME/earmark/covers/`) keeps the bytes as
//! the server sent them, one file per scope (server id, user: every address of the server shares it) and
//! book, written with `durable::write_atomic`, least recently used first
//! out above [`CACHE_CAP`]. Only bytes that decoded are kept. A cover that
//! cannot be written (a full or read-only disk) leaves the cache as it
//! was, and the user is told once.
//! A 404 is "no cover"; bytes that are not a JPEG or PNG (a gateway's
//! HTML page, a truncated file) are a broken cover: one line in the log.

use super::cache::{CacheFile, Scope, scope_digest};
use super::shared::Shared;
use crate::api::MAX_COVER_BYTES;
use crate::domain::BookId;
use crate::domain::locks::{read, write};
use crate::durable::{DiskError, write_atomic};
use crate::ui::covers::CoverImage;
use crate::ui::state::Answer;
use crate::ui::views::cover::COVER_CELLS;
use ratatui_image::picker::Picker;
use ratatui_image::{FilterType, Resize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

/// All cached covers together.
pub const CACHE_CAP: u64 = 64 << 20;
/// Bigger pictures are refused from their header, before decoding: a side
/// in pixels, and what the decoder may allocate (a 2,400 px square RGB
/// cover decodes to 16.5 MiB; the player's RSS is ~20 MB).
pub const MAX_SIDE: u32 = 4096;
pub const MAX_DECODE_BYTES: u64 = 32 << 20;

pub(crate) struct Covers {
    picker: RwLock<Picker>,
    pub cache: CoverCache,
}

impl Covers {
    /// Half-blocks until the terminal says otherwise (`Backends::graphics`).
    pub fn new(dir: PathBuf) -> Covers {
        Covers {
            picker: RwLock::new(Picker::halfblocks()),
            cache: CoverCache::new(dir, CACHE_CAP),
        }
    }

    pub fn set_picker(&self, p: Picker) {
        *write(&self.picker) = p;
    }

    fn picker(&self) -> Picker {
        read(&self.picker).clone()
    }
}

/// Fetches (or reads from the cache), decodes and encodes `book`'s cover
/// and sends it to the UI.
pub(super) async fn load(sh: Arc<Shared>, covers: Arc<Covers>, book: BookId, url: Option<String>) {
    let image = cover_image(&sh, covers, &book, url).await;
    sh.ui.send(Answer::Cover { book, image });
}

/// The cover's bytes from the cache, else from the server (then `true`:
/// not cached yet). `None`: no cover, or it could not be fetched.
async fn bytes(
    sh: &Shared,
    covers: &Covers,
    book: &BookId,
    url: Option<&str>,
) -> Option<(Vec<u8>, bool)> {
    if let Some(key) = sh.scope().map(|s| CoverKey::new(&s, book)) {
        let cache = covers.cache.clone();
        let hit = tokio::task::spawn_blocking(move || cache.read(&key)).await;
        if let Ok(Some(b)) = hit {
            return Some((b, false));
        }
    }
    let client = sh.client()?;
    match client.cover_bytes(book, url, MAX_COVER_BYTES).await {
        Ok(Some(b)) => Some((b.to_vec(), true)),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!("the cover of book {book} could not be fetched: {e}");
            None
        }
    }
}

/// Where `book`'s cover is cached (it may not be there yet).
#[cfg_attr(not(all(feature = "mpris", target_os = "linux")), allow(dead_code))]
pub(super) fn cached_path(sh: &Shared, covers: &Covers, book: &BookId) -> Option<PathBuf> {
    let scope = sh.scope()?;
    Some(covers.cache.path(&CoverKey::new(&scope, book)))
}

/// Caches the playing book's cover for MPRIS (`mpris:artUrl`) when the
/// book screen did not.
#[cfg_attr(not(all(feature = "mpris", target_os = "linux")), allow(dead_code))]
pub(super) async fn keep(sh: Arc<Shared>, covers: Arc<Covers>, book: BookId, url: Option<String>) {
    let Some((bytes, true)) = bytes(&sh, &covers, &book, url.as_deref()).await else {
        return;
    };
    let _ = tokio::task::spawn_blocking(move || checked(&sh, &covers, &bytes, true, &book)).await;
}

/// Decodes; caches bytes that decoded and were fetched now, forgets a
/// cached copy that did not decode.
fn checked(
    sh: &Shared,
    covers: &Covers,
    bytes: &[u8],
    fresh: bool,
    book: &BookId,
) -> Option<image::DynamicImage> {
    let key = sh.scope().map(|s| CoverKey::new(&s, book));
    let cache = &covers.cache;
    let img = match decode(bytes) {
        Ok(img) => img,
        Err(why) => {
            tracing::warn!("the cover of book {book} is broken: {why}; its box stays empty");
            if let Some(k) = &key {
                cache.remove(k);
            }
            return None;
        }
    };
    if let (true, Some(k)) = (fresh, &key)
        && let Err(e) = cache.write(k, bytes)
    {
        sh.cache_not_written(CacheFile::Cover, &e);
    }
    Some(img)
}

async fn cover_image(
    sh: &Arc<Shared>,
    covers: Arc<Covers>,
    book: &BookId,
    url: Option<String>,
) -> Option<CoverImage> {
    let (bytes, fresh) = bytes(sh, &covers, book, url.as_deref()).await?;
    let picker = covers.picker();
    let (book, sh) = (book.clone(), sh.clone());
    let encode = move || {
        let img = checked(&sh, &covers, &bytes, fresh, &book)?;
        // Scaled here to the box's pixels (up or down, keeping its shape):
        // the terminal gets a picture of the box's size, never the file.
        let font = picker.font_size();
        let (w, h) = (COVER_CELLS.0, COVER_CELLS.1);
        let (pw, ph) = (
            u32::from(w) * u32::from(font.width),
            u32::from(h) * u32::from(font.height),
        );
        let img = img.resize(pw, ph, FilterType::Triangle);
        let size = ratatui::layout::Size::new(w, h);
        match picker.new_protocol(img, size, Resize::Fit(None)) {
            Ok(p) => Some(CoverImage::new(p)),
            Err(e) => {
                tracing::warn!("cannot draw the cover of book {book}: {e}");
                None
            }
        }
    };
    tokio::task::spawn_blocking(encode).await.ok().flatten()
}

/// Decodes a JPEG or PNG; anything else is named.
pub fn decode(bytes: &[u8]) -> Result<image::DynamicImage, String> {
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    match reader.format() {
        Some(image::ImageFormat::Jpeg | image::ImageFormat::Png) => {}
        Some(f) => return Err(format!("a {f:?} image, which earmark does not decode")),
        None => return Err(describe(bytes)),
    }
    let mut reader = reader;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => format!(
            "the picture is too big to show (over {MAX_SIDE} px a side or {} MiB decoded)",
            MAX_DECODE_BYTES >> 20
        ),
        e => e.to_string(),
    })
}

fn describe(bytes: &[u8]) -> String {
    let head = bytes.trim_ascii_start();
    if head.is_empty() {
        "the answer was empty".into()
    } else if head.starts_with(b"<") {
        "it is an HTML page (a gateway's?), not an image".into()
    } else {
        let hex: String = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("it is not a JPEG or PNG image (it starts with {hex})")
    }
}

/// One cached cover: scope and book, hashed into a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverKey(String);

impl CoverKey {
    pub fn new(scope: &Scope, book: &BookId) -> CoverKey {
        CoverKey(scope_digest(scope, Some(book.as_str()), 16))
    }
}

#[derive(Debug, Clone)]
pub struct CoverCache {
    dir: PathBuf,
    cap: u64,
}

impl CoverCache {
    pub fn new(dir: PathBuf, cap: u64) -> CoverCache {
        CoverCache { dir, cap }
    }

    pub fn path(&self, key: &CoverKey) -> PathBuf {
        self.dir.join(format!("{}.cover", key.0))
    }

    /// The cached bytes; a hit counts as a use (eviction keeps it longer).
    pub fn read(&self, key: &CoverKey) -> Option<Vec<u8>> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(bytes)
    }

    /// Writes atomically, then evicts the least recently used covers
    /// above the cap (never the one just written). A failed write leaves
    /// the cache as it was; a failed eviction only keeps it over the cap
    /// (the log says why).
    pub fn write(&self, key: &CoverKey, bytes: &[u8]) -> Result<(), DiskError> {
        let path = self.path(key);
        write_atomic(&path, bytes)?;
        if let Err(e) = self.evict(&path) {
            tracing::warn!("cannot trim the cover cache {}: {e}", self.dir.display());
        }
        Ok(())
    }

    pub fn remove(&self, key: &CoverKey) {
        let _ = std::fs::remove_file(self.path(key));
    }

    fn evict(&self, keep: &Path) -> std::io::Result<()> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            // Another cover being written (`write_atomic`'s hidden file).
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let meta = entry.metadata()?;
            if meta.is_file() {
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                files.push((entry.path(), meta.len(), used));
            }
        }
        for path in over_cap(files, self.cap, keep) {
            std::fs::remove_file(path)?;
        }
        Ok(())
    }
}

/// Which files go so the rest fit in `cap`: least recently used first,
/// never `keep`.
pub fn over_cap(mut files: Vec<(PathBuf, u64, SystemTime)>, cap: u64, keep: &Path) -> Vec<PathBuf> {
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort_by_key(|f| f.2);
    let mut out = Vec::new();
    for (path, len, _) in files {
        if total <= cap {
            break;
        }
        if path != keep {
            total -= len;
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ServerId, UserId};
    use std::time::Duration;

    fn scope(user: u64) -> Scope {
        Scope {
            server_id: ServerId::new("srv"),
            user_id: UserId::from(user),
        }
    }

    #[test]
    fn keys_differ_by_scope_and_book() {
        let b = BookId::new("bk1");
        assert_ne!(CoverKey::new(&scope(1), &b), CoverKey::new(&scope(2), &b));
        assert_ne!(
            CoverKey::new(&scope(1), &b),
            CoverKey::new(&scope(1), &BookId::new("bk2"))
        );
    }

    #[test]
    fn the_cache_evicts_the_least_recently_used_above_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CoverCache::new(dir.path().to_owned(), 1000);
        let keys: Vec<CoverKey> = (0..3)
            .map(|i| CoverKey::new(&scope(1), &BookId::new(format!("bk{i}"))))
            .collect();
        let t0 = SystemTime::now() - Duration::from_secs(3600);
        for (i, k) in keys.iter().take(2).enumerate() {
            cache.write(k, &[i as u8; 400]).unwrap();
            let f = std::fs::File::options().append(true).open(cache.path(k));
            f.unwrap()
                .set_modified(t0 + Duration::from_secs(i as u64 * 60))
                .unwrap();
        }
        // Reading the older one makes it the most recently used.
        assert_eq!(cache.read(&keys[0]).unwrap(), vec![0u8; 400]);
        cache.write(&keys[2], &[2u8; 400]).unwrap();
        assert!(cache.read(&keys[0]).is_some(), "used last: kept");
        assert!(cache.read(&keys[1]).is_none(), "least recently used: gone");
        assert_eq!(cache.read(&keys[2]).unwrap(), vec![2u8; 400]);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no .part files are left behind");
    }

    #[test]
    fn one_cover_above_the_cap_is_still_kept() {
        let keep = PathBuf::from("/c/new");
        let files = vec![
            (PathBuf::from("/c/old"), 10, SystemTime::UNIX_EPOCH),
            (keep.clone(), 5000, SystemTime::now()),
        ];
        assert_eq!(over_cap(files, 1000, &keep), vec![PathBuf::from("/c/old")]);
    }

    #[test]
    fn broken_covers_are_named() {
        let html = decode(b"<!DOCTYPE html><html>login</html>").unwrap_err();
        assert!(html.contains("HTML page"), "{html}");
        let junk = decode(b"\x00\x01\x02garbage").unwrap_err();
        assert!(junk.contains("not a JPEG or PNG"), "{junk}");
        // A JPEG header with nothing after it.
        let cut = decode(&[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, b'J', b'F']).unwrap_err();
        assert!(!cut.is_empty());
    }

    /// A PNG whose header claims `w`×`h` RGBA, with `idat` as its data.
    fn png_header(w: u32, h: u32, idat: &[u8]) -> Vec<u8> {
        fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            out.extend_from_slice(kind);
            out.extend_from_slice(data);
            let mut crc = crc32fast::Hasher::new();
            crc.update(kind);
            crc.update(data);
            out.extend_from_slice(&crc.finalize().to_be_bytes());
        }
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA
        chunk(&mut png, b"IHDR", &ihdr);
        chunk(&mut png, b"IDAT", idat);
        chunk(&mut png, b"IEND", &[]);
        png
    }

    /// A baseline JPEG whose frame header claims `w`×`h`, three components.
    fn jpeg_header(w: u16, h: u16) -> Vec<u8> {
        let mut j = vec![0xff, 0xd8];
        // DQT: one table of ones.
        j.extend_from_slice(&[0xff, 0xdb, 0x00, 0x43, 0x00]);
        j.extend_from_slice(&[1u8; 64]);
        // SOF0: 8-bit, h×w, three components using table 0.
        j.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08]);
        j.extend_from_slice(&h.to_be_bytes());
        j.extend_from_slice(&w.to_be_bytes());
        j.extend_from_slice(&[3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]);
        // SOS, a few bytes of scan, EOI.
        j.extend_from_slice(&[0xff, 0xda, 0x00, 0x0c, 3, 1, 0, 2, 0, 3, 0, 0, 63, 0]);
        j.extend_from_slice(&[0u8; 16]);
        j.extend_from_slice(&[0xff, 0xd9]);
        j
    }

    #[test]
    fn a_header_claiming_60000_by_60000_is_refused_before_decoding() {
        let png = decode(&png_header(60_000, 60_000, &[0x78, 0x9c, 0x03, 0x00])).unwrap_err();
        assert!(png.contains("too big to show"), "{png}");
        let jpeg = decode(&jpeg_header(60_000, 60_000)).unwrap_err();
        assert!(jpeg.contains("too big to show"), "{jpeg}");
        // Within the side limit but over what it may allocate: 4000² RGBA
        // is 61 MiB.
        let big = decode(&png_header(4000, 4000, &[0x78, 0x9c, 0x03, 0x00])).unwrap_err();
        assert!(big.contains("too big to show"), "{big}");
    }

    #[test]
    fn a_cover_of_2400_by_2400_still_decodes() {
        let img = image::RgbImage::from_pixel(2400, 2400, image::Rgb([200, 30, 30]));
        let mut jpeg = Vec::new();
        img.write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
        let back = decode(&jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (2400, 2400));
    }
}
