//! Request building for `anthropic-messages`: URL, headers (auth, `anthropic-version`, betas,
//! pi's `User-Agent`) and the Messages API body.
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts` (`streamSimple`, `createClient`,
//! `getBetaFeatures`, `buildParams`, `convertMessages`, `convertTools`) as it reaches the wire
//! through the Anthropic SDK's `beta.messages.create` (`POST <baseUrl>/v1/messages?beta=true`,
//! `betas` sent as the `anthropic-beta` header).

use crate::providers::StreamError;
use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::convert::{CacheControl, ManagedEffort, convert_messages, convert_tools};
use super::oauth::{CLAUDE_CODE_IDENTITY, CLAUDE_CODE_VERSION, is_oauth_token};
use crate::providers::WireRequest;
use crate::providers::registry::clamp_max_tokens_to_context;
use crate::providers::request_headers::{HeaderList, pi_user_agent};
use crate::providers::simple_options::adjust_max_tokens_for_thinking;
use crate::types::{
    CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel, UserContent,
    UserMessageContent,
};

/// The `anthropic-version` header value the SDK sends.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Default base URL when the model has none.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";
const MID_CONVERSATION_OUTPUT_CONFIG_BETA: &str = "mid-conversation-output-config-2026-07-01";
const THINKING_BINDING_CONTROLS_BETA: &str = "thinking-binding-controls-2026-08-01";

/// How thinking is requested, resolved from `options.reasoning` (`streamSimple`).
#[derive(Debug, PartialEq)]
struct ThinkingPlan {
    /// `Some(false)` when reasoning is off.
    enabled: bool,
    /// Adaptive-thinking effort (`output_config.effort`).
    effort: Option<String>,
    /// Budget for budget-based models.
    budget: Option<u64>,
    /// The `max_tokens` to send.
    max_tokens: u64,
}

/// Builds the request; `Err` carries pi's error text (`No API key for provider: <p>`, strict
/// tool failures).
pub(super) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<WireRequest, StreamError> {
    assert_request_auth(model, api_key, &options.headers)?;
    let compat = Compat::of(model);
    // Copilot keys are never OAuth-mode keys (Copilot is matched first in `createClient`).
    let oauth = is_oauth_token(api_key) && model.provider != "github-copilot";
    let plan = thinking_plan(model, context, options);
    let cache = cache_control(&compat, options.cache_retention);

    let mut body = Map::new();
    body.insert("model".into(), model.id.clone().into());
    let managed_effort = managed_effort(model, options);
    let managed = managed_effort.as_deref().map(|active| ManagedEffort {
        provider: &model.provider,
        active,
    });
    let messages = convert_messages(
        model,
        &context.messages,
        cache.as_ref(),
        &compat,
        oauth,
        managed,
    );
    body.insert("messages".into(), Value::Array(messages));
    body.insert("max_tokens".into(), plan.max_tokens.into());
    body.insert("stream".into(), true.into());
    if let Some(system) = system_blocks(context, cache.as_ref(), oauth) {
        body.insert("system".into(), system);
    }
    if let Some(t) = options.temperature
        && !plan.enabled
        && managed.is_none()
        && compat.supports_temperature
    {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(tools) = context.tools.as_deref().filter(|t| !t.is_empty()) {
        let cache_on_tools = cache
            .as_ref()
            .filter(|_| compat.supports_cache_control_on_tools);
        body.insert(
            "tools".into(),
            Value::Array(convert_tools(tools, oauth, &compat, cache_on_tools)?),
        );
    }
    if managed.is_some() {
        body.insert(
            "thinking".into(),
            json!({ "type": "adaptive", "display": "summarized",
                    "block_binding": { "prefix_mismatch_behavior": "drop_block" } }),
        );
        body.insert("output_config".into(), json!({ "effort": "high" }));
    } else if let Some(thinking) = thinking_param(model, &plan) {
        body.insert("thinking".into(), thinking);
        if let Some(effort) = plan.effort.as_ref().filter(|_| force_adaptive(model)) {
            body.insert("output_config".into(), json!({ "effort": effort }));
        }
    }
    if let Some(Value::String(user_id)) = options.metadata.as_ref().and_then(|m| m.get("user_id")) {
        body.insert("metadata".into(), json!({ "user_id": user_id }));
    }
    let choice = options
        .tool_choice
        .as_ref()
        .filter(|c| !matches!(c, Value::Null | Value::Bool(false)) && c.as_str() != Some(""));
    if let Some(choice) = choice {
        let choice = match choice {
            Value::String(s) => json!({ "type": s }),
            other => other.clone(),
        };
        body.insert("tool_choice".into(), choice);
    }
    if !compat.allowed_fallback_models.is_empty() {
        let fallbacks: Vec<Value> = compat
            .allowed_fallback_models
            .iter()
            .map(|f| json!({ "model": f.model }))
            .collect();
        body.insert("fallbacks".into(), Value::Array(fallbacks));
    }

    let headers = headers(model, context, options, api_key, oauth, &plan, &compat);
    let base = if model.base_url.is_empty() {
        DEFAULT_BASE_URL
    } else {
        model.base_url.trim_end_matches('/')
    };
    Ok(WireRequest {
        url: format!("{base}/v1/messages?beta=true"),
        headers,
        body: Value::Object(body),
    })
}

/// `assertRequestAuth`: a key, or a non-blank `authorization` / `x-api-key` /
/// `cf-aig-authorization` caller header.
fn assert_request_auth(
    model: &Model,
    api_key: &str,
    headers: &[(String, Option<String>)],
) -> Result<(), StreamError> {
    if !api_key.is_empty() {
        return Ok(());
    }
    let has_auth = headers.iter().any(|(k, v)| {
        ["authorization", "x-api-key", "cf-aig-authorization"]
            .iter()
            .any(|n| k.eq_ignore_ascii_case(n))
            && v.as_deref().is_some_and(|v| !v.trim().is_empty())
    });
    if has_auth {
        Ok(())
    } else {
        Err(StreamError::NoApiKey(model.provider.clone()))
    }
}

/// Managed-effort models (`compat.supportsMidConvoEffort`): the effort of this request
/// (`high` unless adaptive thinking chose one). Also the message's `providerThinkingLevel`.
pub(super) fn managed_effort(model: &Model, options: &StreamOptions) -> Option<String> {
    if model.compat_bool("supportsMidConvoEffort") != Some(true) {
        return None;
    }
    Some(match options.reasoning {
        Some(level) if force_adaptive(model) => adaptive_effort(model, level),
        _ => "high".to_owned(),
    })
}

fn force_adaptive(model: &Model) -> bool {
    model.compat_bool("forceAdaptiveThinking") == Some(true)
}

/// `streamSimple`'s thinking resolution and output cap.
fn thinking_plan(model: &Model, context: &Context, options: &StreamOptions) -> ThinkingPlan {
    let base = clamp_max_tokens_to_context(
        model,
        context,
        options.max_tokens.unwrap_or(model.max_tokens),
    );
    let Some(level) = options.reasoning else {
        return ThinkingPlan {
            enabled: false,
            effort: None,
            budget: None,
            max_tokens: base,
        };
    };
    if force_adaptive(model) {
        return ThinkingPlan {
            enabled: true,
            effort: Some(adaptive_effort(model, level)),
            budget: None,
            max_tokens: base,
        };
    }
    let (max, budget) = adjust_max_tokens_for_thinking(
        Some(base),
        model.max_tokens,
        level,
        options.thinking_budgets.as_ref(),
    );
    let max_tokens = clamp_max_tokens_to_context(model, context, max);
    ThinkingPlan {
        enabled: true,
        effort: None,
        budget: Some(budget.min(max_tokens.saturating_sub(1024))),
        max_tokens,
    }
}

/// `mapThinkingLevelToEffort`: the model's map entry, else minimal/low → low, medium → medium,
/// everything else → high.
fn adaptive_effort(model: &Model, level: ThinkingLevel) -> String {
    if let Some(Some(mapped)) = model.thinking_map_entry(level.into()) {
        return mapped.to_owned();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

/// The `thinking` parameter (reasoning models only).
fn thinking_param(model: &Model, plan: &ThinkingPlan) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    if plan.enabled {
        if force_adaptive(model) {
            return Some(json!({ "type": "adaptive", "display": "summarized" }));
        }
        let budget = plan.budget.filter(|&b| b > 0).unwrap_or(1024);
        return Some(
            json!({ "type": "enabled", "budget_tokens": budget, "display": "summarized" }),
        );
    }
    // `thinkingLevelMap.off === null` means thinking cannot be turned off: send nothing.
    let off_unsupported = matches!(
        model.thinking_level_map.as_ref().and_then(|m| m.get("off")),
        Some(Value::Null)
    );
    (!off_unsupported).then(|| json!({ "type": "disabled" }))
}

/// `getCacheControl`: `None` for retention `none`; `{type:"ephemeral"}` plus `ttl:"1h"` for
/// `long` when the model supports it. An unset retention is `short`, or `long` when the
/// environment sets `PI_CACHE_RETENTION=long`.
fn cache_control(compat: &Compat, retention: Option<CacheRetention>) -> Option<CacheControl> {
    let retention = retention.unwrap_or_else(|| {
        if std::env::var("PI_CACHE_RETENTION").as_deref() == Ok("long") {
            CacheRetention::Long
        } else {
            CacheRetention::Short
        }
    });
    match retention {
        CacheRetention::None => None,
        CacheRetention::Short => Some(CacheControl { long: false }),
        CacheRetention::Long => Some(CacheControl {
            long: compat.supports_long_cache_retention,
        }),
    }
}

/// System blocks: the Claude Code identity first in OAuth mode, then the system prompt, each
/// with the cache marker.
fn system_blocks(context: &Context, cache: Option<&CacheControl>, oauth: bool) -> Option<Value> {
    let mut blocks = Vec::new();
    let mut push = |text: &str| {
        let mut b = Map::new();
        b.insert("type".into(), "text".into());
        b.insert("text".into(), text.into());
        if let Some(c) = cache {
            b.insert("cache_control".into(), c.to_value());
        }
        blocks.push(Value::Object(b));
    };
    if oauth {
        push(CLAUDE_CODE_IDENTITY);
    }
    if let Some(prompt) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        push(prompt);
    }
    (!blocks.is_empty()).then_some(Value::Array(blocks))
}

/// Headers as the SDK layers them: its defaults (`anthropic-version`, `accept`) < auth
/// (`x-api-key`, or `authorization: Bearer` for OAuth tokens and GitHub Copilot) < pi's client
/// headers (`User-Agent`, model headers, caller headers; a caller `None` deletes) <
/// `content-type` < the `anthropic-beta` list.
fn headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
    oauth: bool,
    plan: &ThinkingPlan,
    compat: &Compat,
) -> Vec<(String, String)> {
    let mut h = HeaderList::new();
    h.set("accept", "application/json");
    h.set("anthropic-version", ANTHROPIC_VERSION);
    if !api_key.is_empty() {
        if oauth || model.provider == "github-copilot" {
            h.set("authorization", format!("Bearer {api_key}"));
        } else {
            h.set("x-api-key", api_key);
        }
    }
    h.set("User-Agent", pi_user_agent());
    h.set("anthropic-dangerous-direct-browser-access", "true");
    let copilot = model.provider == "github-copilot";
    if oauth && !copilot {
        h.set("user-agent", format!("claude-cli/{CLAUDE_CODE_VERSION}"));
        h.set("x-app", "cli");
    } else if !copilot
        && compat.send_session_affinity_headers
        && options.cache_retention != Some(CacheRetention::None)
        && let Some(session) = &options.session_id
    {
        h.set("x-session-affinity", session.clone());
    }
    h.apply_json(model.headers.as_ref());
    if copilot {
        copilot_headers(&mut h, &context.messages);
    }
    h.apply_options(&options.headers);
    h.set("content-type", "application/json");
    let betas = beta_features(model, context, options, oauth, plan, compat);
    if !betas.is_empty() {
        h.set("anthropic-beta", betas.join(","));
    }
    h.into_vec()
}

/// GitHub Copilot's dynamic headers: `X-Initiator` (`agent` after an assistant or tool
/// result, else `user`), `Openai-Intent: conversation-edits`, and
/// `Copilot-Vision-Request: true` when any user message or tool result has an image.
fn copilot_headers(h: &mut HeaderList, messages: &[Message]) {
    let initiator = match messages.last() {
        Some(m) if m.role() != "user" => "agent",
        _ => "user",
    };
    h.set("X-Initiator", initiator);
    h.set("Openai-Intent", "conversation-edits");
    let is_image = |c: &UserContent| matches!(c, UserContent::Image(_));
    let has_images = messages.iter().any(|m| match m {
        Message::User(u) => match &u.content {
            UserMessageContent::Blocks(b) => b.iter().any(is_image),
            UserMessageContent::Text(_) => false,
        },
        Message::ToolResult(t) => t.content.iter().any(is_image),
        Message::Assistant(_) => false,
    });
    if has_images {
        h.set("Copilot-Vision-Request", "true");
    }
}

/// `getBetaFeatures`: an explicit `anthropic-beta` header (model, then caller) wins, `null`
/// meaning none; otherwise OAuth, fine-grained tool streaming (tools without eager streaming),
/// interleaved thinking (budget models with thinking) and server-side fallback.
fn beta_features(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    oauth: bool,
    plan: &ThinkingPlan,
    compat: &Compat,
) -> Vec<String> {
    let mut configured: Option<Option<String>> = None;
    for (name, value) in model.headers.iter().flatten() {
        if name.eq_ignore_ascii_case("anthropic-beta") {
            configured = Some(value.as_str().map(str::to_owned));
        }
    }
    for (name, value) in &options.headers {
        if name.eq_ignore_ascii_case("anthropic-beta") {
            configured = Some(value.clone());
        }
    }
    let mut features: Vec<String> = Vec::new();
    let mut add = |f: &str| {
        if !features.iter().any(|x| x == f) {
            features.push(f.to_owned());
        }
    };
    match configured {
        Some(None) => return Vec::new(),
        Some(Some(list)) => {
            for f in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                add(f);
            }
        }
        None => {
            if oauth {
                add("claude-code-20250219");
                add("oauth-2025-04-20");
            }
            let has_tools = context.tools.as_ref().is_some_and(|t| !t.is_empty());
            if has_tools && !compat.supports_eager_tool_input_streaming {
                add(FINE_GRAINED_TOOL_STREAMING_BETA);
            }
            if model.reasoning && plan.enabled && !force_adaptive(model) {
                add(INTERLEAVED_THINKING_BETA);
            }
            if !compat.allowed_fallback_models.is_empty() {
                add(SERVER_SIDE_FALLBACK_BETA);
            }
            if model.compat_bool("supportsMidConvoEffort") == Some(true) {
                add(MID_CONVERSATION_OUTPUT_CONFIG_BETA);
                add(THINKING_BINDING_CONTROLS_BETA);
            }
        }
    }
    features
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::UserMessage;

    fn model(reasoning: bool) -> Model {
        Model {
            id: "claude-x".into(),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            base_url: "http://h/".into(),
            reasoning,
            context_window: 200_000,
            max_tokens: 32_000,
            ..Default::default()
        }
    }

    fn ctx() -> Context {
        Context {
            system_prompt: Some("sys".into()),
            messages: vec![UserMessage::text("hi").into()],
            tools: None,
        }
    }

    fn header<'a>(r: &'a WireRequest, name: &str) -> Option<&'a str> {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn missing_key_fails_before_any_request() {
        let err = build_request(&model(false), &ctx(), &StreamOptions::default(), "").unwrap_err();
        assert_eq!(err.to_string(), "No API key for provider: anthropic");
        let options = StreamOptions {
            headers: vec![("X-Api-Key".into(), Some("k".into()))],
            ..Default::default()
        };
        assert!(build_request(&model(false), &ctx(), &options, "").is_ok());
    }

    #[test]
    fn url_auth_version_and_user_agent() {
        let r = build_request(&model(false), &ctx(), &StreamOptions::default(), "sk-1").unwrap();
        assert_eq!(r.url, "http://h/v1/messages?beta=true");
        assert_eq!(header(&r, "x-api-key"), Some("sk-1"));
        assert_eq!(header(&r, "anthropic-version"), Some("2023-06-01"));
        assert_eq!(header(&r, "user-agent"), Some(pi_user_agent()));
        assert_eq!(header(&r, "anthropic-beta"), None);
        assert_eq!(
            r.body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(r.body["max_tokens"], json!(32000));
    }

    #[test]
    fn oauth_tokens_use_bearer_identity_and_betas() {
        let r = build_request(
            &model(false),
            &ctx(),
            &StreamOptions::default(),
            "sk-ant-oat-1",
        )
        .unwrap();
        assert_eq!(header(&r, "authorization"), Some("Bearer sk-ant-oat-1"));
        assert_eq!(header(&r, "x-api-key"), None);
        assert_eq!(
            header(&r, "anthropic-beta"),
            Some("claude-code-20250219,oauth-2025-04-20")
        );
        assert_eq!(r.body["system"][0]["text"], json!(CLAUDE_CODE_IDENTITY));
        assert_eq!(r.body["system"][1]["text"], json!("sys"));
    }

    #[test]
    fn budget_thinking_sets_budget_and_interleaved_beta() {
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Medium),
            max_tokens: Some(4000),
            temperature: Some(0.5),
            ..Default::default()
        };
        let r = build_request(&model(true), &ctx(), &options, "k").unwrap();
        assert_eq!(
            r.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"})
        );
        assert_eq!(r.body["max_tokens"], json!(12192));
        assert!(r.body.get("temperature").is_none());
        assert_eq!(
            header(&r, "anthropic-beta"),
            Some(INTERLEAVED_THINKING_BETA)
        );
    }

    #[test]
    fn thinking_off_is_disabled_unless_the_map_forbids_off() {
        let options = StreamOptions {
            temperature: Some(0.5),
            ..Default::default()
        };
        let r = build_request(&model(true), &ctx(), &options, "k").unwrap();
        assert_eq!(r.body["thinking"], json!({"type": "disabled"}));
        assert_eq!(r.body["temperature"], json!(0.5));
        let mut m = model(true);
        m.thinking_level_map = Some(serde_json::from_str(r#"{"off": null}"#).unwrap());
        let r = build_request(&m, &ctx(), &options, "k").unwrap();
        assert!(r.body.get("thinking").is_none());
        let r = build_request(&model(false), &ctx(), &options, "k").unwrap();
        assert!(r.body.get("thinking").is_none());
    }

    #[test]
    fn adaptive_models_send_effort() {
        let mut m = model(true);
        m.compat = Some(serde_json::from_str(r#"{"forceAdaptiveThinking": true}"#).unwrap());
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Minimal),
            ..Default::default()
        };
        let r = build_request(&m, &ctx(), &options, "k").unwrap();
        assert_eq!(
            r.body["thinking"],
            json!({"type": "adaptive", "display": "summarized"})
        );
        assert_eq!(r.body["output_config"], json!({"effort": "low"}));
        assert_eq!(header(&r, "anthropic-beta"), None);
    }

    #[test]
    fn explicit_beta_header_wins_and_null_removes() {
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::High),
            headers: vec![("Anthropic-Beta".into(), Some("a, b,a".into()))],
            ..Default::default()
        };
        let r = build_request(&model(true), &ctx(), &options, "k").unwrap();
        assert_eq!(header(&r, "anthropic-beta"), Some("a,b"));
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::High),
            headers: vec![("anthropic-beta".into(), None)],
            ..Default::default()
        };
        let r = build_request(&model(true), &ctx(), &options, "k").unwrap();
        assert_eq!(header(&r, "anthropic-beta"), None);
    }

    #[test]
    fn long_retention_adds_ttl_and_none_removes_markers() {
        let options = StreamOptions {
            cache_retention: Some(CacheRetention::Long),
            ..Default::default()
        };
        let r = build_request(&model(false), &ctx(), &options, "k").unwrap();
        assert_eq!(
            r.body["system"][0]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        let options = StreamOptions {
            cache_retention: Some(CacheRetention::None),
            ..Default::default()
        };
        let r = build_request(&model(false), &ctx(), &options, "k").unwrap();
        assert!(r.body["system"][0].get("cache_control").is_none());
        assert_eq!(
            r.body["messages"][0]["content"][0],
            json!({"type": "text", "text": "hi"})
        );
    }

    #[test]
    fn tool_choice_and_metadata() {
        let mut metadata = Map::new();
        metadata.insert("user_id".into(), "u1".into());
        let options = StreamOptions {
            tool_choice: Some(json!("any")),
            metadata: Some(metadata),
            ..Default::default()
        };
        let r = build_request(&model(false), &ctx(), &options, "k").unwrap();
        assert_eq!(r.body["tool_choice"], json!({"type": "any"}));
        assert_eq!(r.body["metadata"], json!({"user_id": "u1"}));
    }

    #[test]
    fn managed_effort_models_send_adaptive_binding_and_a_closing_effort_message() {
        let mut m = model(true);
        m.compat = Some(
            serde_json::from_str(
                r#"{"supportsMidConvoEffort": true, "forceAdaptiveThinking": true}"#,
            )
            .unwrap(),
        );
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Medium),
            temperature: Some(0.3),
            ..Default::default()
        };
        let r = build_request(&m, &ctx(), &options, "k").unwrap();
        assert_eq!(
            r.body["thinking"],
            json!({"type": "adaptive", "display": "summarized",
                   "block_binding": {"prefix_mismatch_behavior": "drop_block"}})
        );
        assert_eq!(r.body["output_config"], json!({"effort": "high"}));
        assert!(r.body.get("temperature").is_none());
        let messages = r.body["messages"].as_array().unwrap();
        assert_eq!(
            messages.last().unwrap(),
            &json!({"role": "system", "content": [], "output_config": {"effort": "medium"}})
        );
        assert_eq!(
            header(&r, "anthropic-beta"),
            Some("mid-conversation-output-config-2026-07-01,thinking-binding-controls-2026-08-01")
        );
    }

    #[test]
    fn github_copilot_uses_bearer_and_dynamic_headers() {
        let mut m = model(false);
        m.provider = "github-copilot".into();
        let mut c = ctx();
        c.messages.push(
            crate::types::ToolResultMessage {
                tool_call_id: "t".into(),
                content: vec![UserContent::Image(crate::types::ImageContent {
                    data: "AA==".into(),
                    mime_type: "image/png".into(),
                })],
                ..Default::default()
            }
            .into(),
        );
        let r = build_request(&m, &c, &StreamOptions::default(), "ghu_1").unwrap();
        assert_eq!(header(&r, "authorization"), Some("Bearer ghu_1"));
        assert_eq!(header(&r, "x-api-key"), None);
        assert_eq!(header(&r, "x-initiator"), Some("agent"));
        assert_eq!(header(&r, "openai-intent"), Some("conversation-edits"));
        assert_eq!(header(&r, "copilot-vision-request"), Some("true"));
        let r = build_request(&m, &ctx(), &StreamOptions::default(), "ghu_1").unwrap();
        assert_eq!(header(&r, "x-initiator"), Some("user"));
        assert_eq!(header(&r, "copilot-vision-request"), None);
    }
}
