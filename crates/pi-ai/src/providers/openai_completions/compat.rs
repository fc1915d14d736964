//! Chat Completions compatibility flags: detected defaults from provider id / base URL, then
//! every explicit `model.compat` field wins.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `detectCompat` / `getCompat`.

use serde_json::{Map, Value};

use crate::types::Model;

/// Reasoning request dialect (`compat.thinkingFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort` (default).
    OpenAi,
    /// `reasoning: {effort}`.
    OpenRouter,
    /// `thinking: {type}` + `reasoning_effort`.
    DeepSeek,
    /// `reasoning: {enabled}` + `reasoning_effort`.
    Together,
    /// `chat_template_args` + `reasoning_effort`.
    Baseten,
    /// `thinking: {type, clear_thinking}` + `reasoning_effort`.
    Zai,
    /// `enable_thinking`.
    Qwen,
    /// `chat_template_kwargs` from `chatTemplateKwargs`.
    ChatTemplate,
    /// `chat_template_kwargs: {enable_thinking, preserve_thinking}`.
    QwenChatTemplate,
    /// `thinking: <string>`.
    StringThinking,
    /// `reasoning: {effort}` for mapped efforts only.
    AntLing,
}

impl ThinkingFormat {
    /// Parses pi's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "openai" => Self::OpenAi,
            "openrouter" => Self::OpenRouter,
            "deepseek" => Self::DeepSeek,
            "together" => Self::Together,
            "baseten" => Self::Baseten,
            "zai" => Self::Zai,
            "qwen" => Self::Qwen,
            "chat-template" => Self::ChatTemplate,
            "qwen-chat-template" => Self::QwenChatTemplate,
            "string-thinking" => Self::StringThinking,
            "ant-ling" => Self::AntLing,
            _ => return None,
        })
    }
}

/// Session-affinity header style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionAffinityFormat {
    /// `session_id` + `x-client-request-id` + `x-session-affinity`.
    OpenAi,
    /// `x-client-request-id` + `x-session-affinity`.
    OpenAiNoSession,
    /// `x-session-id`.
    OpenRouter,
}

/// Resolved Chat Completions compat flags (every field decided).
#[derive(Clone, Debug, PartialEq)]
pub struct Compat {
    /// Send `store: false`.
    pub supports_store: bool,
    /// System prompt as `developer` for reasoning models.
    pub supports_developer_role: bool,
    /// `reasoning_effort` may be sent.
    pub supports_reasoning_effort: bool,
    /// Send `stream_options: {include_usage: true}`.
    pub supports_usage_in_streaming: bool,
    /// The stream carries `finish_reason` (else stop/toolUse is inferred).
    pub supports_finish_reason: bool,
    /// `max_tokens` instead of `max_completion_tokens`.
    pub use_max_tokens_field: bool,
    /// `name` on tool messages.
    pub requires_tool_result_name: bool,
    /// Synthetic assistant between tool results and a user message.
    pub requires_assistant_after_tool_result: bool,
    /// Replayed thinking as a leading text part.
    pub requires_thinking_as_text: bool,
    /// `reasoning_content: ""` on replayed assistant messages.
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// Reasoning dialect.
    pub thinking_format: ThinkingFormat,
    /// `chatTemplateKwargs`.
    pub chat_template_kwargs: Map<String, Value>,
    /// `chatTemplateArgs`.
    pub chat_template_args: Map<String, Value>,
    /// `tool_stream: true` (z.ai).
    pub zai_tool_stream: bool,
    /// Top-level reasoning budget field, if any.
    pub thinking_token_budget_field: Option<String>,
    /// `strict` key on function tools.
    pub supports_strict_mode: bool,
    /// Anthropic-style `cache_control` markers.
    pub cache_control_anthropic: bool,
    /// Send session-affinity headers.
    pub send_session_affinity_headers: bool,
    /// Session-affinity header style.
    pub session_affinity_format: SessionAffinityFormat,
    /// `prompt_cache_retention: "24h"` / 1h TTL supported.
    pub supports_long_cache_retention: bool,
    /// vLLM `priority`.
    pub vllm_priority: Option<Value>,
}

impl Compat {
    /// Detected defaults, then explicit `model.compat` fields.
    pub fn resolve(model: &Model) -> Compat {
        let mut c = detect(model);
        let b = |k: &str| model.compat_bool(k);
        let s = |k: &str| model.compat_value(k).and_then(Value::as_str);
        let m = |k: &str| model.compat_value(k).and_then(Value::as_object).cloned();
        macro_rules! flag {
            ($field:ident, $key:literal) => {
                if let Some(v) = b($key) {
                    c.$field = v;
                }
            };
        }
        flag!(supports_store, "supportsStore");
        flag!(supports_developer_role, "supportsDeveloperRole");
        flag!(supports_reasoning_effort, "supportsReasoningEffort");
        flag!(supports_usage_in_streaming, "supportsUsageInStreaming");
        flag!(supports_finish_reason, "supportsFinishReason");
        flag!(requires_tool_result_name, "requiresToolResultName");
        flag!(
            requires_assistant_after_tool_result,
            "requiresAssistantAfterToolResult"
        );
        flag!(requires_thinking_as_text, "requiresThinkingAsText");
        flag!(
            requires_reasoning_content_on_assistant_messages,
            "requiresReasoningContentOnAssistantMessages"
        );
        flag!(zai_tool_stream, "zaiToolStream");
        flag!(supports_strict_mode, "supportsStrictMode");
        flag!(send_session_affinity_headers, "sendSessionAffinityHeaders");
        flag!(supports_long_cache_retention, "supportsLongCacheRetention");
        if let Some(f) = s("maxTokensField") {
            c.use_max_tokens_field = f == "max_tokens";
        }
        if let Some(f) = s("thinkingFormat").and_then(ThinkingFormat::parse) {
            c.thinking_format = f;
        }
        if let Some(v) = m("chatTemplateKwargs") {
            c.chat_template_kwargs = v;
        }
        if let Some(v) = m("chatTemplateArgs") {
            c.chat_template_args = v;
        }
        if let Some(f) = s("thinkingTokenBudgetField") {
            c.thinking_token_budget_field = Some(f.to_owned());
        } else if b("supportsThinkingTokenBudget") == Some(true) {
            c.thinking_token_budget_field = Some("thinking_token_budget".to_owned());
        }
        if let Some(f) = s("cacheControlFormat") {
            c.cache_control_anthropic = f == "anthropic";
        }
        match s("sessionAffinityFormat") {
            Some("openai") => c.session_affinity_format = SessionAffinityFormat::OpenAi,
            Some("openai-nosession") => {
                c.session_affinity_format = SessionAffinityFormat::OpenAiNoSession
            }
            Some("openrouter") => c.session_affinity_format = SessionAffinityFormat::OpenRouter,
            _ => {}
        }
        c.vllm_priority = model
            .compat_value("vllmPriority")
            .filter(|v| !v.is_null())
            .cloned();
        c
    }
}

/// The host facts the detection table keys on.
struct Host {
    zai: bool,
    together: bool,
    moonshot: bool,
    openrouter: bool,
    cf_workers: bool,
    cf_gateway: bool,
    nvidia: bool,
    ant_ling: bool,
    deepseek: bool,
    grok: bool,
    non_standard: bool,
    chutes: bool,
}

fn host(model: &Model) -> Host {
    let p = model.provider.as_str();
    let url = model.base_url.as_str();
    let zai = p == "zai"
        || p == "zai-coding-cn"
        || url.contains("api.z.ai")
        || url.contains("open.bigmodel.cn");
    let together =
        p == "together" || url.contains("api.together.ai") || url.contains("api.together.xyz");
    let moonshot = p == "moonshotai" || p == "moonshotai-cn" || url.contains("api.moonshot.");
    let openrouter = p == "openrouter" || url.contains("openrouter.ai");
    let cf_workers = p == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
    let cf_gateway = p == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let nvidia = p == "nvidia" || url.contains("integrate.api.nvidia.com");
    let ant_ling = p == "ant-ling" || url.contains("api.ant-ling.com");
    let deepseek = p == "deepseek" || url.to_lowercase().contains("deepseek.com");
    let grok = p == "xai" || url.contains("api.x.ai");
    let chutes = url.contains("chutes.ai");
    let non_standard = nvidia
        || p == "cerebras"
        || url.contains("cerebras.ai")
        || grok
        || together
        || chutes
        || deepseek
        || zai
        || moonshot
        || p == "opencode"
        || url.contains("opencode.ai")
        || cf_workers
        || cf_gateway
        || ant_ling;
    Host {
        zai,
        together,
        moonshot,
        openrouter,
        cf_workers,
        cf_gateway,
        nvidia,
        ant_ling,
        deepseek,
        grok,
        non_standard,
        chutes,
    }
}

/// The detection table.
fn detect(model: &Model) -> Compat {
    let h = host(model);
    let use_max_tokens = h.chutes
        || h.deepseek
        || h.moonshot
        || h.cf_gateway
        || h.together
        || h.nvidia
        || h.ant_ling
        || h.zai;
    let openrouter_dev_model =
        h.openrouter && (model.id.starts_with("anthropic/") || model.id.starts_with("openai/"));
    let thinking_format = if h.deepseek {
        ThinkingFormat::DeepSeek
    } else if h.zai {
        ThinkingFormat::Zai
    } else if h.together {
        ThinkingFormat::Together
    } else if h.ant_ling {
        ThinkingFormat::AntLing
    } else if h.openrouter {
        ThinkingFormat::OpenRouter
    } else {
        ThinkingFormat::OpenAi
    };
    Compat {
        supports_store: !h.non_standard,
        supports_developer_role: openrouter_dev_model || (!h.non_standard && !h.openrouter),
        supports_reasoning_effort: !h.grok
            && !h.zai
            && !h.moonshot
            && !h.together
            && !h.cf_gateway
            && !h.nvidia
            && !h.ant_ling,
        supports_usage_in_streaming: true,
        supports_finish_reason: true,
        use_max_tokens_field: use_max_tokens,
        requires_tool_result_name: false,
        requires_assistant_after_tool_result: false,
        requires_thinking_as_text: false,
        requires_reasoning_content_on_assistant_messages: h.deepseek,
        thinking_format,
        chat_template_kwargs: Map::new(),
        chat_template_args: Map::new(),
        zai_tool_stream: false,
        thinking_token_budget_field: None,
        supports_strict_mode: !h.moonshot && !h.together && !h.cf_gateway && !h.nvidia,
        cache_control_anthropic: model.provider == "openrouter"
            && model.id.starts_with("anthropic/"),
        send_session_affinity_headers: false,
        session_affinity_format: if h.openrouter {
            SessionAffinityFormat::OpenRouter
        } else {
            SessionAffinityFormat::OpenAi
        },
        supports_long_cache_retention: !(h.together
            || h.cf_workers
            || h.cf_gateway
            || h.nvidia
            || h.ant_ling),
        vllm_priority: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(provider: &str, base_url: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            provider: provider.into(),
            base_url: base_url.into(),
            api: "openai-completions".into(),
            ..Default::default()
        }
    }

    #[test]
    fn standard_host_gets_the_defaults() {
        let c = Compat::resolve(&model("replay-openai", "http://127.0.0.1:9/v1", "m"));
        assert!(c.supports_store && c.supports_developer_role && c.supports_reasoning_effort);
        assert!(
            c.supports_usage_in_streaming && c.supports_finish_reason && c.supports_strict_mode
        );
        assert!(!c.use_max_tokens_field && !c.cache_control_anthropic);
        assert_eq!(c.thinking_format, ThinkingFormat::OpenAi);
        assert_eq!(c.session_affinity_format, SessionAffinityFormat::OpenAi);
        assert!(c.supports_long_cache_retention);
    }

    #[test]
    fn detection_table_rows() {
        let ds = Compat::resolve(&model("x", "https://api.DeepSeek.com/v1", "deepseek-chat"));
        assert!(!ds.supports_store && !ds.supports_developer_role && ds.supports_reasoning_effort);
        assert!(ds.use_max_tokens_field && ds.requires_reasoning_content_on_assistant_messages);
        assert_eq!(ds.thinking_format, ThinkingFormat::DeepSeek);

        let zai = Compat::resolve(&model("zai", "https://x", "glm"));
        assert!(!zai.supports_reasoning_effort && zai.use_max_tokens_field);
        assert_eq!(zai.thinking_format, ThinkingFormat::Zai);

        let together = Compat::resolve(&model("together", "https://x", "m"));
        assert!(!together.supports_strict_mode && !together.supports_long_cache_retention);
        assert_eq!(together.thinking_format, ThinkingFormat::Together);

        let xai = Compat::resolve(&model("xai", "https://api.x.ai/v1", "grok"));
        assert!(!xai.supports_store && !xai.supports_reasoning_effort && !xai.use_max_tokens_field);

        let or = Compat::resolve(&model(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "anthropic/claude",
        ));
        assert!(or.supports_developer_role && or.cache_control_anthropic && or.supports_store);
        assert_eq!(or.thinking_format, ThinkingFormat::OpenRouter);
        assert_eq!(
            or.session_affinity_format,
            SessionAffinityFormat::OpenRouter
        );
        let or2 = Compat::resolve(&model(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "qwen/qwen3",
        ));
        assert!(!or2.supports_developer_role && !or2.cache_control_anthropic);

        let cf = Compat::resolve(&model("cloudflare-workers-ai", "https://x", "m"));
        assert!(
            !cf.supports_store && cf.supports_reasoning_effort && !cf.supports_long_cache_retention
        );
        assert!(cf.supports_strict_mode && !cf.use_max_tokens_field);

        let nv = Compat::resolve(&model("nvidia", "https://x", "m"));
        assert!(
            !nv.supports_reasoning_effort && !nv.supports_strict_mode && nv.use_max_tokens_field
        );

        let ling = Compat::resolve(&model("ant-ling", "https://x", "m"));
        assert_eq!(ling.thinking_format, ThinkingFormat::AntLing);
        let moon = Compat::resolve(&model("x", "https://api.moonshot.ai/v1", "kimi"));
        assert!(
            !moon.supports_strict_mode
                && moon.use_max_tokens_field
                && !moon.supports_reasoning_effort
        );
        let chutes = Compat::resolve(&model("x", "https://llm.chutes.ai/v1", "m"));
        assert!(
            chutes.use_max_tokens_field && !chutes.supports_store && chutes.supports_strict_mode
        );
        let cerebras = Compat::resolve(&model("cerebras", "https://x", "m"));
        assert!(!cerebras.supports_store && !cerebras.use_max_tokens_field);
    }

    #[test]
    fn explicit_compat_fields_win() {
        let mut m = model("deepseek", "https://api.deepseek.com", "m");
        m.compat = json!({
            "supportsStore": true,
            "maxTokensField": "max_completion_tokens",
            "thinkingFormat": "qwen-chat-template",
            "supportsFinishReason": false,
            "supportsThinkingTokenBudget": true,
            "sessionAffinityFormat": "openai-nosession",
            "vllmPriority": 3
        })
        .as_object()
        .cloned();
        let c = Compat::resolve(&m);
        assert!(c.supports_store && !c.use_max_tokens_field && !c.supports_finish_reason);
        assert_eq!(c.thinking_format, ThinkingFormat::QwenChatTemplate);
        assert_eq!(
            c.thinking_token_budget_field.as_deref(),
            Some("thinking_token_budget")
        );
        assert_eq!(
            c.session_affinity_format,
            SessionAffinityFormat::OpenAiNoSession
        );
        assert_eq!(c.vllm_priority, Some(json!(3)));
        // Unset fields keep the detected value.
        assert!(c.requires_reasoning_content_on_assistant_messages);
    }
}
