//! Anthropic compatibility flags read from `model.compat`.
//!
//! Mirrors pi-ai 0.85.1 `getAnthropicCompat` and `compat.allowedFallbackModels`.

use serde::Deserialize;

use crate::types::{Model, ModelCost};

/// A model the server may fall back to, with its own prices.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(super) struct FallbackModel {
    /// Provider id the fallback belongs to.
    #[serde(default)]
    pub provider: String,
    /// Server model id.
    #[serde(default)]
    pub model: String,
    /// Prices used when the server reports this model.
    #[serde(default)]
    pub cost: Option<ModelCost>,
}

/// The flags with pi's defaults.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Compat {
    /// `eager_input_streaming: true` on tools (default true).
    pub supports_eager_tool_input_streaming: bool,
    /// `ttl: "1h"` for long retention (default true).
    pub supports_long_cache_retention: bool,
    /// `x-session-affinity: <sessionId>` (default false).
    pub send_session_affinity_headers: bool,
    /// Cache marker on the last tool (default true).
    pub supports_cache_control_on_tools: bool,
    /// `temperature` allowed (default true).
    pub supports_temperature: bool,
    /// Unsigned thinking replayed as `thinking` with `signature: ""` (default false).
    pub allow_empty_signature: bool,
    /// Tools may be sent with `strict: true` (default false).
    pub supports_strict_tools: bool,
    /// Fallback models the server may switch to.
    pub allowed_fallback_models: Vec<FallbackModel>,
}

impl Compat {
    /// Reads the flags of `model`.
    pub(crate) fn of(model: &Model) -> Self {
        let flag = |key: &str, default: bool| model.compat_bool(key).unwrap_or(default);
        let allowed_fallback_models = model
            .compat_value("allowedFallbackModels")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        Compat {
            supports_eager_tool_input_streaming: flag("supportsEagerToolInputStreaming", true),
            supports_long_cache_retention: flag("supportsLongCacheRetention", true),
            send_session_affinity_headers: flag("sendSessionAffinityHeaders", false),
            supports_cache_control_on_tools: flag("supportsCacheControlOnTools", true),
            supports_temperature: flag("supportsTemperature", true),
            allow_empty_signature: flag("allowEmptySignature", false),
            supports_strict_tools: flag("supportsStrictTools", false),
            allowed_fallback_models,
        }
    }

    /// The prices of a fallback `server_model` of `provider`, if allowed.
    pub(crate) fn fallback_cost(&self, provider: &str, server_model: &str) -> Option<&ModelCost> {
        self.allowed_fallback_models
            .iter()
            .find(|f| f.provider == provider && f.model == server_model)
            .and_then(|f| f.cost.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let mut m = Model::default();
        let c = Compat::of(&m);
        assert!(c.supports_eager_tool_input_streaming && c.supports_cache_control_on_tools);
        assert!(!c.allow_empty_signature && c.allowed_fallback_models.is_empty());
        m.compat = Some(
            serde_json::from_str(
                r#"{"supportsEagerToolInputStreaming": false, "allowedFallbackModels":
                [{"provider":"anthropic","model":"m2","cost":{"input":1,"output":2}}]}"#,
            )
            .unwrap(),
        );
        let c = Compat::of(&m);
        assert!(!c.supports_eager_tool_input_streaming);
        assert_eq!(
            c.fallback_cost("anthropic", "m2").map(|c| c.output),
            Some(2.0)
        );
        assert!(c.fallback_cost("other", "m2").is_none());
    }
}
