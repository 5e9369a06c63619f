//! The server's base address: what the user types (`host`, `host:port`,
//! `http(s)://host[:port][/gateway/prefix]`) normalized to one URL ending
//! in `/api/v1`. Every request, stream URLs included, is built from it.

use serde::{Deserialize, Serialize};
use std::fmt;
use url::Url;

/// The contract's default direct port.
pub const DEFAULT_PORT: u16 = 8686;
const API_SUFFIX: &str = "/api/v1";

/// A normalized base address, always `scheme://host:port[/prefix]/api/v1`
/// without a trailing slash, query or fragment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BaseUrl(Url, String);

/// The text form with the port always written for http, so `http://h:80/gw`
/// survives a round trip through config and session files (the `url` crate
/// drops default ports, and a port-less http address means 8686 here).
fn canonical(url: &Url) -> String {
    if url.scheme() == "http" && url.port().is_none() {
        let host = url.host_str().unwrap_or_default();
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        format!("http://{host}:80{}", url.path())
    } else {
        url.as_str().to_owned()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid server address {input:?}: {reason}")]
pub struct BaseUrlError {
    pub input: String,
    pub reason: String,
}

impl BaseUrl {
    pub fn parse(input: &str) -> Result<BaseUrl, BaseUrlError> {
        let err = |reason: &str| BaseUrlError {
            input: input.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(err("it is empty"));
        }
        let with_scheme = if trimmed.contains("://") {
            trimmed.to_owned()
        } else {
            format!("http://{trimmed}")
        };
        let (scheme, rest) = with_scheme.split_once("://").expect("has ://");
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(err("the scheme must be http or https"));
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let explicit_port = authority_has_port(authority);
        let mut url = Url::parse(&with_scheme).map_err(|e| err(&e.to_string()))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(err("it has no host name"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(err("it must not contain a user name or password"));
        }
        if scheme == "http" && !explicit_port {
            url.set_port(Some(DEFAULT_PORT))
                .map_err(|_| err("cannot set the port"))?;
        }
        url.set_query(None);
        url.set_fragment(None);
        let mut path = url.path().trim_end_matches('/').to_owned();
        if !path.ends_with(API_SUFFIX) {
            path.push_str(API_SUFFIX);
        }
        url.set_path(&path);
        let text = canonical(&url);
        Ok(BaseUrl(url, text))
    }

    pub fn as_url(&self) -> &Url {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        &self.1
    }

    /// The address in a few words, as a status line says it: the host, its
    /// port when it is not the scheme's, and the gateway prefix
    /// (`nas.local:8686`, `vpn.example/nas`).
    pub fn label(&self) -> String {
        let host = self.0.host_str().unwrap_or_default();
        let port = self.0.port().map(|p| format!(":{p}")).unwrap_or_default();
        let prefix = self.path().strip_suffix(API_SUFFIX).unwrap_or_default();
        format!("{host}{port}{prefix}")
    }

    /// The path of the base address (`/api/v1`, or `/prefix/api/v1`).
    pub fn path(&self) -> &str {
        self.0.path()
    }

    /// The URL of an endpoint given as path segments below the base; each
    /// segment is percent-encoded, so ids can never change the path.
    pub fn endpoint<'a>(&self, segments: impl IntoIterator<Item = &'a str>) -> Url {
        let mut url = self.0.clone();
        {
            let mut segs = url.path_segments_mut().expect("http URLs have a path");
            segs.pop_if_empty();
            for s in segments {
                segs.push(s);
            }
        }
        url
    }

    /// Resolve a URL the server handed out (manifest `url`, `coverUrl`):
    /// absolute URLs are kept; a path that already contains the base path
    /// is taken from the origin; any other path is relative to the base.
    pub fn resolve(&self, given: &str) -> Result<Url, BaseUrlError> {
        let given = given.trim();
        if given.contains("://") {
            return Url::parse(given).map_err(|e| BaseUrlError {
                input: given.to_owned(),
                reason: e.to_string(),
            });
        }
        let base_path = self.path();
        let prefix = base_path.strip_suffix(API_SUFFIX).unwrap_or("");
        let joined = if given.starts_with(&format!("{base_path}/")) || given == base_path {
            given.to_owned()
        } else if !prefix.is_empty() && given.starts_with(&format!("{API_SUFFIX}/")) {
            // A server behind a gateway does not know the gateway's prefix.
            format!("{prefix}{given}")
        } else if let Some(stripped) = given.strip_prefix('/') {
            format!("{base_path}/{stripped}")
        } else {
            format!("{base_path}/{given}")
        };
        self.0.join(&joined).map_err(|e| BaseUrlError {
            input: given.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Resolve a `next` page link found in the answer to `current`: a query
    /// (`?page=2`) or a relative path is relative to `current`; an absolute
    /// or root-relative URL is resolved as in [`BaseUrl::resolve`].
    pub fn resolve_next(&self, current: &Url, given: &str) -> Result<Url, BaseUrlError> {
        let g = given.trim();
        if g.contains("://") || g.starts_with('/') {
            return self.resolve(g);
        }
        current.join(g).map_err(|e| BaseUrlError {
            input: g.to_owned(),
            reason: e.to_string(),
        })
    }

    /// `url` below this base moved to the same place below `onto` (another
    /// address of the same server); `None` when `url` is not below it.
    pub fn rebase(&self, url: &Url, onto: &BaseUrl) -> Option<Url> {
        let rest = url.as_str().strip_prefix(self.0.as_str())?;
        if !(rest.is_empty() || rest.starts_with(['/', '?', '#'])) {
            return None;
        }
        Url::parse(&format!("{}{rest}", onto.0.as_str())).ok()
    }

    /// True when `url` has the same scheme, host and port as the base, so
    /// it may carry the Bearer token.
    pub fn same_origin(&self, url: &Url) -> bool {
        url.origin() == self.0.origin()
    }
}

fn authority_has_port(authority: &str) -> bool {
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    if let Some(rest) = host_port.strip_prefix('[') {
        // [v6]:port
        rest.split_once(']')
            .is_some_and(|(_, after)| after.starts_with(':') && after.len() > 1)
    } else {
        host_port
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty())
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.1)
    }
}

impl TryFrom<String> for BaseUrl {
    type Error = BaseUrlError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        BaseUrl::parse(&s)
    }
}

impl From<BaseUrl> for String {
    fn from(b: BaseUrl) -> String {
        b.1
    }
}

impl std::str::FromStr for BaseUrl {
    type Err = BaseUrlError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BaseUrl::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        BaseUrl::parse(s).unwrap().to_string()
    }

    #[test]
    fn normalizes_every_accepted_form() {
        for (given, want) in [
            ("nas.local", "http://nas.local:8686/api/v1"),
            ("nas.local:9000", "http://nas.local:9000/api/v1"),
            ("http://nas.local", "http://nas.local:8686/api/v1"),
            ("http://nas.local:80", "http://nas.local:80/api/v1"),
            ("http://nas.local:80/gw", "http://nas.local:80/gw/api/v1"),
            ("https://nas.local", "https://nas.local/api/v1"),
            ("https://nas.local:8443/", "https://nas.local:8443/api/v1"),
            (
                "https://nas.local/apps/earmark/",
                "https://nas.local/apps/earmark/api/v1",
            ),
            ("http://10.0.0.2:8686/api/v1", "http://10.0.0.2:8686/api/v1"),
            (
                "http://10.0.0.2:8686/api/v1/",
                "http://10.0.0.2:8686/api/v1",
            ),
            ("  127.0.0.1:5000  ", "http://127.0.0.1:5000/api/v1"),
            ("HTTP://Host", "http://host:8686/api/v1"),
            ("[::1]:9", "http://[::1]:9/api/v1"),
            ("[::1]", "http://[::1]:8686/api/v1"),
            ("http://h/x?y=1#z", "http://h:8686/x/api/v1"),
        ] {
            assert_eq!(n(given), want, "{given}");
        }
        assert_eq!(n(&n("http://nas:80/gw")), "http://nas:80/gw/api/v1");
        let b = BaseUrl::parse("http://nas:80/gw").unwrap();
        let back: BaseUrl = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(back.as_url().port_or_known_default(), Some(80));
    }

    #[test]
    fn rejects_nonsense_with_a_reason() {
        for bad in ["", "   ", "ftp://h", "http://", "http://u:p@h"] {
            let e = BaseUrl::parse(bad).unwrap_err();
            assert!(!e.reason.is_empty(), "{bad}");
        }
    }

    #[test]
    fn endpoints_encode_ids() {
        let b = BaseUrl::parse("http://h:1/gw").unwrap();
        assert_eq!(
            b.endpoint(["books", "a/b?c"]).as_str(),
            "http://h:1/gw/api/v1/books/a%2Fb%3Fc"
        );
    }

    #[test]
    fn resolves_server_urls() {
        let b = BaseUrl::parse("http://h:1/gw").unwrap();
        let played = "http://h:1/gw/api/v1/chapters/c1/play";
        for (given, want) in [
            ("/chapters/c1/play?raw=1", format!("{played}?raw=1")),
            ("chapters/c1/play", played.into()),
            ("/gw/api/v1/chapters/c1/play", played.into()),
            ("http://cdn/x.mp3", "http://cdn/x.mp3".into()),
            // Root-relative from a server behind a gateway: not prefixed twice.
            ("/api/v1/chapters/c1/play?raw=1", format!("{played}?raw=1")),
        ] {
            assert_eq!(b.resolve(given).unwrap().as_str(), want, "{given}");
        }
        let cur = b.endpoint(["books"]);
        for (given, want) in [
            ("?page=2", "http://h:1/gw/api/v1/books?page=2"),
            ("books?page=2", "http://h:1/gw/api/v1/books?page=2"),
            ("/api/v1/books?page=2", "http://h:1/gw/api/v1/books?page=2"),
            (
                "http://h:1/gw/api/v1/books?c=x",
                "http://h:1/gw/api/v1/books?c=x",
            ),
        ] {
            assert_eq!(
                b.resolve_next(&cur, given).unwrap().as_str(),
                want,
                "{given}"
            );
        }
        assert!(b.same_origin(&b.resolve("/x").unwrap()));
        assert!(!b.same_origin(&b.resolve("http://h:2/x").unwrap()));
        assert!(!b.same_origin(&b.resolve("https://h:1/x").unwrap()));
    }

    #[test]
    fn labels_are_short() {
        let l = |s: &str| BaseUrl::parse(s).unwrap().label();
        assert_eq!(l("nas.local"), "nas.local:8686");
        assert_eq!(l("https://vpn.example/nas"), "vpn.example/nas");
        assert_eq!(l("https://vpn.example:8443"), "vpn.example:8443");
    }

    #[test]
    fn a_url_below_one_address_moves_below_another() {
        let home = BaseUrl::parse("http://nas.local:8686").unwrap();
        let away = BaseUrl::parse("https://vpn.example/nas").unwrap();
        let on_home = home.resolve("/chapters/c1/play?raw=1").unwrap();
        assert_eq!(
            home.rebase(&on_home, &away).unwrap().as_str(),
            "https://vpn.example/nas/api/v1/chapters/c1/play?raw=1"
        );
        assert_eq!(
            home.rebase(home.as_url(), &away).unwrap().as_str(),
            "https://vpn.example/nas/api/v1"
        );
        // Not below the base: another origin, or a path that only starts alike.
        for other in [
            "http://cdn:8686/api/v1/x",
            "http://nas.local:8686/api/v10/x",
        ] {
            assert_eq!(
                home.rebase(&Url::parse(other).unwrap(), &away),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn serde_round_trip() {
        let b = BaseUrl::parse("h").unwrap();
        let s = serde_json::to_string(&b).unwrap();
        assert_eq!(s, "\"http://h:8686/api/v1\"");
        let back: BaseUrl = serde_json::from_str(&s).unwrap();
        assert_eq!(back, b);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Parsing never panics, and a normalized address normalizes to itself.
        #[test]
        fn normalization_is_idempotent(s in "(https?://)?[a-z0-9.:/\\[\\]@?#-]{0,30}") {
            if let Ok(b) = BaseUrl::parse(&s) {
                prop_assert!(b.as_str().ends_with("/api/v1"));
                prop_assert_eq!(BaseUrl::parse(b.as_str()).unwrap(), b);
            }
        }
    }
}
