//! Sending what the outbox holds, and what each failure means: network
//! and 5xx back off (the link's [`Backoff`], capped so the server's return
//! is noticed within `backoff_max`), 429 and 503 hold back only their
//! kind of request until the client's back-off allows (the link says
//! `Throttled`), 401/409 pause for a login, 403 `license_required` stops
//! everything until the license is valid again, 404 drops the entry.

use super::*;
use crate::domain::backoff::{Kind, Ladder, Throttle};
use crate::sync::outbox::{Entry, PARK_AFTER};
use crate::sync::reconciler::Spot;

/// The longest wait before a refused entry is sent again.
const REFUSED_MAX_WAIT: Duration = Duration::from_secs(600);

/// How long a missing endpoint (404 on a whole request) waits.
const NOT_FOUND_WAIT: Duration = Duration::from_secs(60);

/// Quitting keeps trying a server that answered this recently: a restart
/// or a blip of the link (seconds) must not leave the last place unsent
/// until the next start. One away for longer gets one attempt, so a
/// listener offline for a while does not wait at every quit.
const QUIT_WAITS_IF_REACHED_WITHIN: Duration = Duration::from_secs(60);

/// The kind of request an entry is sent as.
fn kind_of(op: &Op) -> Kind {
    match op {
        Op::ProgressWrite(_) | Op::ProgressDelete => Kind::ProgressWrite,
        _ => Kind::Write,
    }
}

impl Worker {
    pub(super) fn backing_off(&self) -> bool {
        self.reconnect.left(std::time::Instant::now()).is_some()
    }

    /// The entries that may be sent now (not set aside, not waiting after
    /// a refusal).
    fn sendable(&self) -> Vec<Entry> {
        let Some(scope) = &self.scope else {
            return Vec::new();
        };
        let now = Instant::now();
        self.outbox
            .in_scope(scope)
            .into_iter()
            .filter(|e| !e.is_parked() && self.retry_at.get(&e.seq).is_none_or(|t| now >= *t))
            .cloned()
            .collect()
    }

    pub(super) async fn flush(&mut self) {
        if self.blocked() || self.backing_off() {
            return;
        }
        let (progress, others): (Vec<_>, Vec<_>) = self
            .sendable()
            .into_iter()
            .partition(|e| matches!(e.op, Op::ProgressWrite(_)));
        let go_on = if self.single_writes {
            self.send_singly(&progress).await
        } else {
            self.send_batches(&progress).await
        };
        if go_on {
            self.send_others(&others).await;
        }
    }

    /// Whether the server's back-off holds `kind` back now (the link
    /// then says so).
    fn held_back(&mut self, kind: Kind) -> bool {
        match self.remote.throttle(kind) {
            Some(t) => {
                self.throttled(t);
                true
            }
            None => false,
        }
    }

    /// The server asked to wait: shown, unless nothing answers at all.
    fn throttled(&mut self, t: Throttle) {
        if matches!(self.link, Link::Online | Link::Throttled(_)) {
            self.link = Link::Throttled(t);
        }
    }

    /// A throttled link shows the longest wait still in force, and is
    /// online again once none is.
    pub(super) fn throttle_shown(&mut self) {
        if let Link::Throttled(_) = self.link {
            self.link = match self.remote.throttled() {
                Some(t) => Link::Throttled(t),
                None => Link::Online,
            };
        }
    }

    /// Progress one book at a time (a server without the batch endpoint).
    /// False when flushing must stop.
    async fn send_singly(&mut self, progress: &[Entry]) -> bool {
        for e in progress {
            let Op::ProgressWrite(p) = &e.op else {
                continue;
            };
            if self.held_back(Kind::ProgressWrite) {
                return true;
            }
            self.requests += 1;
            match self.remote.write_progress(&e.book, p).await {
                Ok(answer) => {
                    self.reachable();
                    self.done(e.seq);
                    self.server_said(&e.book, answer);
                }
                Err(f) => {
                    if !self.item_failed(e.seq, &e.book, f) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Progress through the batch endpoint. False when flushing must stop.
    async fn send_batches(&mut self, progress: &[Entry]) -> bool {
        for chunk in progress.chunks(BATCH_MAX) {
            if self.held_back(Kind::ProgressWrite) {
                return true;
            }
            let items: Vec<(BookId, QueuedProgress)> = chunk
                .iter()
                .filter_map(|e| match &e.op {
                    Op::ProgressWrite(p) => Some((e.book.clone(), p.clone())),
                    _ => None,
                })
                .collect();
            self.requests += 1;
            match self.remote.write_progress_batch(&items).await {
                Ok(results) => {
                    self.reachable();
                    for (entry, result) in chunk.iter().zip(results) {
                        match result {
                            Ok(answer) => {
                                self.done(entry.seq);
                                self.server_said(&entry.book, answer);
                            }
                            Err(f) => {
                                if !self.item_failed(entry.seq, &entry.book, f) {
                                    return false;
                                }
                            }
                        }
                    }
                }
                Err(Failure::NotFound(message)) => {
                    // A server without the batch endpoint: write one by one.
                    tracing::warn!("sync: no batch endpoint ({message}); writing books one by one");
                    self.single_writes = true;
                    self.want_flush = true;
                    return false;
                }
                Err(f @ (Failure::Rejected { .. } | Failure::ScopeBug(_))) => {
                    // The whole request was refused: each entry counts it.
                    for e in chunk {
                        self.item_failed(e.seq, &e.book, f.clone());
                    }
                }
                Err(f @ Failure::Throttled(_)) => {
                    self.request_failed(f);
                    return true;
                }
                Err(f) => {
                    self.request_failed(f);
                    return false;
                }
            }
        }
        true
    }

    /// Every other change, each as its own request.
    async fn send_others(&mut self, others: &[Entry]) {
        for e in others {
            if self.held_back(kind_of(&e.op)) {
                continue;
            }
            self.requests += 1;
            let r = match &e.op {
                Op::ProgressDelete => self.remote.delete_progress(&e.book).await,
                Op::SettingsWrite(s) => self.remote.write_settings(&e.book, s).await.map(|_| ()),
                Op::SettingsDelete => self.remote.delete_settings(&e.book).await,
                Op::FavoriteSet { favorite } => self.remote.set_favorite(&e.book, *favorite).await,
                Op::BookmarkCreate {
                    client_id,
                    chapter_id,
                    position_sec,
                    note,
                } => {
                    self.remote
                        .add_bookmark(
                            &e.book,
                            client_id,
                            chapter_id,
                            *position_sec,
                            note.as_deref(),
                        )
                        .await
                }
                Op::BookmarkDelete { bookmark_id } => {
                    self.remote.remove_bookmark(bookmark_id).await
                }
                Op::ProgressWrite(_) => unreachable!("partitioned above"),
            };
            match r {
                Ok(()) => {
                    self.reachable();
                    self.done(e.seq);
                }
                Err(f) => {
                    if !self.item_failed(e.seq, &e.book, f) {
                        return;
                    }
                }
            }
        }
    }

    /// Flushes for quitting, until `deadline` at the latest: while the
    /// server asks to wait, the wait is kept when it ends before the
    /// deadline (else the changes stay queued and the summary says what
    /// it asked); while it is unreachable but answered within
    /// [`QUIT_WAITS_IF_REACHED_WITHIN`], it is asked again after each step
    /// of the link's back-off. The caller bounds it with the quit's timeout.
    pub(super) async fn flush_to_quit(&mut self, deadline: Instant) {
        loop {
            self.flush().await;
            let left = self.sendable();
            if left.is_empty() {
                return;
            }
            let wait = left
                .iter()
                .filter_map(|e| self.remote.throttle(kind_of(&e.op)))
                .map(|t| t.until)
                .max();
            if let Some(until) = wait {
                if tokio::time::Instant::from_std(until) >= deadline {
                    return;
                }
                tokio::time::sleep_until(until.into()).await;
                continue;
            }
            let recent = self
                .last_reached
                .is_some_and(|t| t.elapsed() < QUIT_WAITS_IF_REACHED_WITHIN);
            if self.link != Link::Offline || !recent {
                return;
            }
            let next = self
                .reconnect
                .until()
                .map(tokio::time::Instant::from_std)
                .filter(|u| *u > Instant::now())
                .unwrap_or_else(|| Instant::now() + self.cfg.backoff_min);
            tokio::time::sleep_until(next).await;
        }
    }

    pub(super) fn done(&mut self, seq: u64) {
        super::local::kept!(self, complete(seq));
    }

    /// The server's answer to a write of `book`: the record it holds now
    /// (ours, or, not applied, its own newer one).
    pub(super) fn server_said(
        &mut self,
        book: &BookId,
        answer: crate::api::WriteOutcome<crate::domain::Progress>,
    ) {
        let Some(p) = answer.record else {
            return;
        };
        if let Some(scope) = self.scope.clone() {
            let spot = Spot::new(p.chapter_id.clone(), p.position);
            let at = p.client_updated_at.unwrap_or_else(now_millis);
            self.cache.set_progress(&scope, book, &spot, p.finished, at);
        }
        match self.rec.current_playback() {
            Some((playback, b)) if b == book => {
                let ds = self.rec.handle(
                    Event::WriteAnswered {
                        playback,
                        progress: p,
                        applied: answer.applied,
                    },
                    now_millis(),
                );
                self.decide(ds);
            }
            // Another book's place the server kept: the library shows it.
            _ if !answer.applied => self.notify(Told::ProgressChanged {
                book: book.clone(),
                progress: p,
            }),
            _ => {}
        }
    }

    /// Handles one entry's failure. Returns false when flushing must stop.
    pub(super) fn item_failed(&mut self, seq: u64, book: &BookId, f: Failure) -> bool {
        let gone = match &f {
            Failure::NotFound(_) => true,
            Failure::Rejected { code, .. } => code.as_deref() == Some("unknown_chapter"),
            _ => false,
        };
        match f {
            Failure::NotFound(message) | Failure::Rejected { message, .. } if gone => {
                tracing::warn!(%book, "sync: dropping a queued write: {message}");
                self.done(seq);
                self.said(Said::Dropped {
                    book: book.clone(),
                    why: message,
                });
                true
            }
            Failure::Rejected { message, .. } => {
                self.refused(seq, book, message, false);
                true
            }
            // Identity headers the server does not take: the user has a
            // setting to change, so they hear it at once.
            Failure::ScopeBug(message) => {
                self.refused(seq, book, message, true);
                true
            }
            // Only this kind waits: the other changes go on.
            f @ Failure::Throttled(_) => {
                self.request_failed(f);
                true
            }
            other => {
                self.request_failed(other);
                false
            }
        }
    }

    /// The server refused one entry: it waits longer each time (up to
    /// ten minutes), and after `PARK_AFTER` refusals it is set aside until
    /// the user retries or discards it. Never a retry every second.
    fn refused(&mut self, seq: u64, book: &BookId, message: String, tell_now: bool) {
        tracing::error!(%book, "sync: the server refused a queued write (kept): {message}");
        self.last_error = Some(message.clone());
        let Some(count) = super::local::kept!(self, reject(seq, message.clone())) else {
            return;
        };
        if tell_now && count == 1 {
            let message = format!("The server refused a change for book {book}: {message}");
            self.stopped(StopReason::Scope, message);
        }
        if count >= PARK_AFTER {
            self.retry_at.remove(&seq);
            self.news(crate::sync::SyncNews::SetAside {
                book: book.clone(),
                times: count,
                why: message,
            });
            return;
        }
        let wait = Ladder::new(self.cfg.backoff_min, REFUSED_MAX_WAIT).wait(count + 1);
        self.retry_at.insert(seq, Instant::now() + wait);
    }

    /// Asks the server whether it is back (the license status: small, and
    /// every server has it).
    pub(super) async fn probe(&mut self) {
        self.requests += 1;
        match self.remote.license().await {
            Ok(None) => self.reachable(),
            Ok(Some(message)) => {
                self.reachable();
                self.license_blocked(message);
            }
            Err(f @ Failure::Retry(_)) => {
                self.last_error = Some(f.to_string());
                self.back_off();
            }
            Err(f) => {
                self.reachable();
                self.request_failed(f);
            }
        }
    }

    pub(super) fn reachable(&mut self) {
        self.last_reached = Some(Instant::now());
        self.reconnect.succeeded();
        if self.link == Link::Offline {
            self.link = Link::Online;
            self.last_error = None;
            let ds = self.rec.handle(Event::Online, now_millis());
            self.decide(ds);
        }
    }

    pub(super) fn request_failed(&mut self, f: Failure) {
        self.last_error = Some(f.to_string());
        match f {
            Failure::Retry(_) => {
                self.link = Link::Offline;
                let ds = self.rec.handle(Event::Offline, now_millis());
                self.decide(ds);
                // One step per round: a write and a read failing together
                // do not double the wait.
                if !self.backing_off() {
                    self.back_off();
                }
            }
            Failure::Throttled(_) => {
                // It answered: not offline, and only the refused kind waits.
                self.reachable();
                if let Some(t) = self.remote.throttled() {
                    self.throttled(t);
                }
            }
            Failure::Unauthorized(message) => self.needs_login(message, StopReason::Login),
            Failure::ScopeMismatch(message) => self.needs_login(message, StopReason::Scope),
            Failure::License(message) => self.license_blocked(message),
            Failure::ScopeBug(message) | Failure::Rejected { message, .. } => {
                tracing::error!("sync: request refused, writes kept: {message}");
                self.back_off();
            }
            Failure::NotFound(message) => {
                tracing::error!("sync: endpoint not found, writes kept: {message}");
                self.reconnect.failed(
                    self.link_ladder(),
                    Some(NOT_FOUND_WAIT),
                    std::time::Instant::now(),
                );
            }
        }
    }

    fn link_ladder(&self) -> Ladder {
        Ladder::new(self.cfg.backoff_min, self.cfg.backoff_max)
    }

    pub(super) fn back_off(&mut self) {
        let ladder = self.link_ladder();
        self.reconnect
            .failed(ladder, None, std::time::Instant::now());
    }

    /// 401 (`Login`), 409 (`Scope`: the server instance or the account
    /// changed): log in again, then [`crate::sync::SyncSession::session_changed`].
    fn needs_login(&mut self, message: String, reason: StopReason) {
        self.link = Link::NeedsLogin {
            message: message.clone(),
        };
        self.stopped(reason, message);
    }

    /// 403 `license_required`: all sync stops until the license is valid
    /// again; the notice makes the playback owner stop the engine.
    pub(super) fn license_blocked(&mut self, message: String) {
        if !matches!(self.link, Link::LicenseBlocked { .. }) {
            self.stopped(StopReason::License, message.clone());
        }
        self.link = Link::LicenseBlocked { message };
        self.license_checked = Instant::now();
    }

    pub(super) async fn check_license(&mut self) {
        self.license_checked = Instant::now();
        self.requests += 1;
        match self.remote.license().await {
            Ok(None) => {
                if matches!(self.link, Link::LicenseBlocked { .. }) {
                    self.link = Link::Online;
                    self.last_error = None;
                    self.said(Said::LicenseRestored);
                    self.want_flush = true;
                }
            }
            Ok(Some(message)) => self.license_blocked(message),
            Err(f) => self.last_error = Some(f.to_string()),
        }
    }
}
