//! Login, logout and the license status.

use super::{AppState, data};
use crate::server::auth::{Authed, license_message};
use crate::server::db::{LicenseSetting, verify_password};
use crate::server::error::{ApiError, ApiJson, ApiResult};
use crate::server::login::Refusal;
use crate::server::net::Peer;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;
use std::net::IpAddr;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginRequest {
    username: String,
    password: String,
}

/// The client's address (from the accepted connection), if known.
pub struct PeerAddr(Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for PeerAddr {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        Ok(PeerAddr(
            parts
                .extensions
                .get::<ConnectInfo<Peer>>()
                .map(|c| c.0.0.ip()),
        ))
    }
}

fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::BackOff(wait) => {
            let secs = wait.as_secs_f64().ceil() as u64;
            let message = format!("too many failed logins; try again in {secs} s");
            ApiError::too_many_requests(secs, message)
        }
        Refusal::Busy => ApiError::too_many_requests(
            1,
            "the server is busy checking other logins; try again in 1 s",
        ),
    }
}

pub async fn login(
    State(state): State<AppState>,
    PeerAddr(addr): PeerAddr,
    ApiJson(req): ApiJson<LoginRequest>,
) -> ApiResult<impl IntoResponse> {
    if req.username.trim().is_empty() || req.password.is_empty() {
        return Err(ApiError::bad_request(
            "username and password must not be empty",
        ));
    }
    let username = req.username.trim().to_owned();
    // In flight for its user and address until answered (or dropped).
    let attempt = state.login.admit(addr, &username).await.map_err(refused)?;
    let creds = {
        let name = username.clone();
        state
            .run(move |state| Ok(state.db.user_credentials(&name)?))
            .await?
    };
    // Verify even for an unknown user, so timing does not reveal names.
    let (user_id, hash) = creds.unzip();
    let password = req.password;
    let ok = attempt
        .hash(move || verify_password(&password, hash.as_deref().unwrap_or_else(|| dummy_hash())))
        .await
        .map_err(refused)?;
    let user_id = match (ok, user_id) {
        (true, Some(id)) => id,
        _ => {
            attempt.failed();
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_credentials",
                "wrong user name or password",
            ));
        }
    };
    attempt.succeeded();
    let (token, expires_at) = state
        .run(move |state| Ok(state.db.issue_token(user_id)?))
        .await?;
    Ok(data(json!({
        "token": token,
        "tokenType": "Bearer",
        "expiresAt": expires_at,
        "serverId": state.server_id,
        "user": {"id": user_id, "username": username},
    })))
}

fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| crate::server::db::hash_password("not a real password").unwrap_or_default())
}

pub async fn logout(
    State(state): State<AppState>,
    Authed(caller): Authed,
) -> ApiResult<StatusCode> {
    state
        .run(move |state| Ok(state.db.revoke_token(&caller.token)?))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn license_status(
    State(state): State<AppState>,
    Authed(_): Authed,
) -> ApiResult<impl IntoResponse> {
    let (license, _) = state
        .run(|state| Ok(state.db.license_and_generation()?))
        .await?;
    Ok(data(json!({
        "status": license.as_str(),
        "valid": license == LicenseSetting::Valid,
        "message": license_message(license),
    })))
}
