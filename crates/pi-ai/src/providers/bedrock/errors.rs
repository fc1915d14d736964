//! Bedrock failures as pi words them (`formatBedrockError` in pi-ai 0.85.1
//! `api/bedrock-converse-stream.js`): `<prefix>: <message>`, where the prefix is a readable
//! name for the exceptions pi's retry and overflow checks match (`Throttling error`,
//! `Service unavailable`, …) and the exception's own name otherwise, plus a pointer to the
//! data-retention docs when the message is about data retention.

use serde_json::Value;

use crate::providers::StreamError;

/// pi's `BEDROCK_DATA_RETENTION_DOCS_URL`.
const DATA_RETENTION_DOCS_URL: &str =
    "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html";

/// The readable prefix pi gives an exception name (`BEDROCK_ERROR_PREFIXES`), else the name.
fn prefix(name: &str) -> &str {
    match name {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        other => other,
    }
}

/// The exceptions a ConverseStream body models, by their `:exception-type` member name.
fn modeled_stream_exception(code: &str) -> Option<&'static str> {
    Some(match code {
        "internalServerException" => "InternalServerException",
        "modelStreamErrorException" => "ModelStreamErrorException",
        "validationException" => "ValidationException",
        "throttlingException" => "ThrottlingException",
        "serviceUnavailableException" => "ServiceUnavailableException",
        _ => return None,
    })
}

/// ` See <docs> for supported data retention modes.` when `core` mentions data retention.
fn data_retention_hint(core: &str) -> String {
    if core.to_ascii_lowercase().contains("data retention mode") {
        format!(" See {DATA_RETENTION_DOCS_URL} for supported data retention modes.")
    } else {
        String::new()
    }
}

/// A modeled exception's message: `message`, else `Message`, else `UnknownError` (the SDK's
/// `decorateServiceException`).
fn exception_message(body: Option<&Value>) -> String {
    body.and_then(|b| {
        ["message", "Message"]
            .iter()
            .filter_map(|k| b.get(*k).and_then(Value::as_str))
            .find(|m| !m.is_empty())
    })
    .unwrap_or("UnknownError")
    .to_owned()
}

/// The failure an exception message in the stream reports (`:exception-type` `code`, JSON
/// payload): a modeled exception as `<prefix>: <message>` under its exception name; an
/// unmodeled one (the SDK throws a plain `Error`) as its payload, under `code`.
pub(crate) fn stream_exception(code: &str, payload: &str) -> StreamError {
    match modeled_stream_exception(code) {
        Some(name) => {
            let body: Option<Value> = serde_json::from_str(payload).ok();
            let message = exception_message(body.as_ref());
            let hint = data_retention_hint(&message);
            StreamError::ProviderException {
                code: name.to_owned(),
                message: format!("{}: {message}{hint}", prefix(name)),
            }
        }
        None => StreamError::ProviderException {
            code: code.to_owned(),
            message: format!("{payload}{}", data_retention_hint(payload)),
        },
    }
}

/// The error code the SDK reads from a failed response: `x-amzn-errortype`, else the body's
/// `code` or `__type`, without a `:…` suffix or a `…#` namespace.
pub(crate) fn error_code(header: Option<&str>, body: Option<&Value>) -> Option<String> {
    let raw = header
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            body.and_then(|b| {
                ["code", "__type"]
                    .iter()
                    .filter_map(|k| b.get(*k).and_then(Value::as_str))
                    .find(|c| !c.is_empty())
                    .map(str::to_owned)
            })
        })?;
    let head = raw.split(':').next().unwrap_or("");
    let name = head.rsplit('#').next().unwrap_or("");
    (!name.is_empty()).then(|| name.to_owned())
}

/// The body of a failed response as an object, when it is one.
pub(crate) fn error_body(body: &str) -> Option<Value> {
    serde_json::from_str::<Value>(body.trim())
        .ok()
        .filter(Value::is_object)
}

/// pi's cap on a raw error body shown in a message (`MAX_PROVIDER_ERROR_BODY_CHARS`).
const MAX_BODY_CHARS: usize = 4000;

/// `text` cut to [`MAX_BODY_CHARS`] characters with `... [truncated <n> chars]`.
fn truncate_body(text: &str) -> String {
    let total = text.chars().count();
    match text.char_indices().nth(MAX_BODY_CHARS) {
        Some((end, _)) => format!(
            "{}... [truncated {} chars]",
            &text[..end],
            total.saturating_sub(MAX_BODY_CHARS)
        ),
        None => text.to_owned(),
    }
}

/// The text of a non-2xx response: `<prefix>: <message>` for the exception its error code
/// names (`Unknown` without one), the message taken from the JSON body (`UnknownError`
/// without one), as pi's SDK builds it. Where the SDK loses the body — a body that is not
/// JSON (a proxy's HTML page), or JSON with neither an error code nor a message (a gateway's
/// `{"error": …}`) — the message is `<status>: <body>` (trimmed, at most 4 000 characters),
/// the text pi's `formatBedrockError` means to show.
pub(crate) fn http_error_text(status: u16, error_type: Option<&str>, body: &str) -> String {
    let trimmed = body.trim();
    let parsed = error_body(body);
    let code = error_code(error_type, parsed.as_ref());
    let has_message = parsed.as_ref().is_some_and(|b| {
        ["message", "Message"].iter().any(|k| {
            b.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|m| !m.is_empty())
        })
    });
    let body_lost = !trimmed.is_empty()
        && match &parsed {
            None => true,
            Some(_) => code.is_none() && !has_message,
        };
    let core = if body_lost {
        format!("{status}: {}", truncate_body(trimmed))
    } else {
        exception_message(parsed.as_ref())
    };
    let hint = data_retention_hint(&core);
    format!(
        "{}: {core}{hint}",
        prefix(code.as_deref().unwrap_or("Unknown"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exception_text_of(code: &str, payload: &str) -> String {
        stream_exception(code, payload).to_string()
    }

    #[test]
    fn stream_exceptions_get_pi_prefixes() {
        assert_eq!(
            exception_text_of("throttlingException", r#"{"message":"Too many tokens"}"#),
            "Throttling error: Too many tokens"
        );
        assert_eq!(
            exception_text_of("modelStreamErrorException", r#"{"Message":"boom"}"#),
            "Model stream error: boom"
        );
        assert_eq!(
            exception_text_of("serviceUnavailableException", "not json"),
            "Service unavailable: UnknownError"
        );
        assert_eq!(exception_text_of("newException", "raw text"), "raw text");
        assert_eq!(
            exception_text_of(
                "validationException",
                r#"{"message":"data retention mode 'default' is not available"}"#
            ),
            format!(
                "Validation error: data retention mode 'default' is not available See {DATA_RETENTION_DOCS_URL} for supported data retention modes."
            )
        );
    }

    #[test]
    fn http_errors_name_the_exception() {
        assert_eq!(
            http_error_text(
                400,
                Some("ValidationException:http://internal.amazon.com/coral/"),
                r#"{"message":"Input is too long for requested model."}"#
            ),
            "Validation error: Input is too long for requested model."
        );
        assert_eq!(
            http_error_text(
                403,
                None,
                r#"{"__type":"com.amazon.coral#AccessDeniedException","Message":"no"}"#
            ),
            "AccessDeniedException: no"
        );
        assert_eq!(
            http_error_text(502, None, "<html>bad gateway</html>"),
            "Unknown: 502: <html>bad gateway</html>"
        );
        assert_eq!(
            http_error_text(403, None, r#"{"message":"Forbidden"}"#),
            "Unknown: Forbidden"
        );
        assert_eq!(http_error_text(500, None, " "), "Unknown: UnknownError");
        let long = "x".repeat(4005);
        assert_eq!(
            http_error_text(502, None, &long),
            format!("Unknown: 502: {}... [truncated 5 chars]", &long[..4000])
        );
        assert_eq!(
            http_error_text(429, Some("ThrottlingException"), ""),
            "Throttling error: UnknownError"
        );
    }

    /// The prefixes exist for pi's retry classifier, which reads them as pi's does.
    #[test]
    fn retry_classification_reads_the_prefixes() {
        use crate::retryable::is_transient_error_message as transient;
        assert!(transient(&exception_text_of(
            "serviceUnavailableException",
            r#"{"message":"Bedrock is unable to process your request."}"#
        )));
        assert!(transient(&exception_text_of(
            "internalServerException",
            r#"{"message":"boom"}"#
        )));
        assert!(transient(&http_error_text(
            429,
            Some("ThrottlingException"),
            r#"{"message":"Too many requests, please wait before trying again."}"#
        )));
        assert!(!transient(&http_error_text(
            400,
            Some("ValidationException"),
            r#"{"message":"Malformed input request"}"#
        )));
    }
}
