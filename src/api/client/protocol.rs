//! Which HTTP each address speaks, and the pool a request goes out on.
//!
//! An https address negotiates h2 or HTTP/1.1 by ALPN on the one pool
//! (`Inner::http`). A cleartext address cannot negotiate: the client learns
//! whether it answers HTTP/2 with prior knowledge (h2c) by one probe, off
//! the critical path ([`Client::learn_protocol`]), and keeps what it
//! learned on the [`Address`](super::Address) (`speaks`), where the session
//! store remembers it. It probes only an address whose HTTP/1.1 answers
//! advertise h2c (`Upgrade: h2c`, as Apache's mod_http2 and the reference
//! server send it): one that does not is HTTP/1.1 without a probe, so a
//! plain HTTP/1.1 gateway never logs a `PRI *` it cannot read. Only a URL on the origin of an address that said h2c
//! goes out on the prior-knowledge pool; any other origin (a CDN) on the
//! ALPN one. An h2c request that fails without an answer (the server
//! changed) forgets the flag; a read goes again at once over HTTP/1.1.

use super::Client;
use super::limits::origin;
use crate::api::BaseUrl;
use crate::domain::locks::lock;
use reqwest::Version;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;
use url::Url;

/// What an address was found to speak over cleartext.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaks {
    /// A prior-knowledge HTTP/2 request got no HTTP/2 answer.
    Http1,
    /// It answers HTTP/2 with prior knowledge: one connection carries
    /// every request of a session, in parallel.
    H2c,
}

impl Speaks {
    /// In words, for `status` and `doctor`.
    pub fn words(self) -> &'static str {
        match self {
            Speaks::Http1 => "HTTP/1.1 (no HTTP/2 over cleartext)",
            Speaks::H2c => "HTTP/2 (h2c): one connection for the session",
        }
    }

    /// As the session store and `--json` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Speaks::Http1 => "http1",
            Speaks::H2c => "h2c",
        }
    }
}

/// What `base` speaks in words, `speaks` being what was learned of it.
pub fn protocol_words(base: &BaseUrl, speaks: Option<Speaks>) -> &'static str {
    match speaks {
        _ if !base.as_str().starts_with("http:") => "h2 or HTTP/1.1, negotiated (ALPN)",
        Some(s) => s.words(),
        None => "not known yet (learned after a session's start-up, or by `earmark doctor`)",
    }
}

/// How long after its first answer a session's client probes an address
/// whose protocol it does not know: after the start-up's requests.
const LEARN_AFTER: Duration = Duration::from_secs(3);

type SpeaksHook = Arc<dyn Fn(&BaseUrl, Option<Speaks>) + Send + Sync>;

/// The prior-knowledge pool (built when first needed) and the learning.
#[derive(Default)]
pub(super) struct Protocols {
    h2c: OnceLock<Option<reqwest::Client>>,
    /// Addresses probed by this client already (one probe each).
    probed: Mutex<HashSet<String>>,
    /// Told of each learned or forgotten flag (the session store).
    hook: RwLock<Option<SpeaksHook>>,
    /// Origins whose h2c flag this client forgot: requests sent on the
    /// h2c pool before that may still fail, and go again over HTTP/1.1.
    forgotten: Mutex<HashSet<String>>,
    /// Per origin, whether its last HTTP/1.1 answer advertised h2c.
    advertised: Mutex<std::collections::HashMap<String, bool>>,
}

/// Whether an answer says its server takes HTTP/2 over cleartext: it came
/// over HTTP/2, or an HTTP/1.1 answer names h2c in `Upgrade` (RFC 9110
/// §7.8: a server may list there what it could upgrade to).
fn advertises_h2c(resp: &reqwest::Response) -> bool {
    resp.version() == Version::HTTP_2
        || resp
            .headers()
            .get_all(reqwest::header::UPGRADE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim().eq_ignore_ascii_case("h2c"))
}

impl Client {
    /// The pool a request to `url` goes out on: the prior-knowledge one
    /// when `url` is on the origin of an address that speaks h2c, else the
    /// one that negotiates (ALPN over https, HTTP/1.1 over cleartext).
    pub fn pool_for(&self, url: &str) -> reqwest::Client {
        match Url::parse(url) {
            Ok(u) => self.pool_of(&u).0,
            Err(_) => self.inner.http.clone(),
        }
    }

    /// A request to `url` on [`Client::pool_for`]'s pool failed with `e`
    /// before any answer (a stream's read): when that pool was the h2c
    /// guess and the failure tells of the protocol, the flag is forgotten
    /// and the pool to send it again on at once is given; `None` when
    /// there is nothing else to try.
    pub fn after_failure(&self, url: &str, e: &reqwest::Error) -> Option<reqwest::Client> {
        let u = Url::parse(url).ok()?;
        let (_, h2c) = self.pool_of(&u);
        let was = lock(&self.inner.protocols.forgotten).contains(&origin(&u));
        if !h2c && !was {
            return None;
        }
        if !tells_of_protocol(e) {
            // Down or slow, not a changed protocol: HTTP/1.1 would not
            // fare better, and the flag stays.
            return None;
        }
        self.forget_h2c(&u, e);
        Some(self.inner.http.clone())
    }

    /// `hook` is told of each address's protocol as it is learned or
    /// forgotten (the session store keeps it); a client with a hook also
    /// learns by itself, [`LEARN_AFTER`] its first answer at an address.
    pub fn on_speaks(&self, hook: impl Fn(&BaseUrl, Option<Speaks>) + Send + Sync + 'static) {
        *super::write(&self.inner.protocols.hook) = Some(Arc::new(hook));
    }

    /// Asks `base` once over HTTP/2 with prior knowledge (`GET
    /// /license/status`, no token): any HTTP/2 answer is h2c; a protocol
    /// error, a reset or an HTTP/1.1 refusal is HTTP/1.1; no connection or
    /// no answer in time tells nothing (`None`, nothing kept). An https
    /// address is not asked: ALPN says it on each connection.
    pub async fn learn_protocol(&self, base: &BaseUrl) -> Option<Speaks> {
        if !base.as_str().starts_with("http:") {
            return None;
        }
        if !self.advertised(base).await? {
            tracing::debug!("{base} does not advertise h2c: HTTP/1.1, not probed");
            self.set_speaks(base, Some(Speaks::Http1));
            return Some(Speaks::Http1);
        }
        let h2c = self.h2c_pool()?;
        let sent = self.knock_request(&h2c, base).send().await;
        let speaks = match sent {
            Ok(resp) if resp.version() == Version::HTTP_2 => Speaks::H2c,
            Ok(_) => Speaks::Http1,
            Err(e) if e.is_timeout() || e.is_connect() => {
                tracing::debug!("no answer to the HTTP/2 probe at {base}: {e}");
                return None;
            }
            Err(e) => {
                tracing::debug!(
                    "{base} does not speak h2c: {}",
                    self.network_error(base, &e)
                );
                Speaks::Http1
            }
        };
        self.set_speaks(base, Some(speaks));
        Some(speaks)
    }

    /// Whether `base`'s answers advertise h2c: as its last answer said,
    /// else as a plain `GET /license/status` over HTTP/1.1 says (`None`:
    /// no answer).
    async fn advertised(&self, base: &BaseUrl) -> Option<bool> {
        let o = origin(base.as_url());
        if let Some(a) = lock(&self.inner.protocols.advertised).get(&o) {
            return Some(*a);
        }
        let resp = self
            .knock_request(&self.inner.http, base)
            .send()
            .await
            .ok()?;
        let said = advertises_h2c(&resp);
        lock(&self.inner.protocols.advertised).insert(o, said);
        Some(said)
    }

    /// [`Client::learn_protocol`] at every address, together.
    pub async fn learn_protocols(&self) -> Vec<(BaseUrl, Option<Speaks>)> {
        let bases: Vec<BaseUrl> = self.addresses().into_iter().map(|a| a.base).collect();
        let probes = bases.iter().map(|b| self.learn_protocol(b));
        let said = futures_util::future::join_all(probes).await;
        bases.into_iter().zip(said).collect()
    }

    /// Sends what `build` makes on the pool for `url`. An h2c request that
    /// fails without an answer forgets the flag; a read (GET, HEAD) goes
    /// again at once over HTTP/1.1, a write does not: it may have reached
    /// the server, and a write without an answer is the outbox's to decide
    /// (never re-sent here).
    pub(super) async fn send_on(
        &self,
        url: &Url,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let (pool, h2c) = self.pool_of(url);
        let (client, req) = build(&pool).build_split();
        let req = req?;
        let read = req.method().is_safe();
        match client.execute(req).await {
            Err(e) if h2c && tells_of_protocol(&e) => {
                self.forget_h2c(url, &e);
                if read {
                    build(&self.inner.http).send().await
                } else {
                    Err(e)
                }
            }
            r => r,
        }
    }

    /// After an answer `resp` at `base`: kept is whether it advertised
    /// h2c; a client that keeps what it learns and does not know what
    /// `base` speaks probes it once, a little later, when it did.
    pub(super) fn learn_later(&self, base: &BaseUrl, resp: &reqwest::Response) {
        if !base.as_str().starts_with("http:") {
            return;
        }
        let said = advertises_h2c(resp);
        lock(&self.inner.protocols.advertised).insert(origin(base.as_url()), said);
        if super::read(&self.inner.protocols.hook).is_none() {
            return;
        }
        let known = self
            .addresses()
            .iter()
            .any(|a| a.base == *base && a.speaks.is_some());
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut probed = lock(&self.inner.protocols.probed);
        if known || !probed.insert(base.to_string()) {
            return;
        }
        let (c, base) = (self.clone(), base.clone());
        rt.spawn(async move {
            tokio::time::sleep(LEARN_AFTER).await;
            c.learn_protocol(&base).await;
        });
    }

    /// The pool for `url`, and whether it is the h2c one.
    fn pool_of(&self, url: &Url) -> (reqwest::Client, bool) {
        let h2c = url.scheme() == "http"
            && self
                .addresses()
                .iter()
                .any(|a| a.speaks == Some(Speaks::H2c) && a.base.same_origin(url));
        match self.h2c_pool().filter(|_| h2c) {
            Some(p) => (p, true),
            None => (self.inner.http.clone(), false),
        }
    }

    fn forget_h2c(&self, url: &Url, e: &reqwest::Error) {
        lock(&self.inner.protocols.forgotten).insert(origin(url));
        let bases: Vec<BaseUrl> = self
            .addresses()
            .into_iter()
            .filter(|a| a.speaks == Some(Speaks::H2c) && a.base.same_origin(url))
            .map(|a| a.base)
            .collect();
        for base in bases {
            tracing::info!(
                "{base} no longer answers h2c ({}); HTTP/1.1 from now on",
                self.network_error(&base, e)
            );
            self.set_speaks(&base, None);
        }
    }

    fn set_speaks(&self, base: &BaseUrl, speaks: Option<Speaks>) {
        if !self.note_speaks(base, speaks) {
            return;
        }
        let hook = super::read(&self.inner.protocols.hook).clone();
        if let Some(hook) = hook {
            hook(base, speaks);
        }
    }

    /// The prior-knowledge pool, built the first time it is needed.
    fn h2c_pool(&self) -> Option<reqwest::Client> {
        self.inner
            .protocols
            .h2c
            .get_or_init(|| {
                let base = self.base();
                Client::builder(&self.inner.opts)
                    .http2_prior_knowledge()
                    .build()
                    .map_err(|e| tracing::warn!("cannot set up HTTP/2 for {base}: {e}"))
                    .ok()
            })
            .clone()
    }
}

/// Whether a request that failed without an answer says something of
/// the protocol: not when the address is down (no connection) or slow (a
/// time-out), which `learn_protocol` too takes as telling nothing.
fn tells_of_protocol(e: &reqwest::Error) -> bool {
    !e.is_timeout() && !e.is_connect()
}
