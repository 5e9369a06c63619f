//! The player's backends: a tokio runtime on its own threads owns the API
//! client (and, once wired, the engine and sync handles). The UI thread
//! only calls `handle`, which spawns a task and returns at once; answers
//! come back through the `UiSender`.

mod api;
mod playback;
mod sync_link;

use super::event_loop::{Backends, UiSender};
use super::state::{Backend as Answer, Effect, SessionInfo, SyncView};
use crate::api::Client;
use crate::config::{Config, Dirs, Profile, Session};
use crate::player::{AudioMode, Command, Engine, EngineConfig, EngineHandle};
use std::sync::{Arc, Mutex, RwLock};

/// What the tasks share.
pub(crate) struct Shared {
    pub ui: UiSender,
    pub dirs: Dirs,
    pub profile: RwLock<Profile>,
    pub client: RwLock<Option<Client>>,
    pub session: RwLock<Option<Session>>,
    /// Set once the server's library arrived, so a slower cache read does
    /// not replace it.
    pub fresh: Mutex<bool>,
    pub engine: Mutex<Option<EngineHandle>>,
    pub current: Mutex<Option<playback::Current>>,
    pub last_report: Mutex<Option<(u64, crate::domain::ChapterId, i64)>>,
    pub sync_view: Mutex<SyncView>,
    /// The sync worker of the current login, started on first playback.
    pub sync: Mutex<Option<Arc<sync_link::SyncLink>>>,
    /// `Load`s sent to the engine. The engine numbers its playbacks by
    /// counting loads, so this is the id of the latest one; it is only
    /// changed while sending, under this lock (never guessed from the
    /// engine's published state, which lags behind a load in flight).
    pub loads: Mutex<u64>,
    /// The latest `Play` effect, numbered on the UI thread. Play tasks run
    /// concurrently; only the latest may open its book (checked and opened
    /// under this lock), so quick switching ends on the book asked last.
    pub plays: Mutex<u64>,
}

impl Shared {
    /// Sends `Load` and returns the engine playback id it creates.
    /// `before_send` runs with that id before the engine can publish it.
    pub(crate) fn load_engine(
        &self,
        engine: &EngineHandle,
        manifest: crate::domain::Manifest,
        start: (crate::domain::ChapterId, f64),
        before_send: impl FnOnce(u64),
    ) -> u64 {
        let mut loads = self.loads.lock().unwrap_or_else(|e| e.into_inner());
        *loads += 1;
        let id = *loads;
        before_send(id);
        engine.send(Command::Load {
            manifest,
            start,
            autoplay: true,
        });
        id
    }

    pub(crate) fn sync_link(&self) -> Option<Arc<sync_link::SyncLink>> {
        self.sync.lock().ok().and_then(|s| s.clone())
    }

    /// The sync link, started if needed (call inside the runtime).
    pub(crate) fn ensure_sync(self: &Arc<Self>) -> Option<Arc<sync_link::SyncLink>> {
        let mut slot = self.sync.lock().ok()?;
        if slot.is_none() {
            *slot = sync_link::SyncLink::start(self);
        }
        slot.clone()
    }
}

pub struct Live {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
}

impl Live {
    /// Starts the runtime. With a stored session for `profile`, the library
    /// (cache first, then the server) starts loading at once.
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
        let shared = Arc::new(Shared {
            ui,
            dirs: profile.dirs.clone(),
            profile: RwLock::new(profile),
            client: RwLock::new(client),
            session: RwLock::new(session.clone()),
            fresh: Mutex::new(false),
            engine: Mutex::new(None),
            current: Mutex::new(None),
            last_report: Mutex::new(None),
            sync_view: Mutex::new(SyncView::default()),
            sync: Mutex::new(None),
            loads: Mutex::new(0),
            plays: Mutex::new(0),
        });
        // The engine reads the current client for every stream, so a new
        // login applies to the next chapter without a restart.
        let for_streams = shared.clone();
        let resolve: crate::player::StreamResolver = Arc::new(move |item| {
            let client = for_streams.client.read().ok().and_then(|c| c.clone());
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
        let engine = Engine::spawn(EngineConfig::new(audio, resolve));
        match engine {
            Ok(engine) => {
                if let Some(n) = engine.notice() {
                    shared.ui.send(Answer::Notice(n.to_owned()));
                }
                rt.spawn(playback::forward(shared.clone(), engine.clone()));
                if let Ok(mut e) = shared.engine.lock() {
                    *e = Some(engine);
                }
            }
            Err(e) => {
                shared.ui.send(Answer::Failed(format!("No audio: {e}")));
            }
        }
        let live = Live {
            rt: Some(rt),
            shared,
        };
        live.send_profiles();
        if session.is_some() {
            live.spawn(api::library(live.shared.clone(), true));
        }
        Ok(live)
    }

    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.rt {
            rt.spawn(fut);
        }
    }

    fn send_profiles(&self) {
        let p = self.shared.profile.read().map(|p| p.clone());
        let Ok(p) = p else { return };
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
            Effect::Engine(cmd) => {
                // Speed and volume are remembered per book, on the server
                // (the sleep timer's fade is not a setting).
                let change = match cmd {
                    crate::ui::state::EngineCmd::SetSpeed(speed) => Some((Some(speed), None)),
                    crate::ui::state::EngineCmd::SetVolume(volume) => Some((None, Some(volume))),
                    _ => None,
                };
                // Queued for the worker right here (a channel send, in
                // order with a quit that follows); direct writes are spawned.
                if let Some((speed, volume)) = change
                    && !playback::queue_settings(&sh, speed, volume)
                {
                    self.spawn(playback::save_settings(sh.clone(), speed, volume));
                }
                let engine = self.shared.engine.lock().ok().and_then(|e| e.clone());
                if let Some(engine) = engine {
                    engine.send(playback::to_command(cmd));
                }
            }
            Effect::SwitchProfile(name) => {
                // Reading config.toml is file I/O: on the runtime's blocking
                // pool, never on the UI thread.
                self.spawn(async move {
                    let dirs = sh.dirs.clone();
                    let global = crate::cli::GlobalArgs {
                        profile: Some(name),
                        ..Default::default()
                    };
                    let done = tokio::task::spawn_blocking(move || {
                        Profile::resolve_in(&global, dirs.clone())
                            .map(|p| (profiles_answer(&dirs, &p), p))
                    })
                    .await;
                    match done {
                        Ok(Ok((answer, p))) => {
                            sh.ui.send(answer);
                            if let Ok(mut cur) = sh.profile.write() {
                                *cur = p;
                            }
                        }
                        Ok(Err(e)) => {
                            sh.ui.send(Answer::Failed(e.to_string()));
                        }
                        Err(e) => {
                            sh.ui
                                .send(Answer::Failed(format!("Cannot switch profile: {e}")));
                        }
                    }
                });
            }
            Effect::Play {
                book,
                manifest,
                start,
            } => {
                let seq = {
                    let mut p = sh.plays.lock().unwrap_or_else(|e| e.into_inner());
                    *p += 1;
                    *p
                };
                self.spawn(playback::play(sh, book.id, manifest, start, seq));
            }
            other => self.spawn(api::run(sh, other)),
        }
    }

    fn shutdown(&mut self) {
        if let Some(rt) = self.rt.take() {
            // The last place is written before the engine stops.
            let sh = self.shared.clone();
            let engine = self.shared.engine.lock().ok().and_then(|e| e.clone());
            if let Some(link) = self.shared.sync_link() {
                if let Some(e) = &engine {
                    link.engine_state(&e.state());
                    link.action(crate::sync::reconciler::Action::Quit);
                }
                let _ = rt.block_on(link.handle.quit(std::time::Duration::from_secs(3)));
            }
            let _ = rt.block_on(async {
                tokio::time::timeout(
                    std::time::Duration::from_secs(3),
                    playback::report(&sh, false),
                )
                .await
            });
            if let Some(e) = self.shared.engine.lock().ok().and_then(|e| e.clone()) {
                e.send(Command::Shutdown);
            }
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
        }
    }
}
