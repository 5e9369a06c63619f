//! Login, logout and the license status.

use super::{AppState, data};
use crate::server::auth::{Authed, license_message};
use crate::server::db::{LicenseSetting, verify_password};
use crate::server::error::{ApiError, ApiJson, ApiResult};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginRequest {
    username: String,
    password: String,
}

pub async fn login(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<LoginRequest>,
) -> ApiResult<impl IntoResponse> {
    if req.username.trim().is_empty() || req.password.is_empty() {
        return Err(ApiError::bad_request(
            "username and password must not be empty",
        ));
    }
    let creds = state.db.user_credentials(req.username.trim())?;
    // Verify even for an unknown user, so timing does not reveal names.
    let (user_id, hash) = match creds {
        Some((id, hash)) => (Some(id), hash),
        None => (None, dummy_hash().to_owned()),
    };
    let password = req.password;
    let ok = tokio::task::spawn_blocking(move || verify_password(&password, &hash))
        .await
        .map_err(ApiError::internal)?;
    let user_id = match (ok, user_id) {
        (true, Some(id)) => id,
        _ => {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_credentials",
                "wrong user name or password",
            ));
        }
    };
    let (token, expires_at) = state.db.issue_token(user_id)?;
    Ok(data(json!({
        "token": token,
        "tokenType": "Bearer",
        "expiresAt": expires_at,
        "serverId": state.server_id,
        "user": {"id": user_id, "username": req.username.trim()},
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
    state.db.revoke_token(&caller.token)?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn license_status(
    State(state): State<AppState>,
    Authed(_): Authed,
) -> ApiResult<impl IntoResponse> {
    let (license, _) = state.db.license_and_generation()?;
    Ok(data(json!({
        "status": license.as_str(),
        "valid": license == LicenseSetting::Valid,
        "message": license_message(license),
    })))
}
