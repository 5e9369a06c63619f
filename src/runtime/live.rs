//! [`Live`]: the player's backends, a thin adapter between the pure UI and
//! the playback owner (`crate::playback`) and the contract client. The UI
//! thread only calls [`Backends::handle`], which hands an intent to the
//! owner, or spawns one task for an effect that is an API call, and
//! returns at once; answers come back through the [`UiSender`].
//!
//! [`Live::start`] starts every backend thread and task of the player (the
//! terminal's own threads start in `launch::run_terminal`).

use super::covers::Covers;
use super::shared::{Login, Shared, profiles_answer, write};
use super::{api, notices, offline, playback, up_next};
use crate::config::{Dirs, Profile, ProfileSelector, Session};
use crate::playback::{Control, LocalIndex, Playback, Setup};
use crate::player::AudioMode;
use crate::sync::Choice;
use crate::ui::event_loop::{Backends, UiSender};
use crate::ui::state::{Answer, ConflictChoice, Effect, EngineCmd, StartAt};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

pub struct Live {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    covers: Arc<Covers>,
    #[cfg(all(feature = "mpris", target_os = "linux"))]
    mpris: super::mpris::MprisNow,
}

impl Live {
    /// Starts every backend thread and task. With a stored session for
    /// `profile`, the library (cache first, then the server) starts
    /// loading at once.
    pub fn start(
        ui: UiSender,
        profile: Profile,
        session: Option<Session>,
        audio: AudioMode,
    ) -> Result<Live, String> {
        // earmark-backend (2 threads, and the blocking pool): every task below.
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
        let logged_in = client.is_some();
        let dirs = profile.dirs.clone();
        let setup = Setup {
            dirs: dirs.clone(),
            login: crate::playback::Login::of(&profile, session.as_ref(), client.clone()),
            audio,
            // Read in the background (the first task below).
            downloads: LocalIndex::default(),
        };
        // earmark-engine and the audio threads (`player::Engine::spawn`),
        // the owner's worker and sync's worker (tasks).
        let (owner, events) = {
            let _guard = rt.enter();
            Playback::start(setup)
        };
        let shared = Arc::new(Shared {
            ui,
            login: RwLock::new(Login {
                profile,
                session,
                client,
            }),
            playback: owner.clone(),
            fresh: Mutex::new(false),
            library_load: Default::default(),
            unwritten: Default::default(),
            dirs: dirs.clone(),
        });
        let covers = Arc::new(Covers::new(dirs.cache.join("covers")));
        // What is playing now → the player bar, the sound line, smart rewind.
        rt.spawn(playback::forward(shared.clone(), owner.now()));
        // The owner's events (sync's notices, every stop) → banners, messages.
        rt.spawn(notices::forward(shared.clone(), events));
        // Sync's status (offline, queued, refused; the place to show).
        rt.spawn(notices::status(shared.clone(), owner.sync_status()));
        // MPRIS: media keys and desktop widgets, when a session bus is there.
        #[cfg(all(feature = "mpris", target_os = "linux"))]
        let mpris = super::mpris::MprisNow::default();
        #[cfg(all(feature = "mpris", target_os = "linux"))]
        super::mpris::start(&rt, shared.clone(), mpris.clone());
        shared.send_profiles();
        // One-shot: the downloads on disk (markers; chapters play from them).
        rt.spawn(offline::refresh(shared.clone()));
        if let Some(c) = shared.client() {
            // The address in use, when the profile lists several.
            rt.spawn(notices::addresses(shared.clone(), c));
        }
        if logged_in {
            // One-shot: the library, the cache first.
            rt.spawn(api::library(shared.clone(), true));
            // One-shot: the license status, so a banner shows before a stream fails.
            rt.spawn(api::license_check(shared.clone()));
            // One-shot: the account's up next list.
            rt.spawn(up_next::load(shared.clone()));
        }
        Ok(Live {
            rt: Some(rt),
            shared,
            covers,
            #[cfg(all(feature = "mpris", target_os = "linux"))]
            mpris,
        })
    }

    /// Every effect that is not an intent of the owner runs as one task.
    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.rt {
            rt.spawn(fut);
        }
    }
}

/// The player's engine keys as the owner's controls.
fn control(cmd: EngineCmd) -> Control {
    match cmd {
        EngineCmd::Toggle => Control::Toggle,
        EngineCmd::Pause => Control::Pause,
        EngineCmd::SkipBy(s) => Control::SkipBy(s),
        EngineCmd::NextChapter => Control::NextChapter,
        EngineCmd::PrevChapter => Control::PrevChapter,
        EngineCmd::Seek { chapter, position } => Control::Seek { chapter, position },
        EngineCmd::SetSpeed(s) => Control::Speed(s),
        EngineCmd::SetVolume(v) => Control::Volume(v),
        EngineCmd::FadeVolume(v) => Control::Fade(v),
        EngineCmd::SetSound(s) => Control::Sound(s),
    }
}

impl Backends for Live {
    fn handle(&mut self, effect: Effect) {
        let sh = self.shared.clone();
        match effect {
            Effect::Quit => {}
            Effect::Engine(cmd) => sh.playback.control(control(cmd)),
            Effect::Play {
                book,
                manifest,
                start,
            } => {
                #[cfg(all(feature = "mpris", target_os = "linux"))]
                {
                    let base = sh.client().map(|c| c.base().to_string());
                    let cover = super::covers::cached_path(&sh, &self.covers, &book.id);
                    self.mpris.playing(&book, &manifest, base.as_deref(), cover);
                    let url = book.cover_url.clone();
                    let covers = self.covers.clone();
                    self.spawn(super::covers::keep(
                        sh.clone(),
                        covers,
                        book.id.clone(),
                        url,
                    ));
                }
                let start = match start {
                    StartAt::Resume => crate::sync::StartAt::Resume,
                    StartAt::Restart => crate::sync::StartAt::Restart,
                    StartAt::At(c, p) => crate::sync::StartAt::At(c, p),
                };
                sh.playback.open(book.id, manifest, start);
            }
            Effect::SetFinished { book, finished } => {
                sh.playback.sync().mark_finished(book, finished)
            }
            Effect::FlushProgress => sh.playback.sync().flush(),
            Effect::Recheck => sh.playback.sync().check(),
            Effect::MarkPlace { book, mark } => sh.playback.sync().mark_place(book, mark),
            Effect::LoadHistory(book) => self.spawn(async move {
                let marks = sh.playback.sync().history(book.clone()).await;
                sh.ui.send(Answer::History { book, marks });
            }),
            Effect::LoadStats => self.spawn(async move {
                let stats = sh.playback.sync().stats().await;
                sh.ui.send(Answer::Stats(stats));
            }),
            Effect::ResolveConflict { book, choice } => {
                let choice = match choice {
                    ConflictChoice::Server => Choice::Server,
                    ConflictChoice::Local => Choice::Local,
                };
                sh.playback.sync().chose(book, choice);
            }
            Effect::RetryRefused => self.spawn(async move {
                let n = sh.playback.sync().retry_refused().await;
                sh.ui.send(Answer::Notice(format!(
                    "Sending {n} refused change(s) again."
                )));
            }),
            Effect::DiscardRefused => self.spawn(async move {
                let n = sh.playback.sync().discard_refused().await;
                sh.ui
                    .send(Answer::Notice(format!("Dropped {n} refused change(s).")));
            }),
            Effect::SwitchProfile(name) => self.spawn(switch_profile(sh, name)),
            Effect::Download(book) => self.spawn(offline::download(sh, book)),
            Effect::LoadUpNext => self.spawn(up_next::load(sh)),
            Effect::SaveUpNext { account, books } => self.spawn(up_next::save(sh, account, books)),
            Effect::LoadCover { book, url } => {
                let covers = self.covers.clone();
                self.spawn(super::covers::load(sh, covers, book, url))
            }
            other => self.spawn(api::run(sh, other)),
        }
    }

    fn graphics(&mut self, picker: ratatui_image::picker::Picker) {
        self.covers.set_picker(picker);
    }

    fn shutdown(&mut self) -> Option<String> {
        let rt = self.rt.take()?;
        // The last place is written, then the engine stops.
        let summary = rt.block_on(self.shared.playback.quit(Duration::from_secs(3)));
        rt.shutdown_timeout(Duration::from_secs(2));
        summary.farewell()
    }
}

/// Reading config.toml is file I/O: on the runtime's blocking pool, never
/// on the UI thread.
async fn switch_profile(sh: Arc<Shared>, name: String) {
    let dirs: Dirs = sh.dirs.clone();
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
