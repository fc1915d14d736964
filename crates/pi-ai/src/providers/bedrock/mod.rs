//! The `bedrock-converse-stream` wire API: Amazon Bedrock's ConverseStream over the AWS
//! binary event stream, signed with SigV4 or sent with a Bedrock API key.
//!
//! Mirrors pi-ai 0.85.1 `api/bedrock-converse-stream.js` without the AWS SDK:
//! `POST <endpoint>/model/<model id, URI-encoded>/converse-stream` with the body pi's SDK
//! call serializes (`request`), authenticated when sent (`authorize`: a Bearer key or a
//! SigV4 signature over the final bytes, `credentials` and `sign`), the binary body decoded
//! by `event_stream` and mapped by `mapper`; failures worded as pi words them (`errors`).
//!
//! Caller headers are added before signing, except `host`, `authorization` and `x-amz-*`,
//! which belong to the signature (pi's `addCustomHeadersMiddleware`).
//!
//! Differences from pi: the AWS SDK's own retries (three attempts) are not made — pi-rs's
//! retry setting applies as for every API; credentials never come from an instance-metadata
//! or container service, SSO or `credential_process` (see `credentials`).

mod credentials;
mod diagnostics;
mod errors;
pub mod event_stream;
pub mod mapper;
mod request;
mod sign;

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

pub use credentials::{
    AUTHENTICATED_MARKER, AwsKeys, BedrockAuth, Target, resolve_auth, resolve_target,
};
pub use event_stream::EventStreamDecoder;
pub use mapper::BedrockMapper;
pub use request::{is_anthropic_claude, normalize_tool_call_id, supports_prompt_caching};
pub use sign::{SIGNING_NAME, sign_request};

use super::provider_env::ProviderEnv;
use super::request_headers::pi_user_agent;
use super::{
    AuthFuture, BodyDecoder, OutgoingRequest, RequestFailure, StreamError, StreamMapper, WireApi,
    WireRequest,
};
use crate::event::PartialMessage;
use crate::types::{Context, Diagnostic, Model, StreamOptions, api};

/// The `bedrock-converse-stream` [`WireApi`], reading its settings from `env`.
#[derive(Clone, Debug, Default)]
pub struct BedrockConverseStream {
    env: ProviderEnv,
}

impl BedrockConverseStream {
    /// The wire API reading the process environment (what [`bedrock_converse_stream`]
    /// returns), usable in constants.
    pub const fn new() -> Self {
        BedrockConverseStream {
            env: ProviderEnv::Process,
        }
    }

    /// The wire API with settings (credentials, region, cache flags) from `env`.
    pub fn with_env(env: ProviderEnv) -> Self {
        BedrockConverseStream { env }
    }
}

/// The `bedrock-converse-stream` wire API (process environment) as a shared trait object.
pub fn bedrock_converse_stream() -> Arc<dyn WireApi> {
    Arc::new(BedrockConverseStream::default())
}

/// A URI path label as the SDK encodes it: everything but `A-Z a-z 0-9 - _ . ~`
/// percent-encoded (so `:` and `/` of model ids and ARNs too).
pub fn encode_label(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for byte in label.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A random version-4 UUID for `amz-sdk-invocation-id`; `None` without randomness.
fn invocation_id() -> Option<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// Headers that belong to the signature and are never taken from the caller.
fn is_reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("x-amz-") || lower == "authorization" || lower == "host"
}

impl WireApi for BedrockConverseStream {
    fn api(&self) -> &'static str {
        api::BEDROCK_CONVERSE_STREAM
    }

    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        _api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        let target = resolve_target(&model.id, &model.base_url, &self.env)?;
        let url = format!(
            "{}/model/{}/converse-stream",
            target.endpoint,
            encode_label(&model.id)
        );
        reqwest::Url::parse(&url).map_err(|_| StreamError::InvalidUrl)?;
        let body = request::build_body(model, context, options, &self.env)?;
        let mut headers: Vec<(String, String)> = vec![
            ("content-type".into(), "application/json".into()),
            ("x-amz-user-agent".into(), pi_user_agent().to_owned()),
            ("user-agent".into(), pi_user_agent().to_owned()),
        ];
        if let Some(id) = invocation_id() {
            headers.push(("amz-sdk-invocation-id".into(), id));
        }
        headers.push(("amz-sdk-request".into(), "attempt=1; max=1".into()));
        for (name, value) in &options.headers {
            if is_reserved(name) {
                continue;
            }
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
            if let Some(value) = value {
                headers.push((name.to_ascii_lowercase(), value.clone()));
            }
        }
        Ok(WireRequest {
            url,
            headers,
            body: Value::Object(body),
        })
    }

    fn new_decoder(&self) -> Box<dyn BodyDecoder> {
        Box::new(EventStreamDecoder::new())
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(BedrockMapper::new(model, partial))
    }

    /// A Bearer key, or the SigV4 signature of the final request (the region is taken from
    /// the signed host's resolution in `build_request`, recomputed here).
    fn authorize(&self, api_key: &str, request: &OutgoingRequest) -> AuthFuture {
        let env = self.env.clone();
        let api_key = api_key.to_owned();
        let request = request.clone();
        Box::pin(async move {
            match resolve_auth(&api_key, &env)? {
                BedrockAuth::Bearer(token) => {
                    Ok(vec![("authorization".into(), format!("Bearer {token}"))])
                }
                BedrockAuth::SigV4(keys) => {
                    let region = signing_region(&request.url, &env)?;
                    let mut headers = request.headers.clone();
                    let length = ("content-length".to_owned(), request.body.len().to_string());
                    headers.push(length.clone());
                    let mut added = sign_request(
                        &keys,
                        &region,
                        &request.url,
                        &headers,
                        &request.body,
                        SystemTime::now(),
                    )?;
                    added.insert(0, length);
                    Ok(added)
                }
            }
        })
    }

    /// `<exception prefix>: <message>`, the exception named by `x-amzn-errortype`.
    fn format_http_error_with_headers(
        &self,
        status: u16,
        headers: &reqwest::header::HeaderMap,
        body: &str,
    ) -> String {
        let error_type = headers
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok());
        errors::http_error_text(status, error_type, body)
    }

    fn format_http_error(&self, status: u16, body: &str) -> String {
        errors::http_error_text(status, None, body)
    }

    /// pi's `bedrock_response_failure`: the status of a failed response, the error code
    /// (an exception name ending in `Exception`) and the request id (`x-amzn-requestid`, of
    /// the failed response or the one streaming), each only when known.
    fn failure_diagnostic(&self, failure: &RequestFailure<'_>) -> Option<Diagnostic> {
        diagnostics::response_failure(failure)
    }

    /// pi's check after the stream loop.
    fn abort_text(&self) -> &'static str {
        "Request was aborted"
    }

    /// The SDK sets no request timeout of its own.
    fn request_timeout_text(&self) -> Option<&'static str> {
        None
    }
}

/// The signing region for a request to `url`: recovered from the model id in the path (an
/// ARN's region) and the environment, as [`resolve_target`] chose it.
fn signing_region(url: &str, env: &ProviderEnv) -> Result<String, StreamError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| StreamError::InvalidUrl)?;
    let model_id = parsed
        .path_segments()
        .and_then(|mut s| {
            s.by_ref().find(|p| *p == "model")?;
            s.next()
        })
        .map(|label| {
            url::form_urlencoded::parse(format!("x={}", label.replace('+', "%2B")).as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let base = parsed.origin().ascii_serialization();
    Ok(resolve_target(&model_id, &base, env)?.region)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_encoded_as_the_sdk_does() {
        assert_eq!(
            encode_label("anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "anthropic.claude-sonnet-4-5-20250929-v1%3A0"
        );
        assert_eq!(
            encode_label("arn:aws:bedrock:us-east-1:1:application-inference-profile/ab c"),
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fab%20c"
        );
    }

    #[test]
    fn the_signing_region_follows_the_target() {
        let env = ProviderEnv::fixed([("AWS_REGION", "eu-west-1")]);
        let url = "https://bedrock-runtime.eu-west-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aap-south-1%3A1%3Ax/converse-stream";
        assert_eq!(signing_region(url, &env).unwrap(), "ap-south-1");
        let url = "http://127.0.0.1:9/model/m/converse-stream";
        assert_eq!(signing_region(url, &env).unwrap(), "eu-west-1");
        assert_eq!(
            signing_region(url, &ProviderEnv::fixed::<&str, &str>([])).unwrap(),
            "us-east-1"
        );
    }
}
