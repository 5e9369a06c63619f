//! `earmark sync pending | push | discard`: look at and act on the outbox,
//! in particular on changes held because they belong to another server
//! instance or account.

use super::client_remote::{ClientRemote, scope_of};
use super::outbox::{Entry, Outbox, OutboxError, Scope};
use super::worker::{self, Link, WorkerConfig};
use crate::cli::GlobalArgs;
use crate::config::{Profile, Session};
use crate::domain::now_millis;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct SyncArgs {
    #[command(subcommand)]
    pub command: SyncCommand,
}

#[derive(Debug, Subcommand)]
pub enum SyncCommand {
    /// List the changes waiting to be sent, and those held back because
    /// they belong to another server instance or account.
    Pending,
    /// Send everything queued; held changes are sent to the server and
    /// account you are logged in to now.
    Push,
    /// Drop held changes (with --all: every queued change).
    Discard {
        /// Drop every queued change, not only the held ones.
        #[arg(long)]
        all: bool,
    },
}

/// Where a profile's outbox and progress cache live.
pub fn sync_dir(profile: &Profile) -> PathBuf {
    profile.dirs.data.join("sync").join(&profile.name)
}

pub fn run(global: &GlobalArgs, args: SyncArgs) -> ExitCode {
    let profile = match Profile::resolve(global) {
        Ok(p) => p,
        Err(e) => return fail(&e.to_string()),
    };
    let session = Session::load(&profile);
    let dir = sync_dir(&profile);
    match args.command {
        SyncCommand::Pending => pending(global, &dir, session.ok().as_ref(), &profile),
        SyncCommand::Push => match session {
            Ok(s) => push(&dir, &s, &profile),
            Err(e) => fail(&e.to_string()),
        },
        SyncCommand::Discard { all } => discard(&dir, session.ok().as_ref(), &profile, all),
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("earmark: {msg}");
    ExitCode::from(1)
}

fn current_scope(session: Option<&Session>, profile: &Profile) -> Option<Scope> {
    let s = session?;
    let client = s.client(profile).ok()?;
    scope_of(&client)
}

fn pending(
    global: &GlobalArgs,
    dir: &std::path::Path,
    session: Option<&Session>,
    profile: &Profile,
) -> ExitCode {
    let (entries, load) = match Outbox::peek(&dir.join("outbox.journal")) {
        Ok(x) => x,
        Err(e) => return fail(&e.to_string()),
    };
    let scope = current_scope(session, profile);
    let (queued, held): (Vec<&Entry>, Vec<&Entry>) = entries
        .iter()
        .partition(|e| scope.as_ref() == Some(&e.scope));
    if global.json {
        let doc = serde_json::json!({
            "scope": scope,
            "queued": queued,
            "held": held,
            "corruptSkipped": load.corrupt_skipped,
        });
        println!("{doc}");
        return ExitCode::SUCCESS;
    }
    let now = now_millis();
    match &scope {
        Some(s) => println!("Queued for {s}: {}", queued.len()),
        None => println!("Not logged in: every queued change is listed as held."),
    }
    for e in &queued {
        println!(
            "  {}  {}  ({})",
            e.book,
            e.op.describe(),
            ago(now, e.queued_at)
        );
    }
    if !held.is_empty() {
        println!("Held (another server instance or account): {}", held.len());
        for e in &held {
            println!(
                "  {}  {}  ({}; for {})",
                e.book,
                e.op.describe(),
                ago(now, e.queued_at),
                e.scope
            );
        }
        println!(
            "Send them to the current login with `earmark sync push`, or drop them with `earmark sync discard`."
        );
    }
    if load.corrupt_skipped > 0 {
        println!(
            "Warning: {} damaged record(s) in the journal were skipped.",
            load.corrupt_skipped
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

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn push(dir: &std::path::Path, session: &Session, profile: &Profile) -> ExitCode {
    let client = match session.client(profile) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(&e.to_string()),
    };
    rt.block_on(async move {
        let config = WorkerConfig::new(dir);
        let remote = Arc::new(ClientRemote::new(client));
        let (handle, _notices) = match worker::spawn(config, remote) {
            Ok(x) => x,
            Err(e @ OutboxError::Locked(_)) => {
                return fail(&format!("{e}; quit the player (or `earmark play`) first"));
            }
            Err(e) => return fail(&e.to_string()),
        };
        let moved = handle.push_held().await;
        let summary = handle.quit(Duration::from_secs(20)).await;
        let status = handle.status();
        if moved > 0 {
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

fn discard(
    dir: &std::path::Path,
    session: Option<&Session>,
    profile: &Profile,
    all: bool,
) -> ExitCode {
    let mut outbox = match Outbox::open(dir.join("outbox.journal")) {
        Ok(o) => o,
        Err(e @ OutboxError::Locked(_)) => {
            return fail(&format!("{e}; quit the player (or `earmark play`) first"));
        }
        Err(e) => return fail(&e.to_string()),
    };
    let seqs: Vec<u64> = if all {
        outbox.entries().iter().map(|e| e.seq).collect()
    } else {
        match current_scope(session, profile) {
            Some(scope) => outbox.held(&scope).iter().map(|e| e.seq).collect(),
            None => {
                return fail(
                    "not logged in, so no change counts as held; log in, or use `earmark sync discard --all`",
                );
            }
        }
    };
    let mut n = 0;
    for seq in seqs {
        match outbox.complete(seq) {
            Ok(true) => n += 1,
            Ok(false) => {}
            Err(e) => return fail(&e.to_string()),
        }
    }
    println!("Dropped {n} change(s).");
    ExitCode::SUCCESS
}
