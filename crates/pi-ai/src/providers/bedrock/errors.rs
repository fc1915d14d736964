//! Bedrock failures as pi words them (`formatBedrockError` in pi-ai 0.85.1
//! `api/bedrock-converse-stream.js`): `<prefix>: <message>`, where the prefix is a readable
//! name for the exceptions pi's retry and overflow checks match (`Throttling error`,
//! `Service unavailable`, …) and the exception's own name otherwise, plus a pointer to the
//! data-retention docs when the message is about data retention.

use serde_json::Value;

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

/// The text of an exception message in the stream (`:exception-type` `code`, JSON payload).
pub(crate) fn exception_text(code: &str, payload: &str) -> String {
    match modeled_stream_exception(code) {
        Some(name) => {
            let body: Option<Value> = serde_json::from_str(payload).ok();
            let message = exception_message(body.as_ref());
            let hint = data_retention_hint(&message);
            format!("{}: {message}{hint}", prefix(name))
        }
        // Not modeled: the SDK throws a plain `Error` with the payload as its message.
        None => format!("{payload}{}", data_retention_hint(payload)),
    }
}

/// The error code the SDK reads from a failed response: `x-amzn-errortype`, else the body's
/// `code` or `__type`, without a `:…` suffix or a `…#` namespace.
fn error_code(header: Option<&str>, body: Option<&Value>) -> Option<String> {
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

/// The text of a non-2xx response: the exception named by its error code (else the status),
/// with the body's message.
pub(crate) fn http_error_text(status: u16, error_type: Option<&str>, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body.trim()).ok();
    let parsed = parsed.filter(Value::is_object);
    let name = error_code(error_type, parsed.as_ref()).unwrap_or_else(|| status.to_string());
    let message = exception_message(parsed.as_ref());
    let hint = data_retention_hint(&message);
    format!("{}: {message}{hint}", prefix(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_exceptions_get_pi_prefixes() {
        assert_eq!(
            exception_text("throttlingException", r#"{"message":"Too many tokens"}"#),
            "Throttling error: Too many tokens"
        );
        assert_eq!(
            exception_text("modelStreamErrorException", r#"{"Message":"boom"}"#),
            "Model stream error: boom"
        );
        assert_eq!(
            exception_text("serviceUnavailableException", "not json"),
            "Service unavailable: UnknownError"
        );
        assert_eq!(exception_text("newException", "raw text"), "raw text");
        assert_eq!(
            exception_text(
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
            "502: UnknownError"
        );
        assert_eq!(
            http_error_text(429, Some("ThrottlingException"), ""),
            "Throttling error: UnknownError"
        );
    }

    /// The prefixes exist for pi's retry classifier, which reads them as pi's does.
    #[test]
    fn retry_classification_reads_the_prefixes() {
        use crate::retry::is_transient_error_message as transient;
        assert!(transient(&exception_text(
            "serviceUnavailableException",
            r#"{"message":"Bedrock is unable to process your request."}"#
        )));
        assert!(transient(&exception_text(
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
