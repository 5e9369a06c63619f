//! [`Live`]: the player's backends, a thin adapter between the pure UI and
//! the playback owner (`crate::playback`) and the contract client. The UI
//! thread only calls [`Backends::handle`], which hands an intent to the
//! owner, or spawns one task for an effect that is an API call, and
//! returns at once; answers come back through the [`UiSender`].
//!
//! [`Live::start`] starts every backend thread and task of the player (the
//! terminal's own threads start in `launch::run_terminal`).

use super::covers::Covers;
use super::shared::{Login, Shared, profiles_answer};
use super::{api, notices, offline, playback};
use crate::config::{Dirs, ListeningRules, Profile, ProfileSelector, Session};
use crate::ctl::protocol::PlayerAsk;
use crate::ctl::{Leave, Owner};
use crate::domain::locks::{read, write};
use crate::playback::Setup;
use crate::player::AudioMode;
use crate::ui::event_loop::{Backends, UiSender};
use crate::ui::state::{Answer, Effect};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

pub struct Live {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    covers: Arc<Covers>,
    /// `Effect::LeavePlaying`: on shutdown the book plays on, detached.
    leave: Option<Leave>,
    audio: AudioMode,
    up_next: bool,
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
        rules: ListeningRules,
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
        let up_next = rules.up_next != crate::domain::UpNextMode::Off;
        let setup = || Setup {
            dirs: dirs.clone(),
            login: crate::playback::Login::of(&profile, session.as_ref(), client.clone()),
            audio,
            rules,
            ready_last: true,
        };
        // The profile's running session, attached (a detached `earmark
        // play`, another player); else this player's own: earmark-engine
        // and the audio threads (`player::Engine::spawn`), the session
        // owner's task, sync's worker and the control socket (tasks).
        let (owner, events) = Owner::start(&rt, &profile, setup)?;
        let shared = Arc::new(Shared {
            ui,
            login: RwLock::new(Login {
                profile,
                session,
                client,
            }),
            playback: owner,
            fresh: Mutex::new(false),
            library_load: Default::default(),
            unwritten: Default::default(),
            dirs: dirs.clone(),
        });
        let covers = Arc::new(Covers::new(dirs.cache.join("covers")));
        // The session's snapshot → the player bar, the rows, the overlays.
        rt.spawn(playback::snapshots(
            shared.clone(),
            shared.playback.snapshot(),
        ));
        // The session's events (prompts, stops, news) → overlays, messages.
        rt.spawn(playback::events(shared.clone(), events));
        // MPRIS: media keys and desktop widgets, when a session bus is there.
        #[cfg(all(feature = "mpris", target_os = "linux"))]
        super::mpris::start(&rt, shared.clone(), covers.clone());
        shared.send_profiles();
        if let Some(c) = shared.client() {
            // The address in use, when the profile lists several.
            rt.spawn(notices::addresses(shared.clone(), c));
        }
        if logged_in {
            // One-shot: the library, the cache first.
            rt.spawn(api::library(shared.clone(), true));
            // One-shot: the license status, so a banner shows before a stream fails.
            rt.spawn(api::license_check(shared.clone()));
        }
        Ok(Live {
            rt: Some(rt),
            shared,
            covers,
            leave: None,
            audio,
            up_next,
        })
    }

    /// Every effect that is not an intent of the owner runs as one task.
    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.rt {
            rt.spawn(fut);
        }
    }

    /// A question to the owner, its reply handed to the UI as `answer`.
    fn ask<T>(&self, ask: PlayerAsk, answer: impl FnOnce(T) -> Answer + Send + 'static)
    where
        T: serde::de::DeserializeOwned + Send,
    {
        let sh = self.shared.clone();
        self.spawn(async move {
            sh.ui.send(match sh.playback.ask(ask).await {
                Ok(v) => answer(v),
                Err(e) => Answer::Failed(format!("The listening session did not answer: {e}")),
            })
        });
    }
}

impl Backends for Live {
    fn handle(&mut self, effect: Effect) {
        let sh = self.shared.clone();
        match effect {
            Effect::Quit => {}
            Effect::LeavePlaying => {
                self.leave = Some(Leave {
                    profile: read(&sh.login).profile.clone(),
                    audio: self.audio,
                    up_next: self.up_next,
                })
            }
            Effect::Session(command) => {
                #[cfg(all(feature = "mpris", target_os = "linux"))]
                if let crate::domain::session::Command::Open {
                    book,
                    known: Some(k),
                    ..
                } = &command
                {
                    // The cover, kept on disk for MPRIS's art.
                    let url = k.0.cover_url.clone();
                    let covers = self.covers.clone();
                    self.spawn(super::covers::keep(sh.clone(), covers, book.clone(), url));
                }
                sh.playback.send(command)
            }
            Effect::LoadHistory(book) => self.ask(PlayerAsk::History(book.clone()), |marks| {
                Answer::History { book, marks }
            }),
            Effect::LoadStats => self.ask(PlayerAsk::Stats, Answer::Stats),
            Effect::RetryRefused => self.ask(PlayerAsk::RetryRefused, Answer::RefusedRetried),
            Effect::DiscardRefused => self.ask(PlayerAsk::DiscardRefused, Answer::RefusedDropped),
            Effect::SwitchProfile(name) => self.spawn(switch_profile(sh, name)),
            Effect::Download(book) => self.spawn(offline::download(sh, book)),
            Effect::LoadCover { book, url } => {
                let covers = self.covers.clone();
                self.spawn(super::covers::load(sh, covers, book, url))
            }
            // The effects that are plain API calls.
            Effect::Login {
                address,
                user,
                password,
                profile,
            } => self.spawn(api::login(sh, address, user, password, profile)),
            Effect::LoadLibrary => self.spawn(api::library(sh, false)),
            Effect::Search(q) => self.spawn(api::search(sh, q)),
            Effect::LoadBook(id) => self.spawn(api::load_book(sh, id)),
            Effect::SetFavorite { book, favorite } => {
                self.spawn(api::set_favorite(sh, book, favorite))
            }
            Effect::AddBookmark {
                book,
                chapter,
                position,
                note,
            } => self.spawn(api::add_bookmark(sh, book, chapter, position, note)),
            Effect::DeleteBookmark { book, id } => self.spawn(api::delete_bookmark(sh, book, id)),
            Effect::LoadLicense => self.spawn(api::load_license(sh)),
        }
    }

    fn graphics(&mut self, picker: ratatui_image::picker::Picker) {
        self.covers.set_picker(picker);
    }

    fn shutdown(&mut self) -> Option<String> {
        let rt = self.rt.take()?;
        let owner = &self.shared.playback;
        let words = match self.leave.take() {
            // Its place is written, then a detached session plays on from it.
            Some(leave) => Some(match rt.block_on(owner.leave_playing(&leave)) {
                Ok(w) | Err(w) => w,
            }),
            // The last place is written, then the engine stops; an
            // attached session plays on.
            None => match rt.block_on(owner.quit(Duration::from_secs(3))) {
                Some(summary) => crate::ui::words::farewell(&summary),
                None => owner.plays_on(),
            },
        };
        rt.shutdown_timeout(Duration::from_secs(2));
        words
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
        Ok(Err(e)) => sh.ui.send(Answer::Failed(e.to_string())),
        Err(e) => sh
            .ui
            .send(Answer::Failed(format!("Cannot switch profile: {e}"))),
    }
}
