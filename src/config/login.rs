//! Logging in: through each of the profile's addresses that answers (the
//! password goes to each, only after the first accepted it), keeping one
//! token and revoking the others, then storing the session (see
//! `session` for what is stored and which login becomes the session's).

use super::file::Profile;
use super::session::{
    Session, SessionError, SessionRecord, read_record, record_lock, remember_in_use,
    remember_speaks, write_record,
};
use super::tokens::{Saved, TokenStore};
use crate::api::{Address, ApiError, BaseUrl, Client, LoginData};
use crate::domain::{ServerId, now_millis};

/// What a successful login produced.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    pub session: Session,
    pub client: Client,
    /// What the login through each address said, in the profile's order.
    pub answers: Vec<AddressLogin>,
    /// Shown once when the token went to the file instead of the keyring.
    pub store_warning: Option<String>,
}

/// What the login through one address said: its serverId, or why it
/// could not be asked.
#[derive(Debug, Clone)]
pub struct AddressLogin {
    pub base: BaseUrl,
    pub said: Result<ServerId, ApiError>,
}

/// Which login becomes the session's, from the serverId each address's
/// login said (`None`: it failed): the one the last session had, when an
/// address still says it (another address now saying something else does
/// not take the profile over), else the first that answered.
pub fn choose_login(previous: Option<&ServerId>, said: &[Option<&ServerId>]) -> Option<usize> {
    previous
        .and_then(|p| said.iter().position(|s| *s == Some(p)))
        .or_else(|| said.iter().position(Option::is_some))
}

/// Log in to the profile's server (through its addresses, or those of its
/// last session) and store the session. The password is only sent to the
/// server's addresses.
pub async fn login(
    profile: &Profile,
    user: Option<&str>,
    password: &str,
) -> Result<LoggedIn, SessionError> {
    let previous = read_record(profile).ok().flatten();
    let bases: Vec<BaseUrl> = if profile.addresses.is_empty() {
        let known = previous.as_ref().map(SessionRecord::known);
        known.into_iter().flatten().map(|a| a.base).collect()
    } else {
        profile.addresses.clone()
    };
    if bases.is_empty() {
        return Err(SessionError::NoServer {
            profile: profile.name.clone(),
        });
    }
    let user = user
        .map(str::to_owned)
        .or_else(|| profile.user.clone())
        .or_else(|| previous.as_ref().map(|r| r.user.clone()))
        .ok_or_else(|| SessionError::NoUser {
            profile: profile.name.clone(),
        })?;
    let addresses = match &previous {
        Some(r) => r.said_by(&bases),
        None => bases.iter().cloned().map(Address::new).collect(),
    };
    let client = Client::with_addresses(addresses, None, profile.options.clone(), None)?;
    let logins = log_in_through_each(&client, &bases, &user, password, previous.as_ref()).await?;
    let (chosen, data) = (logins.chosen, logins.data);
    // What each address speaks, for the sessions to come (h2c or not).
    client.learn_protocols().await;
    let stored = store(
        profile,
        previous.as_ref(),
        &client,
        (&bases, chosen),
        &data,
        &user,
    )?;
    let answers = bases
        .iter()
        .zip(logins.results)
        .map(|(base, r)| AddressLogin {
            base: base.clone(),
            said: r.map(|d| d.server_id),
        })
        .collect();
    if bases.len() > 1 {
        let profile = profile.clone();
        client.on_switch(move |base| remember_in_use(&profile, base));
    }
    let p = profile.clone();
    client.on_speaks(move |base, speaks| remember_speaks(&p, base, speaks));
    let record = stored.record;
    Ok(LoggedIn {
        session: Session {
            server: bases[chosen].clone(),
            addresses: record.known(),
            token: data.token,
            server_id: record.server_id,
            user_id: record.user_id,
            user: record.user,
            profile: profile.name.clone(),
            token_store: stored.saved.kind,
        },
        client,
        answers,
        store_warning: stored.saved.warning,
    })
}

/// The logins through a profile's addresses.
struct Logins {
    /// Through each address, in the profile's order.
    results: Vec<Result<LoginData, ApiError>>,
    /// The one that became the client's.
    chosen: usize,
    data: LoginData,
}

/// Logs in through the first address that answers (a refusal, a wrong
/// password, ends the login there, before the password goes anywhere
/// else), then through each other one. The client adopts the chosen
/// login; the other tokens of the same server go back, another server's
/// are dropped unused (no token, not even its own, goes there).
async fn log_in_through_each(
    client: &Client,
    bases: &[BaseUrl],
    user: &str,
    password: &str,
    previous: Option<&SessionRecord>,
) -> Result<Logins, SessionError> {
    let first = client.login(user, password).await?;
    let at = bases
        .iter()
        .position(|b| *b == client.base())
        .unwrap_or_default();
    let mut results = Vec::with_capacity(bases.len());
    for i in 0..bases.len() {
        results.push(if i == at {
            Ok(first.clone())
        } else {
            client.login_through(i, user, password).await
        });
    }
    let said: Vec<Option<&ServerId>> = results
        .iter()
        .map(|r| r.as_ref().ok().map(|d| &d.server_id))
        .collect();
    let chosen = choose_login(previous.map(|r| &r.server_id), &said).unwrap_or(at);
    let data = results[chosen].as_ref().unwrap_or(&first).clone();
    client.adopt(chosen, &data);
    for (i, r) in results.iter().enumerate() {
        if let (Ok(other), true) = (r, i != chosen)
            && other.server_id == data.server_id
        {
            client.revoke_at(i, other).await;
        }
    }
    Ok(Logins {
        results,
        chosen,
        data,
    })
}

/// What `store` kept.
struct Stored {
    record: SessionRecord,
    saved: Saved,
}

/// Keeps the token (removing one an earlier session left in the other
/// store) and writes the session's record: the chosen login's, through
/// `bases[chosen]`.
fn store(
    profile: &Profile,
    previous: Option<&SessionRecord>,
    client: &Client,
    (bases, chosen): (&[BaseUrl], usize),
    data: &LoginData,
    user: &str,
) -> Result<Stored, SessionError> {
    let store = TokenStore::new(profile.dirs.tokens_dir())?;
    let saved = store.save(&profile.name, &data.token)?;
    if let Some(prev) = previous
        && prev.token_store != saved.kind
    {
        let _ = store.delete(&profile.name, prev.token_store);
    }
    let record = SessionRecord {
        server: bases[chosen].clone(),
        server_id: data.server_id.clone(),
        user_id: data.user_id.clone(),
        user: data.user_name.clone().unwrap_or_else(|| user.to_owned()),
        token_store: saved.kind,
        logged_in_at: now_millis(),
        addresses: if bases.len() > 1 {
            client.addresses()
        } else {
            Vec::new()
        },
        in_use: None,
        speaks: match client.addresses().as_slice() {
            [one] => one.speaks,
            _ => None,
        },
    };
    {
        let _lock = record_lock(profile);
        write_record(profile, &record)?;
    }
    Ok(Stored { record, saved })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ServerId {
        ServerId::new(s)
    }

    #[test]
    fn the_last_sessions_server_wins_over_the_first_that_answered() {
        let (s1, s2) = (id("s1"), id("s2"));
        let said = [Some(&s2), None, Some(&s1)];
        assert_eq!(choose_login(Some(&s1), &said), Some(2));
        assert_eq!(choose_login(None, &said), Some(0));
        // Rebuilt: no address says the old serverId any more.
        assert_eq!(choose_login(Some(&id("s0")), &said), Some(0));
        assert_eq!(choose_login(Some(&s1), &[None, None]), None);
    }
}
