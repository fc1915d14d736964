//! The structured detail pi attaches to a failed Bedrock message
//! (`appendBedrockFailureDiagnostic` in pi-ai 0.85.1 `api/bedrock-converse-stream.js`):
//! `{type: "bedrock_response_failure", timestamp, details: {status?, errorCode?, requestId?}}`,
//! beside an `errorMessage` that stays as it is (retry checks read it). Unknown fields are
//! left out, never guessed; with none known there is no diagnostic.

use serde_json::{Map, Value};

use super::errors::{error_body, error_code};
use crate::providers::{RequestFailure, StreamError};
use crate::types::{Diagnostic, now_ms};

/// pi's `MAX_BEDROCK_DIAGNOSTIC_VALUE_CHARS`: longer values are dropped, not cut.
const MAX_VALUE_CHARS: usize = 200;

/// `normalizeDiagnosticValue`: trimmed, dropped when empty or over the limit.
fn normalize(value: &str) -> Option<String> {
    let trimmed = value.trim();
    (!trimmed.is_empty() && trimmed.chars().count() <= MAX_VALUE_CHARS).then(|| trimmed.to_owned())
}

/// The request id the SDK reads (`x-amzn-requestid`, `x-amzn-request-id`, `x-amz-request-id`).
fn request_id(headers: &reqwest::header::HeaderMap) -> Option<String> {
    ["x-amzn-requestid", "x-amzn-request-id", "x-amz-request-id"]
        .iter()
        .find_map(|name| headers.get(*name))
        .and_then(|v| v.to_str().ok())
        .and_then(normalize)
}

/// pi's `extractBedrockErrorCode`: a modeled code ends in `Exception` (transport failures
/// such as timeouts have none).
fn exception_code(code: &str) -> Option<String> {
    code.ends_with("Exception")
        .then(|| normalize(code))
        .flatten()
}

/// The `bedrock_response_failure` diagnostic of `failure`, if anything about it is known.
pub(super) fn response_failure(failure: &RequestFailure<'_>) -> Option<Diagnostic> {
    let mut details = Map::new();
    let mut code = None;
    if let Some(response) = &failure.response
        && !(200..300).contains(&response.status)
    {
        details.insert("status".into(), Value::from(response.status));
        let header = response
            .headers
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok());
        let body = response.error_body.and_then(error_body);
        code = error_code(header, body.as_ref());
    }
    if let StreamError::ProviderException { code: c, .. } = failure.error {
        code = Some(c.clone());
    }
    if let Some(code) = code.as_deref().and_then(exception_code) {
        details.insert("errorCode".into(), Value::String(code));
    }
    if let Some(id) = failure.response.and_then(|r| request_id(r.headers)) {
        details.insert("requestId".into(), Value::String(id));
    }
    (!details.is_empty()).then(|| Diagnostic {
        kind: "bedrock_response_failure".into(),
        timestamp: now_ms(),
        error: None,
        details: Some(Value::Object(details)),
    })
}
