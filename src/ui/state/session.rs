//! The listening session as the player takes it in: each snapshot its
//! owner publishes replaces [`App::snap`] (the server lost or back
//! refreshes what needs it), and each event becomes an overlay, a banner
//! or a toast. Every sentence the session's news needs is worded here.

use super::*;
use crate::domain::rewind::RewindAfter;
use crate::domain::session::{Event as SessionEvent, Link, Said, UpNextWhy};
use crate::domain::sleep::SleepNews;
use crate::domain::{BookId, NextFrom, Opening, Stop, StopReason, UpNextMode};

impl App {
    /// The server cannot be reached (the session found it away).
    pub fn offline(&self) -> bool {
        self.snap.link == Link::Offline
    }

    /// The place shown is this device's, not confirmed by the server
    /// (taken offline, or not read back yet after it went away).
    pub fn unconfirmed(&self) -> bool {
        self.playing()
            .is_some_and(|p| !p.confirmed && p.state != PlayState::Ready)
            && self.snap.link != Link::Online
    }

    /// Only the place of the playing book moved since the last snapshot
    /// (however far: no step makes it worth a frame of its own).
    pub(super) fn place_only(&self, a: &Answer) -> bool {
        let Answer::Session(new) = a else {
            return false;
        };
        let playing = new.listening.as_ref().map(|l| &l.state) == Some(&PlayState::Playing);
        playing && !new.differs_from(&self.snap, f64::INFINITY)
    }

    pub(super) fn snapshot(&mut self, snap: Snapshot, fx: &mut Vec<Effect>) {
        let back = self.snap.link == Link::Offline && snap.link != Link::Offline;
        if self.snap.stop.is_some() && snap.stop.is_none() {
            self.license_block = None;
        }
        if let (None, Some(why)) = (&self.snap.no_audio, &snap.no_audio) {
            self.toast(format!("No audio: {why}"), true);
        }
        self.snap = snap;
        self.up_next.list_changed(self.snap.up_next.list.len());
        self.downloads.on_disk(&self.snap.downloads);
        // Back: the library and a book screen that could not be read
        // refresh by themselves.
        if back && self.session.is_some() {
            fx.push(Effect::LoadLibrary);
            if self.screen == Screen::Book && self.book.manifest.is_none() {
                self.book.loading = true;
                fx.push(Effect::LoadBook(self.book.id.clone()));
            }
        }
    }

    /// When the session's countdowns on screen need the loop.
    pub(super) fn session_wake(&self) -> Option<Millis> {
        let ticking = self.snap.up_next.countdown.is_some()
            || matches!(
                self.snap.sleep,
                Some(SleepTimer::Timed { since: Some(_), .. } | SleepTimer::Fading { .. })
            );
        ticking.then_some(self.now + PLAYING_TICK_MS)
    }

    pub(super) fn session_event(&mut self, e: SessionEvent, fx: &mut Vec<Effect>) {
        match e {
            SessionEvent::Conflict {
                book,
                server,
                local,
            } => self.overlays.show(Overlay::Conflict {
                book,
                server,
                local,
                cursor: 0,
            }),
            SessionEvent::Stopped(stop) => self.stopped(stop),
            SessionEvent::ProgressChanged { book, progress } => self
                .library
                .update_book(&book, |b| b.progress = Some(progress)),
            SessionEvent::PlaceMarked { book, mark } => {
                self.book.history.push(book, mark);
            }
            SessionEvent::Said(s) => {
                if let Said::UpNextStarting { next, .. } = &s {
                    self.follow_up_next(next.book.clone(), fx);
                }
                if let Some((text, error)) = self.words(s) {
                    self.toast(text, error);
                }
            }
        }
    }

    /// The next book starts: on the finished book's screen, its screen
    /// opens (where Space would play the finished one again).
    fn follow_up_next(&mut self, next: BookId, fx: &mut Vec<Effect>) {
        let finished = self.playing().map(|p| p.book.id.clone());
        if self.screen == Screen::Book && finished.as_ref() == Some(&self.book.id) {
            self.open_book(next, fx);
        }
    }

    /// Playback stopped for `stop.reason` (the session's owner decided it
    /// and paused the engine): the license raises the banner that blocks
    /// playback keys until a valid status; a login or scope problem asks
    /// for a new login; anything else is said.
    pub(super) fn stopped(&mut self, stop: Stop) {
        match stop.reason {
            StopReason::License => {
                self.license_block = Some(stop.message);
                self.login.busy = false;
            }
            r if r.needs_login() => self.toast(format!("{} {LOG_IN_AGAIN}", stop.message), true),
            StopReason::Forbidden => self.toast(format!("No permission: {}", stop.message), true),
            _ => self.toast(stop.message, true),
        }
    }

    fn title_of(&self, book: &BookId) -> String {
        self.library
            .get(book)
            .map(|b| b.title.clone())
            .or_else(|| {
                self.playing()
                    .filter(|p| &p.book.id == book)
                    .map(|p| p.book.title.clone())
            })
            .unwrap_or_else(|| book.to_string())
    }

    /// The session's news in the player's words (`None`: nothing to say).
    fn words(&self, s: Said) -> Option<(String, bool)> {
        let say = |t: String| Some((t, false));
        match s {
            Said::NothingPlaying => say(NOTHING_PLAYING.into()),
            Said::NotDownloaded { book, .. } => say(format!(
                "\"{}\" is not downloaded and the server cannot be reached: it plays when the server is back.",
                self.title_of(&book)
            )),
            Said::FromDownload { offline: true, .. } => {
                say("The server cannot be reached: this book plays from its download.".into())
            }
            Said::FromDownload { offline: false, .. } => None,
            Said::DownloadOutdated { .. } => say(
                "The server's chapters of this book changed since it was downloaded: it streams. Press D to update the download.".into(),
            ),
            Said::Sleep(n) => say(sleep_words(n)),
            Said::Rewound { back, after } => {
                let why = match after {
                    RewindAfter::Pause => "a pause",
                    RewindAfter::Interruption => "an interruption",
                    RewindAfter::Break => "a break",
                };
                say(format!("Rewound {back:.0} s after {why}"))
            }
            Said::MovedToServer { to, .. } => say(format!(
                "The server has a newer place for this book (another device's): {}. Playback moved there; u goes back.",
                self.describe_position(&to)
            )),
            Said::UpNextStarting { next, opening } => {
                let from = match &next.from {
                    NextFrom::Series(name) => format!(", next in {name}"),
                    NextFrom::List => ", from your up next list".to_owned(),
                };
                let how = match opening {
                    Opening::Restart => ", from the beginning",
                    Opening::Resume => "",
                };
                say(format!("Up next: “{}”{from}{how}", next.title))
            }
            Said::UpNextNone(why) => say(self.nothing_next(why)),
            Said::LicenseRestored => say("The server's license is valid again.".into()),
            Said::DownloadAppeared { book } => say(format!(
                "\"{}\" is downloaded: it plays without the server.",
                self.title_of(&book)
            )),
            Said::Dropped { book, why } => say(format!(
                "A queued change for \"{}\" was dropped: {why}",
                self.title_of(&book)
            )),
            Said::NoAudio { why } => Some((format!("No audio: {why}"), true)),
            Said::NoChapters { .. } => Some(("This book has no chapters to play.".into(), true)),
            Said::SoundConfig { why } => say(format!("{why}; using the defaults.")),
            Said::SoundFileAside { to } => say(format!(
                "sound.json could not be read; it was moved to {to} and the defaults apply"
            )),
            Said::UpNextUnread { list: true, why } => Some((why, true)),
            Said::UpNextUnread { list: false, why } => Some((format!("Up next: {why}"), true)),
            Said::Sync(n) => Some((
                crate::ui::words::sync_news(&n),
                crate::ui::words::sync_news_failed(&n),
            )),
            Said::Info(m) => say(m),
            Said::Failed(m) => Some((m, true)),
        }
    }

    /// `n` (or MPRIS Next) found no next book: where the book is, and why.
    fn nothing_next(&self, why: UpNextWhy) -> String {
        let ended = self.playing().is_some_and(|p| p.state == PlayState::Ended);
        let lead = match ended {
            true => "The book has ended",
            false => "This is the last chapter",
        };
        let why = match why {
            UpNextWhy::Off => "up next is off",
            UpNextWhy::NothingFollows if self.snap.up_next.mode == UpNextMode::Queue => {
                "the up next list is empty"
            }
            UpNextWhy::NothingFollows => {
                "the up next list is empty and no book follows in its series"
            }
            UpNextWhy::NotDownloaded => {
                "the next book is not downloaded and the server cannot be reached"
            }
        };
        format!("{lead}: no next book ({why}).")
    }
}

fn sleep_words(n: SleepNews) -> String {
    match n {
        SleepNews::Set { choice, auto } => {
            let set = match choice {
                SleepChoice::Minutes(m) => format!("Sleep timer: {m} min"),
                SleepChoice::Chapters(1) => "Sleep timer: end of chapter".into(),
                SleepChoice::Chapters(n) => format!("Sleep timer: end of {n} chapters"),
                SleepChoice::Off => "Sleep timer off".into(),
            };
            match auto {
                Some(w) => format!("{set} (automatic, {})", w.label()),
                None => set,
            }
        }
        SleepNews::Extended { left_ms } => {
            format!("Sleep timer: {} left", fmt_time(left_ms as f64 / 1000.0))
        }
        SleepNews::Slept => "Sleep timer: paused (z adds 5 min)".into(),
        SleepNews::SleptAtChapterEnd => "Sleep timer: paused at the end of the chapter".into(),
    }
}
