//! The `google-vertex` wire API: Gemini on Vertex AI (`streamGenerateContent`, SSE), with an
//! API key ("express mode") or Application Default Credentials.
//!
//! Mirrors pi-ai 0.85.1 `api/google-vertex.js` as `@google/genai` (Vertex mode) puts it on the
//! wire; the body and the stream mapping are the `google-generative-ai` ones.
//!
//! - Key: `options.api_key`, else `GOOGLE_CLOUD_API_KEY`, trimmed; empty,
//!   `gcp-vertex-credentials` or a `<placeholder>` (such as `<authenticated>`) means ADC.
//! - With a key: `POST https://aiplatform.googleapis.com/v1/publishers/google/models/<id>:streamGenerateContent?alt=sse`
//!   and `x-goog-api-key`.
//! - With ADC: project `GOOGLE_CLOUD_PROJECT` or `GCLOUD_PROJECT`, location
//!   `GOOGLE_CLOUD_LOCATION` (each required, with pi's texts);
//!   `https://<location>-aiplatform.googleapis.com` (`global`: no prefix)
//!   `/v1/projects/<p>/locations/<l>/publishers/google/models/<id>:…`, and
//!   `Authorization: Bearer <token>` from [`adc`] unless the caller sent an `Authorization`
//!   header.
//! - A `model.baseUrl` without `{location}` replaces the host and drops the project/location
//!   part: `<baseUrl>[/v1]/publishers/google/models/<id>:…` (no `/v1` when the base already
//!   names a version).

pub mod adc;

use std::sync::Arc;

use serde_json::Value;

use super::google::mapper::GoogleMapper;
use super::google::request::build_body;
use super::google::{Flavor, sdk_error_message};
use super::provider_env::ProviderEnv;
use super::request_headers::{HeaderList, pi_user_agent};
use super::{AuthFuture, OutgoingRequest, StreamError, StreamMapper, WireApi, WireRequest};
use crate::event::PartialMessage;
use crate::types::{Context, Model, StreamOptions, api};

/// The REST API version in Vertex paths.
const API_VERSION: &str = "v1";
/// The key value pi treats as "use ADC".
const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// The `google-vertex` [`WireApi`]. Clones share one token cache.
#[derive(Clone, Debug, Default)]
pub struct GoogleVertex {
    env: ProviderEnv,
    tokens: Arc<adc::TokenCache>,
}

impl GoogleVertex {
    /// The API reading its settings and credentials from `env` instead of the process
    /// environment.
    pub fn with_env(env: ProviderEnv) -> Self {
        GoogleVertex {
            env,
            tokens: Arc::default(),
        }
    }
}

/// The `google-vertex` wire API as a shared trait object.
pub fn google_vertex() -> Arc<dyn WireApi> {
    Arc::new(GoogleVertex::default())
}

/// pi's `resolveApiKey`: the trimmed key, or `None` for ADC.
pub fn resolve_api_key(api_key: &str) -> Option<&str> {
    let key = api_key.trim();
    let placeholder = key.len() > 2
        && key.starts_with('<')
        && key.ends_with('>')
        && !key[1..key.len() - 1].contains('>');
    (!key.is_empty() && key != CREDENTIALS_MARKER && !placeholder).then_some(key)
}

/// pi's `resolveCustomBaseUrl`: the trimmed base unless empty or templated.
fn custom_base(base_url: &str) -> Option<&str> {
    let base = base_url.trim();
    (!base.is_empty() && !base.contains("{location}")).then_some(base)
}

/// A path segment `v<digits>[beta[<digits>]]`.
fn names_api_version(base: &str) -> bool {
    let path = reqwest::Url::parse(base)
        .map(|u| u.path().to_owned())
        .unwrap_or_else(|_| base.to_owned());
    path.split('/').any(|part| {
        let Some(rest) = part.strip_prefix('v') else {
            return false;
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let tail = &rest[digits..];
        digits > 0
            && (tail.is_empty()
                || tail
                    .strip_prefix("beta")
                    .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit())))
    })
}

/// `publishers/google/models/<id>` (ids that already name a publisher are kept).
fn model_path(id: &str) -> String {
    if id.starts_with("publishers/") {
        id.to_owned()
    } else {
        format!("publishers/google/models/{id}")
    }
}

impl GoogleVertex {
    /// pi's `resolveProject` and `resolveLocation` (ADC only).
    fn project_location(&self) -> Result<(String, String), StreamError> {
        let project = self
            .env
            .get("GOOGLE_CLOUD_PROJECT")
            .or_else(|| self.env.get("GCLOUD_PROJECT"))
            .ok_or_else(|| {
                StreamError::Config("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.".to_owned())
            })?;
        let location = self.env.get("GOOGLE_CLOUD_LOCATION").ok_or_else(|| {
            StreamError::Config(
                "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."
                    .to_owned(),
            )
        })?;
        Ok((project, location))
    }
}

/// The endpoint; `scope` is the ADC project and location (`None` with a key).
fn url(model: &Model, scope: Option<&(String, String)>) -> String {
    let method = format!("{}:streamGenerateContent?alt=sse", model_path(&model.id));
    if let Some(base) = custom_base(&model.base_url) {
        let base = base.trim_end_matches('/');
        return if names_api_version(base) {
            format!("{base}/{method}")
        } else {
            format!("{base}/{API_VERSION}/{method}")
        };
    }
    let Some((project, location)) = scope else {
        return format!("https://aiplatform.googleapis.com/{API_VERSION}/{method}");
    };
    let host = if location == "global" {
        "aiplatform.googleapis.com".to_owned()
    } else {
        format!("{location}-aiplatform.googleapis.com")
    };
    format!("https://{host}/{API_VERSION}/projects/{project}/locations/{location}/{method}")
}

impl WireApi for GoogleVertex {
    fn api(&self) -> &'static str {
        api::GOOGLE_VERTEX
    }

    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        let key = resolve_api_key(api_key);
        // pi resolves project and location for every ADC request, custom base or not.
        let scope = match key {
            Some(_) => None,
            None => Some(self.project_location()?),
        };
        let url = url(model, scope.as_ref());
        let body = build_body(model, context, options, Flavor::Vertex)?;
        let mut h = HeaderList::new();
        h.set("content-type", "application/json");
        if let Some(key) = key {
            h.set("x-goog-api-key", key);
        }
        h.set("User-Agent", pi_user_agent());
        h.apply_json(model.headers.as_ref());
        h.apply_options(&options.headers);
        Ok(WireRequest {
            url,
            headers: h.into_vec(),
            body: Value::Object(body),
        })
    }

    /// ADC: `Authorization: Bearer <token>` unless the request already carries one.
    fn authorize(&self, api_key: &str, request: &OutgoingRequest) -> AuthFuture {
        let has_auth = request
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        if resolve_api_key(api_key).is_some() || has_auth {
            return Box::pin(async { Ok(Vec::new()) });
        }
        let env = self.env.clone();
        let tokens = self.tokens.clone();
        Box::pin(async move {
            let client = super::driver::http_client()
                .ok_or_else(|| StreamError::Transport("fetch failed".to_owned()))?;
            let token = tokens
                .access_token(&env, client)
                .await
                .map_err(|e| StreamError::Credentials(e.to_string()))?;
            Ok(vec![(
                "authorization".to_owned(),
                format!("Bearer {token}"),
            )])
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(GoogleMapper::new(model, partial, Flavor::Vertex))
    }

    /// `@google/genai`'s `ApiError` message, as for `google-generative-ai`.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        sdk_error_message(status, body)
    }

    fn abort_text(&self) -> &'static str {
        "This operation was aborted"
    }

    /// `@google/genai` calls `fetch`: undici's `fetch failed`.
    fn connection_error_text(&self) -> &'static str {
        "fetch failed"
    }

    /// `@google/genai` sets no request timeout of its own.
    fn request_timeout_text(&self) -> Option<&'static str> {
        None
    }

    /// `@google/genai` `processStreamResponse`: text left after the last event delimiter.
    fn unterminated_event_text(&self) -> Option<&'static str> {
        Some("Incomplete JSON segment at the end")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_placeholders() {
        assert_eq!(resolve_api_key(" k "), Some("k"));
        for adc in ["", "  ", "gcp-vertex-credentials", "<authenticated>", "<x>"] {
            assert_eq!(resolve_api_key(adc), None, "{adc}");
        }
        assert_eq!(resolve_api_key("<a>b>"), Some("<a>b>"));
    }

    #[test]
    fn urls() {
        let env = ProviderEnv::fixed([
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "us-east5"),
        ]);
        let scope = GoogleVertex::with_env(env).project_location().unwrap();
        let adc = Some(&scope);
        let m = |base: &str| Model {
            id: "gemini-2.5-pro".into(),
            base_url: base.into(),
            ..Default::default()
        };
        let t = "https://{location}-aiplatform.googleapis.com";
        assert_eq!(
            url(&m(t), adc),
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&m(t), None),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&m("https://proxy.example/v1beta1/"), adc),
            "https://proxy.example/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&m("https://proxy.example/vertex"), None),
            "https://proxy.example/vertex/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        let bare = GoogleVertex::with_env(ProviderEnv::fixed([("GCLOUD_PROJECT", "p")]));
        assert_eq!(
            bare.project_location().unwrap_err().to_string(),
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."
        );
        let none = GoogleVertex::with_env(ProviderEnv::fixed::<&str, &str>([]));
        assert!(
            none.project_location()
                .unwrap_err()
                .to_string()
                .starts_with("Vertex AI requires a project ID.")
        );
        assert!(!names_api_version("https://h/vertex") && names_api_version("https://h/a/v2/"));
    }
}
