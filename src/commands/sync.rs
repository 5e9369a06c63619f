//! `earmark sync pending | push | retry | discard`: look at and act on the
//! sync outbox, in particular on changes held because they belong to
//! another server instance or account. Looking goes through sync's
//! read-only view (`sync::Records`); every change goes through its front
//! door (`SyncSession`), as in the player.

use super::Invocation;
use crate::config::{Profile, Session};
use crate::domain::now_millis;
use crate::durable::{Durability, Fault};
use crate::sync::{JournalOp, Link, Pending, Records, SyncConfig, SyncSession};
use std::process::ExitCode;
use std::time::Duration;

/// What `earmark sync` was asked (parsed in `crate::cli`).
#[derive(Debug)]
pub struct SyncArgs {
    pub command: SyncCommand,
}

#[derive(Debug)]
pub enum SyncCommand {
    /// List the changes waiting to be sent, and those held back because
    /// they belong to another server instance or account.
    Pending,
    /// Send everything queued; held changes are sent to the server and
    /// account you are logged in to now.
    Push,
    /// Send the changes the server refused (set aside) once more.
    Retry,
    /// Drop held changes (`refused`: those the server refused; `all`:
    /// every queued change).
    Discard { all: bool, refused: bool },
}

pub fn run(global: &Invocation, args: SyncArgs) -> ExitCode {
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return fail(&e.to_string()),
    };
    let session = Session::load(&profile);
    let client = session.as_ref().ok().and_then(|s| s.client(&profile).ok());
    let dir = profile.sync_dir();
    match args.command {
        SyncCommand::Pending => match Records::new(&dir).pending(client.as_ref()) {
            Ok(j) => pending(global.json, &j),
            Err(e) => fail(&e),
        },
        SyncCommand::Push | SyncCommand::Retry => match (session, client) {
            (Ok(_), Some(c)) => push(&dir, c, matches!(args.command, SyncCommand::Retry)),
            (Err(e), _) => fail(&e.to_string()),
            (Ok(_), None) => fail("the stored session cannot be used; log in again"),
        },
        SyncCommand::Discard { all, refused } => {
            let what = match (all, refused) {
                (true, _) => JournalOp::DiscardAll,
                (false, true) => JournalOp::DiscardRefused,
                (false, false) => JournalOp::DiscardHeld,
            };
            discard(&dir, client, what)
        }
    }
}

/// Drops changes through the front door, in a session that never talks
/// to the server (nothing is sent by discarding).
fn discard(dir: &std::path::Path, client: Option<crate::api::Client>, what: JournalOp) -> ExitCode {
    if client.is_none() && what != JournalOp::DiscardAll {
        return fail(
            "not logged in, so no change counts as held; log in, or use `earmark sync discard --all`",
        );
    }
    let Ok(rt) = super::runtime() else {
        return fail("cannot start");
    };
    rt.block_on(async move {
        let mut config = SyncConfig::new(dir);
        config.local_only = true;
        let (sync, _notices) = SyncSession::start(config, client, None);
        sync.settle().await;
        if let Durability::Memory(why) = sync.status().durability {
            sync.quit(Duration::ZERO).await;
            return fail(&unusable(&why));
        }
        let n = sync.journal(what).await;
        sync.quit(Duration::ZERO).await;
        println!("Dropped {n} change(s).");
        ExitCode::SUCCESS
    })
}

/// Why the journal cannot be used: another earmark holds it, or the disk
/// will not take it (read-only, full, no permission).
fn unusable(why: &Fault) -> String {
    match why {
        Fault::Locked => "the sync outbox is in use by another earmark process; quit the player (or `earmark play`) first".into(),
        why => format!("the sync journal on this device cannot be changed ({why}); nothing was sent or dropped"),
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("earmark: {msg}");
    ExitCode::from(1)
}

fn pending(json: bool, j: &Pending) -> ExitCode {
    if json {
        let doc = serde_json::json!({
            "scope": j.scope,
            "queued": j.queued,
            "refused": j.refused,
            "held": j.held,
            "corruptSkipped": j.corrupt_skipped,
        });
        println!("{doc}");
        return ExitCode::SUCCESS;
    }
    let now = now_millis();
    match &j.scope {
        Some(s) => println!("Queued for {s}: {}", j.queued.len()),
        None => println!("Not logged in: every queued change is listed as held."),
    }
    for e in &j.queued {
        println!(
            "  {}  {}  ({})",
            e.book,
            e.description,
            ago(now, e.queued_at)
        );
    }
    if !j.refused.is_empty() {
        println!("Refused by the server and set aside: {}", j.refused.len());
        for e in &j.refused {
            let why = e.rejected.as_ref().map_or("", |r| r.message.as_str());
            println!("  {}  {}  ({why})", e.book, e.description);
        }
        println!(
            "Send them again with `earmark sync retry`, or drop them with `earmark sync discard --refused`."
        );
    }
    if !j.held.is_empty() {
        println!(
            "Held (another server instance or account): {}",
            j.held.len()
        );
        for e in &j.held {
            println!(
                "  {}  {}  ({}; for {})",
                e.book,
                e.description,
                ago(now, e.queued_at),
                e.scope
            );
        }
        println!(
            "Send them to the current login with `earmark sync push`, or drop them with `earmark sync discard`."
        );
    }
    if j.corrupt_skipped > 0 {
        println!(
            "Warning: {} damaged record(s) in the journal were skipped.",
            j.corrupt_skipped
        );
    }
    ExitCode::SUCCESS
}

fn ago(now: i64, then: i64) -> String {
    let s = ((now - then) / 1000).max(0);
    match s {
        0..60 => format!("{s} s ago"),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// `push`: held changes go to the current login; `retry`: refused ones
/// are sent again. Either way everything queued is sent.
fn push(dir: &std::path::Path, client: crate::api::Client, refused: bool) -> ExitCode {
    let Ok(rt) = super::runtime() else {
        return fail("cannot start");
    };
    rt.block_on(async move {
        let (sync, _notices) = SyncSession::start(SyncConfig::new(dir), Some(client), None);
        sync.settle().await;
        if let Durability::Memory(why) = sync.status().durability {
            sync.quit(Duration::ZERO).await;
            return fail(&unusable(&why));
        }
        let moved = sync
            .journal(match refused {
                true => JournalOp::RetryRefused,
                false => JournalOp::PushHeld,
            })
            .await;
        let summary = sync.quit(Duration::from_secs(20)).await;
        let status = sync.status();
        if moved > 0 && refused {
            println!("Sending {moved} refused change(s) again.");
        } else if moved > 0 {
            println!("Moved {moved} held change(s) to the current login.");
        }
        match status.link {
            Link::NeedsLogin { message } => return fail(&message),
            Link::LicenseBlocked { message } => return fail(&message),
            _ => {}
        }
        if summary.left == 0 {
            println!("Everything is sent.");
            ExitCode::SUCCESS
        } else {
            let why = status
                .last_error
                .unwrap_or_else(|| "the server did not answer in time".into());
            fail(&format!(
                "{} change(s) are still queued: {why}",
                summary.left
            ))
        }
    })
}
