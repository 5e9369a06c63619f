//! The server's addresses as `earmark login`, `status` and `doctor` show
//! them: for each, whether it is in use, what its login said (the same
//! server, another one, or not checked yet) and whether an API answers
//! there now (a knock without the token).

use crate::api::{Address, ApiError, BaseUrl, Client, Speaks};
use crate::config::AddressLogin;
use crate::domain::ServerId;
use serde_json::{Value, json};

/// One address and what is known of it.
pub(super) struct AddressState {
    pub base: BaseUrl,
    pub in_use: bool,
    /// What its last login said.
    pub said: Option<ServerId>,
    /// An answer's HTTP status, or why none came (`None`: not asked).
    pub reach: Option<Result<u16, String>>,
    /// What it speaks over cleartext, once learned.
    pub speaks: Option<Speaks>,
}

impl AddressState {
    fn trust(&self, server: Option<&ServerId>) -> &'static str {
        match (&self.said, server) {
            (Some(s), Some(mine)) if s == mine => "sameServer",
            (Some(_), Some(_)) => "otherServer",
            _ => "unchecked",
        }
    }

    /// The state in words, for one line.
    pub fn words(&self, server: Option<&ServerId>) -> String {
        let mut parts = Vec::new();
        if self.in_use {
            parts.push("in use".to_owned());
        }
        parts.push(match (self.trust(server), &self.said) {
            ("sameServer", _) => "the same server".to_owned(),
            ("otherServer", Some(s)) => {
                format!("ANOTHER server (serverId {s}): refused, the token never goes there")
            }
            _ => "not checked yet: no token goes there until `earmark login` reaches it".to_owned(),
        });
        match &self.reach {
            // A knock goes without the token: a 401 or 403 is the server
            // answering as it should.
            Some(Ok(status)) if *status < 500 => parts.push("answers".to_owned()),
            Some(Ok(status)) => parts.push(format!("answers with a server error (HTTP {status})")),
            Some(Err(why)) => parts.push(format!("does not answer ({why})")),
            None => {}
        }
        if let Some(s) = self.speaks {
            parts.push(format!("speaks {}", s.words()));
        }
        parts.join(", ")
    }

    pub fn json(&self, server: Option<&ServerId>) -> Value {
        json!({
            "address": self.base.as_str(),
            "inUse": self.in_use,
            "serverId": self.said.as_ref().map(ServerId::as_str),
            "state": self.trust(server),
            "reachable": self.reach.as_ref().map(Result::is_ok),
            "speaks": self.speaks.map(Speaks::as_str),
            "detail": self.words(server),
        })
    }
}

/// Every address of `client`, each knocked at once (all together).
pub(super) async fn knocked(client: &Client) -> Vec<AddressState> {
    let addresses: Vec<Address> = client.addresses();
    let knocks = addresses.iter().map(|a| client.knock(&a.base));
    let answers = futures_util::future::join_all(knocks).await;
    let mut states = known(&addresses, &client.base());
    for (s, r) in states.iter_mut().zip(answers) {
        s.reach = Some(r.map_err(|e| reason(&e)));
    }
    states
}

/// What the session knows of each address (none is asked).
pub(super) fn known(addresses: &[Address], in_use: &BaseUrl) -> Vec<AddressState> {
    addresses
        .iter()
        .map(|a| AddressState {
            base: a.base.clone(),
            in_use: a.base == *in_use,
            said: a.server_id.clone(),
            reach: None,
            speaks: a.speaks,
        })
        .collect()
}

/// What each address's login said, from `earmark login`.
pub(super) fn logged(answers: &[AddressLogin], in_use: &BaseUrl) -> Vec<AddressState> {
    answers
        .iter()
        .map(|a| AddressState {
            base: a.base.clone(),
            in_use: a.base == *in_use,
            said: a.said.as_ref().ok().cloned(),
            reach: Some(match &a.said {
                Ok(_) => Ok(200),
                Err(e) => Err(reason(e)),
            }),
            speaks: None,
        })
        .collect()
}

/// Why an address did not answer, without repeating the address.
fn reason(e: &ApiError) -> String {
    match e {
        ApiError::Network { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The lines `Addresses:` prints, aligned under the other labels; none
/// for a single address (the `Server:` line says it).
pub(super) fn lines(states: &[AddressState], server: Option<&ServerId>) -> Vec<String> {
    if states.len() < 2 {
        return Vec::new();
    }
    states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let label = if i == 0 { "Addresses:" } else { "" };
            format!("{label:<13}{}  {}", s.base, s.words(server))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_is_said_in_words() {
        let s1 = ServerId::new("s1");
        let state = |said: Option<&str>, reach: Result<u16, String>, in_use: bool| AddressState {
            base: BaseUrl::parse("nas").unwrap(),
            in_use,
            said: said.map(ServerId::new),
            reach: Some(reach),
            speaks: None,
        };
        let w = state(Some("s1"), Ok(401), true).words(Some(&s1));
        assert_eq!(w, "in use, the same server, answers");
        let w = state(Some("s1"), Ok(502), false).words(Some(&s1));
        assert_eq!(w, "the same server, answers with a server error (HTTP 502)");
        let w = state(Some("s2"), Err("the connection failed".into()), false).words(Some(&s1));
        assert!(
            w.starts_with("ANOTHER server (serverId s2): refused"),
            "{w}"
        );
        assert!(
            w.ends_with("does not answer (the connection failed)"),
            "{w}"
        );
        let j = state(None, Ok(401), false).json(Some(&s1));
        assert_eq!(j["state"], "unchecked");
        assert_eq!(j["reachable"], true);
    }
}
