//! The ConverseStream request body.
//!
//! Mirrors pi-ai 0.85.1 `api/bedrock-converse-stream.js` (`convertMessages`,
//! `buildSystemPrompt`, `convertToolConfig`, `buildAdditionalModelRequestFields`,
//! `streamSimple`'s thinking budget) as the AWS SDK serializes it: members in the service
//! model's order (request: `messages`, `system`, `inferenceConfig`, `toolConfig`,
//! `additionalModelRequestFields`, `requestMetadata`; `toolSpec`: `name`, `inputSchema`, `description`;
//! images `{format, source: {bytes}}` with the bytes base64), absent members left out.
//! Prompt-cache points go after the system prompt and on the last user message of the Claude
//! models that take them (or any model with `AWS_BEDROCK_FORCE_CACHE=1`), with
//! `ttl: "1h"` for long retention.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use crate::providers::provider_env::ProviderEnv;
use crate::providers::registry::clamp_max_tokens_to_context;
use crate::providers::simple_options::adjust_max_tokens_for_thinking;
use crate::providers::{StreamError, constrained};
use crate::transform::transform_messages;
use crate::types::{
    AssistantContent, AssistantMessage, CacheRetention, Context, Message, Model, StreamOptions,
    ThinkingLevel, Tool, UserContent, UserMessageContent,
};

/// pi's `EMPTY_TEXT_PLACEHOLDER`: Bedrock rejects blank text blocks.
const EMPTY_TEXT_PLACEHOLDER: &str = "<empty>";

/// The model id and name, lower-cased, and with runs of spaces, `_`, `.` and `:` as `-`
/// (`getModelMatchCandidates`).
fn candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    let mut out = Vec::new();
    for value in values {
        let lower = value.to_lowercase();
        let mut dashed = String::with_capacity(lower.len());
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
                if !in_run {
                    dashed.push('-');
                }
                in_run = true;
            } else {
                dashed.push(c);
                in_run = false;
            }
        }
        out.push(lower);
        out.push(dashed);
    }
    out
}

fn any_contains(model: &Model, needles: &[&str]) -> bool {
    candidates(model)
        .iter()
        .any(|c| needles.iter().any(|n| c.contains(n)))
}

/// `isAnthropicClaudeModel`.
pub fn is_anthropic_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude") || id.contains("anthropic/claude") || name.contains("claude")
}

/// `supportsAdaptiveThinking` (Opus 4.6+, Sonnet 4.6+, Claude 5).
pub(crate) fn supports_adaptive_thinking(model: &Model) -> bool {
    any_contains(
        model,
        &[
            "opus-4-6",
            "opus-4-7",
            "opus-4-8",
            "opus-5",
            "sonnet-4-6",
            "sonnet-5",
            "fable-5",
        ],
    )
}

/// `supportsNativeXhighEffort`.
fn supports_native_xhigh(model: &Model) -> bool {
    any_contains(
        model,
        &["opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "fable-5"],
    )
}

/// `supportsPromptCaching`: Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5; other models only with
/// `AWS_BEDROCK_FORCE_CACHE=1` (application inference profiles hide the model name).
pub fn supports_prompt_caching(model: &Model, env: &ProviderEnv) -> bool {
    if !any_contains(model, &["claude"]) {
        return env.get("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    any_contains(
        model,
        &[
            "fable-5",
            "opus-5",
            "sonnet-5",
            "-4-",
            "claude-3-7-sonnet",
            "claude-3-5-haiku",
        ],
    )
}

/// `resolveCacheRetention`: the option, else `long` when `PI_CACHE_RETENTION=long`, else
/// `short`.
fn cache_retention(options: &StreamOptions, env: &ProviderEnv) -> CacheRetention {
    match options.cache_retention {
        Some(r) => r,
        None if env.get("PI_CACHE_RETENTION").as_deref() == Some("long") => CacheRetention::Long,
        None => CacheRetention::Short,
    }
}

fn cache_point(retention: CacheRetention) -> Value {
    if retention == CacheRetention::Long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    }
}

/// `normalizeToolCallId`: anything but `[A-Za-z0-9_-]` as `_`, at most 64 characters.
pub fn normalize_tool_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

fn non_blank_text(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"text": text}))
}

/// `createImageBlock`: `{format, source: {bytes}}`, the bytes re-encoded as the SDK does.
fn image_block(mime_type: &str, data: &str) -> Result<Value, StreamError> {
    let format = match mime_type {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(StreamError::Config(format!("Unknown image type: {other}"))),
    };
    // `atob` skips ASCII whitespace and rejects anything else that is not base64.
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(compact.trim_end_matches('='))
        .map_err(|_| {
            StreamError::Config("The string to be decoded is not correctly encoded.".into())
        })?;
    Ok(json!({"image": {"format": format, "source": {"bytes": BASE64.encode(bytes)}}}))
}

/// `sanitizeBedrockDocument`: object keys that are empty strings are dropped, at any depth.
fn sanitize_document(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sanitize_document).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.clone(), sanitize_document(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn tool_result_content(content: &[UserContent]) -> Result<Vec<Value>, StreamError> {
    let mut out = Vec::new();
    for c in content {
        match c {
            UserContent::Image(i) => out.push(image_block(&i.mime_type, &i.data)?),
            UserContent::Text(t) => out.extend(non_blank_text(&t.text)),
        }
    }
    if out.is_empty() {
        out.push(json!({"text": EMPTY_TEXT_PLACEHOLDER}));
    }
    Ok(out)
}

fn assistant_blocks(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let mut out = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(t) => out.extend(non_blank_text(&t.text)),
            AssistantContent::ToolCall(tc) => out.push(json!({"toolUse": {
                "toolUseId": tc.id,
                "name": tc.name,
                "input": sanitize_document(&Value::Object(tc.arguments.clone())),
            }})),
            AssistantContent::Thinking(t) if t.redacted == Some(true) => {
                // A payload that is not base64 (a hand-edited session) drops the block.
                let decoded = t
                    .thinking_signature
                    .as_deref()
                    .and_then(|s| BASE64.decode(s).ok())
                    .filter(|b| !b.is_empty());
                if let Some(bytes) = decoded {
                    out.push(
                        json!({"reasoningContent": {"redactedContent": BASE64.encode(bytes)}}),
                    );
                }
            }
            AssistantContent::Thinking(t) => {
                if t.thinking.trim().is_empty() {
                    continue;
                }
                if !is_anthropic_claude(model) {
                    out.push(json!({"reasoningContent": {"reasoningText": {"text": t.thinking}}}));
                    continue;
                }
                match t
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.trim().is_empty())
                {
                    // Bedrock rejects replayed reasoning without its signature.
                    None => out.push(json!({"text": t.thinking})),
                    Some(signature) => out.push(json!({"reasoningContent": {"reasoningText": {
                        "text": t.thinking,
                        "signature": signature,
                    }}})),
                }
            }
        }
    }
    out
}

/// `convertMessages` over the transformed conversation.
fn convert_messages(
    context: &Context,
    model: &Model,
    retention: CacheRetention,
    env: &ProviderEnv,
) -> Result<Vec<Value>, StreamError> {
    let normalize = |id: &str, _: &Model, _: &AssistantMessage| normalize_tool_call_id(id);
    let messages = transform_messages(&context.messages, model, Some(&normalize));
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while let Some(message) = messages.get(i) {
        i += 1;
        match message {
            Message::User(u) => {
                let content = match &u.content {
                    UserMessageContent::Text(s) => {
                        vec![
                            non_blank_text(s)
                                .unwrap_or_else(|| json!({"text": EMPTY_TEXT_PLACEHOLDER})),
                        ]
                    }
                    UserMessageContent::Blocks(blocks) => {
                        let mut content = Vec::new();
                        for b in blocks {
                            match b {
                                UserContent::Text(t) => content.extend(non_blank_text(&t.text)),
                                UserContent::Image(img) => {
                                    content.push(image_block(&img.mime_type, &img.data)?);
                                }
                            }
                        }
                        if content.is_empty() {
                            content.push(json!({"text": EMPTY_TEXT_PLACEHOLDER}));
                        }
                        content
                    }
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(a) => {
                let content = assistant_blocks(model, a);
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(first) => {
                // Bedrock wants every result of a turn in one user message.
                let mut results = vec![first];
                while let Some(Message::ToolResult(next)) = messages.get(i) {
                    results.push(next);
                    i += 1;
                }
                let mut content = Vec::new();
                for r in results {
                    content.push(json!({"toolResult": {
                        "toolUseId": r.tool_call_id,
                        "content": tool_result_content(&r.content)?,
                        "status": if r.is_error { "error" } else { "success" },
                    }}));
                }
                out.push(json!({"role": "user", "content": content}));
            }
        }
    }
    if retention != CacheRetention::None
        && supports_prompt_caching(model, env)
        && let Some(last) = out.last_mut()
        && last.get("role").and_then(Value::as_str) == Some("user")
        && let Some(Value::Array(content)) = last.get_mut("content")
    {
        content.push(cache_point(retention));
    }
    Ok(out)
}

fn system_blocks(
    context: &Context,
    model: &Model,
    retention: CacheRetention,
    env: &ProviderEnv,
) -> Option<Value> {
    let prompt = context.system_prompt.as_deref().filter(|s| !s.is_empty())?;
    let mut blocks = vec![json!({"text": prompt})];
    if retention != CacheRetention::None && supports_prompt_caching(model, env) {
        blocks.push(cache_point(retention));
    }
    Some(Value::Array(blocks))
}

/// `convertToolConfig`: none without tools or with `toolChoice: "none"`.
fn tool_config(
    tools: Option<&Vec<Tool>>,
    choice: Option<&Value>,
    supports_strict: bool,
) -> Result<Option<Value>, StreamError> {
    let Some(tools) = tools.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if choice.and_then(Value::as_str) == Some("none") {
        return Ok(None);
    }
    let mut specs = Vec::new();
    for tool in tools {
        let strict = constrained::resolve_strict(tool, supports_strict)?;
        let mut spec = Map::new();
        spec.insert("name".into(), json!(tool.name));
        spec.insert(
            "inputSchema".into(),
            json!({"json": constrained::tool_parameters(tool, strict)}),
        );
        spec.insert("description".into(), json!(tool.description));
        if strict == Some(true) {
            spec.insert("strict".into(), json!(true));
        }
        specs.push(json!({"toolSpec": spec}));
    }
    let mut config = Map::new();
    config.insert("tools".into(), Value::Array(specs));
    let choice = match choice {
        Some(Value::String(s)) if s == "auto" => Some(json!({"auto": {}})),
        Some(Value::String(s)) if s == "any" => Some(json!({"any": {}})),
        Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("tool") => {
            Some(json!({"tool": {"name": o.get("name").cloned().unwrap_or(Value::Null)}}))
        }
        _ => None,
    };
    if let Some(c) = choice {
        config.insert("toolChoice".into(), c);
    }
    Ok(Some(Value::Object(config)))
}

/// `mapThinkingLevelToEffort`.
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && supports_native_xhigh(model) {
        return "xhigh".into();
    }
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

/// `isGovCloudBedrockTarget`: GovCloud rejects `thinking.display`.
fn is_gov_cloud(model: &Model, env: &ProviderEnv) -> bool {
    let region = env
        .get("AWS_REGION")
        .or_else(|| env.get("AWS_DEFAULT_REGION"));
    if region.is_some_and(|r| r.to_lowercase().starts_with("us-gov-")) {
        return true;
    }
    let id = model.id.to_lowercase();
    id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

/// The output cap and, for budget-based Claude thinking, the budget (`streamSimple`).
fn thinking_plan(model: &Model, context: &Context, options: &StreamOptions) -> (Option<u64>, u64) {
    let claude = is_anthropic_claude(model);
    let cap = options.max_tokens.or(claude.then_some(model.max_tokens));
    let Some(level) = options
        .reasoning
        .filter(|_| claude && !supports_adaptive_thinking(model))
    else {
        return (cap, 0);
    };
    let (max, budget) = adjust_max_tokens_for_thinking(
        options.max_tokens,
        model.max_tokens,
        level,
        options.thinking_budgets.as_ref(),
    );
    let max = clamp_max_tokens_to_context(model, context, max);
    (Some(max), budget.min(max.saturating_sub(1024)))
}

/// `buildAdditionalModelRequestFields`: Claude's thinking settings.
fn additional_fields(
    model: &Model,
    options: &StreamOptions,
    budget: u64,
    env: &ProviderEnv,
) -> Option<Value> {
    let level = options.reasoning.filter(|_| model.reasoning)?;
    if !is_anthropic_claude(model) {
        return None;
    }
    let display = (!is_gov_cloud(model, env)).then_some("summarized");
    let mut fields = Map::new();
    if supports_adaptive_thinking(model) {
        let mut thinking = Map::new();
        thinking.insert("type".into(), json!("adaptive"));
        if let Some(d) = display {
            thinking.insert("display".into(), json!(d));
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        fields.insert(
            "output_config".into(),
            json!({"effort": effort(model, level)}),
        );
    } else {
        let mut thinking = Map::new();
        thinking.insert("type".into(), json!("enabled"));
        thinking.insert("budget_tokens".into(), json!(budget));
        if let Some(d) = display {
            thinking.insert("display".into(), json!(d));
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        fields.insert(
            "anthropic_beta".into(),
            json!(["interleaved-thinking-2025-05-14"]),
        );
    }
    Some(Value::Object(fields))
}

/// The request body for `context`.
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: &ProviderEnv,
) -> Result<Map<String, Value>, StreamError> {
    let retention = cache_retention(options, env);
    let supports_strict = model
        .compat_value("supportsStrictMode")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (max_tokens, budget) = thinking_plan(model, context, options);
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(context, model, retention, env)?),
    );
    if let Some(system) = system_blocks(context, model, retention, env) {
        body.insert("system".into(), system);
    }
    let mut inference = Map::new();
    if let Some(max) = max_tokens {
        inference.insert("maxTokens".into(), json!(max));
    }
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if let Some(config) = tool_config(
        context.tools.as_ref(),
        options.tool_choice.as_ref(),
        supports_strict,
    )? {
        body.insert("toolConfig".into(), config);
    }
    if let Some(fields) = additional_fields(model, options, budget, env) {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    if let Some(pairs) = &options.request_metadata {
        let metadata: Map<String, Value> = pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        body.insert("requestMetadata".into(), Value::Object(metadata));
    }
    Ok(body)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
