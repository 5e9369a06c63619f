//! The session store: per profile, what login learned (normalized address,
//! serverId, userId, user name, which token store holds the token) in
//! `$XDG_DATA_HOME/earmark/sessions/<profile>.json`; the token itself is in
//! the token store. Loading a session and (re-)logging in live here.

use super::file::{ConfigError, Profile};
use super::tokens::{self, StoreError, TokenStore, TokenStoreKind};
use crate::api::{ApiError, Auth, BaseUrl, Client, LoginData, Token};
use crate::domain::{EpochMillis, ServerId, UserId, now_millis};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A logged-in session: everything authenticated calls need.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub server: BaseUrl,
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
    pub server: BaseUrl,
    pub server_id: ServerId,
    pub user_id: UserId,
    pub user: String,
    pub token_store: TokenStoreKind,
    pub logged_in_at: EpochMillis,
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

impl Session {
    pub fn auth(&self) -> Auth {
        Auth {
            token: self.token.clone(),
            server_id: self.server_id.clone(),
            user_id: self.user_id.clone(),
        }
    }

    /// A client for this session with the profile's paths and header prefix.
    pub fn client(&self, profile: &Profile) -> Result<Client, ApiError> {
        Client::with_auth(self.server.clone(), profile.options.clone(), self.auth())
    }

    /// The stored session of `profile`. When `--server` names another
    /// server than the session's, that is an error, not a silent switch.
    pub fn load(profile: &Profile) -> Result<Session, SessionError> {
        let not_logged_in = || SessionError::NotLoggedIn {
            profile: profile.name.clone(),
        };
        let record = read_record(profile)?.ok_or_else(not_logged_in)?;
        if let Some(requested) = &profile.server
            && *requested != record.server
        {
            return Err(SessionError::OtherServer {
                profile: profile.name.clone(),
                logged_in: record.server.to_string(),
                requested: requested.to_string(),
            });
        }
        let store = TokenStore::new(profile.dirs.tokens_dir())?;
        let token = store
            .load(&profile.name, record.token_store)?
            .ok_or_else(not_logged_in)?;
        Ok(Session {
            server: record.server,
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

/// What a successful login produced.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    pub session: Session,
    pub client: Client,
    pub login: LoginData,
    /// Shown once when the token went to the file instead of the keyring.
    pub store_warning: Option<String>,
}

/// Log in to the profile's server (or the one of its last session) and
/// store the session. The password is only sent to the server.
pub async fn login(
    profile: &Profile,
    user: Option<&str>,
    password: &str,
) -> Result<LoggedIn, SessionError> {
    let previous = read_record(profile).ok().flatten();
    let server = profile
        .server
        .clone()
        .or_else(|| previous.as_ref().map(|r| r.server.clone()))
        .ok_or_else(|| SessionError::NoServer {
            profile: profile.name.clone(),
        })?;
    let user = user
        .map(str::to_owned)
        .or_else(|| profile.user.clone())
        .or_else(|| previous.as_ref().map(|r| r.user.clone()))
        .ok_or_else(|| SessionError::NoUser {
            profile: profile.name.clone(),
        })?;
    let client = Client::new(server.clone(), profile.options.clone())?;
    let data = client.login(&user, password).await?;
    let store = TokenStore::new(profile.dirs.tokens_dir())?;
    let token = data.token.clone();
    let saved = store.save(&profile.name, &token)?;
    if let Some(prev) = &previous
        && prev.token_store != saved.kind
    {
        let _ = store.delete(&profile.name, prev.token_store);
    }
    let record = SessionRecord {
        server: server.clone(),
        server_id: data.server_id.clone(),
        user_id: data.user_id.clone(),
        user: data.user_name.clone().unwrap_or_else(|| user.clone()),
        token_store: saved.kind,
        logged_in_at: now_millis(),
    };
    write_record(profile, &record)?;
    Ok(LoggedIn {
        session: Session {
            server,
            token,
            server_id: record.server_id,
            user_id: record.user_id,
            user: record.user,
            profile: profile.name.clone(),
            token_store: saved.kind,
        },
        client,
        login: data,
        store_warning: saved.warning,
    })
}

fn write_record(profile: &Profile, record: &SessionRecord) -> Result<(), SessionError> {
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
    let record = read_record(profile).ok().flatten();
    let store = TokenStore::new(profile.dirs.tokens_dir())?;
    store.delete(
        &profile.name,
        record
            .as_ref()
            .map(|r| r.token_store)
            .unwrap_or(TokenStoreKind::File),
    )?;
    match std::fs::remove_file(record_path(profile)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(SessionError::Record {
                path: record_path(profile),
                message: e.to_string(),
            });
        }
    }
    Ok(record)
}
