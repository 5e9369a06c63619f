//! Who is calling, and may they: the extractors that run the checks of
//! docs/contract.md in order — token (401), identity headers on writes
//! (428, 400, 409), license (403) — before a handler sees the body.

use super::catalog::Library;
use super::db::LicenseSetting;
use super::error::ApiError;
use super::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use std::sync::Arc;

/// A caller with a valid token.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: u64,
    pub username: String,
    pub token: String,
}

/// The token from `Authorization: Bearer …`, else (when `allow_query`)
/// from `?access_token=`.
pub(crate) fn presented_token(parts: &Parts, allow_query: bool) -> Result<String, ApiError> {
    if let Some(value) = parts.headers.get(AUTHORIZATION) {
        let value = value
            .to_str()
            .map_err(|_| ApiError::unauthorized("the Authorization header is not readable text"))?;
        let mut split = value.trim().splitn(2, ' ');
        let scheme = split.next().unwrap_or("");
        let token = split.next().unwrap_or("").trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Err(ApiError::unauthorized(
                "the Authorization header must be `Bearer <token>`",
            ));
        }
        return Ok(token.to_owned());
    }
    if allow_query {
        let query = parts.uri.query().unwrap_or("");
        for pair in query.split('&') {
            if let Some(v) = pair.strip_prefix("access_token=")
                && !v.is_empty()
            {
                let decoded = url::form_urlencoded::parse(format!("t={v}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                return Ok(decoded);
            }
        }
    }
    Err(ApiError::unauthorized(
        "log in first: no token was presented",
    ))
}

/// The caller a token belongs to. Blocking.
pub(crate) fn caller_of(state: &AppState, token: String) -> Result<Caller, ApiError> {
    match state.db.token_user(&token)? {
        Some((user_id, username)) => Ok(Caller {
            user_id,
            username,
            token,
        }),
        None => Err(ApiError::unauthorized(
            "the token is unknown or has expired; log in again",
        )),
    }
}

/// The license check; also hands back the current catalog. Blocking.
pub(crate) fn licensed(state: &AppState) -> Result<Arc<Library>, ApiError> {
    let (license, generation) = state.db.license_and_generation()?;
    if license != LicenseSetting::Valid {
        return Err(license_error(license));
    }
    state.library(generation)
}

pub fn license_message(license: LicenseSetting) -> &'static str {
    match license {
        LicenseSetting::Valid => "The license is valid.",
        LicenseSetting::Expired => {
            "The server's license has expired. Ask the administrator to renew it."
        }
        LicenseSetting::Missing => {
            "The server has no license. Ask the administrator to install one."
        }
    }
}

fn license_error(license: LicenseSetting) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "license_required",
        license_message(license),
    )
}

fn check_identity_headers(
    state: &AppState,
    headers: &HeaderMap,
    caller: &Caller,
) -> Result<(), ApiError> {
    let server = headers.get(&state.server_id_header);
    let user = headers.get(&state.user_id_header);
    let (Some(server), Some(user)) = (server, user) else {
        let missing: Vec<&str> = [
            (server.is_none(), state.server_id_header.as_str()),
            (user.is_none(), state.user_id_header.as_str()),
        ]
        .into_iter()
        .filter(|(m, _)| *m)
        .map(|(_, n)| n)
        .collect();
        return Err(ApiError::new(
            StatusCode::PRECONDITION_REQUIRED,
            "listening_scope_required",
            format!(
                "sync writes need both identity headers; missing: {}",
                missing.join(", ")
            ),
        ));
    };
    let user = user.to_str().unwrap_or("").trim();
    let Ok(user_id) = user.parse::<u64>() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "listening_scope_invalid",
            format!(
                "{} must be the numeric user id, got {user:?}",
                state.user_id_header
            ),
        ));
    };
    let server = server.to_str().unwrap_or("").trim();
    if server != state.server_id {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "listening_scope_mismatch",
            "the expected server id does not match this server instance; log in again",
        ));
    }
    if user_id != caller.user_id {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "listening_scope_mismatch",
            "the expected user id does not match the logged-in account; log in again",
        ));
    }
    Ok(())
}

/// Token only (ungated reads).
pub struct Authed(pub Caller);

impl FromRequestParts<AppState> for Authed {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = presented_token(parts, false)?;
        state
            .run(move |state| caller_of(state, token))
            .await
            .map(Authed)
    }
}

/// Token and license (gated reads).
pub struct Gated(pub Caller, pub Arc<Library>);

impl FromRequestParts<AppState> for Gated {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = presented_token(parts, false)?;
        state
            .run(move |state| {
                let caller = caller_of(state, token)?;
                Ok(Gated(caller, licensed(state)?))
            })
            .await
    }
}

/// Token, identity headers and license (every write we serve).
pub struct Writer(pub Caller, pub Arc<Library>);

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = presented_token(parts, false)?;
        let headers = parts.headers.clone();
        state
            .run(move |state| {
                let caller = caller_of(state, token)?;
                check_identity_headers(state, &headers, &caller)?;
                Ok(Writer(caller, licensed(state)?))
            })
            .await
    }
}
