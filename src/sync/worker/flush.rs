//! Sending what the outbox holds, and what each failure means: network
//! and 5xx back off, 401/409 pause for a login, 403 `license_required`
//! stops everything until the license is valid again, 404 drops the entry.

use super::*;
use crate::sync::outbox::PARK_AFTER;
use crate::sync::reconciler::Spot;
use crate::sync::session::LoginReason;

/// The longest wait before a refused entry is sent again.
const REFUSED_MAX_WAIT: Duration = Duration::from_secs(600);

/// Quitting keeps trying a server that answered this recently: a restart
/// or a blip of the link (seconds) must not leave the last place unsent
/// until the next start. One away for longer gets one attempt, so a
/// listener offline for a while does not wait at every quit.
const QUIT_WAITS_IF_REACHED_WITHIN: Duration = Duration::from_secs(60);

/// How often quitting tries again.
const QUIT_RETRY_EVERY: Duration = Duration::from_millis(250);

impl Worker {
    pub(super) fn backing_off(&self) -> bool {
        self.next_attempt.is_some_and(|t| Instant::now() < t)
    }

    pub(super) async fn flush(&mut self) {
        if self.blocked() || self.backing_off() {
            return;
        }
        let Some(scope) = self.scope.clone() else {
            return;
        };
        let now = Instant::now();
        let entries: Vec<_> = self
            .outbox
            .in_scope(&scope)
            .into_iter()
            .filter(|e| !e.is_parked() && self.retry_at.get(&e.seq).is_none_or(|t| now >= *t))
            .cloned()
            .collect();
        if entries.is_empty() {
            return;
        }
        let (progress, others): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|e| matches!(e.op, Op::ProgressWrite(_)));
        if self.single_writes {
            for e in &progress {
                let Op::ProgressWrite(p) = &e.op else {
                    continue;
                };
                self.requests += 1;
                match self.remote.write_progress(&e.book, p).await {
                    Ok(answer) => {
                        self.reachable();
                        self.done(e.seq);
                        self.server_said(&e.book, answer);
                    }
                    Err(f) => {
                        if !self.item_failed(e.seq, &e.book, f) {
                            return;
                        }
                    }
                }
            }
        }
        let progress = if self.single_writes {
            Vec::new()
        } else {
            progress
        };
        for chunk in progress.chunks(BATCH_MAX) {
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
                                    return;
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
                    return;
                }
                Err(f @ (Failure::Rejected { .. } | Failure::ScopeBug(_))) => {
                    // The whole request was refused: each entry counts it.
                    for e in chunk {
                        self.item_failed(e.seq, &e.book, f.clone());
                    }
                }
                Err(f) => return self.request_failed(f),
            }
        }
        for e in others {
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

    /// Flushes for quitting: no back-off, and again every
    /// [`QUIT_RETRY_EVERY`] while the server is unreachable but answered
    /// within [`QUIT_WAITS_IF_REACHED_WITHIN`] and something is left to
    /// send. The caller bounds it with the quit's timeout.
    pub(super) async fn flush_to_quit(&mut self) {
        loop {
            self.next_attempt = None;
            self.flush().await;
            let recent = self
                .last_reached
                .is_some_and(|t| t.elapsed() < QUIT_WAITS_IF_REACHED_WITHIN);
            let left = self.scope.as_ref().is_some_and(|s| {
                self.outbox.in_scope(s).iter().any(|e| {
                    !e.is_parked()
                        && self
                            .retry_at
                            .get(&e.seq)
                            .is_none_or(|t| Instant::now() >= *t)
                })
            });
            if self.link != Link::Offline || !recent || !left {
                return;
            }
            tokio::time::sleep(QUIT_RETRY_EVERY).await;
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
            _ if !answer.applied => self.notify(Notice::ProgressChanged {
                book: book.clone(),
                progress: p,
            }),
            _ => {}
        }
    }

    /// Handles one entry's failure. Returns false when flushing must stop.
    pub(super) fn item_failed(&mut self, seq: u64, book: &BookId, f: Failure) -> bool {
        match f {
            Failure::NotFound(message) => {
                tracing::warn!(%book, "sync: dropping a queued write: {message}");
                self.done(seq);
                self.notify(Notice::Dropped {
                    book: book.clone(),
                    message,
                });
                true
            }
            Failure::Rejected { code, message } if code.as_deref() == Some("unknown_chapter") => {
                tracing::warn!(%book, "sync: dropping a queued write: {message}");
                self.done(seq);
                self.notify(Notice::Dropped {
                    book: book.clone(),
                    message,
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
            self.notify(Notice::ScopeRefused {
                book: book.clone(),
                message: format!("The server refused a change for book {book}: {message}"),
            });
        }
        if count >= PARK_AFTER {
            self.retry_at.remove(&seq);
            self.notify(Notice::Info(format!(
                "The server refused a change for book {book} {count} times ({message}); it is set aside: `earmark sync pending` shows it, `earmark sync retry` sends it again, `earmark sync discard --refused` drops it."
            )));
            return;
        }
        let wait = self
            .cfg
            .backoff_min
            .saturating_mul(1 << count.min(16))
            .min(REFUSED_MAX_WAIT);
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
        self.backoff = Duration::ZERO;
        self.next_attempt = None;
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
                self.back_off();
            }
            Failure::Unauthorized(message) => self.needs_login(message, LoginReason::Expired),
            Failure::ScopeMismatch(message) => self.needs_login(message, LoginReason::ScopeChanged),
            Failure::License(message) => self.license_blocked(message),
            Failure::ScopeBug(message) | Failure::Rejected { message, .. } => {
                tracing::error!("sync: request refused, writes kept: {message}");
                self.back_off();
            }
            Failure::NotFound(message) => {
                tracing::error!("sync: endpoint not found, writes kept: {message}");
                self.next_attempt = Some(Instant::now() + self.cfg.backoff_max);
            }
        }
    }

    pub(super) fn back_off(&mut self) {
        self.backoff = (self.backoff * 2)
            .max(self.cfg.backoff_min)
            .min(self.cfg.backoff_max);
        self.next_attempt = Some(Instant::now() + self.backoff);
    }

    fn needs_login(&mut self, message: String, reason: LoginReason) {
        self.link = Link::NeedsLogin {
            message: message.clone(),
        };
        self.notify(Notice::LoginRequired { message, reason });
    }

    /// 403 `license_required`: all sync stops until the license is valid
    /// again; the notice makes the playback owner stop the engine.
    pub(super) fn license_blocked(&mut self, message: String) {
        if !matches!(self.link, Link::LicenseBlocked { .. }) {
            self.notify(Notice::LicenseStopped {
                message: message.clone(),
            });
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
                    self.notify(Notice::LicenseRestored);
                    self.want_flush = true;
                }
            }
            Ok(Some(message)) => self.license_blocked(message),
            Err(f) => self.last_error = Some(f.to_string()),
        }
    }
}
