//! One server, several addresses (home, a VPN, a gateway with a prefix):
//! which address is in use, which may carry the token, and the switch to
//! another when one stops answering.
//!
//! - An [`Address`] keeps the serverId its last login through it said. The
//!   token (and the identity headers) only ever go to an address whose
//!   login said the serverId of the client's own login: an address never
//!   logged in through, or that said another serverId, gets requests
//!   without the token at most (the login itself, the knock of
//!   [`Client::knock`]).
//! - Requests go to the address in use. One that does not connect moves
//!   to the next address that may carry the token, in the profile's order
//!   (a GET also when it was sent and no answer came, or a gateway said
//!   its upstream is away: 502, 503, 504); the first that answers is in
//!   use from then on, and [`Client::watch_base`] says so.

use super::Client;
use super::transport::Access;
use crate::api::error::ApiError;
use crate::api::wire::{self, LoginData};
use crate::api::{Auth, BaseUrl};
use crate::domain::ServerId;
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::watch;

/// One address of the server, and the serverId its last login said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub base: BaseUrl,
    /// `None`: never logged in through this address.
    pub server_id: Option<ServerId>,
    /// What it speaks over cleartext, once learned (`None`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaks: Option<super::Speaks>,
}

impl Address {
    /// An address no login went through yet.
    pub fn new(base: BaseUrl) -> Address {
        Address {
            base,
            server_id: None,
            speaks: None,
        }
    }

    /// May the token of a login to `server` go here?
    pub fn vouches_for(&self, server: &ServerId) -> bool {
        self.server_id.as_ref() == Some(server)
    }
}

/// The addresses of a client and the one in use.
pub(super) struct Addresses {
    list: Vec<Address>,
    current: usize,
}

impl Addresses {
    pub(super) fn new(list: Vec<Address>, current: usize) -> Addresses {
        let current = current.min(list.len().saturating_sub(1));
        Addresses { list, current }
    }

    /// Indexes to try: the one in use, then the others in order; with
    /// `token`, only those that vouch for its server.
    fn order(&self, token: Option<&ServerId>) -> Vec<usize> {
        std::iter::once(self.current)
            .chain((0..self.list.len()).filter(|i| *i != self.current))
            .filter(|i| token.is_none_or(|s| self.list[*i].vouches_for(s)))
            .collect()
    }
}

/// How an attempt at one address went, for the switch.
pub(super) enum Miss {
    /// Nothing was sent: the address did not connect.
    Unconnected(ApiError),
    /// Sent, and no answer came (a reset, a time-out), or a gateway said
    /// its upstream is away (502, 503, 504).
    Unanswered(ApiError),
    /// The server answered: final.
    Answered(ApiError),
}

/// An error that says nothing answered at an address: the next may.
pub(super) fn unanswered(e: &ApiError) -> bool {
    matches!(
        e,
        ApiError::Network { .. }
            | ApiError::Server {
                status: 502..=504,
                ..
            }
    )
}

impl Miss {
    pub(super) fn into_error(self) -> ApiError {
        match self {
            Miss::Unconnected(e) | Miss::Unanswered(e) | Miss::Answered(e) => e,
        }
    }
}

impl Client {
    /// A client of the server's `addresses` (in the order they are tried,
    /// at least one), starting with `in_use` (else the first that vouches
    /// for `auth`'s server, else the first), logged in with `auth` if given.
    pub fn with_addresses(
        addresses: Vec<Address>,
        in_use: Option<&BaseUrl>,
        opts: super::ClientOptions,
        auth: Option<Auth>,
    ) -> Result<Client, ApiError> {
        let Some(first) = addresses.first() else {
            return Err(ApiError::NotLoggedIn);
        };
        let vouched = |a: &Address| auth.as_ref().is_none_or(|x| a.vouches_for(&x.server_id));
        let current = in_use
            .and_then(|b| addresses.iter().position(|a| a.base == *b && vouched(a)))
            .or_else(|| addresses.iter().position(vouched))
            .unwrap_or(0);
        let http = Client::http(&first.base, &opts)?;
        let (switched, _) = tokio::sync::watch::channel(addresses[current].base.clone());
        let ladder = crate::domain::backoff::Ladder::new(opts.backoff, opts.backoff_max);
        Ok(Client {
            inner: std::sync::Arc::new(super::Inner {
                http,
                protocols: Default::default(),
                addresses: std::sync::RwLock::new(Addresses::new(addresses, current)),
                switched,
                on_switch: std::sync::RwLock::new(None),
                opts,
                auth: std::sync::RwLock::new(auth),
                prefetched: Default::default(),
                limits: super::limits::Limits::new(ladder),
                units: Default::default(),
            }),
        })
    }

    /// The address in use.
    pub fn base(&self) -> BaseUrl {
        let a = super::read(&self.inner.addresses);
        a.list[a.current].base.clone()
    }

    /// Every address, in the profile's order, with what its login said.
    pub fn addresses(&self) -> Vec<Address> {
        super::read(&self.inner.addresses).list.clone()
    }

    /// The address in use, each time it changes.
    pub fn watch_base(&self) -> watch::Receiver<BaseUrl> {
        self.inner.switched.subscribe()
    }

    /// Bases to try a request at, each with its index: see [`Addresses::order`].
    pub(super) fn candidates(&self, access: Access) -> Vec<(usize, BaseUrl)> {
        let auth = match access {
            Access::Anonymous => None,
            Access::Token | Access::Write => self.auth().map(|a| a.server_id),
        };
        let a = super::read(&self.inner.addresses);
        a.order(auth.as_ref())
            .into_iter()
            .map(|i| (i, a.list[i].base.clone()))
            .collect()
    }

    /// Address `i` answered: it is in use from now on.
    pub(super) fn answered_at(&self, i: usize) {
        let base = {
            let mut a = super::write(&self.inner.addresses);
            if a.current == i || i >= a.list.len() {
                return;
            }
            a.current = i;
            a.list[i].base.clone()
        };
        tracing::info!("the server answers at {base} now");
        let hook = super::read(&self.inner.on_switch).clone();
        if let Some(hook) = hook {
            hook(&base);
        }
        self.inner.switched.send_replace(base);
    }

    /// `hook` is told of every switch to another address, when it happens
    /// (the session store keeps the one that worked last).
    pub fn on_switch(&self, hook: impl Fn(&BaseUrl) + Send + Sync + 'static) {
        *super::write(&self.inner.on_switch) = Some(std::sync::Arc::new(hook));
    }

    /// Notes what a login through address `i` said (what another server
    /// spoke there is no longer known).
    fn learned(&self, i: usize, server: &ServerId) {
        if let Some(a) = super::write(&self.inner.addresses).list.get_mut(i) {
            if a.server_id.as_ref().is_some_and(|s| s != server) {
                a.speaks = None;
            }
            a.server_id = Some(server.clone());
        }
    }

    /// Notes what the addresses at `base` speak; whether that changed.
    pub(super) fn note_speaks(&self, base: &BaseUrl, speaks: Option<super::Speaks>) -> bool {
        let mut changed = false;
        for a in super::write(&self.inner.addresses).list.iter_mut() {
            if a.base == *base && a.speaks != speaks {
                a.speaks = speaks;
                changed = true;
            }
        }
        changed
    }

    /// The caller logged in through the address in use (`set_auth`): one
    /// that no login went through yet vouches for `server` from now on.
    pub(super) fn vouch_current(&self, server: &ServerId) {
        let mut a = super::write(&self.inner.addresses);
        let i = a.current;
        a.list[i].server_id.get_or_insert_with(|| server.clone());
    }

    /// Logs in through address `i` alone (the password goes there, no
    /// token): what its login said is noted on it (see
    /// [`Address::server_id`]); the client's own login does not change
    /// until [`Client::adopt`].
    pub async fn login_through(
        &self,
        i: usize,
        user: &str,
        password: &str,
    ) -> Result<LoginData, ApiError> {
        let Some(base) = self.addresses().get(i).map(|a| a.base.clone()) else {
            return Err(ApiError::NotLoggedIn);
        };
        let data = self.login_at(&base, user, password).await?;
        self.learned(i, &data.server_id);
        Ok(data)
    }

    /// `POST /auth/login` at one address, not retried, not switched.
    pub(super) async fn login_at(
        &self,
        base: &BaseUrl,
        user: &str,
        password: &str,
    ) -> Result<LoginData, ApiError> {
        let p = &self.inner.opts.paths;
        let mut body = serde_json::Map::new();
        body.insert(p.login_user_field.clone(), json!(user));
        body.insert(p.login_password_field.clone(), json!(password));
        let (url, body) = (base.endpoint(["auth", "login"]), Value::Object(body));
        let v = self
            .once(base, &Method::POST, &url, Some(&body), None, false)
            .await
            .map_err(Miss::into_error)?;
        wire::decode_login(&v, "POST /auth/login")
    }

    /// Makes the login `data` that came through address `i` the client's:
    /// its token and ids, and that address in use.
    pub fn adopt(&self, i: usize, data: &LoginData) {
        self.learned(i, &data.server_id);
        *super::write(&self.inner.auth) = Some(data.auth());
        self.answered_at(i);
    }

    /// Revokes the token of `login`, which came through address `i`, at
    /// that address (best effort: a server without logout keeps it until
    /// it expires).
    pub async fn revoke_at(&self, i: usize, login: &LoginData) {
        let Some(base) = self.addresses().get(i).map(|a| a.base.clone()) else {
            return;
        };
        let segs = super::paths::segments(&self.inner.opts.paths.logout, None);
        let url = base.endpoint(segs.iter().copied());
        let sent = self
            .once(&base, &Method::POST, &url, None, Some(&login.auth()), false)
            .await;
        if let Err(m) = sent {
            tracing::debug!("revoking a second login at {base}: {}", m.into_error());
        }
    }

    /// Whether an API answers at `base`: `GET /license/status` without the
    /// token (any HTTP answer is an answer; a page instead of JSON, or no
    /// connection, is an error).
    pub async fn knock(&self, base: &BaseUrl) -> Result<u16, ApiError> {
        let url = base.endpoint(["license", "status"]);
        let resp = self
            .send_on(&url, |http| self.knock_request(http, base))
            .await
            .map_err(|e| self.network_error(base, &e))?;
        let status = resp.status();
        let ct = super::transport::content_type(&resp);
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| self.network_error(base, &e))?;
        match wire::parse_body(ct.as_deref(), &bytes) {
            Err(kind @ crate::api::error::BodyKind::Html) => Err(ApiError::NotJson {
                address: base.to_string(),
                status: status.as_u16(),
                kind,
            }),
            _ => Ok(status.as_u16()),
        }
    }

    /// `GET /license/status` at `base` on `http`, without the token.
    pub(super) fn knock_request(
        &self,
        http: &reqwest::Client,
        base: &BaseUrl,
    ) -> reqwest::RequestBuilder {
        http.get(base.endpoint(["license", "status"]))
            .timeout(self.inner.opts.connect_timeout * 2)
            .header(reqwest::header::ACCEPT, "application/json")
    }

    /// Playback stalled: when the address in use does not answer a knock,
    /// the first other one that may carry the token and answers is in use
    /// from now on (returned).
    pub async fn check_address(&self) -> Option<BaseUrl> {
        let order = self.candidates(Access::Token);
        let ((_, current), others) = order.split_first()?;
        if self.knock(current).await.is_ok() {
            return None;
        }
        for (i, base) in others {
            if self.knock(base).await.is_ok() {
                self.answered_at(*i);
                return Some(base.clone());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn address(host: &str, server: Option<&str>) -> Address {
        Address {
            base: BaseUrl::parse(host).unwrap(),
            server_id: server.map(ServerId::new),
            speaks: None,
        }
    }

    #[test]
    fn the_token_goes_only_to_addresses_that_vouch_for_its_server() {
        let a = Addresses::new(
            vec![
                address("home", Some("s1")),
                address("vpn", Some("s1")),
                address("other", Some("s2")),
                address("new", None),
            ],
            1,
        );
        let s1 = ServerId::new("s1");
        assert_eq!(a.order(Some(&s1)), [1, 0], "the one in use first");
        assert_eq!(a.order(Some(&ServerId::new("s3"))), Vec::<usize>::new());
        assert_eq!(a.order(None), [1, 0, 2, 3], "a login may go anywhere");
    }
}

#[cfg(test)]
mod streams {
    use super::*;
    use crate::api::{ClientOptions, Token};
    use crate::domain::{ManifestItem, UserId};

    fn item(url: &str) -> ManifestItem {
        ManifestItem {
            url: Some(url.into()),
            ..ManifestItem::whole("c1", "One", None)
        }
    }

    #[test]
    fn a_stream_url_of_another_address_is_taken_below_the_one_in_use() {
        let at = super::tests::address;
        let auth = Auth {
            token: Token::new("t"),
            server_id: ServerId::new("s1"),
            user_id: UserId::from(1),
        };
        let away = BaseUrl::parse("https://vpn.example/nas").unwrap();
        let c = Client::with_addresses(
            vec![
                at("nas.local", Some("s1")),
                at("https://vpn.example/nas", Some("s1")),
            ],
            Some(&away),
            ClientOptions::default(),
            Some(auth.clone()),
        )
        .unwrap();
        let r = c.stream_request(&item("http://nas.local:8686/api/v1/chapters/c1/play?raw=1"));
        assert_eq!(
            r.url.as_str(),
            "https://vpn.example/nas/api/v1/chapters/c1/play?raw=1"
        );
        assert_eq!(r.headers.len(), 1, "the token, for the address in use");
        assert_eq!(
            c.stream_key(&item("/chapters/c1/play?raw=1")).as_str(),
            "http://nas.local:8686/api/v1/chapters/c1/play?raw=1",
            "named below the first address"
        );
        let r = c.stream_request(&item("http://cdn.example/c1.mp3"));
        assert!(r.headers.is_empty(), "another origin never gets the token");
        // An address that no login checked is never in use with the token.
        let c = Client::with_addresses(
            vec![
                at("nas.local", Some("s1")),
                at("https://vpn.example/nas", None),
            ],
            Some(&away),
            ClientOptions::default(),
            Some(auth),
        )
        .unwrap();
        assert_eq!(c.base().as_str(), "http://nas.local:8686/api/v1");
    }
}
