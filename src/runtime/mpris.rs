//! MPRIS (`org.mpris.MediaPlayer2` and `.Player`) on the D-Bus session
//! bus, so media keys, `playerctl`, desktop widgets and headset buttons
//! drive the player (Linux, the default `mpris` cargo feature; zbus, which
//! the keyring already builds).
//!
//! - Off without a session bus (SSH, CI, a NAS): nothing is tried when no
//!   bus address is known, and a failed connection is only logged. The
//!   connection is made on the backend runtime: the UI never waits for it.
//! - Requests become [`Answer::Remote`]: the UI handles them like its own
//!   keys (next/previous are chapters; Next in the last chapter goes on to
//!   the book up next, and play/pause while the sleep timer fades or just
//!   stopped extends it), so sync and the place history see them. Properties are read from what the playback owner publishes
//!   (`playback::Now`: the engine's state of the book it plays).
//! - The track is the chapter: `Position` and `mpris:length` are chapter
//!   time; title = chapter, album = book, artist = authors, artUrl = the
//!   cached cover (`file://`, see `covers`) once it is on disk, else the
//!   book's cover address (without a token).

use super::shared::Shared;
use crate::domain::{Book, ChapterId, Manifest};
use crate::playback::Now;
use crate::player::{PlayerState, Status};
use crate::ui::state::{Answer, RemoteCmd};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

const PATH: &str = "/org/mpris/MediaPlayer2";
const NAME: &str = "org.mpris.MediaPlayer2.earmark";

/// The book being played, as the player opened it.
#[derive(Clone)]
struct NowBook {
    book: Book,
    manifest: Manifest,
    cover: Option<String>,
    /// Where the cover is cached; used once the file is there.
    cover_file: Option<std::path::PathBuf>,
}

impl NowBook {
    fn art_url(&self) -> Option<String> {
        let cached = self.cover_file.as_ref().filter(|f| f.is_file());
        cached
            .and_then(|f| url::Url::from_file_path(f).ok())
            .map(String::from)
            .or_else(|| self.cover.clone())
    }
}

/// Live's side: tells MPRIS which book plays. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct MprisNow(Arc<Mutex<Option<NowBook>>>);

impl MprisNow {
    /// `base` resolves a relative cover address (`/books/{id}/cover`).
    pub(crate) fn playing(
        &self,
        book: &Book,
        manifest: &Manifest,
        base: Option<&str>,
        cover_file: Option<std::path::PathBuf>,
    ) {
        let cover = book.cover_url.as_deref().and_then(|c| cover_url(c, base));
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(NowBook {
            book: book.clone(),
            manifest: manifest.clone(),
            cover,
            cover_file,
        });
    }

    fn get(&self) -> Option<NowBook> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn cover_url(cover: &str, base: Option<&str>) -> Option<String> {
    if cover.starts_with("http://") || cover.starts_with("https://") {
        return Some(cover.to_owned());
    }
    let base = base?.trim_end_matches('/');
    cover.starts_with('/').then(|| format!("{base}{cover}"))
}

/// True when a session bus could be there: its address is set, or the
/// systemd default socket exists. Without one, MPRIS stays off at once.
fn session_bus_known() -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty()) {
        return true;
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .is_some_and(|d| std::path::Path::new(&d).join("bus").exists())
}

/// Start MPRIS on the backend runtime when a session bus is known.
pub(crate) fn start(rt: &tokio::runtime::Runtime, sh: Arc<Shared>, now: MprisNow) {
    if sh.playback.no_audio().is_some() || !session_bus_known() {
        return;
    }
    let playing = sh.playback.now();
    rt.spawn(async move {
        match serve(sh, playing.clone(), now.clone()).await {
            Ok(conn) => follow(conn, playing, now).await,
            Err(e) => tracing::info!("MPRIS is off: {e}"),
        }
    });
}

/// The engine's state of the book playing (idle before one plays).
fn state(playing: &watch::Receiver<Now>) -> PlayerState {
    playing.borrow().state.clone().unwrap_or_default()
}

async fn serve(
    sh: Arc<Shared>,
    playing: watch::Receiver<Now>,
    now: MprisNow,
) -> zbus::Result<zbus::Connection> {
    let conn = zbus::connection::Builder::session()?
        .serve_at(PATH, Root)?
        .serve_at(PATH, Player { sh, playing, now })?
        .build()
        .await?;
    // A second earmark takes an instance name, as the spec suggests.
    if conn.request_name(NAME).await.is_err() {
        let name = format!("{NAME}.instance{}", std::process::id());
        conn.request_name(name.as_str()).await?;
    }
    Ok(conn)
}

/// Emit PropertiesChanged and Seeked as the engine's state moves.
async fn follow(conn: zbus::Connection, mut rx: watch::Receiver<Now>, now: MprisNow) {
    let Ok(iface) = conn.object_server().interface::<_, Player>(PATH).await else {
        return;
    };
    let mut last: Option<PlayerState> = None;
    let mut last_book = None;
    let mut last_art = None;
    while rx.changed().await.is_ok() {
        let s = rx.borrow_and_update().state.clone().unwrap_or_default();
        let playing = now.get();
        // The cover shows up in the metadata once it is cached.
        let art = playing.as_ref().and_then(NowBook::art_url);
        let book = playing.map(|n| n.book.id);
        let emitter = iface.signal_emitter();
        let player = iface.get().await;
        let before = last.as_ref();
        if before.is_none_or(|l| status(&l.status) != status(&s.status)) {
            let _ = player.playback_status_changed(emitter).await;
        }
        if before.is_none_or(|l| l.chapter_id != s.chapter_id || l.duration != s.duration)
            || book != last_book
            || art != last_art
        {
            let _ = player.metadata_changed(emitter).await;
        }
        if before.is_none_or(|l| l.speed != s.speed) {
            let _ = player.rate_changed(emitter).await;
        }
        if before.is_none_or(|l| l.volume != s.volume) {
            let _ = player.volume_changed(emitter).await;
        }
        // A seek lands: the position jumped (listeners only poll it).
        if s.landed && before.is_some_and(|l| !l.landed || l.playback_id != s.playback_id) {
            let _ = Player::seeked(emitter, micros(s.position)).await;
        }
        drop(player);
        last = Some(s);
        last_book = book;
        last_art = art;
    }
}

fn micros(secs: f64) -> i64 {
    (secs * 1e6).round() as i64
}

fn status(s: &Status) -> &'static str {
    match s {
        Status::Playing | Status::Buffering | Status::Stalled => "Playing",
        Status::Paused => "Paused",
        Status::Idle | Status::Ended | Status::Error(_) => "Stopped",
    }
}

/// `mpris:trackid` of a chapter: a D-Bus object path, so the id is hex.
fn track_id(chapter: &ChapterId) -> OwnedObjectPath {
    let hex: String = chapter
        .as_str()
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    ObjectPath::try_from(format!("/org/earmark/chapter/c{hex}"))
        .map(Into::into)
        .unwrap_or_else(|_| {
            ObjectPath::from_static_str_unchecked("/org/mpris/MediaPlayer2/TrackList/NoTrack")
                .into()
        })
}

struct Root;

#[zbus::interface(name = "org.mpris.MediaPlayer2")]
impl Root {
    fn raise(&self) {}
    fn quit(&self) {}
    #[zbus(property)]
    fn can_quit(&self) -> bool {
        false
    }
    #[zbus(property)]
    fn can_raise(&self) -> bool {
        false
    }
    #[zbus(property)]
    fn has_track_list(&self) -> bool {
        false
    }
    #[zbus(property)]
    fn identity(&self) -> &str {
        "earmark"
    }
    #[zbus(property)]
    fn supported_uri_schemes(&self) -> Vec<String> {
        Vec::new()
    }
    #[zbus(property)]
    fn supported_mime_types(&self) -> Vec<String> {
        Vec::new()
    }
}

struct Player {
    sh: Arc<Shared>,
    playing: watch::Receiver<Now>,
    now: MprisNow,
}

impl Player {
    fn send(&self, cmd: RemoteCmd) {
        self.sh.ui.send(Answer::Remote(cmd));
    }
}

fn value(v: impl Into<Value<'static>>) -> Option<OwnedValue> {
    OwnedValue::try_from(v.into()).ok()
}

#[zbus::interface(name = "org.mpris.MediaPlayer2.Player")]
impl Player {
    fn next(&self) {
        self.send(RemoteCmd::NextChapter);
    }
    fn previous(&self) {
        self.send(RemoteCmd::PrevChapter);
    }
    fn pause(&self) {
        self.send(RemoteCmd::Pause);
    }
    fn play_pause(&self) {
        self.send(RemoteCmd::PlayPause);
    }
    /// An audiobook stops where it is: the place is kept.
    fn stop(&self) {
        self.send(RemoteCmd::Pause);
    }
    fn play(&self) {
        self.send(RemoteCmd::Play);
    }
    /// Microseconds, ±, across chapters.
    fn seek(&self, offset: i64) {
        self.send(RemoteCmd::SkipBy(offset as f64 / 1e6));
    }
    fn set_position(&self, track_id: ObjectPath<'_>, position: i64) {
        let Some(chapter) = state(&self.playing).chapter_id else {
            return;
        };
        if track_id.as_str() == track_id_str(&chapter) && position >= 0 {
            self.send(RemoteCmd::SeekTo {
                chapter,
                position: position as f64 / 1e6,
            });
        }
    }
    fn open_uri(&self, _uri: &str) -> zbus::fdo::Result<()> {
        Err(zbus::fdo::Error::NotSupported(
            "earmark plays books from its server".into(),
        ))
    }

    #[zbus(signal)]
    async fn seeked(emitter: &SignalEmitter<'_>, position: i64) -> zbus::Result<()>;

    #[zbus(property)]
    fn playback_status(&self) -> &str {
        status(&state(&self.playing).status)
    }
    #[zbus(property)]
    fn rate(&self) -> f64 {
        f64::from(state(&self.playing).speed)
    }
    #[zbus(property)]
    fn minimum_rate(&self) -> f64 {
        0.5
    }
    #[zbus(property)]
    fn maximum_rate(&self) -> f64 {
        3.0
    }
    #[zbus(property)]
    fn volume(&self) -> f64 {
        f64::from(state(&self.playing).volume)
    }
    #[zbus(property(emits_changed_signal = "false"))]
    fn position(&self) -> i64 {
        micros(state(&self.playing).position)
    }
    #[zbus(property)]
    fn metadata(&self) -> HashMap<String, OwnedValue> {
        let s = state(&self.playing);
        let mut m = HashMap::new();
        let Some(chapter) = s.chapter_id else {
            return m;
        };
        let mut put = |k: &str, v: Option<OwnedValue>| {
            if let Some(v) = v {
                m.insert(k.to_owned(), v);
            }
        };
        put("mpris:trackid", value(track_id(&chapter)));
        if let Some(d) = s.duration {
            put("mpris:length", value(micros(d)));
        }
        if let Some(now) = self.now.get() {
            if let Some(item) = now.manifest.items.iter().find(|i| i.chapter_id == chapter) {
                put("xesam:title", value(item.title.clone()));
            }
            put("xesam:album", value(now.book.title.clone()));
            put("xesam:artist", value(now.book.authors.clone()));
            if let Some(c) = now.art_url() {
                put("mpris:artUrl", value(c));
            }
        }
        m
    }
    #[zbus(property)]
    fn can_go_next(&self) -> bool {
        true
    }
    #[zbus(property)]
    fn can_go_previous(&self) -> bool {
        true
    }
    #[zbus(property)]
    fn can_play(&self) -> bool {
        true
    }
    #[zbus(property)]
    fn can_pause(&self) -> bool {
        true
    }
    #[zbus(property)]
    fn can_seek(&self) -> bool {
        true
    }
    #[zbus(property)]
    fn can_control(&self) -> bool {
        true
    }
}

fn track_id_str(chapter: &ChapterId) -> String {
    track_id(chapter).as_str().to_owned()
}
