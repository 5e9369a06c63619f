//! [`Live`]: the player's backends. A tokio runtime on its own threads
//! (`earmark-backend`) owns the API client and the sync session; the audio
//! engine runs on its own threads. The UI thread only calls
//! [`Backends::handle`], which sends on a channel or spawns a task and
//! returns at once; answers come back through the [`UiSender`].

use super::{api, notices, playback};
use crate::api::Client;
use crate::config::{Config, Dirs, Profile, ProfileSelector, Session};
use crate::player::{AudioMode, Command, Engine, EngineConfig, EngineHandle};
use crate::sync::{Choice, EngineLink, SyncConfig, SyncSession};
use crate::ui::event_loop::{Backends, UiSender};
use crate::ui::state::{Answer, ConflictChoice, Effect, EngineCmd, SessionInfo, StartAt};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// The login: profile, session and client change together.
pub(crate) struct Login {
    pub profile: Profile,
    pub session: Option<Session>,
    pub client: Option<Client>,
}

/// What the tasks share. Coarse on purpose: one lock for the login, one
/// for the sync session (replaced on a new login); the engine handle and
/// the UI sender need none.
pub(crate) struct Shared {
    pub ui: UiSender,
    pub dirs: Dirs,
    /// Shared with the engine's stream resolver.
    pub login: Arc<RwLock<Login>>,
    pub engine: Option<EngineHandle>,
    /// Complete downloads, shared with the engine's stream resolver.
    pub downloads: Arc<RwLock<super::offline::LocalIndex>>,
    engine_link: Option<EngineLink>,
    sync: RwLock<SyncSession>,
    /// Set once the server's library arrived, so a slower cache read does
    /// not replace it (checked and sent under the lock).
    pub fresh: Mutex<bool>,
    /// Counts library loads: a load stops sending pages once a newer one
    /// has started, so two loads never interleave their pages.
    pub library_load: std::sync::atomic::AtomicU64,
    /// Each book's sound, kept on this device.
    pub sound: crate::config::SoundBooks,
    /// Shared with the engine: complete indexes of downloaded mp3s.
    pub seek_maps: crate::player::mpa::SeekMaps,
    /// Cover art: how the terminal draws it, and the disk cache.
    pub covers: super::covers::Covers,
}

/// Locks are taken one way everywhere: a panic elsewhere while holding one
/// leaves data that is still whole (every write replaces a value), so a
/// poisoned lock is used as it is.
pub(crate) fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub(crate) fn client(&self) -> Option<Client> {
        read(&self.login).client.clone()
    }

    pub(crate) fn sync(&self) -> SyncSession {
        read(&self.sync).clone()
    }

    /// A new login: the old session flushes and stops first (two sessions
    /// must never share a profile's journal), then the new one starts with
    /// the tasks that show its notices and status.
    pub(crate) async fn restart_sync(self: &Arc<Self>) {
        let old = self.sync();
        old.quit(Duration::from_secs(3)).await;
        let (dir, client) = {
            let l = read(&self.login);
            (l.profile.sync_dir(), l.client.clone())
        };
        let (new, rx) = SyncSession::start(SyncConfig::new(dir), client, self.engine_link.clone());
        tokio::spawn(notices::forward(self.clone(), rx));
        tokio::spawn(notices::status(self.clone(), new.watch()));
        *write(&self.sync) = new;
        // Downloads belong to the scope, which a login may change.
        tokio::spawn(super::offline::refresh(self.clone()));
    }

    /// Sends the library unless the cache would replace the server's.
    pub(crate) fn send_library(&self, books: Vec<crate::domain::Book>, from_cache: bool) {
        let mut fresh = lock(&self.fresh);
        if from_cache && *fresh {
            return;
        }
        *fresh |= !from_cache;
        self.ui.send(Answer::Library { books, from_cache });
    }

    /// A new login: its library is not here yet.
    pub(crate) fn library_stale(&self) {
        *lock(&self.fresh) = false;
    }
}

pub struct Live {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    #[cfg(all(feature = "mpris", target_os = "linux"))]
    mpris: super::mpris::MprisNow,
}

impl Live {
    /// Starts the runtime, the engine and sync. With a stored session for
    /// `profile`, the library (cache first, then the server) starts loading
    /// at once.
    pub fn start(
        ui: UiSender,
        profile: Profile,
        session: Option<Session>,
        audio: AudioMode,
    ) -> Result<Live, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("earmark-backend")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the backend runtime: {e}"))?;
        let client = match &session {
            Some(s) => Some(s.client(&profile).map_err(|e| e.to_string())?),
            None => None,
        };
        let login = Arc::new(RwLock::new(Login {
            profile,
            session,
            client,
        }));
        let downloads = Arc::new(RwLock::new(super::offline::LocalIndex::default()));
        let seek_maps = crate::player::mpa::SeekMaps::default();
        let engine = start_engine(
            &ui,
            login.clone(),
            downloads.clone(),
            seek_maps.clone(),
            audio,
        );
        let engine_link = engine.as_ref().map(EngineLink::from);
        let (dir, client) = {
            let l = read(&login);
            (l.profile.sync_dir(), l.client.clone())
        };
        let logged_in = client.is_some();
        let (sync, notices_rx) = {
            let _guard = rt.enter();
            SyncSession::start(SyncConfig::new(dir), client, engine_link.clone())
        };
        let dirs = read(&login).profile.dirs.clone();
        let dirs_data = dirs.data.clone();
        let covers_dir = dirs.cache.join("covers");
        let shared = Arc::new(Shared {
            ui,
            dirs,
            login,
            engine: engine.clone(),
            downloads,
            engine_link,
            sync: RwLock::new(sync.clone()),
            fresh: Mutex::new(false),
            library_load: Default::default(),
            sound: crate::config::SoundBooks::open(&dirs_data),
            seek_maps,
            covers: super::covers::Covers::new(covers_dir),
        });
        rt.spawn(notices::forward(shared.clone(), notices_rx));
        rt.spawn(notices::status(shared.clone(), sync.watch()));
        if let Some(engine) = engine {
            rt.spawn(playback::forward(shared.clone(), engine));
        }
        #[cfg(all(feature = "mpris", target_os = "linux"))]
        let mpris = super::mpris::MprisNow::default();
        #[cfg(all(feature = "mpris", target_os = "linux"))]
        super::mpris::start(&rt, shared.clone(), mpris.clone());
        let live = Live {
            rt: Some(rt),
            shared,
            #[cfg(all(feature = "mpris", target_os = "linux"))]
            mpris,
        };
        live.send_profiles();
        live.spawn(super::offline::refresh(live.shared.clone()));
        if logged_in {
            live.spawn(api::library(live.shared.clone(), true));
            live.spawn(api::license_check(live.shared.clone()));
        }
        Ok(live)
    }

    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.rt {
            rt.spawn(fut);
        }
    }

    fn send_profiles(&self) {
        let p = read(&self.shared.login).profile.clone();
        self.shared.ui.send(profiles_answer(&self.shared.dirs, &p));
    }
}

pub(crate) fn profiles_answer(dirs: &Dirs, p: &Profile) -> Answer {
    let mut names: Vec<String> = Config::load(&dirs.config_file())
        .map(|c| c.profiles.into_keys().collect())
        .unwrap_or_default();
    if !names.contains(&p.name) {
        names.push(p.name.clone());
    }
    names.sort();
    Answer::Profiles {
        names,
        current: Some(p.name.clone()),
        address: p.server.as_ref().map(|s| s.to_string()).unwrap_or_default(),
        user: p.user.clone().unwrap_or_default(),
    }
}

/// The session as the header shows it.
pub fn session_info(s: &Session) -> SessionInfo {
    SessionInfo {
        address: s.server.to_string(),
        user: s.user.clone(),
        profile: Some(s.profile.clone()),
    }
}

impl Backends for Live {
    fn handle(&mut self, effect: Effect) {
        let sh = self.shared.clone();
        match effect {
            Effect::Quit => {}
            // Speed and volume are remembered per book: through sync, which
            // applies them to the engine in order with what it loads. The
            // sleep timer's fade is not a setting.
            Effect::Engine(EngineCmd::SetSpeed(s)) => sh.sync().settings_changed(Some(s), None),
            Effect::Engine(EngineCmd::SetVolume(v)) => sh.sync().settings_changed(None, Some(v)),
            // Boost, normalisation, skip silence: kept on this device.
            Effect::Engine(EngineCmd::SetSound(s)) => super::sound::changed(&sh, s),
            Effect::Engine(cmd) => {
                if let Some(engine) = &sh.engine {
                    engine.send(playback::to_command(cmd));
                }
            }
            Effect::Play {
                book,
                manifest,
                start,
            } => {
                super::sound::opening(&sh, &book.id);
                // A downloaded mp3 is indexed while it plays: exact seeks.
                if let Some(d) = read(&sh.downloads).complete(&book.id) {
                    crate::offline::index_mp3s(&d, &d.snapshot.manifest, &sh.seek_maps);
                }
                #[cfg(all(feature = "mpris", target_os = "linux"))]
                {
                    let base = sh.client().map(|c| c.base().to_string());
                    let cover = super::covers::cached_path(&sh, &book.id);
                    self.mpris.playing(&book, &manifest, base.as_deref(), cover);
                    let url = book.cover_url.clone();
                    self.spawn(super::covers::keep(sh.clone(), book.id.clone(), url));
                }
                let start = match start {
                    StartAt::Resume => crate::sync::StartAt::Resume,
                    StartAt::Restart => crate::sync::StartAt::Restart,
                    StartAt::At(c, p) => crate::sync::StartAt::At(c, p),
                };
                sh.sync().open(book.id, manifest, start);
            }
            Effect::SetFinished { book, finished } => sh.sync().mark_finished(book, finished),
            Effect::FlushProgress => sh.sync().flush(),
            Effect::MarkPlace { book, mark } => sh.sync().mark_place(book, mark),
            Effect::LoadHistory(book) => self.spawn(async move {
                let marks = sh.sync().history(book.clone()).await;
                sh.ui.send(Answer::History { book, marks });
            }),
            Effect::LoadStats => self.spawn(async move {
                let stats = sh.sync().stats().await;
                sh.ui.send(Answer::Stats(stats));
            }),
            Effect::ResolveConflict { book, choice } => {
                let choice = match choice {
                    ConflictChoice::Server => Choice::Server,
                    ConflictChoice::Local => Choice::Local,
                };
                sh.sync().chose(book, choice);
            }
            Effect::RetryRefused => self.spawn(async move {
                let n = sh.sync().retry_refused().await;
                sh.ui.send(Answer::Notice(format!(
                    "Sending {n} refused change(s) again."
                )));
            }),
            Effect::DiscardRefused => self.spawn(async move {
                let n = sh.sync().discard_refused().await;
                sh.ui
                    .send(Answer::Notice(format!("Dropped {n} refused change(s).")));
            }),
            Effect::SwitchProfile(name) => self.spawn(switch_profile(sh, name)),
            Effect::Download(book) => self.spawn(super::offline::download(sh, book)),
            Effect::LoadCover { book, url } => self.spawn(super::covers::load(sh, book, url)),
            other => self.spawn(api::run(sh, other)),
        }
    }

    fn graphics(&mut self, picker: ratatui_image::picker::Picker) {
        self.shared.covers.set_picker(picker);
    }

    fn shutdown(&mut self) {
        if let Some(rt) = self.rt.take() {
            // The last place is written before the engine stops.
            let sync = self.shared.sync();
            let _ = rt.block_on(sync.quit(Duration::from_secs(3)));
            if let Some(e) = &self.shared.engine {
                e.send(Command::Shutdown);
            }
            super::sound::save(&self.shared);
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

/// Reading config.toml is file I/O: on the runtime's blocking pool, never
/// on the UI thread.
async fn switch_profile(sh: Arc<Shared>, name: String) {
    let dirs = sh.dirs.clone();
    let done = tokio::task::spawn_blocking(move || {
        Profile::resolve_in(&ProfileSelector::named(name), dirs.clone())
            .map(|p| (profiles_answer(&dirs, &p), p))
    })
    .await;
    match done {
        Ok(Ok((answer, p))) => {
            sh.ui.send(answer);
            write(&sh.login).profile = p;
        }
        Ok(Err(e)) => {
            sh.ui.send(Answer::Failed(e.to_string()));
        }
        Err(e) => {
            sh.ui
                .send(Answer::Failed(format!("Cannot switch profile: {e}")));
        }
    }
}

fn start_engine(
    ui: &UiSender,
    login: Arc<RwLock<Login>>,
    downloads: Arc<RwLock<super::offline::LocalIndex>>,
    seek_maps: crate::player::mpa::SeekMaps,
    audio: AudioMode,
) -> Option<EngineHandle> {
    let dirs = read(&login).profile.dirs.clone();
    // The engine reads the current client for every stream, so a new
    // login applies to the next chapter without a restart. A chapter of a
    // complete download plays from disk.
    let resolve: crate::player::StreamResolver = Arc::new(move |item| {
        if let Some(local) = read(&downloads).resolve(item) {
            return local;
        }
        let client = read(&login).client.clone();
        match client {
            Some(c) => {
                let r = c.stream_request(item);
                crate::player::StreamRequest {
                    url: r.url.to_string(),
                    headers: r.headers,
                }
            }
            None => crate::player::StreamRequest {
                url: item.url.clone().unwrap_or_default(),
                headers: Vec::new(),
            },
        }
    });
    let mut config = EngineConfig::new(audio, resolve);
    config.seek_maps = seek_maps;
    super::sound::tune(&mut config, &dirs, ui);
    match Engine::spawn(config) {
        Ok(engine) => {
            if let Some(n) = engine.notice() {
                ui.send(Answer::Notice(n.to_owned()));
            }
            Some(engine)
        }
        Err(e) => {
            ui.send(Answer::Failed(format!("No audio: {e}")));
            None
        }
    }
}
