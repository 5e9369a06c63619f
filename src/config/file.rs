//! `$XDG_CONFIG_HOME/earmark/config.toml` and the resolved profile.
//!
//! ```toml
//! default_profile = "home"
//! [profiles.home]
//! server = "http://nas.local:8686"
//! addresses = ["https://vpn.example/nas"] # optional: more ways to the same server
//! user = "alice"
//! identity_header_prefix = "X-Service"   # optional
//! [profiles.home.paths]                   # optional overrides, see api::paths
//! categories = "/genres"
//! [profiles.home.fields]                  # optional body field names, see api::bodies
//! progress_position = "position"
//! [downloads]                             # optional
//! max_size = "2 GiB"                      # all offline downloads together
//! ```
//!
//! earmark reads this file but never rewrites it: what login learns goes to
//! the session store in the data directory.

use crate::api::{BaseUrl, BodyFields, ClientOptions, Paths};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub default_profile: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// The terminal player's tables; `ui::UiConfig::from_toml` checks them.
    #[serde(default)]
    pub keys: Option<toml::Table>,
    #[serde(default)]
    pub theme: Option<toml::Table>,
    #[serde(default)]
    pub player: Option<toml::Table>,
    /// `[ui]`: `covers`, `accessible` (`ui::UiConfig::from_toml` checks them).
    #[serde(default)]
    pub ui: Option<toml::Table>,
    /// `[sleep]`: the automatic sleep timer (`ui::UiConfig::from_toml`
    /// checks it).
    #[serde(default)]
    pub sleep: Option<toml::Table>,
    #[serde(default)]
    pub downloads: Option<DownloadsConfig>,
    pub sound: Option<SoundConfig>,
}

/// `[sound]`: normalisation's target and what skip silence shortens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SoundConfig {
    /// LUFS, −30 to −10.
    pub loudness_target: f32,
    /// dBFS (RMS of 10 ms windows), −70 to −20.
    pub silence_threshold_db: f32,
    /// Silences longer than this are shortened, 200 to 10000 ms...
    pub silence_min_ms: u32,
    /// ...to this, 0 up to `silence_min_ms`.
    pub silence_gap_ms: u32,
}

impl Default for SoundConfig {
    fn default() -> Self {
        Self {
            loudness_target: -18.0,
            silence_threshold_db: -45.0,
            silence_min_ms: 600,
            silence_gap_ms: 250,
        }
    }
}

impl SoundConfig {
    /// Names the first value out of range.
    pub fn check(&self) -> Result<(), String> {
        let bad = |what: &str, v: &dyn std::fmt::Display, range: &str| {
            Err(format!(
                "[sound] in config.toml: {what} = {v} is not {range}"
            ))
        };
        if !(-30.0..=-10.0).contains(&self.loudness_target) {
            return bad(
                "loudness_target",
                &self.loudness_target,
                "from -30 to -10 (LUFS)",
            );
        }
        if !(-70.0..=-20.0).contains(&self.silence_threshold_db) {
            return bad(
                "silence_threshold_db",
                &self.silence_threshold_db,
                "from -70 to -20 (dBFS)",
            );
        }
        if !(200..=10_000).contains(&self.silence_min_ms) {
            return bad("silence_min_ms", &self.silence_min_ms, "from 200 to 10000");
        }
        if self.silence_gap_ms > self.silence_min_ms {
            return bad(
                "silence_gap_ms",
                &self.silence_gap_ms,
                "at most silence_min_ms",
            );
        }
        Ok(())
    }
}

/// `[downloads]`: offline downloads (`earmark download`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadsConfig {
    /// What all downloads together may take: bytes, or "500 MB", "2 GiB"…
    pub max_size: Option<SizeSetting>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeSetting {
    Bytes(u64),
    Text(String),
}

impl SizeSetting {
    /// Bytes; decimal (kB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB) units.
    pub fn bytes(&self) -> Result<u64, String> {
        let text = match self {
            SizeSetting::Bytes(n) => return Ok(*n),
            SizeSetting::Text(t) => t.trim(),
        };
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (num, unit) = text.split_at(split);
        let n: f64 = num
            .parse()
            .map_err(|_| format!("{text:?} is not a size such as \"500 MB\" or \"2 GiB\""))?;
        let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1000,
            "m" | "mb" => 1_000_000,
            "g" | "gb" => 1_000_000_000,
            "t" | "tb" => 1_000_000_000_000,
            "kib" => 1 << 10,
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            other => {
                return Err(format!(
                    "{other:?} is not a size unit (use MB, GB, MiB, GiB…)"
                ));
            }
        };
        Ok((n * factor as f64) as u64)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    pub server: Option<String>,
    /// More addresses of the same server (home, a VPN, a gateway), tried
    /// in order after `server`; each must report the same serverId.
    pub addresses: Option<Vec<String>>,
    pub user: Option<String>,
    pub identity_header_prefix: Option<String>,
    pub paths: Option<Paths>,
    /// Request body field names of the writes (docs/contract.md).
    #[serde(default)]
    pub fields: Option<BodyFields>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot find the home directory to place earmark's files in")]
    NoHome,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("the profile name {0:?} is not valid: use letters, digits, '-', '_' or '.'")]
    BadProfileName(String),
    #[error(transparent)]
    Address(#[from] crate::api::base::BaseUrlError),
}

/// Where earmark keeps its files; follows the XDG variables on Linux.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    pub config: PathBuf,
    pub data: PathBuf,
    pub cache: PathBuf,
}

impl Dirs {
    pub fn discover() -> Result<Dirs, ConfigError> {
        let p = directories::ProjectDirs::from("", "", "earmark").ok_or(ConfigError::NoHome)?;
        Ok(Dirs {
            config: p.config_dir().to_owned(),
            data: p.data_dir().to_owned(),
            cache: p.cache_dir().to_owned(),
        })
    }

    /// `config`, `data` and `cache` under one folder (the demo's, tests').
    pub fn under(root: &Path) -> Dirs {
        Dirs {
            config: root.join("config"),
            data: root.join("data"),
            cache: root.join("cache"),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.data.join("sessions")
    }

    pub fn tokens_dir(&self) -> PathBuf {
        self.data.join("tokens")
    }
}

impl Config {
    /// The config file, or an empty config when there is none.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            read => read.map_err(|source| ConfigError::Read {
                path: path.to_owned(),
                source,
            })?,
        };
        toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_owned(),
            message: e.message().to_owned(),
        })
    }
}

/// A profile resolved from the command line, the environment and the config
/// file: which server, which user, and how to talk to it.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub dirs: Dirs,
    /// The server's addresses in the order they are tried: `--server`
    /// (one), or the config's `server` then `addresses`; empty when only a
    /// session knows them.
    pub addresses: Vec<BaseUrl>,
    /// True when the address came from `--server`/`EARMARK_SERVER`.
    pub server_from_args: bool,
    pub user: Option<String>,
    pub options: ClientOptions,
    /// `[downloads] max_size`: what all offline downloads may take.
    pub download_limit: Option<u64>,
}

pub fn valid_profile_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Which profile to use, and what overrides it: the command line's flags
/// and `EARMARK_*` variables, already parsed (no CLI types below `cli`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileSelector {
    /// A profile of config.toml (default: `default_profile`, else "default").
    pub profile: Option<String>,
    /// Server address; wins over the profile's.
    pub server: Option<String>,
    /// Server-side user name; wins over the profile's.
    pub user: Option<String>,
}

impl ProfileSelector {
    /// The named profile, with nothing overridden.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            profile: Some(name.into()),
            ..Self::default()
        }
    }
}

/// How long earmark waits to connect to one of several addresses before
/// it tries the next.
pub const ADDRESS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The profile's `server`, then its `addresses`, each once, in order.
fn configured_addresses(
    name: &str,
    pc: &ProfileConfig,
    dirs: &Dirs,
) -> Result<Vec<BaseUrl>, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: dirs.config_file(),
        message: format!("profiles.{name}.{key}: {message}"),
    };
    if pc.addresses.as_ref().is_some_and(Vec::is_empty) {
        return Err(invalid(
            "addresses",
            "the list is empty; name at least one address or leave it out".into(),
        ));
    }
    let mut out: Vec<BaseUrl> = Vec::new();
    let given = pc.server.iter().map(|s| ("server", s));
    let listed = pc.addresses.iter().flatten().map(|s| ("addresses", s));
    for (key, text) in given.chain(listed) {
        let base = BaseUrl::parse(text).map_err(|e| invalid(key, e.to_string()))?;
        if !out.contains(&base) {
            out.push(base);
        }
    }
    Ok(out)
}

impl Profile {
    /// The first address (the one `--server` gave), if any.
    pub fn server(&self) -> Option<&BaseUrl> {
        self.addresses.first()
    }

    /// Where this profile's sync outbox and progress cache live.
    pub fn sync_dir(&self) -> PathBuf {
        self.dirs.data.join("sync").join(&self.name)
    }

    /// Resolve the profile `global` selects (flags and `EARMARK_*` variables
    /// win over config.toml).
    pub fn resolve(global: &ProfileSelector) -> Result<Profile, ConfigError> {
        Profile::resolve_in(global, Dirs::discover()?)
    }

    pub fn resolve_in(global: &ProfileSelector, dirs: Dirs) -> Result<Profile, ConfigError> {
        let config = Config::load(&dirs.config_file())?;
        let name = global
            .profile
            .clone()
            .or_else(|| config.default_profile.clone())
            .unwrap_or_else(|| "default".to_owned());
        if !valid_profile_name(&name) {
            return Err(ConfigError::BadProfileName(name));
        }
        let pc = config.profiles.get(&name).cloned().unwrap_or_default();
        let (addresses, server_from_args) = match &global.server {
            Some(s) => (vec![BaseUrl::parse(s)?], true),
            None => (configured_addresses(&name, &pc, &dirs)?, false),
        };
        let mut options = ClientOptions::default();
        if let Some(p) = pc.identity_header_prefix.filter(|p| !p.trim().is_empty()) {
            options.identity_header_prefix = p.trim().to_owned();
        }
        if let Some(paths) = pc.paths {
            options.paths = paths;
        }
        if let Some(fields) = pc.fields {
            options.fields = fields;
        }
        if addresses.len() > 1 {
            // A dead address must not hold up the next one for long.
            options.connect_timeout = options.connect_timeout.min(ADDRESS_TIMEOUT);
        }
        let download_limit = config
            .downloads
            .and_then(|d| d.max_size)
            .map(|size| size.bytes())
            .transpose()
            .map_err(|message| ConfigError::Invalid {
                path: dirs.config_file(),
                message: format!("downloads.max_size: {message}"),
            })?;
        Ok(Profile {
            name,
            dirs,
            addresses,
            server_from_args,
            user: global.user.clone().or(pc.user),
            options,
            download_limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_sizes_read_with_their_units() {
        let size = |t: &str| SizeSetting::Text(t.into()).bytes();
        assert_eq!(size("500 MB"), Ok(500_000_000));
        assert_eq!(size("2GiB"), Ok(2 << 30));
        assert_eq!(size("1.5 kB"), Ok(1500));
        assert_eq!(SizeSetting::Bytes(42).bytes(), Ok(42));
        assert!(size("lots").is_err());
        assert!(size("5 parsecs").unwrap_err().contains("parsecs"));
        let c: Config = toml::from_str("[downloads]\nmax_size = 1000\n").unwrap();
        assert_eq!(
            c.downloads.unwrap().max_size,
            Some(SizeSetting::Bytes(1000))
        );
    }

    #[test]
    fn player_tables_sit_beside_profiles() {
        let text = r#"
default_profile = "home"
[profiles.home]
server = "nas.local"
[keys]
favorite = "F"
[theme]
accent = "yellow"
[player]
short_skip = 15
"#;
        let c: Config = toml::from_str(text).expect("the UI tables are allowed");
        assert_eq!(c.default_profile.as_deref(), Some("home"));
        assert!(c.keys.is_some() && c.theme.is_some() && c.player.is_some());
        assert!(toml::from_str::<Config>("[kyes]\nx = 1\n").is_err());
    }

    #[test]
    fn player_and_sleep_tables_sit_beside_them() {
        let c: Config =
            toml::from_str("[player]\nup_next = \"queue\"\n[sleep]\nauto = \"22:30-06:00\"\n")
                .unwrap();
        assert!(c.player.is_some() && c.sleep.is_some());
    }

    #[test]
    fn config_example_of_the_issue_parses() {
        let c: Config = toml::from_str(
            r#"
default_profile = "home"
[profiles.home]
server = "http://nas.local:8686"
user = "alice"
identity_header_prefix = "X-Service"
[profiles.home.paths]
categories = "/genres"
"#,
        )
        .unwrap();
        let home = &c.profiles["home"];
        assert_eq!(home.user.as_deref(), Some("alice"));
        assert_eq!(home.paths.as_ref().unwrap().categories, "/genres");
        assert_eq!(home.paths.as_ref().unwrap().favorites, "/auth/favorites");
    }

    #[test]
    fn body_field_names_are_set_per_profile() {
        let c: Config = toml::from_str(
            "[profiles.home]\n[profiles.home.fields]\nprogress_position = \"position\"\nsettings_speed = \"rate\"\n",
        )
        .unwrap();
        let f = c.profiles["home"].fields.clone().unwrap();
        assert_eq!(
            (f.progress_position.as_str(), f.settings_speed.as_str()),
            ("position", "rate")
        );
        assert_eq!(
            f.bookmark_note, "note",
            "the rest keeps the reference dialect"
        );
        assert!(toml::from_str::<Config>("[profiles.h.fields]\nbogus = \"x\"\n").is_err());
    }

    #[test]
    fn profile_names() {
        assert!(valid_profile_name("home-2.x_y"));
        for bad in ["", ".hidden", "a/b", "../x", "sp ace"] {
            assert!(!valid_profile_name(bad), "{bad}");
        }
    }

    fn dirs_in(dir: &Path) -> Dirs {
        let dirs = Dirs::under(dir);
        std::fs::create_dir_all(&dirs.config).unwrap();
        dirs
    }

    #[test]
    fn resolve_prefers_flags_and_reads_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = dirs_in(dir.path());
        std::fs::write(
            dirs.config_file(),
            "default_profile = \"home\"\n[profiles.home]\nserver = \"nas\"\nuser = \"alice\"\nidentity_header_prefix = \"X-Acme\"\n",
        )
        .unwrap();
        let p = Profile::resolve_in(&ProfileSelector::default(), dirs.clone()).unwrap();
        assert_eq!(p.name, "home");
        assert_eq!(p.server().unwrap().as_str(), "http://nas:8686/api/v1");
        assert_eq!(p.options.identity_header_prefix, "X-Acme");
        let g = ProfileSelector {
            server: Some("https://other/gw".into()),
            user: Some("bob".into()),
            ..Default::default()
        };
        let p = Profile::resolve_in(&g, dirs.clone()).unwrap();
        assert!(p.server_from_args);
        assert_eq!(p.server().unwrap().as_str(), "https://other/gw/api/v1");
        assert_eq!(p.addresses.len(), 1, "--server stays one address");
        assert_eq!(p.user.as_deref(), Some("bob"));
        std::fs::write(dirs.config_file(), "bogus = 1").unwrap();
        let e = Profile::resolve_in(&ProfileSelector::default(), dirs).unwrap_err();
        assert!(e.to_string().contains("config.toml"), "{e}");
    }

    #[test]
    fn a_profile_lists_several_addresses_after_its_server() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = dirs_in(dir.path());
        let write = |text: &str| std::fs::write(dirs.config_file(), text).unwrap();
        let resolve = || Profile::resolve_in(&ProfileSelector::named("home"), dirs.clone());
        let shown =
            |p: &Profile| -> Vec<String> { p.addresses.iter().map(|a| a.to_string()).collect() };
        write(
            "[profiles.home]\nserver = \"http://nas.local:8686\"\naddresses = [\"https://vpn.example/nas\", \"nas.local\"]\n",
        );
        let p = resolve().unwrap();
        assert_eq!(
            shown(&p),
            [
                "http://nas.local:8686/api/v1",
                "https://vpn.example/nas/api/v1"
            ],
            "server first, each address once"
        );
        assert_eq!(p.options.connect_timeout, ADDRESS_TIMEOUT);
        write("[profiles.home]\naddresses = [\"a\", \"b:9\"]\n");
        assert_eq!(
            shown(&resolve().unwrap()),
            ["http://a:8686/api/v1", "http://b:9/api/v1"]
        );
        write("[profiles.home]\nserver = \"a\"\n");
        let one = resolve().unwrap();
        assert_eq!(
            one.options.connect_timeout,
            ClientOptions::default().connect_timeout
        );
        write("[profiles.home]\naddresses = []\n");
        let e = resolve().unwrap_err().to_string();
        assert!(
            e.contains("profiles.home.addresses") && e.contains("empty"),
            "{e}"
        );
        write("[profiles.home]\naddresses = [\"a\", \"ftp://b\"]\n");
        let e = resolve().unwrap_err().to_string();
        assert!(
            e.contains("profiles.home.addresses") && e.contains("ftp://b"),
            "{e}"
        );
    }
}
