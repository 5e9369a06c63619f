//! Up next for `earmark play --up-next`: what plays when the book ends,
//! by the one rule the player follows (`domain::next_after`): the
//! account's play next list (the player keeps it, `config::UpNextStore`),
//! then the next book of its series in the server's library. A book that
//! starts leaves the list, as in the player. Opening it is the caller's
//! [`Playback::open`](super::Playback::open) with `StartAt::Resume`, so
//! sync restores its place by every rule, or `StartAt::Restart` for a
//! finished book the list brought back ([`FollowOn::opening`]).

use crate::api::{ApiError, BookQuery, Client};
use crate::config::{Config, Profile, Session, UpNextStore};
use crate::domain::up_next::list;
use crate::domain::{
    Account, BookId, Next, NextFrom, Opening, Stop, StopReason, UpNextMode, next_after,
};
use std::path::Path;

/// Why the next book could not be worked out.
#[derive(Debug)]
pub enum FollowError {
    /// The library could not be read (its stop says what to do).
    Api(ApiError),
    /// The list's file could not be read or written.
    List(String),
}

impl FollowError {
    /// Its stop, from the one classification (a license refusal also
    /// stops playback and sync).
    pub fn stop(self, playback: &super::Playback) -> Stop {
        match self {
            FollowError::Api(e) => playback.refused(&e),
            FollowError::List(m) => Stop::new(StopReason::Local, m),
        }
    }
}

impl std::fmt::Display for FollowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FollowError::Api(e) => write!(f, "{e}"),
            FollowError::List(m) => f.write_str(m),
        }
    }
}

/// What follows a book, for one account.
pub struct FollowOn {
    mode: UpNextMode,
    client: Client,
    store: UpNextStore,
    /// `[player] up_next_countdown`: how long the next book is announced
    /// before it starts.
    pub countdown: std::time::Duration,
}

impl FollowOn {
    /// `mode` is `[player] up_next`; asking for up next with it "off"
    /// means the default rule.
    pub fn new(mode: UpNextMode, client: Client, data_dir: &Path, account: &Account) -> FollowOn {
        FollowOn {
            mode: match mode {
                UpNextMode::Off => UpNextMode::Series,
                m => m,
            },
            client,
            store: UpNextStore::of(data_dir, account),
            countdown: std::time::Duration::from_secs(10),
        }
    }

    /// The rule of `earmark play --up-next` for the login (`[player]
    /// up_next` and `up_next_countdown` of config.toml, the account's
    /// list), and what to say when
    /// the list could not be read (it was moved aside); `book` starts, so
    /// it leaves the list. The error names a bad setting.
    pub fn for_play(
        profile: &Profile,
        session: &Session,
        client: Client,
        book: &BookId,
    ) -> Result<(FollowOn, Option<String>), String> {
        let config = Config::load(&profile.dirs.config_file()).map_err(|e| e.to_string())?;
        // The player's reading of `[player]`, so both follow one rule.
        let settings = crate::ui::up_next_settings(config.player.as_ref())?;
        let account = Account {
            server_id: session.server_id.clone(),
            user_id: session.user_id.clone(),
        };
        let mut rule = FollowOn::new(settings.mode, client, &profile.dirs.data, &account);
        rule.countdown = std::time::Duration::from_millis(settings.countdown_ms);
        let said = rule.started(book).err().map(|e| e.to_string());
        Ok((rule, said))
    }

    /// `book` starts: it is no longer up next.
    pub fn started(&self, book: &BookId) -> Result<(), FollowError> {
        let queued = self.store.load().map_err(FollowError::List)?;
        if queued.iter().any(|q| &q.id == book) {
            self.store
                .update(|l| {
                    list::remove(l, book);
                })
                .map_err(FollowError::List)?;
        }
        Ok(())
    }

    /// What plays after `finished`, taken off the list if it came from
    /// there. The library is read only when the list has nothing.
    pub async fn next_after(&self, finished: &BookId) -> Result<Option<Next>, FollowError> {
        let queued = self.store.load().map_err(FollowError::List)?;
        if let Some(n) = next_after(self.mode, finished, &queued, &[])
            && n.from == NextFrom::List
        {
            self.started(&n.book)?;
            return Ok(Some(n));
        }
        if self.mode != UpNextMode::Series {
            return Ok(None);
        }
        let library = self
            .client
            .books(&BookQuery::default())
            .await
            .map_err(FollowError::Api)?;
        Ok(next_after(self.mode, finished, &[], &library))
    }
}

impl FollowOn {
    /// How `next` opens, by the player's rule (`Opening::of`): a book the
    /// list brought back is looked up on the server, and restarts when it
    /// is finished; a book of the series resumes (the series passes over
    /// finished books). A place that cannot be read resumes: the open
    /// reads it again, by every rule of rule 7.
    pub async fn opening(&self, next: &Next) -> Opening {
        if next.from != NextFrom::List {
            return Opening::Resume;
        }
        match self.client.progress(&next.book).await {
            Ok(state) => Opening::of(state.progress.as_ref()),
            Err(_) => Opening::Resume,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::BaseUrl;
    use crate::domain::{Queued, ServerId, UserId};

    #[tokio::test]
    async fn the_list_decides_without_the_server_and_its_book_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let account = Account {
            server_id: ServerId::new("srv"),
            user_id: UserId::parse("1").unwrap(),
        };
        // Nothing listens there: the list must decide alone.
        let client = Client::new(
            BaseUrl::parse("http://127.0.0.1:9").unwrap(),
            Default::default(),
        )
        .unwrap();
        let store = UpNextStore::of(dir.path(), &account);
        let q = |id: &str| Queued {
            id: BookId::new(id),
            title: id.to_uppercase(),
        };
        store.save(&[q("one"), q("two"), q("three")]).unwrap();
        let f = FollowOn::new(UpNextMode::Off, client, dir.path(), &account);
        f.started(&BookId::new("one")).unwrap();
        let n = f.next_after(&BookId::new("one")).await.unwrap().unwrap();
        assert_eq!((n.book.as_str(), n.from), ("two", NextFrom::List));
        assert_eq!(store.load().unwrap(), vec![q("three")]);
    }
}
