//! The play next list's file (`config::UpNextStore`) for the player: read
//! for the login's account (on start and after each login), written when
//! the reducer changes it. The account travels with the list, so a list
//! read for one login is never written into another's file. File I/O runs
//! on the blocking pool, never on the UI thread.

use super::shared::{Shared, read};
use crate::config::UpNextStore;
use crate::domain::{Account, Queued};
use crate::ui::state::Answer;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The login's account, when logged in.
fn login_account(sh: &Shared) -> Option<Account> {
    let l = read(&sh.login);
    let s = l.session.as_ref()?;
    Some(Account {
        server_id: s.server_id.clone(),
        user_id: s.user_id.clone(),
    })
}

/// Reads the login's list and sends it to the player.
pub(super) async fn load(sh: Arc<Shared>) {
    let Some(account) = login_account(&sh) else {
        return;
    };
    let store = UpNextStore::of(&sh.dirs.data, &account);
    let read = tokio::task::spawn_blocking(move || store.load()).await;
    if login_account(&sh).as_ref() != Some(&account) {
        // Another login meanwhile: its own read follows.
        return;
    }
    match read {
        Ok(Ok(books)) => {
            sh.ui.send(Answer::UpNext { account, books });
        }
        Ok(Err(why)) => {
            // What could be read is gone aside: the list starts empty.
            sh.ui.send(Answer::UpNext {
                account,
                books: Vec::new(),
            });
            sh.ui.send(Answer::Failed(why));
        }
        Err(e) => {
            sh.ui
                .send(Answer::Failed(format!("Cannot read the up next list: {e}")));
        }
    }
}

/// Saves in the order the player made them (each save takes its number
/// here, on the UI thread), and per file the last written: a save that
/// finds a later one written already is dropped, so a slow older save
/// never lands over a newer list.
static MADE: AtomicU64 = AtomicU64::new(0);
static WRITTEN: Mutex<BTreeMap<PathBuf, u64>> = Mutex::new(BTreeMap::new());

/// Keeps `account`'s list.
pub(super) fn save(
    sh: Arc<Shared>,
    account: Account,
    books: Vec<Queued>,
) -> impl Future<Output = ()> + Send + 'static {
    let number = MADE.fetch_add(1, Ordering::SeqCst) + 1;
    async move {
        let store = UpNextStore::of(&sh.dirs.data, &account);
        let done = tokio::task::spawn_blocking(move || {
            let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
            let last = written.entry(store.path().to_owned()).or_default();
            if *last > number {
                return Ok(());
            }
            store.save(&books)?;
            *last = number;
            Ok::<(), String>(())
        })
        .await;
        let why = match done {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(e) => e.to_string(),
        };
        sh.ui.send(Answer::Failed(format!(
            "The up next list could not be saved: {why}"
        )));
    }
}
