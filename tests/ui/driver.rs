//! The reducer and the player's real backends together, as the event loop
//! runs them (without a terminal): effects go to `runtime::Live` (the
//! session's owner with the real engine on the null output, the reference
//! server), answers (the session's snapshots and events) come back.

use crate::backend::{demo_library, log_in};
use crate::fixtures::*;
use crate::harness::TestServer;
use earmark::api::{BookQuery, Client};
use earmark::config::{ListeningRules, UpNextStore};
use earmark::domain::*;
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::keymap::{KeyCode, Keymap};
use earmark::ui::state::*;
use earmark::ui::terminal::LoopEvent;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct Driver {
    pub app: App,
    pub live: Live,
    rx: Receiver<LoopEvent>,
    start: Instant,
    pub client: Client,
    pub book: Book,
    pub manifest: Manifest,
    _server: TestServer,
    _home: tempfile::TempDir,
    pub rt: tokio::runtime::Runtime,
}

impl Driver {
    /// Logged in, a demo book with a first chapter over a minute open on
    /// the book screen; the session follows `rules`.
    pub fn start(rules: ListeningRules) -> Driver {
        Driver::start_on(&demo_library(), rules, |_, m| {
            m.items[0].duration.unwrap_or(0.0) > 60.0
        })
    }

    /// Logged in to a server of `library`, the first book `pick` takes
    /// open on the book screen (the only one in the list).
    pub fn start_on(
        library: &std::path::Path,
        rules: ListeningRules,
        pick: impl Fn(&Book, &Manifest) -> bool,
    ) -> Driver {
        Driver::start_prepared(library, rules, pick, |_, _, _| {})
    }

    /// As [`Driver::start_on`], with `prepare` run once logged in and
    /// before the player's backends start (to set the server's places or
    /// the account's up next list they will read).
    pub fn start_prepared(
        library: &std::path::Path,
        rules: ListeningRules,
        pick: impl Fn(&Book, &Manifest) -> bool,
        prepare: impl FnOnce(&tokio::runtime::Runtime, &Client, &UpNextStore),
    ) -> Driver {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(TestServer::start(library)).unwrap();
        let home = tempfile::tempdir().unwrap();
        let (profile, done) = log_in(&rt, &server, home.path());
        let client = done.client.clone();
        let account = Account {
            server_id: done.session.server_id.clone(),
            user_id: done.session.user_id.clone(),
        };
        prepare(&rt, &client, &UpNextStore::of(&profile.dirs.data, &account));
        let (book, manifest) = rt.block_on(async {
            for b in client.books(&BookQuery::default()).await.unwrap() {
                let m = client.manifest(&b.id).await.unwrap();
                if pick(&b, &m) {
                    return (b, m);
                }
            }
            panic!("no book to open in {}", library.display());
        });
        let (ui, rx) = UiSender::channel();
        let live = Live::start(ui, profile, Some(done.session), AudioMode::Null, rules).unwrap();
        let mut d = Driver {
            app: App::new(Keymap::default(), UiSettings::default()),
            live,
            rx,
            start: Instant::now(),
            client,
            book: book.clone(),
            manifest: manifest.clone(),
            rt,
            _home: home,
            _server: server,
        };
        d.step(Event::Answer(Answer::LoggedIn(SessionInfo {
            address: d._server.base_url().to_owned(),
            user: d._server.username.clone(),
            profile: None,
        })));
        d.step(Event::Answer(Answer::Library {
            books: vec![book.clone()],
            from_cache: false,
        }));
        d.step(code(KeyCode::Enter));
        d.step(Event::Answer(Answer::BookLoaded {
            book,
            manifest: Some(manifest),
            bookmarks: vec![],
        }));
        d
    }

    pub fn step(&mut self, ev: Event) {
        let mut fx = self
            .app
            .update(Event::Tick(self.start.elapsed().as_millis() as u64));
        fx.extend(self.app.update(ev));
        for e in fx {
            self.live.handle(e);
        }
    }

    /// Follows the answers (and the clock) until `done` holds.
    pub fn follow(&mut self, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(&self.app) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("timed out waiting for {what}");
            }
            let wake = self
                .app
                .next_wake()
                .map(|t| t.saturating_sub(self.start.elapsed().as_millis() as u64));
            let wait = wake.map_or(left, |w| Duration::from_millis(w).min(left));
            match self.rx.recv_timeout(wait) {
                Ok(LoopEvent::App(ev)) => self.step(ev),
                Ok(_) => {}
                Err(_) => {
                    let now = self.start.elapsed().as_millis() as u64;
                    for e in self.app.update(Event::Tick(now)) {
                        self.live.handle(e);
                    }
                }
            }
        }
    }

    /// The session's book as the player sees it: state, chapter, position.
    pub fn at(app: &App) -> Option<(PlayState, ChapterId, f64)> {
        app.playing()
            .map(|p| (p.state.clone(), p.chapter.clone(), p.position))
    }

    /// Stops the reference server (`restart_server` brings it back on
    /// the same port and data).
    pub fn stop_server(&mut self) {
        self.rt.block_on(self._server.stop());
    }

    pub fn restart_server(&mut self) {
        self.rt.block_on(self._server.restart()).unwrap();
    }

    pub fn server_progress(&self) -> Progress {
        self.rt
            .block_on(self.client.progress(&self.book.id))
            .unwrap()
            .progress
            .unwrap()
    }
}
