//! Client-side configuration and the logged-in session:
//! - `file`: `config.toml` (profiles) and the XDG directories,
//! - `tokens`: the token at rest (OS keyring, else a 0600 file),
//! - `session`: the session store (the addresses and what each one's login
//!   said, serverId, userId per profile) and loading the current session,
//! - `login`: logging in through the profile's addresses,
//! - `sound`: each book's sound settings on this device (`sound.json`),
//! - `up_next`: the "play next" list of each server and account,
//! - `listening`: the session's rules (sleep timer, smart rewind, up next).
//!
//! The password is never written anywhere by this module.

pub mod file;
pub mod listening;
pub mod login;
pub mod session;
pub mod sound;
pub mod tokens;
pub mod up_next;

pub use file::{
    Config, ConfigError, Dirs, DownloadsConfig, Profile, ProfileConfig, ProfileSelector,
    SizeSetting, SoundConfig,
};
pub use listening::ListeningRules;
pub use login::{AddressLogin, LoggedIn, choose_login, login};
pub use session::{Session, SessionError, SessionRecord, logout_local, read_record};
pub use sound::{SoundBooks, SoundLogin, SoundOwner};
pub use tokens::{TokenStore, TokenStoreKind};
pub use up_next::UpNextStore;
