//! MPRIS (`org.mpris.MediaPlayer2` and `.Player`) on the D-Bus session
//! bus, so media keys, `playerctl`, desktop widgets and headset buttons
//! drive the session (Linux, the default `mpris` cargo feature; zbus,
//! which the keyring already builds).
//!
//! - Off without a session bus (SSH, CI, a NAS): nothing is tried when no
//!   bus address is known, and a failed connection is only logged. The
//!   connection is made on the backend runtime: the UI never waits for it.
//! - One more client of the session owner: requests are the session's
//!   commands (next/previous are chapters; Next in the last chapter goes
//!   on to the book up next; play while the sleep timer fades or just
//!   stopped extends it: the owner decides all of it), and properties are
//!   read from its snapshot.
//! - The track is the chapter: `Position` and `mpris:length` are chapter
//!   time; title = chapter, album = book, artist = authors, artUrl = the
//!   cached cover (`file://`, see `covers`) once it is on disk, else the
//!   book's cover address (without a token).

use super::covers::Covers;
use super::shared::Shared;
use crate::domain::session::{Command, Listening, PlayState, Snapshot};
use crate::domain::{ChapterId, JumpCause};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

const PATH: &str = "/org/mpris/MediaPlayer2";
const NAME: &str = "org.mpris.MediaPlayer2.earmark";

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
pub(crate) fn start(rt: &tokio::runtime::Runtime, sh: Arc<Shared>, covers: Arc<Covers>) {
    if sh.playback.no_audio().is_some() || !session_bus_known() {
        return;
    }
    let snapshot = sh.playback.snapshot();
    rt.spawn(async move {
        let player = Player {
            sh,
            covers,
            snapshot: snapshot.clone(),
        };
        match serve(player).await {
            Ok(conn) => follow(conn, snapshot).await,
            Err(e) => tracing::info!("MPRIS is off: {e}"),
        }
    });
}

async fn serve(player: Player) -> zbus::Result<zbus::Connection> {
    let conn = zbus::connection::Builder::session()?
        .serve_at(PATH, Root)?
        .serve_at(PATH, player)?
        .build()
        .await?;
    // A second earmark takes an instance name, as the spec suggests.
    if conn.request_name(NAME).await.is_err() {
        let name = format!("{NAME}.instance{}", std::process::id());
        conn.request_name(name.as_str()).await?;
    }
    Ok(conn)
}

/// Emit PropertiesChanged and Seeked as the session moves.
async fn follow(conn: zbus::Connection, mut rx: watch::Receiver<Snapshot>) {
    let Ok(iface) = conn.object_server().interface::<_, Player>(PATH).await else {
        return;
    };
    let mut last: Option<Listening> = None;
    while rx.changed().await.is_ok() {
        let Some(s) = rx.borrow_and_update().listening.clone() else {
            continue;
        };
        let emitter = iface.signal_emitter();
        let player = iface.get().await;
        let before = last.as_ref();
        if before.is_none_or(|l| status(&l.state) != status(&s.state)) {
            let _ = player.playback_status_changed(emitter).await;
        }
        if before
            .is_none_or(|l| l.chapter != s.chapter || l.duration != s.duration || l.book != s.book)
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
        let landed = |l: &Listening| l.landed != crate::domain::session::Landing::Pending;
        if landed(&s) && before.is_some_and(|l| !landed(l) || l.load != s.load) {
            let _ = Player::seeked(emitter, micros(s.position)).await;
        }
        drop(player);
        last = Some(s);
    }
}

fn micros(secs: f64) -> i64 {
    (secs * 1e6).round() as i64
}

fn status(s: &PlayState) -> &'static str {
    match s {
        PlayState::Playing | PlayState::Buffering | PlayState::Stalled => "Playing",
        PlayState::Paused => "Paused",
        _ => "Stopped",
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
    covers: Arc<Covers>,
    snapshot: watch::Receiver<Snapshot>,
}

impl Player {
    fn send(&self, c: Command) {
        self.sh.playback.send(c);
    }

    fn now(&self) -> Option<Listening> {
        self.snapshot.borrow().listening.clone()
    }

    /// The cached cover once it is on disk, else the book's address.
    fn art_url(&self, l: &Listening) -> Option<String> {
        let cached = super::covers::cached_path(&self.sh, &self.covers, &l.book.id)
            .filter(|f| f.is_file())
            .and_then(|f| url::Url::from_file_path(f).ok())
            .map(String::from);
        let base = self.sh.client().map(|c| c.base().to_string());
        cached.or_else(|| {
            let c = l.book.cover_url.as_deref()?;
            cover_url(c, base.as_deref())
        })
    }
}

fn value(v: impl Into<Value<'static>>) -> Option<OwnedValue> {
    OwnedValue::try_from(v.into()).ok()
}

#[zbus::interface(name = "org.mpris.MediaPlayer2.Player")]
impl Player {
    fn next(&self) {
        self.send(Command::NextChapter);
    }
    fn previous(&self) {
        self.send(Command::PrevChapter);
    }
    fn pause(&self) {
        self.send(Command::Pause);
    }
    fn play_pause(&self) {
        self.send(Command::Toggle);
    }
    /// An audiobook stops where it is: the place is kept.
    fn stop(&self) {
        self.send(Command::Pause);
    }
    fn play(&self) {
        self.send(Command::Play);
    }
    /// Microseconds, ±, across chapters.
    fn seek(&self, offset: i64) {
        self.send(Command::SkipBy(offset as f64 / 1e6));
    }
    fn set_position(&self, track_id: ObjectPath<'_>, position: i64) {
        let Some(chapter) = self.now().map(|l| l.chapter) else {
            return;
        };
        if track_id.as_str() == self::track_id(&chapter).as_str() && position >= 0 {
            self.send(Command::Seek {
                chapter,
                position: position as f64 / 1e6,
                cause: JumpCause::Seek,
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
        self.now().map_or("Stopped", |l| status(&l.state))
    }
    #[zbus(property)]
    fn rate(&self) -> f64 {
        self.now().map_or(1.0, |l| f64::from(l.speed))
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
        self.now().map_or(1.0, |l| f64::from(l.volume))
    }
    #[zbus(property(emits_changed_signal = "false"))]
    fn position(&self) -> i64 {
        self.now().map_or(0, |l| micros(l.position))
    }
    #[zbus(property)]
    fn metadata(&self) -> HashMap<String, OwnedValue> {
        let mut m = HashMap::new();
        let Some(s) = self.now() else {
            return m;
        };
        let chapter = s.chapter.clone();
        let mut put = |k: &str, v: Option<OwnedValue>| {
            if let Some(v) = v {
                m.insert(k.to_owned(), v);
            }
        };
        let item = s.manifest.items.iter().find(|i| i.chapter_id == chapter);
        put("mpris:trackid", value(track_id(&chapter)));
        put("mpris:length", s.duration.and_then(|d| value(micros(d))));
        put("xesam:title", item.and_then(|i| value(i.title.clone())));
        put("xesam:album", value(s.book.title.clone()));
        put("xesam:artist", value(s.book.authors.clone()));
        put("mpris:artUrl", self.art_url(&s).and_then(value));
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
