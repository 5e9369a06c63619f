//! The session store: per profile, what login learned (the addresses and
//! the serverId each one's login said, serverId, userId, user name, which
//! token store holds the token, the address that answered last) in
//! `$XDG_DATA_HOME/earmark/sessions/<profile>.json`; the token itself is in
//! the token store. Loading a session lives here; logging in, in `login`.
//!
//! Several addresses are one server only while their logins say the same
//! serverId: `earmark login` logs in through each address that answers
//! (the password goes to each), keeps one token and revokes the others.
//! The session's server is the one the last session had, when an address
//! still says it, else the first address's that answered. An address whose
//! login said another serverId, or that no login reached yet, never gets
//! the token (`api::Address::vouches_for`); a new login is what checks it.

use super::file::{ConfigError, Profile};
use super::tokens::{self, StoreError, TokenStore, TokenStoreKind};
use crate::api::{Address, ApiError, Auth, BaseUrl, Client, Token};
use crate::domain::{EpochMillis, ServerId, UserId};
use crate::durable::{LockFile, Wait};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A logged-in session: everything authenticated calls need.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The address in use when the session was loaded (the one that
    /// answered last).
    pub server: BaseUrl,
    /// The profile's addresses in order, with the serverId each one's
    /// login said: the token goes only to those that say `server_id`.
    pub addresses: Vec<Address>,
    pub token: Token,
    pub server_id: ServerId,
    pub user_id: UserId,
    pub user: String,
    pub profile: String,
    pub token_store: TokenStoreKind,
}

/// What is stored on disk besides the token (never the password).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The address the login went through.
    pub server: BaseUrl,
    pub server_id: ServerId,
    pub user_id: UserId,
    pub user: String,
    pub token_store: TokenStoreKind,
    pub logged_in_at: EpochMillis,
    /// Every address of the last login, with the serverId its own login
    /// said and what it speaks once learned (a record of one address has
    /// none: `server`, `server_id` and `speaks` are the one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<Address>,
    /// The address that answered last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use: Option<BaseUrl>,
    /// What `server` speaks, in a record of one address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaks: Option<crate::api::Speaks>,
}

impl SessionRecord {
    /// The addresses the login knew, with what each said (a record from
    /// before addresses: the login's own).
    pub fn known(&self) -> Vec<Address> {
        if self.addresses.is_empty() {
            vec![Address {
                base: self.server.clone(),
                server_id: Some(self.server_id.clone()),
                speaks: self.speaks,
            }]
        } else {
            self.addresses.clone()
        }
    }

    /// `bases` in order, each with what the record knows it said.
    pub(super) fn said_by(&self, bases: &[BaseUrl]) -> Vec<Address> {
        let known = self.known();
        bases
            .iter()
            .map(|b| {
                let was = known.iter().find(|a| a.base == *b);
                Address {
                    base: b.clone(),
                    server_id: was.and_then(|a| a.server_id.clone()),
                    speaks: was.and_then(|a| a.speaks),
                }
            })
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("not logged in (profile {profile:?}); run `earmark login`")]
    NotLoggedIn { profile: String },
    #[error(
        "the profile {profile:?} is logged in to {logged_in} but {requested} was asked for; run `earmark login`"
    )]
    OtherServer {
        profile: String,
        logged_in: String,
        requested: String,
    },
    #[error("no server address for profile {profile:?}; pass --server or set it in config.toml")]
    NoServer { profile: String },
    #[error("no user name for profile {profile:?}; pass --user or set it in config.toml")]
    NoUser { profile: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot use the session file {path}: {message}")]
    Record { path: PathBuf, message: String },
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl SessionRecord {
    /// Whose books' sound this login's are (`sound.json`).
    pub fn sound_login(&self) -> super::SoundLogin {
        super::SoundLogin {
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
            addresses: self.known().into_iter().map(|a| a.base).collect(),
            user: self.user.clone(),
        }
    }
}

impl Session {
    /// Whose books' sound this session's are (`sound.json`).
    pub fn sound_login(&self) -> super::SoundLogin {
        super::SoundLogin {
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
            addresses: self.addresses.iter().map(|a| a.base.clone()).collect(),
            user: self.user.clone(),
        }
    }

    /// Whose data this session's is (journal, downloads, caches, up next).
    pub fn account(&self) -> crate::domain::Account {
        crate::domain::Account {
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
        }
    }

    pub fn auth(&self) -> Auth {
        Auth {
            token: self.token.clone(),
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
        }
    }

    /// A client for this session with the profile's paths and header
    /// prefix, starting at the address in use; a switch to another address
    /// is remembered in the session store.
    pub fn client(&self, profile: &Profile) -> Result<Client, ApiError> {
        let client = Client::with_addresses(
            self.addresses.clone(),
            Some(&self.server),
            profile.options.clone(),
            Some(self.auth()),
        )?;
        if self.addresses.len() > 1 {
            let profile = profile.clone();
            client.on_switch(move |base| remember_in_use(&profile, base));
        }
        let p = profile.clone();
        client.on_speaks(move |base, speaks| remember_speaks(&p, base, speaks));
        Ok(client)
    }

    /// The stored session of `profile`. When none of the addresses asked
    /// for (`--server`, or config.toml's) said the session's serverId at a
    /// login, that is an error, not a silent switch.
    pub fn load(profile: &Profile) -> Result<Session, SessionError> {
        let not_logged_in = || SessionError::NotLoggedIn {
            profile: profile.name.clone(),
        };
        let record = read_record(profile)?.ok_or_else(not_logged_in)?;
        let addresses = if profile.addresses.is_empty() {
            record.known()
        } else {
            record.said_by(&profile.addresses)
        };
        let vouched = |a: &&Address| a.vouches_for(&record.server_id);
        let Some(first) = addresses.iter().find(vouched) else {
            let requested: Vec<String> = addresses.iter().map(|a| a.base.to_string()).collect();
            return Err(SessionError::OtherServer {
                profile: profile.name.clone(),
                logged_in: record.server.to_string(),
                requested: requested.join(" or "),
            });
        };
        let server = record
            .in_use
            .as_ref()
            .and_then(|b| addresses.iter().filter(vouched).find(|a| a.base == *b))
            .unwrap_or(first)
            .base
            .clone();
        let store = TokenStore::new(profile.dirs.tokens_dir())?;
        let token = store
            .load(&profile.name, record.token_store)?
            .ok_or_else(not_logged_in)?;
        Ok(Session {
            server,
            addresses,
            token,
            server_id: record.server_id,
            user_id: record.user_id,
            user: record.user,
            profile: profile.name.clone(),
            token_store: record.token_store,
        })
    }

    /// Convenience for the UI and sync: resolve the profile and load its session.
    pub fn load_for(global: &super::ProfileSelector) -> Result<(Profile, Session), SessionError> {
        let profile = Profile::resolve(global)?;
        let session = Session::load(&profile)?;
        Ok((profile, session))
    }
}

fn record_path(profile: &Profile) -> PathBuf {
    profile
        .dirs
        .sessions_dir()
        .join(format!("{}.json", profile.name))
}

/// The stored record of `profile`, if any.
pub fn read_record(profile: &Profile) -> Result<Option<SessionRecord>, SessionError> {
    let path = record_path(profile);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| SessionError::Record {
                path,
                message: format!("{e}; run `earmark login` again"),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SessionError::Record {
            path,
            message: e.to_string(),
        }),
    }
}

/// Keeps what `base` speaks (`None`: forgotten) for the next sessions
/// (best effort: a lost one is learned again).
pub(super) fn remember_speaks(
    profile: &Profile,
    base: &BaseUrl,
    speaks: Option<crate::api::Speaks>,
) {
    update_record(profile, &format!("what {base} speaks"), |record| {
        if record.addresses.is_empty() {
            let changed = record.server == *base && record.speaks != speaks;
            if changed {
                record.speaks = speaks;
            }
            return changed;
        }
        let mut changed = false;
        for a in record.addresses.iter_mut() {
            if a.base == *base && a.speaks != speaks {
                a.speaks = speaks;
                changed = true;
            }
        }
        changed
    });
}

/// Keeps `base` as the address that answered last (best effort: the next
/// start only begins elsewhere when this is lost).
pub(super) fn remember_in_use(profile: &Profile, base: &BaseUrl) {
    update_record(profile, "the address in use", |record| {
        let changed = record.in_use.as_ref() != Some(base);
        record.in_use = Some(base.clone());
        changed
    });
}

/// Reads the record under its lock and writes it back when `change` says
/// it changed it; a failure is only said in the log.
fn update_record(profile: &Profile, what: &str, change: impl FnOnce(&mut SessionRecord) -> bool) {
    let _lock = record_lock(profile);
    let Ok(Some(mut record)) = read_record(profile) else {
        return;
    };
    if change(&mut record)
        && let Err(e) = write_record(profile, &record)
    {
        tracing::warn!("cannot remember {what}: {e}");
    }
}

/// Held while the record is read and written back (login, logout, the
/// address in use, what an address speaks): one writer at a time, across
/// processes too, so a late probe never writes back a record a login or
/// a logout just replaced. `None` (said in the log) when it can't be had.
pub(super) fn record_lock(profile: &Profile) -> Option<LockFile> {
    let dir = profile.dirs.sessions_dir();
    let path = dir.join(format!("{}.lock", profile.name));
    let taken = tokens::create_private_dir(&dir)
        .map_err(|e| e.to_string())
        .and_then(|()| LockFile::take(&path, Wait::Yes).map_err(|e| e.to_string()));
    taken
        .map_err(|e| tracing::warn!("cannot lock the session record: {e}"))
        .ok()
}

pub(super) fn write_record(profile: &Profile, record: &SessionRecord) -> Result<(), SessionError> {
    let path = record_path(profile);
    let err = |message: String| SessionError::Record {
        path: path.clone(),
        message,
    };
    tokens::create_private_dir(&profile.dirs.sessions_dir()).map_err(|e| err(e.to_string()))?;
    let bytes = serde_json::to_vec_pretty(record).expect("a record serializes");
    tokens::write_private(&path, &bytes).map_err(|e| err(e.to_string()))
}

/// Forget the session of `profile` locally: token and record. Returns the
/// record that was removed, if any.
pub fn logout_local(profile: &Profile) -> Result<Option<SessionRecord>, SessionError> {
    let _lock = record_lock(profile);
    let record = read_record(profile).ok().flatten();
    let store = TokenStore::new(profile.dirs.tokens_dir())?;
    let kind = record
        .as_ref()
        .map_or(TokenStoreKind::File, |r| r.token_store);
    store.delete(&profile.name, kind)?;
    match std::fs::remove_file(record_path(profile)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SessionError::Record {
            path: record_path(profile),
            message: e.to_string(),
        }),
        _ => Ok(record),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Dirs, ProfileSelector};

    fn id(s: &str) -> ServerId {
        ServerId::new(s)
    }

    fn profile(dir: &std::path::Path, config: &str) -> Profile {
        let dirs = Dirs::under(dir);
        std::fs::create_dir_all(&dirs.config).unwrap();
        std::fs::write(dirs.config_file(), config).unwrap();
        Profile::resolve_in(&ProfileSelector::named("home"), dirs).unwrap()
    }

    fn store(p: &Profile, record: &str) {
        std::fs::create_dir_all(p.dirs.sessions_dir()).unwrap();
        std::fs::write(p.dirs.sessions_dir().join("home.json"), record).unwrap();
        let tokens = TokenStore::with_kind(p.dirs.tokens_dir(), Some(TokenStoreKind::File));
        tokens.save("home", &Token::new("t")).unwrap();
    }

    const OLD_RECORD: &str = r#"{"server": "http://nas:8686/api/v1", "serverId": "s1",
        "userId": 3, "user": "alice", "tokenStore": "file", "loggedInAt": 1}"#;

    #[test]
    fn a_record_from_before_addresses_vouches_for_its_own_address_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = profile(
            dir.path(),
            "[profiles.home]\nserver = \"nas\"\naddresses = [\"https://vpn/nas\"]\n",
        );
        store(&p, OLD_RECORD);
        let s = Session::load(&p).unwrap();
        assert_eq!(s.server.as_str(), "http://nas:8686/api/v1");
        let said: Vec<_> = s.addresses.iter().map(|a| a.server_id.clone()).collect();
        assert_eq!(
            said,
            [Some(id("s1")), None],
            "the new address is not checked yet"
        );
        let c = s.client(&p).unwrap();
        assert_eq!(c.addresses(), s.addresses);
        // The config lists only an address no login went through.
        let p = profile(
            dir.path(),
            "[profiles.home]\nserver = \"https://vpn/nas\"\n",
        );
        let e = Session::load(&p).unwrap_err();
        assert!(matches!(e, SessionError::OtherServer { .. }), "{e}");
    }

    #[test]
    fn the_session_starts_at_the_address_that_answered_last_when_it_vouches() {
        let dir = tempfile::tempdir().unwrap();
        let p = profile(
            dir.path(),
            "[profiles.home]\naddresses = [\"nas\", \"https://vpn/nas\", \"other\"]\n",
        );
        let record = |in_use: &str| {
            format!(
                r#"{{"server": "http://nas:8686/api/v1", "serverId": "s1", "userId": 3,
                "user": "alice", "tokenStore": "file", "loggedInAt": 1, "inUse": "{in_use}",
                "addresses": [
                  {{"base": "http://nas:8686/api/v1", "serverId": "s1"}},
                  {{"base": "https://vpn/nas/api/v1", "serverId": "s1"}},
                  {{"base": "http://other:8686/api/v1", "serverId": "s2"}}]}}"#
            )
        };
        store(&p, &record("https://vpn/nas/api/v1"));
        let s = Session::load(&p).unwrap();
        assert_eq!(s.server.as_str(), "https://vpn/nas/api/v1");
        assert_eq!(s.client(&p).unwrap().base(), s.server);
        // Another server answered last once: never where a session starts.
        store(&p, &record("http://other:8686/api/v1"));
        assert_eq!(
            Session::load(&p).unwrap().server.as_str(),
            "http://nas:8686/api/v1"
        );
        remember_in_use(&p, &BaseUrl::parse("https://vpn/nas").unwrap());
        let r = read_record(&p).unwrap().unwrap();
        assert_eq!(r.in_use.unwrap().as_str(), "https://vpn/nas/api/v1");
        assert_eq!(r.addresses.len(), 3, "the rest of the record is kept");
    }
}
