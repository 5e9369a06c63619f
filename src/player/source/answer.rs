//! Looking at an answer before its body is decoded: a success is audio
//! only when it looks like audio; anything else is a refusal, judged by
//! the layer above.

use super::fetch::Outcome;
use super::{CHUNK_TIMEOUT, REFUSAL_BODY_MAX, Refusal, Shared, SourceError};
use crate::player::http_error::{self, Sniff};

/// A success answer is audio only when it looks like audio: from byte 0
/// (`at_start`) by its first bytes (read here, and handed on with the
/// answer), later by its type. Anything else is judged as a refusal.
pub(super) async fn look_before_decoding(
    shared: &Shared,
    mut resp: reqwest::Response,
    at_start: bool,
) -> Result<(reqwest::Response, Option<bytes::Bytes>), Outcome> {
    let status = resp.status().as_u16();
    let ct = content_type(&resp);
    if !at_start {
        let accepted = shared.lock().accepted_type.clone();
        if http_error::midstream_not_audio(ct.as_deref(), accepted.as_deref()) {
            return Err(Outcome::Fatal(
                refused(shared, status, ct, Vec::new(), resp).await,
            ));
        }
        return Ok((resp, None));
    }
    let mut head = Vec::new();
    let mut complete = false;
    while http_error::sniff(ct.as_deref(), &head, complete) == Sniff::NeedMore {
        match tokio::time::timeout(CHUNK_TIMEOUT, resp.chunk()).await {
            Ok(Ok(Some(c))) => head.extend_from_slice(&c),
            Ok(Ok(None)) => complete = true,
            Ok(Err(e)) => {
                tracing::debug!("stream interrupted: {e}");
                return Err(Outcome::Retry);
            }
            Err(_) => return Err(Outcome::Retry),
        }
    }
    if http_error::sniff(ct.as_deref(), &head, complete) == Sniff::NotAudio {
        return Err(Outcome::Fatal(
            refused(shared, status, ct, head, resp).await,
        ));
    }
    shared.lock().accepted_type = ct;
    Ok((resp, Some(head.into())))
}

/// A refusal, judged: its status, type and the body's first bytes (`body`
/// already read, the rest within the chunk time-out; a body that does not
/// come is judged as far as it came).
pub(super) async fn refused(
    shared: &Shared,
    status: u16,
    content_type: Option<String>,
    mut body: Vec<u8>,
    mut resp: reqwest::Response,
) -> SourceError {
    while body.len() < REFUSAL_BODY_MAX {
        match tokio::time::timeout(CHUNK_TIMEOUT, resp.chunk()).await {
            Ok(Ok(Some(c))) => body.extend_from_slice(&c),
            _ => break,
        }
    }
    body.truncate(REFUSAL_BODY_MAX);
    let j = (shared.judge)(&Refusal {
        status,
        content_type,
        body,
    });
    SourceError::Refused {
        kind: j.kind,
        message: j.message,
    }
}

pub(super) fn content_type(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
