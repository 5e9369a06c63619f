//! The owner's task: one tokio task that selects over the clients'
//! commands, the engine's published states, sync's notices and status,
//! the answers of its own background reads, the address in use and one
//! clock (the sleep timer, the up next countdown, a look at the
//! downloads), so what happens to a session never travels through a
//! client to reach the code that reacts to it. The one place that acts on
//! a stop, and the one place a command becomes an engine command.

use super::address::{Follow, StreamingFrom};
use super::local::Downloads;
use super::opening::Book;
use super::settings::Sounds;
use super::up_next::UpNext;
use super::{CurrentClient, Events, Intent, Login, Playback, Setup, Stop, StopReason, engine};
use crate::config::SoundBooks;
use crate::domain::rewind::Rewind;
use crate::domain::session::{Command, Event, Said, Snapshot};
use crate::domain::sleep::{Sleep, SleepChoice};
use crate::domain::wait::or_never;
use crate::domain::{JumpCause, now_millis};
use crate::player::{EngineHandle, PlayerState, Status, mpa::SeekMaps};
use crate::sync::{
    EngineLink, LoadId, Notices, Playing, QuitSummary, Records, SyncSession, SyncStatus,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// How many events a slow client may fall behind before it misses some.
const EVENTS_KEPT: usize = 256;

/// What the owner's background reads bring back.
// A few a session: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
pub(super) enum Done {
    /// A book to open, read and chosen (download or stream).
    Opened(super::opening::Resolved),
    /// The book made ready at start.
    Ready(Book),
    /// The server's details of the session's book.
    Details(crate::domain::Book),
    /// The downloads on disk.
    Downloads(Vec<crate::offline::Download>),
    Up(super::up_next::Found),
}

/// The engine, or why there is no audio (the session goes on without it).
fn start_engine(
    start: engine::Start,
    say: &impl Fn(Said),
) -> (Option<EngineHandle>, Option<String>) {
    match engine::spawn(start) {
        Ok(e) => {
            if let Some(n) = e.notice() {
                say(Said::Info(n.to_owned()));
            }
            (Some(e), None)
        }
        Err(e) => (None, Some(e.to_string())),
    }
}

/// Builds the owner and spawns its task (see [`Playback::start`]).
pub(super) fn start(setup: Setup) -> (Playback, Events) {
    let (events_tx, events) = broadcast::channel(EVENTS_KEPT);
    let say = |s: Said| {
        let _ = events_tx.send(Event::Said(s));
    };
    let client = CurrentClient::default();
    client.set(setup.login.client.clone());
    let downloads = Downloads::new(&setup.dirs, setup.login.session.as_ref());
    let seek_maps = SeekMaps::default();
    let streaming = StreamingFrom::default();
    let (sound, warning) = super::settings::config_sound(&setup.dirs);
    if let Some(why) = warning {
        say(Said::SoundConfig { why });
    }
    let (engine, no_audio) = start_engine(
        engine::Start {
            audio: setup.audio,
            resolve: super::local::resolver(downloads.index(), client.clone(), streaming.clone()),
            client: client.clone(),
            seek_maps: seek_maps.clone(),
            sound,
        },
        &say,
    );
    let sounds = Sounds::new(SoundBooks::open(&setup.dirs.data), setup.login.who.clone());
    if let Some(to) = sounds.damaged() {
        say(Said::SoundFileAside { to });
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let link = engine.as_ref().map(|e| {
        let tx = tx.clone();
        EngineLink::new(LoadId(e.state().playback_id.0), move |ask| {
            let _ = tx.send(Intent::Ask(ask));
        })
    });
    let places = Records::of(&setup.login.sync);
    let up_next = UpNext::new(&setup.rules, &setup.dirs, setup.login.session.as_ref());
    let (sync, notices) =
        SyncSession::start(setup.login.sync, setup.login.client.clone(), link.clone());
    let mut snap = Snapshot {
        no_audio: no_audio.clone(),
        downloads: downloads.marks(),
        ..Snapshot::default()
    };
    snap.up_next = up_next.now();
    let (snap_tx, snapshot) = watch::channel(snap);
    let (done_tx, done) = mpsc::unbounded_channel();
    let sync = Arc::new(RwLock::new(sync));
    let follow = Follow::new(streaming, &client);
    let owner_client = client.clone();
    let owner = Owner {
        follow,
        engine: engine.clone(),
        link,
        sync: sync.clone(),
        notices: Some(notices),
        status: Some(super::read(&sync).watch()),
        sync_status: super::read(&sync).status(),
        client,
        places,
        sounds,
        downloads,
        seek_maps,
        indexed: HashSet::new(),
        snap: snap_tx,
        events: events_tx.clone(),
        done: done_tx,
        book: None,
        opens: 0,
        playing: None,
        heard: None,
        load_played: false,
        volume: 1.0,
        sound: Default::default(),
        sleep: Sleep::new(setup.rules.sleep),
        rewind: Rewind::new(
            setup.rules.rewind.clone(),
            setup.rules.rewind_past_chapter_start,
        ),
        up_next,
        keep_sleep: false,
        stopped: HashMap::new(),
    };
    tokio::spawn(owner.run(rx, done, setup.ready_last));
    let playback = Playback {
        tx,
        snapshot,
        events: events_tx,
        sync,
        client: owner_client,
        engine,
        no_audio,
    };
    (playback, events)
}

pub(super) struct Owner {
    /// Playback follows the server to another of its addresses.
    pub follow: Follow,
    pub engine: Option<EngineHandle>,
    pub link: Option<EngineLink>,
    pub sync: Arc<RwLock<SyncSession>>,
    /// The current session's notices and status (`None` once it ended).
    pub notices: Option<Notices>,
    pub status: Option<watch::Receiver<SyncStatus>>,
    pub sync_status: SyncStatus,
    pub client: CurrentClient,
    /// The current login's records (the last known places).
    pub places: Records,
    pub sounds: Sounds,
    pub downloads: Downloads,
    pub seek_maps: SeekMaps,
    /// Books whose downloaded mp3s were indexed in this run.
    pub indexed: HashSet<crate::domain::BookId>,
    pub snap: watch::Sender<Snapshot>,
    pub events: broadcast::Sender<Event>,
    pub done: mpsc::UnboundedSender<Done>,
    /// The session's book: opened, or ready to resume.
    pub book: Option<Book>,
    /// Opens asked for (the answer of an older one is dropped).
    pub opens: u64,
    /// The load sync made for the session's book.
    pub playing: Option<Playing>,
    /// The engine's last state of that load.
    pub heard: Option<PlayerState>,
    /// That load has played (its first audio is a start; later a return
    /// from a seek or a stall is not).
    pub load_played: bool,
    /// The volume the listener set (a fade never changes it).
    pub volume: f32,
    /// The session's book's sound now.
    pub sound: crate::domain::session::SoundNow,
    pub sleep: Sleep,
    pub rewind: Rewind,
    pub up_next: UpNext,
    /// The next open continues the session (up next): the timer stays.
    pub keep_sleep: bool,
    /// The stops in force (a second path to the same stop is not news),
    /// each as it was first said.
    pub stopped: HashMap<StopReason, Stop>,
}

async fn changed<T: Clone>(rx: &mut Option<watch::Receiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => match rx.changed().await {
            Ok(()) => Some(rx.borrow_and_update().clone()),
            Err(_) => None,
        },
        None => std::future::pending().await,
    }
}

/// Until `at` (at most an hour).
fn until(at: crate::domain::EpochMillis) -> tokio::time::Sleep {
    let ms = (at - now_millis()).clamp(0, 3_600_000) as u64;
    tokio::time::sleep(Duration::from_millis(ms))
}

impl Owner {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Intent>,
        mut done: mpsc::UnboundedReceiver<Done>,
        ready_last: bool,
    ) {
        let mut states = self.engine.as_ref().map(EngineHandle::subscribe);
        if ready_last {
            self.ready_last();
        }
        self.up_next.load_list(&self.done);
        loop {
            let wake = self.wake();
            tokio::select! {
                i = rx.recv() => match i {
                    Some(Intent::Quit { timeout, reply }) => {
                        let s = self.quit(timeout).await;
                        let _ = reply.send(s);
                        return;
                    }
                    Some(i) => self.intent(i).await,
                    None => {
                        self.quit(Duration::from_secs(2)).await;
                        return;
                    }
                },
                Some(d) = done.recv() => self.done(d),
                s = changed(&mut states) => match s {
                    Some(s) => self.engine_state(s),
                    None => states = None,
                },
                n = or_never(self.notices.as_mut().map(|n| n.recv())) => match n {
                    Some(n) => self.notice(n),
                    None => self.notices = None,
                },
                s = changed(&mut self.status) => match s {
                    Some(s) => self.sync_changed(s),
                    None => self.status = None,
                },
                s = changed(&mut self.follow.switches) => match s {
                    Some(_) => self.reopen_if_moved(),
                    None => self.follow.switches = None,
                },
                Some(()) = self.follow.look.recv() => self.reopen_if_moved(),
                _ = or_never(wake.map(until)) => self.clock(),
            }
            self.publish();
        }
    }

    pub(super) fn sync(&self) -> SyncSession {
        super::read(&self.sync).clone()
    }

    pub(super) fn say(&self, s: Said) {
        let _ = self.events.send(Event::Said(s));
    }

    pub(super) fn event(&self, e: Event) {
        let _ = self.events.send(e);
    }

    /// When the clock must look next: the sleep timer, the countdown, the
    /// downloads on disk.
    fn wake(&self) -> Option<crate::domain::EpochMillis> {
        let now = now_millis();
        [
            self.sleep.wake(now),
            self.up_next.wake(),
            Some(self.downloads.next_look()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn clock(&mut self) {
        self.look_at_sleep(false, false);
        self.countdown_over();
        if self.downloads.look_due() {
            self.look_at_downloads();
        }
    }

    async fn intent(&mut self, i: Intent) {
        match i {
            Intent::Command(c) => self.command(c),
            Intent::Ask(a) => self.ask(a),
            Intent::Stop(s) => self.stop(s, false),
            Intent::LicenseValid => {
                self.sync().recheck_license();
                self.license_restored();
            }
            Intent::OpenAhead(book, expect) => self.open_ahead(&book, expect),
            Intent::LookAtDownloads => self.look_at_downloads(),
            Intent::LogIn { login, done } => {
                self.log_in(login).await;
                let _ = done.send(());
            }
            Intent::Quit { .. } => unreachable!("handled in run"),
        }
    }

    fn command(&mut self, c: Command) {
        if self.refuse_while_stopped(&c) {
            return;
        }
        match c {
            Command::Open { book, start, known } => {
                self.keep_sleep = false;
                self.open(book, start, known)
            }
            Command::Toggle => self.toggle(),
            Command::Play => self.play(),
            Command::Pause => self.command_engine(crate::player::Command::Pause),
            Command::SkipBy(s) => {
                self.mark_here(JumpCause::Skip);
                self.command_engine(crate::player::Command::SkipBy(s))
            }
            Command::Seek {
                chapter,
                position,
                cause,
            } => {
                self.mark_here(cause);
                self.command_engine(crate::player::Command::Seek { chapter, position })
            }
            Command::NextChapter => self.next_chapter(),
            Command::PrevChapter => {
                self.mark_here(JumpCause::Chapter);
                self.command_engine(crate::player::Command::PrevChapter)
            }
            // Speed and volume are the opened book's (saved for it).
            Command::Speed(s) if self.has_opened() => self.sync().settings_changed(Some(s), None),
            Command::Volume(v) if self.has_opened() => {
                self.volume = engine::volume(v);
                self.sync().settings_changed(None, Some(v))
            }
            Command::Sound(s) => self.sound(s),
            Command::Sleep(choice) if self.has_book() || choice == SleepChoice::Off => {
                let acts = self.sleep.set(choice, &self.look(false, false));
                self.sleep_acts(acts);
            }
            Command::SleepExtend if self.has_book() => {
                let acts = self.sleep.extend(&self.look(false, false));
                self.sleep_acts(acts);
            }
            Command::Speed(_) | Command::Volume(_) | Command::Sleep(_) | Command::SleepExtend => {
                self.say(Said::NothingPlaying)
            }
            Command::UpNext(u) => self.up_next_command(u),
            Command::Library(books) => self.up_next.library(books, self.book_id()),
            Command::Choose { book, keep } => {
                let side = match keep {
                    crate::domain::session::Keep::Server => crate::sync::Choice::Server,
                    crate::domain::session::Keep::Local => crate::sync::Choice::Local,
                };
                self.sync().chose(book, side)
            }
            Command::MarkFinished { book, finished } => self.sync().mark_finished(book, finished),
            Command::Recheck => self.sync().check(),
            Command::Flush => self.sync().flush(),
        }
    }

    /// While the license stops playback, nothing plays: the stop is said
    /// again instead.
    fn refuse_while_stopped(&self, c: &Command) -> bool {
        let plays = matches!(
            c,
            Command::Open { .. }
                | Command::Toggle
                | Command::Play
                | Command::SkipBy(_)
                | Command::Seek { .. }
                | Command::NextChapter
                | Command::PrevChapter
        );
        let stop = self.stopped.get(&StopReason::License).filter(|_| plays);
        if let Some(stop) = stop {
            self.event(Event::Stopped(stop.clone()));
        }
        stop.is_some()
    }

    /// The session has a book (opened, or ready to resume).
    pub(super) fn has_book(&self) -> bool {
        self.book.is_some()
    }

    /// The session's book is opened (not only ready).
    fn has_opened(&self) -> bool {
        self.book.as_ref().is_some_and(|b| b.opened)
    }

    pub(super) fn book_id(&self) -> Option<crate::domain::BookId> {
        self.book.as_ref().map(|b| b.info.id.clone())
    }

    /// An engine command for the session's opened book (none: said so).
    pub(super) fn command_engine(&mut self, c: crate::player::Command) {
        match (&self.engine, self.book.as_ref().filter(|b| b.opened)) {
            (Some(e), Some(_)) => {
                e.send(c);
            }
            (None, _) => {
                let why = self.snap.borrow().no_audio.clone().unwrap_or_default();
                self.say(Said::NoAudio { why })
            }
            (_, None) => self.say(Said::NothingPlaying),
        }
    }

    fn toggle(&mut self) {
        let heard = self.heard.as_ref();
        let playing = heard.is_some_and(|s| super::heard::play_state(&s.status).is_playing());
        // A play/pause while the sleep timer fades (a headset's button, a
        // key) means the listener is awake: it extends, as the extend key.
        let fading = matches!(
            self.sleep.timer,
            Some(crate::domain::sleep::SleepTimer::Fading { .. })
        );
        match playing {
            true if fading => {
                let acts = self.sleep.extend(&self.look(false, false));
                self.sleep_acts(acts);
            }
            true => self.command_engine(crate::player::Command::Pause),
            false => self.play(),
        }
    }

    /// Play: a ready book opens where the server says; a paused one
    /// rewinds what the pause earned, then sync reads the server's place
    /// and asks the engine to play (contract rule 7).
    fn play(&mut self) {
        let Some(book) = &self.book else {
            return self.say(Said::NothingPlaying);
        };
        if !book.opened {
            let id = book.info.id.clone();
            return self.open(id, crate::domain::session::Start::Resume, None);
        }
        let ended = self
            .heard
            .as_ref()
            .is_some_and(|s| matches!(s.status, Status::Ended | Status::Idle | Status::Error(_)));
        if ended {
            let id = book.info.id.clone();
            return self.open(id, crate::domain::session::Start::Resume, None);
        }
        if let Some((chapter, position)) = self.place()
            && let Some(r) = self.rewind.play_after_pause(position, now_millis())
        {
            self.rewind_by(r, chapter, position);
        }
        if let Some(acts) = self.sleep.remote_play(&self.look(false, false)) {
            // A play shortly after the timer's stop extends it.
            self.sleep_acts(acts);
        }
        self.sync().resume();
    }

    fn sound(&mut self, s: crate::domain::SoundSettings) {
        let book = self.book_id();
        self.sounds.changed(self.engine.as_ref(), book.as_ref(), s);
    }

    /// One of sync's asks, carried out.
    fn ask(&mut self, a: crate::sync::EngineAsk) {
        if let Some(e) = &self.engine {
            e.send(engine::command_for(a));
        }
    }

    /// The place of the session's load now.
    pub(super) fn place(&self) -> Option<(crate::domain::ChapterId, f64)> {
        let s = self.heard.as_ref()?;
        Some((s.chapter_id.clone()?, s.position))
    }

    /// Remembers where the playing book is, before a jump (this device's
    /// place history; the client's list hears of it).
    pub(super) fn mark_here(&mut self, cause: JumpCause) {
        if cause != JumpCause::Rewind {
            // The listener picked a place: no rewind for the last break.
            self.rewind.loaded();
        }
        let (Some(book), Some((chapter, position))) = (self.book_id(), self.place()) else {
            return;
        };
        let mark = crate::domain::PlaceMark {
            at: now_millis(),
            chapter_id: chapter,
            position,
            cause,
        };
        self.sync().mark_place(book.clone(), mark.clone());
        self.event(Event::PlaceMarked { book, mark });
    }

    /// The one place a stop is acted on: the engine pauses where it is,
    /// sync stops where the reason says so, and the stop is published.
    pub(super) fn stop(&mut self, stop: Stop, seen_by_sync: bool) {
        if self.stopped.contains_key(&stop.reason) {
            return;
        }
        self.stopped.insert(stop.reason, stop.clone());
        if let Some(e) = &self.engine {
            e.send(crate::player::Command::Pause);
        }
        // Sync checks the license itself and stops all its requests.
        if stop.reason == StopReason::License && !seen_by_sync {
            self.sync().recheck_license();
        }
        self.event(Event::Stopped(stop));
    }

    /// The license stop in force is over: said once, whoever saw it first
    /// (sync's poll, or a valid status a client read).
    pub(super) fn license_restored(&mut self) {
        if self.stopped.remove(&StopReason::License).is_some() {
            self.say(Said::LicenseRestored);
        }
    }

    fn reopen_if_moved(&mut self) {
        if let Some(e) = &self.engine {
            self.follow.reopen_if_moved(e, &self.client);
        }
    }

    async fn log_in(&mut self, login: Login) {
        self.sync().quit(Duration::from_secs(3)).await;
        self.client.set(login.client.clone());
        self.follow.login(&self.client);
        self.sounds.who = login.who;
        self.places = Records::of(&login.sync);
        self.downloads.log_in(login.session.as_ref());
        self.up_next.log_in(login.session.as_ref(), &self.done);
        let (session, notices) = SyncSession::start(login.sync, login.client, self.link.clone());
        self.status = Some(session.watch());
        self.notices = Some(notices);
        self.sync_status = session.status();
        *super::write(&self.sync) = session;
        self.stopped.clear();
        self.look_at_downloads();
    }

    async fn quit(&mut self, timeout: Duration) -> QuitSummary {
        // What the engine did last reaches sync before its last write.
        if let Some(e) = &self.engine {
            let s = e.state();
            self.engine_state(s);
        }
        let summary = self.sync().quit(timeout).await;
        if let Some(e) = &self.engine {
            e.send(crate::player::Command::Shutdown);
        }
        self.sounds.save();
        summary
    }

    fn done(&mut self, d: Done) {
        match d {
            Done::Opened(r) => self.opened(r),
            Done::Ready(b) => self.made_ready(b),
            Done::Details(info) => self.details(info),
            Done::Downloads(books) => self.downloads_read(books),
            Done::Up(f) => self.up_next_found(f),
        }
    }
}
