//! This device's files as the worker sees them: dropping queued changes,
//! and what the journal could not take. A change the journal
//! cannot take (a full disk, a read-only file system) is applied in memory
//! all the same and sent as usual; the user is told once why, and told
//! again when the journal takes changes again. Only a lock held by another
//! process is "another player".

use super::Worker;
use crate::durable::Recovery;
use crate::sync::outbox::{Journaled, OutboxError};
use crate::sync::session::{JournalOp, SyncNews};

/// An outbox change (`self.outbox.$call`), its failure to be journaled
/// said through [`Worker::kept`]; gives the call's value.
macro_rules! kept {
    ($w:expr, $($call:tt)+) => {{
        let r = $w.outbox.$($call)+;
        $w.kept(r)
    }};
}
pub(super) use kept;

/// The first notice when the journal cannot be opened.
pub(super) fn open_failed(e: &OutboxError) -> SyncNews {
    match e {
        OutboxError::Locked(_) => SyncNews::JournalLocked,
        e => SyncNews::NotSaved {
            history: true,
            why: e.to_string(),
        },
    }
}

/// What opening the listening log recovered, when it was damaged.
pub(super) fn recovered(r: &Recovery) -> Option<SyncNews> {
    (!r.is_clean()).then_some(SyncNews::HistoryDamaged {
        kept: r.records,
        skipped: r.corrupt_skipped,
    })
}

impl Worker {
    pub(super) fn seqs(
        entries: Vec<&crate::sync::outbox::Entry>,
        keep: impl Fn(&crate::sync::outbox::Entry) -> bool,
    ) -> Vec<u64> {
        entries
            .into_iter()
            .filter(|e| keep(e))
            .map(|e| e.seq)
            .collect()
    }

    /// Drops these entries; how many were there.
    pub(super) fn discard(&mut self, seqs: Vec<u64>) -> usize {
        seqs.into_iter()
            .filter(|&seq| kept!(self, complete(seq)))
            .count()
    }

    /// The value of an outbox change; one the journal could not take is
    /// applied in memory all the same, and its reason said.
    pub(super) fn kept<T: std::fmt::Debug>(&mut self, r: Journaled<T>) -> T {
        match r {
            Ok(v) => v,
            Err(n) => {
                self.fail_local(n.error);
                n.value
            }
        }
    }

    fn fail_local(&mut self, e: OutboxError) {
        tracing::error!("sync outbox: {e}");
        let message = e.to_string();
        if self.unsaved.as_ref().is_none_or(|(f, _)| *f != e.fault()) {
            self.news(SyncNews::NotSaved {
                history: false,
                why: e.to_string(),
            });
        }
        self.unsaved = Some((e.fault(), message.clone()));
        self.last_error = Some(message);
    }

    /// The journal took changes again after a failure: say so once.
    pub(super) fn saved_again(&mut self) {
        if self.outbox.is_durable()
            && let Some((_, message)) = self.unsaved.take()
        {
            if self.last_error.as_ref() == Some(&message) {
                self.last_error = None;
            }
            self.news(SyncNews::SavedAgain);
        }
    }

    /// `earmark sync push | retry | discard` and the player's retry and
    /// discard of refused changes: each answers how many it moved.
    pub(super) fn journal(&mut self, op: JournalOp) -> usize {
        let seqs = match (op, &self.scope) {
            (JournalOp::PushHeld | JournalOp::RetryRefused, scope) => {
                let n = match scope {
                    Some(s) if matches!(op, JournalOp::PushHeld) => {
                        kept!(self, adopt(s, crate::domain::now_millis()))
                    }
                    Some(s) => kept!(self, unpark(s)),
                    None => 0,
                };
                if matches!(op, JournalOp::RetryRefused) {
                    self.retry_at.clear();
                }
                self.reconnect = Default::default();
                self.want_flush = true;
                return n;
            }
            (JournalOp::DiscardRefused, Some(s)) => {
                Self::seqs(self.outbox.in_scope(s), |e| e.is_parked())
            }
            (JournalOp::DiscardHeld, Some(s)) => Self::seqs(self.outbox.held(s), |_| true),
            (JournalOp::DiscardAll, _) => Self::seqs(self.outbox.entries(), |_| true),
            (_, None) => Vec::new(),
        };
        self.discard(seqs)
    }
}
