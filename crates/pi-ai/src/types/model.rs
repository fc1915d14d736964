//! Models, thinking levels and their clamping.
//!
//! Mirrors pi-ai 0.85.1 `Model`, `ThinkingLevel`, `getSupportedThinkingLevels`,
//! `clampThinkingLevel` and `modelsAreEqual`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Wire-protocol ids (open strings in pi; these are the ones pi-rs implements).
pub mod api {
    /// Anthropic Messages.
    pub const ANTHROPIC_MESSAGES: &str = "anthropic-messages";
    /// OpenAI Chat Completions and compatible servers.
    pub const OPENAI_COMPLETIONS: &str = "openai-completions";
    /// OpenAI Responses.
    pub const OPENAI_RESPONSES: &str = "openai-responses";
    /// Google Generative AI (Gemini).
    pub const GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";
    /// Google Vertex AI (Gemini).
    pub const GOOGLE_VERTEX: &str = "google-vertex";
    /// The Responses protocol on Azure OpenAI.
    pub const AZURE_OPENAI_RESPONSES: &str = "azure-openai-responses";
    /// Mistral's chat completions endpoint.
    pub const MISTRAL_CONVERSATIONS: &str = "mistral-conversations";
    /// Amazon Bedrock ConverseStream.
    pub const BEDROCK_CONVERSE_STREAM: &str = "bedrock-converse-stream";
}

/// A reasoning effort level: `minimal|low|medium|high|xhigh|max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// `minimal`
    Minimal,
    /// `low`
    Low,
    /// `medium`
    Medium,
    /// `high`
    High,
    /// `xhigh`
    Xhigh,
    /// `max`
    Max,
}

/// A model-level thinking setting: `off` or a [`ThinkingLevel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelThinkingLevel {
    /// `off`
    Off,
    /// `minimal`
    Minimal,
    /// `low`
    Low,
    /// `medium`
    Medium,
    /// `high`
    High,
    /// `xhigh`
    Xhigh,
    /// `max`
    Max,
}

impl ModelThinkingLevel {
    /// All levels in ascending order.
    pub const ALL: [ModelThinkingLevel; 7] = [
        ModelThinkingLevel::Off,
        ModelThinkingLevel::Minimal,
        ModelThinkingLevel::Low,
        ModelThinkingLevel::Medium,
        ModelThinkingLevel::High,
        ModelThinkingLevel::Xhigh,
        ModelThinkingLevel::Max,
    ];

    /// pi's spelling (`off`, `minimal`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ModelThinkingLevel::Off => "off",
            ModelThinkingLevel::Minimal => "minimal",
            ModelThinkingLevel::Low => "low",
            ModelThinkingLevel::Medium => "medium",
            ModelThinkingLevel::High => "high",
            ModelThinkingLevel::Xhigh => "xhigh",
            ModelThinkingLevel::Max => "max",
        }
    }

    /// Parses pi's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// The reasoning level, `None` for `off`.
    pub fn reasoning(self) -> Option<ThinkingLevel> {
        match self {
            ModelThinkingLevel::Off => None,
            ModelThinkingLevel::Minimal => Some(ThinkingLevel::Minimal),
            ModelThinkingLevel::Low => Some(ThinkingLevel::Low),
            ModelThinkingLevel::Medium => Some(ThinkingLevel::Medium),
            ModelThinkingLevel::High => Some(ThinkingLevel::High),
            ModelThinkingLevel::Xhigh => Some(ThinkingLevel::Xhigh),
            ModelThinkingLevel::Max => Some(ThinkingLevel::Max),
        }
    }
}

impl From<ThinkingLevel> for ModelThinkingLevel {
    fn from(l: ThinkingLevel) -> Self {
        match l {
            ThinkingLevel::Minimal => ModelThinkingLevel::Minimal,
            ThinkingLevel::Low => ModelThinkingLevel::Low,
            ThinkingLevel::Medium => ModelThinkingLevel::Medium,
            ThinkingLevel::High => ModelThinkingLevel::High,
            ThinkingLevel::Xhigh => ModelThinkingLevel::Xhigh,
            ThinkingLevel::Max => ModelThinkingLevel::Max,
        }
    }
}

/// Input modality a model accepts: `text` or `image`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// `text`
    Text,
    /// `image`
    Image,
}

/// A price tier that replaces the base prices above a prompt size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostTier {
    /// The tier applies when `input + cacheRead + cacheWrite` is strictly above this.
    pub input_tokens_above: f64,
    /// Dollars per million input tokens.
    pub input: f64,
    /// Dollars per million output tokens.
    pub output: f64,
    /// Dollars per million cache-read tokens.
    #[serde(default)]
    pub cache_read: f64,
    /// Dollars per million cache-write tokens.
    #[serde(default)]
    pub cache_write: f64,
}

/// Prices in dollars per million tokens: `{input, output, cacheRead, cacheWrite, tiers?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// Input price.
    #[serde(default)]
    pub input: f64,
    /// Output price.
    #[serde(default)]
    pub output: f64,
    /// Cache-read price.
    #[serde(default)]
    pub cache_read: f64,
    /// Cache-write price.
    #[serde(default)]
    pub cache_write: f64,
    /// Optional tiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<CostTier>>,
}

/// A model: identity, endpoint, capabilities and prices.
///
/// `compat` is kept as raw JSON; each wire API reads the flags it knows
/// (see `providers::*::Compat`).
///
/// `Debug` prints header names only: configured header values may carry credentials.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Model id sent to the provider.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Wire API id (see [`api`]).
    pub api: String,
    /// Provider id (`anthropic`, `openai`, a custom provider, …).
    pub provider: String,
    /// Base URL of the API.
    pub base_url: String,
    /// Whether the model reasons.
    #[serde(default)]
    pub reasoning: bool,
    /// Accepted input kinds.
    #[serde(default = "default_input")]
    pub input: Vec<InputKind>,
    /// Prices.
    #[serde(default)]
    pub cost: ModelCost,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window: u64,
    /// Output cap in tokens.
    #[serde(default)]
    pub max_tokens: u64,
    /// Level → native string, `null` = unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<Map<String, Value>>,
    /// Extra sampling parameters written last into OpenAI-compatible bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params: Option<Map<String, Value>>,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// Per-API compatibility flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Map<String, Value>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("api", &self.api)
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("reasoning", &self.reasoning)
            .field("input", &self.input)
            .field("cost", &self.cost)
            .field("context_window", &self.context_window)
            .field("max_tokens", &self.max_tokens)
            .field("thinking_level_map", &self.thinking_level_map)
            .field("sampling_params", &self.sampling_params)
            // Names only: values may be credentials (no secret may reach a log).
            .field(
                "headers",
                &self.headers.as_ref().map(|h| h.keys().collect::<Vec<_>>()),
            )
            .field("compat", &self.compat)
            .finish()
    }
}

fn default_input() -> Vec<InputKind> {
    vec![InputKind::Text]
}

impl Model {
    /// Whether the model accepts images.
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// A compat flag as a bool, if set.
    pub fn compat_bool(&self, key: &str) -> Option<bool> {
        self.compat.as_ref()?.get(key)?.as_bool()
    }

    /// A compat value, if set.
    pub fn compat_value(&self, key: &str) -> Option<&Value> {
        self.compat.as_ref()?.get(key)
    }

    /// The thinking-level map entry: `None` unmapped, `Some(None)` explicitly unsupported,
    /// `Some(Some(s))` mapped to a native string.
    pub fn thinking_map_entry(&self, level: ModelThinkingLevel) -> Option<Option<&str>> {
        let v = self.thinking_level_map.as_ref()?.get(level.as_str())?;
        Some(v.as_str())
    }

    /// Mirrors `getSupportedThinkingLevels`: non-reasoning → `[off]`; otherwise every level
    /// whose map entry isn't `null`, with `xhigh`/`max` only when explicitly mapped.
    pub fn supported_thinking_levels(&self) -> Vec<ModelThinkingLevel> {
        if !self.reasoning {
            return vec![ModelThinkingLevel::Off];
        }
        ModelThinkingLevel::ALL
            .into_iter()
            .filter(|&l| match self.thinking_map_entry(l) {
                Some(None) => false,
                Some(Some(_)) => true,
                None => !matches!(l, ModelThinkingLevel::Xhigh | ModelThinkingLevel::Max),
            })
            .collect()
    }

    /// Mirrors `clampThinkingLevel`: the level if supported, else the nearest supported
    /// level searching upward, then downward.
    pub fn clamp_thinking_level(&self, level: ModelThinkingLevel) -> ModelThinkingLevel {
        let supported = self.supported_thinking_levels();
        if supported.contains(&level) {
            return level;
        }
        let idx = ModelThinkingLevel::ALL
            .iter()
            .position(|&l| l == level)
            .unwrap_or(0);
        if let Some(up) = ModelThinkingLevel::ALL[idx..]
            .iter()
            .find(|l| supported.contains(l))
        {
            return *up;
        }
        ModelThinkingLevel::ALL[..idx]
            .iter()
            .rev()
            .find(|l| supported.contains(l))
            .copied()
            .unwrap_or(ModelThinkingLevel::Off)
    }

    /// Mirrors `modelsAreEqual`: same `id` and `provider`.
    pub fn same_as(&self, other: &Model) -> bool {
        self.id == other.id && self.provider == other.provider
    }
}
