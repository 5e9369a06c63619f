//! The outbox as `earmark sync pending | discard` sees it: the changes
//! queued for the current login, and those held because they belong to
//! another server instance or account. (`push` goes through the front
//! door: `SyncSession::push_held`.)

use super::client_remote::scope_of;
use super::outbox::{Entry, Outbox, OutboxError, Scope};
use crate::api::Client;
use std::path::Path;

/// One queued change (serializes as in `earmark --json sync pending`).
pub type QueuedChange = Entry;

impl Entry {
    /// Short human description, e.g. "progress ch_1 at 0:20:34".
    pub fn describe(&self) -> String {
        self.op.describe()
    }
}

#[derive(Debug)]
pub struct Journal {
    /// The current login's scope; `None` when not logged in.
    pub scope: Option<Scope>,
    pub queued: Vec<QueuedChange>,
    /// The current login's changes the server refused again and again
    /// (each with its last message), set aside until retried or dropped.
    pub refused: Vec<QueuedChange>,
    pub held: Vec<QueuedChange>,
    /// Damaged records that were skipped while reading.
    pub corrupt_skipped: usize,
}

/// Which changes `Journal::discard` drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discard {
    /// Those of another server instance or account.
    Held,
    /// The current login's, set aside after the server refused them.
    Refused,
    /// Every queued change.
    All,
}

fn journal_path(dir: &Path) -> std::path::PathBuf {
    super::SyncConfig::new(dir).outbox_path
}

fn in_use(e: OutboxError) -> String {
    match e {
        e @ OutboxError::Locked(_) => format!("{e}; quit the player (or `earmark play`) first"),
        e => e.to_string(),
    }
}

impl Journal {
    /// Reads the journal in `dir` without locking or changing it.
    pub fn read(dir: &Path, client: Option<&Client>) -> Result<Journal, String> {
        let (entries, load) = Outbox::peek(&journal_path(dir)).map_err(|e| e.to_string())?;
        let scope = client.and_then(scope_of);
        let (mine, held): (Vec<Entry>, Vec<Entry>) = entries
            .into_iter()
            .partition(|e| scope.as_ref() == Some(&e.scope));
        let (refused, queued) = mine.into_iter().partition(Entry::is_parked);
        Ok(Journal {
            scope,
            queued,
            refused,
            held,
            corrupt_skipped: load.corrupt_skipped,
        })
    }

    /// Drops the changes `what` names and says how many.
    pub fn discard(dir: &Path, client: Option<&Client>, what: Discard) -> Result<usize, String> {
        let mut outbox = Outbox::open(journal_path(dir)).map_err(in_use)?;
        let seqs: Vec<u64> = if what == Discard::All {
            outbox.entries().iter().map(|e| e.seq).collect()
        } else {
            match client.and_then(scope_of) {
                Some(scope) if what == Discard::Held => {
                    outbox.held(&scope).iter().map(|e| e.seq).collect()
                }
                Some(scope) => outbox
                    .in_scope(&scope)
                    .iter()
                    .filter(|e| e.is_parked())
                    .map(|e| e.seq)
                    .collect(),
                None => {
                    return Err(
                        "not logged in, so no change counts as held; log in, or use `earmark sync discard --all`".into(),
                    );
                }
            }
        };
        let mut n = 0;
        for seq in seqs {
            if outbox.complete(seq).map_err(|e| e.to_string())? {
                n += 1;
            }
        }
        Ok(n)
    }
}
