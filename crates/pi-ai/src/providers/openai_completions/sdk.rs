//! What the `openai` Node SDK (6.x) does around pi's OpenAI adapters, reproduced once for
//! both OpenAI wire APIs: SSE data decoding (`[DONE]`, JSON, in-stream `error` objects), the
//! `APIError` message rules, pi's `formatProviderError`, JavaScript truthiness and string
//! conversion, the request's base headers, `shortHash` and the prompt-cache-key clamp.
//!
//! Mirrors `openai/core/streaming.js` + `core/error.js` and pi 0.85.1 `utils/error-body.ts`,
//! `utils/hash.ts`, `api/openai-prompt-cache.ts`.

use crate::providers::StreamError;
use serde_json::{Map, Value};

use crate::providers::request_headers::{HeaderList, pi_user_agent};
use crate::types::{Model, StreamOptions};

/// What one SSE `data` payload means to the SDK's stream iterator.
#[derive(Debug, PartialEq)]
pub(crate) enum SseData {
    /// `[DONE]`: the SDK ignores everything after it.
    Done,
    /// Nothing to do (empty data).
    Skip,
    /// A parsed JSON value without a top-level `error`.
    Json(Value),
}

/// Decodes one SSE `data` field as the SDK does: `[DONE]` prefix ends the stream, anything else
/// is `JSON.parse`d (failure → the V8 `SyntaxError` text), and a truthy top-level `error` throws
/// an `APIError` whose message is [`api_error_message`] (`Err(message, error object)`).
///
/// Deviation: an event without data (`event: ping` alone) is skipped; the SDK would throw
/// `Unexpected end of JSON input`.
pub(crate) fn decode_data(data: &str) -> Result<SseData, (String, Option<Value>)> {
    if data.starts_with("[DONE]") {
        return Ok(SseData::Done);
    }
    if data.is_empty() {
        return Ok(SseData::Skip);
    }
    use crate::json_depth::{DeepJsonError, MAX_DOCUMENT_DEPTH, from_str};
    let value: Value = match from_str(data, MAX_DOCUMENT_DEPTH) {
        Ok(v) => v,
        Err(e @ DeepJsonError::TooDeep { .. }) => return Err((e.to_string(), None)),
        // JavaScript accepts unpaired surrogate escapes (`"\ud83d"`); serde_json does not.
        // Rust strings cannot hold them, so they are dropped, as pi's `sanitizeSurrogates`
        // would drop them later.
        Err(DeepJsonError::Json(e)) => match crate::transform::sanitize_json_surrogates(data) {
            std::borrow::Cow::Owned(clean) => match from_str(&clean, MAX_DOCUMENT_DEPTH) {
                Ok(v) => v,
                Err(DeepJsonError::Json(e)) => return Err((json_error_text(&clean, &e), None)),
                Err(e) => return Err((e.to_string(), None)),
            },
            std::borrow::Cow::Borrowed(_) => return Err((json_error_text(data, &e), None)),
        },
    };
    if let Some(err) = value.get("error").filter(|e| truthy(e)) {
        return Err((api_error_message(None, Some(err), None), Some(err.clone())));
    }
    Ok(SseData::Json(value))
}

/// The V8 (Node 22) `SyntaxError` message of `JSON.parse(data)`.
fn json_error_text(data: &str, e: &serde_json::Error) -> String {
    crate::js_json_error::json_parse_message(data, e)
}

/// `APIError.makeMessage(status, error, message)`: the error object's `message` (string, or its
/// JSON), else the error's JSON, else `message`; prefixed `"<status> "` when a status exists;
/// `"<status> status code (no body)"` / `"(no status code or body)"` when nothing is known.
pub(crate) fn api_error_message(
    status: Option<u16>,
    error: Option<&Value>,
    message: Option<&str>,
) -> String {
    let msg: Option<String> = match error {
        Some(e) if e.get("message").is_some_and(truthy) => match e.get("message") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(js_json(other)),
            None => None,
        },
        Some(e) if truthy(e) => Some(js_json(e)),
        _ => message.map(str::to_owned),
    };
    let msg = msg.filter(|m| !m.is_empty());
    match (status, msg) {
        (Some(s), Some(m)) => format!("{s} {m}"),
        (Some(s), None) => format!("{s} status code (no body)"),
        (None, Some(m)) => m,
        (None, None) => "(no status code or body)".to_owned(),
    }
}

/// Maximum body characters (UTF-16 units) kept in an error text.
const MAX_PROVIDER_ERROR_BODY_CHARS: usize = 4000;

/// The `errorMessage` for a non-2xx HTTP response, as pi 0.85.1 composes it from the SDK's
/// `APIError`: `formatProviderError(normalizeProviderError(err), prefix)` where the SDK parsed
/// `body` as JSON (`error` = its `error` field) or kept it as text.
///
/// Without prefix: `"<status>: <error object JSON>"` when the body carries a non-empty `error`
/// object whose JSON the message lacks, else the SDK message (`"500 boom"`,
/// `"502 status code (no body)"`). With prefix: `"<prefix> (<status>): <body or message>"`.
/// The body is trimmed and truncated at 4 000 characters (`... [truncated N chars]`).
/// `raw_metadata`: append `"\n<error.metadata.raw>"` when present and not yet included
/// (Chat Completions).
pub(crate) fn format_http_error(
    status: u16,
    body: &str,
    prefix: Option<&str>,
    raw_metadata: bool,
) -> String {
    // openai SDK: errJSON = safeJSON(text); errMessage = errJSON ? undefined : text.
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let json_truthy = parsed.as_ref().is_some_and(truthy);
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let message = api_error_message(
        Some(status),
        error,
        if json_truthy { None } else { Some(body) },
    );
    let body_text = error
        .filter(|e| e.as_object().is_some_and(|o| !o.is_empty()))
        .map(js_json)
        .map(|t| truncate_utf16(t.trim(), MAX_PROVIDER_ERROR_BODY_CHARS))
        .filter(|t| !t.is_empty());
    let mut text = match body_text {
        Some(b) if !message.contains(&b) => match prefix {
            Some(p) => format!("{p} ({status}): {b}"),
            None => format!("{status}: {b}"),
        },
        _ => match prefix {
            Some(p) => format!("{p} ({status}): {message}"),
            None => message,
        },
    };
    if raw_metadata {
        append_raw_metadata(&mut text, error);
    }
    text
}

/// pi's OpenRouter addition: `errorMessage += "\n" + String(error.metadata.raw)` when truthy and
/// not already contained.
pub(crate) fn append_raw_metadata(text: &mut String, error: Option<&Value>) {
    let raw = error
        .and_then(|e| e.get("metadata"))
        .and_then(|m| m.get("raw"))
        .filter(|r| truthy(r));
    if let Some(raw) = raw {
        let raw = js_string(Some(raw));
        if !text.contains(&raw) {
            text.push('\n');
            text.push_str(&raw);
        }
    }
}

/// `truncateErrorText`: keep `max` UTF-16 units and say how many were cut.
pub(crate) fn truncate_utf16(text: &str, max: usize) -> String {
    let total: usize = text.encode_utf16().count();
    if total <= max {
        return text.to_owned();
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    format!("{}... [truncated {} chars]", &text[..end], total - max)
}

/// JavaScript truthiness of a JSON value (`null`, `false`, `0`, `""` are falsy).
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `String(v)` / template-literal conversion; `None` is JavaScript's `undefined`.
pub(crate) fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => js_json(other),
    }
}

/// `JSON.stringify(v)` with JavaScript number spelling.
pub(crate) fn js_json(v: &Value) -> String {
    crate::json::to_string(v).unwrap_or_default()
}

/// A string field, `None` when absent or not a string.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A numeric field as JavaScript's `x || 0`, clamped to a non-negative token count (a double,
/// as in JavaScript).
pub(crate) fn tokens(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(0.0)
}

/// `x ?? y`: the first value that is neither absent nor `null`.
pub(crate) fn nullish<'a>(candidates: &[Option<&'a Value>]) -> Option<&'a Value> {
    candidates.iter().flatten().copied().find(|v| !v.is_null())
}

/// pi's `getClientApiKey`: the key, or `"unused"` when the caller (or the model) sends its
/// own `authorization` / `cf-aig-authorization` header, else `No API key for provider: <p>`.
pub(crate) fn client_api_key(
    model: &Model,
    options: &StreamOptions,
    api_key: &str,
) -> Result<String, StreamError> {
    if !api_key.is_empty() {
        return Ok(api_key.to_owned());
    }
    // The caller's headers as pi checks them, and (as the registry's `stream_simple` does)
    // the model's own headers.
    let has = |name: &str| {
        options.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case(name) && v.as_deref().is_some_and(|v| !v.trim().is_empty())
        }) || model.headers.iter().flatten().any(|(k, v)| {
            k.eq_ignore_ascii_case(name) && v.as_str().is_some_and(|v| !v.trim().is_empty())
        })
    };
    if has("authorization") || has("cf-aig-authorization") {
        return Ok("unused".to_owned());
    }
    Err(StreamError::NoApiKey(model.provider.clone()))
}

/// The headers every OpenAI SDK request carries, then pi's: `Accept`, `Content-Type`,
/// `Authorization: Bearer <key>`, pi's `User-Agent`, then `model.headers`.
pub(crate) fn base_headers(model: &Model, key: &str) -> HeaderList {
    let mut h = HeaderList::new();
    h.set("Accept", "application/json");
    h.set("Content-Type", "application/json");
    h.set("Authorization", format!("Bearer {key}"));
    h.set("User-Agent", pi_user_agent());
    h.apply_json(model.headers.as_ref());
    h
}

/// The OpenAI SDK's endpoint when `baseURL` is empty (`baseURL || DEFAULT_BASE_URL`).
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// `<baseUrl><path>` as the SDK joins them (one slash between); an empty `baseUrl` is the
/// SDK's default endpoint.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    let base = if base.is_empty() {
        DEFAULT_BASE_URL
    } else {
        base
    };
    format!("{}{}", base.trim_end_matches('/'), path)
}

/// pi's `shortHash` (two 32-bit multiplicative hashes over UTF-16 units, base 36).
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        h1 = (h1 ^ ch as u32).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch as u32).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    if n == 0 {
        return "0".to_owned();
    }
    let mut digits = Vec::new();
    while n > 0 {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// `clampOpenAIPromptCacheKey`: at most 64 code points.
pub(crate) fn clamp_prompt_cache_key(key: Option<&str>) -> Option<String> {
    key.map(|k| k.chars().take(64).collect())
}

/// Inserts `key: value` into an object body (keeps the position of an existing key).
pub(crate) fn put(body: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    body.insert(key.to_owned(), value.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn http_500_with_error_object_is_status_and_object_json() {
        let body = r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#;
        assert_eq!(
            format_http_error(500, body, None, true),
            "500: {\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}"
        );
        assert_eq!(
            format_http_error(500, body, Some("OpenAI API error"), false),
            "OpenAI API error (500): {\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}"
        );
    }

    #[test]
    fn http_error_text_bodies_and_empty_bodies() {
        assert_eq!(
            format_http_error(502, "Bad gateway", None, true),
            "502 Bad gateway"
        );
        assert_eq!(
            format_http_error(502, "", None, true),
            "502 status code (no body)"
        );
        assert_eq!(
            format_http_error(404, r#"{"detail":"x"}"#, None, true),
            "404 status code (no body)"
        );
        assert_eq!(
            format_http_error(400, r#"{"error":"boom"}"#, None, true),
            "400 \"boom\""
        );
        assert_eq!(
            format_http_error(503, "down", Some("OpenAI API error"), false),
            "OpenAI API error (503): 503 down"
        );
    }

    #[test]
    fn openrouter_raw_metadata_is_appended_once() {
        let body = r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"upstream said no"}}}"#;
        assert_eq!(
            format_http_error(400, body, None, true),
            "400: {\"message\":\"Provider returned error\",\"code\":400,\"metadata\":{\"raw\":\"upstream said no\"}}"
        );
        let mut t = "Provider returned error".to_owned();
        append_raw_metadata(
            &mut t,
            Some(&json!({"metadata":{"raw":"upstream said no"}})),
        );
        assert_eq!(t, "Provider returned error\nupstream said no");
    }

    #[test]
    fn long_bodies_are_truncated() {
        let long = "x".repeat(4010);
        let body = format!(r#"{{"error":{{"message":"m","detail":"{long}"}}}}"#);
        let text = format_http_error(500, &body, None, false);
        assert!(text.starts_with("500: {\"message\":\"m\""));
        assert!(text.ends_with("... [truncated 37 chars]"), "{text}");
    }

    #[test]
    fn data_decoding_follows_the_sdk() {
        assert_eq!(decode_data("[DONE]"), Ok(SseData::Done));
        assert_eq!(decode_data(""), Ok(SseData::Skip));
        // A lone surrogate escape is dropped, a pair kept.
        assert_eq!(
            decode_data(r#"{"c":"a\ud83db","d":"\ud83d\ude0a"}"#),
            Ok(SseData::Json(serde_json::json!({"c": "ab", "d": "😊"})))
        );
        assert_eq!(
            decode_data("{\"a\":"),
            Err(("Unexpected end of JSON input".to_owned(), None))
        );
        let err = decode_data(r#"{"error":{"message":"Overloaded"}}"#).unwrap_err();
        assert_eq!(err.0, "Overloaded");
        let err = decode_data(r#"{"error":{"code":5}}"#).unwrap_err();
        assert_eq!(err.0, "{\"code\":5}");
        assert!(matches!(
            decode_data(r#"{"error":null,"x":1}"#),
            Ok(SseData::Json(_))
        ));
        assert_eq!(
            decode_data("{} x").unwrap_err().0,
            "Unexpected non-whitespace character after JSON at position 3 (line 1 column 4)"
        );
        assert_eq!(
            decode_data("{bad").unwrap_err().0,
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)"
        );
        assert_eq!(
            decode_data("nope").unwrap_err().0,
            "Unexpected token 'o', \"nope\" is not valid JSON"
        );
    }

    #[test]
    fn short_hash_matches_pi() {
        // Values computed with pi 0.85.1's shortHash.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("abc"), "y0biex7f9bbh");
        assert_eq!(short_hash("call_x|fc_é😀"), "1ou3nc1elxzkp");
    }

    #[test]
    fn prompt_cache_key_is_clamped_to_64_code_points() {
        let k = "é".repeat(70);
        assert_eq!(
            clamp_prompt_cache_key(Some(&k)).unwrap().chars().count(),
            64
        );
        assert_eq!(clamp_prompt_cache_key(None), None);
    }
}
