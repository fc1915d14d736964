//! Request building for `google-generative-ai`: URL, headers and the REST body of
//! `models/<model>:streamGenerateContent?alt=sse`.
//!
//! Mirrors pi-ai 0.85.1 `api/google-generative-ai.ts` (`streamSimple`, `createClient`,
//! `buildParams`) and `api/google-shared.ts` (`convertMessages`, `convertTools`,
//! `resolveGoogleFunctionCallingMode`) as the `@google/genai` SDK puts them on the wire:
//! `systemInstruction` as a user content, sampling and thinking under `generationConfig`.

use crate::providers::StreamError;
use serde_json::{Map, Value, json};

use super::Flavor;
use super::thinking::thinking_config;
use crate::providers::WireRequest;
use crate::providers::constrained::{resolve_strict, tool_parameters};
use crate::providers::registry::clamp_max_tokens_to_context;
use crate::providers::request_headers::{HeaderList, pi_user_agent};
use crate::providers::tool_ids::sanitize_tool_call_id;
use crate::transform::transform_messages;
use crate::types::{
    AssistantContent, AssistantMessage, Context, Message, Model, StreamOptions, Tool, UserContent,
    UserMessageContent,
};

/// Base URL (version included) when the model has none.
const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// Builds the request; `Err` carries pi's text (`No API key for provider: <p>`, thinking-map
/// and strict-tool failures).
pub(super) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<WireRequest, StreamError> {
    if api_key.is_empty() {
        return Err(StreamError::NoApiKey(model.provider.clone()));
    }
    let body = build_body(model, context, options, Flavor::Gemini)?;
    let mut h = HeaderList::new();
    h.set("content-type", "application/json");
    h.set("x-goog-api-key", api_key);
    h.set("User-Agent", pi_user_agent());
    h.apply_json(model.headers.as_ref());
    h.apply_options(&options.headers);

    Ok(WireRequest {
        url: url(model),
        headers: h.into_vec(),
        body: Value::Object(body),
    })
}

/// The REST body both Gemini adapters send: `contents`, `systemInstruction`, `tools`,
/// `toolConfig`, `generationConfig`.
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    flavor: Flavor,
) -> Result<Map<String, Value>, StreamError> {
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    let max_tokens = clamp_max_tokens_to_context(
        model,
        context,
        options.max_tokens.unwrap_or(model.max_tokens),
    );
    generation.insert("maxOutputTokens".into(), max_tokens.into());
    if let Some(config) = thinking_config(model, options, flavor)? {
        generation.insert("thinkingConfig".into(), config);
    }

    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(convert_messages(model, context)),
    );
    if let Some(prompt) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({ "role": "user", "parts": [{ "text": prompt }] }),
        );
    }
    if let Some(tools) = context.tools.as_deref().filter(|t| !t.is_empty()) {
        let supports_strict = gemini_major_version(&model.id).is_some_and(|v| v >= 3);
        let (converted, any_strict) = convert_tools(tools, supports_strict)?;
        body.insert("tools".into(), converted);
        if let Some(mode) = function_calling_mode(options.tool_choice.as_ref(), any_strict) {
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": { "mode": mode } }),
            );
        }
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    Ok(body)
}

/// `<baseUrl>/models/<model>:streamGenerateContent?alt=sse` (ids already starting with
/// `models/` or `tunedModels/` are used as they are).
fn url(model: &Model) -> String {
    let base = if model.base_url.is_empty() {
        DEFAULT_BASE_URL
    } else {
        model.base_url.strip_suffix('/').unwrap_or(&model.base_url)
    };
    let id = &model.id;
    if id.starts_with("models/") || id.starts_with("tunedModels/") {
        format!("{base}/{id}:streamGenerateContent?alt=sse")
    } else {
        format!("{base}/models/{id}:streamGenerateContent?alt=sse")
    }
}

/// `^gemini(-live)?-(\d+)` → the major version.
fn gemini_major_version(id: &str) -> Option<u32> {
    let id = id.to_ascii_lowercase();
    let rest = id.strip_prefix("gemini-")?;
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Function-call ids are sent only for `claude-*`, `gpt-oss-*` and Gemini ≥ 3.
fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-")
        || id.starts_with("gpt-oss-")
        || gemini_major_version(id).is_some_and(|v| v >= 3)
}

/// Gemini ≥ 3 (and non-Gemini models) take images inside `functionResponse.parts`.
fn supports_multimodal_function_response(id: &str) -> bool {
    gemini_major_version(id).is_none_or(|v| v >= 3)
}

/// Thought signatures must be base64 (length a multiple of 4).
fn valid_signature(sig: Option<&str>) -> Option<&str> {
    let sig = sig.filter(|s| !s.is_empty() && s.len() % 4 == 0)?;
    let body = sig.trim_end_matches('=');
    let padding = sig.len() - body.len();
    let ok = padding <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(sig)
}

fn inline_data(data: &str, mime_type: &str) -> Value {
    json!({ "inlineData": { "mimeType": mime_type, "data": data } })
}

/// `contents`: user → `user`, assistant → `model` (thinking as `thought:true` parts and
/// signatures only for the same provider+model), tool results → `functionResponse` parts
/// merged into one user turn.
fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let needs_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str, _: &Model, _: &AssistantMessage| -> String {
        if needs_id {
            sanitize_tool_call_id(id)
        } else {
            id.to_owned()
        }
    };
    let messages = transform_messages(&context.messages, model, Some(&normalize));
    let mut contents: Vec<Value> = Vec::with_capacity(messages.len());
    for msg in &messages {
        match msg {
            Message::User(u) => {
                let parts: Vec<Value> = match &u.content {
                    UserMessageContent::Text(s) => vec![json!({ "text": s })],
                    UserMessageContent::Blocks(b) => b
                        .iter()
                        .map(|c| match c {
                            UserContent::Text(t) => json!({ "text": t.text }),
                            UserContent::Image(i) => inline_data(&i.data, &i.mime_type),
                        })
                        .collect(),
                };
                if !parts.is_empty() {
                    contents.push(json!({ "role": "user", "parts": parts }));
                }
            }
            Message::Assistant(a) => {
                let same = a.provider == model.provider && a.model == model.id;
                let signature = |s: Option<&String>| {
                    if same {
                        valid_signature(s.map(String::as_str)).map(str::to_owned)
                    } else {
                        None
                    }
                };
                let mut parts = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => {
                            let sig = signature(t.text_signature.as_ref());
                            if t.text.trim().is_empty() && sig.is_none() {
                                continue;
                            }
                            let mut p = Map::new();
                            p.insert("text".into(), t.text.clone().into());
                            if let Some(sig) = sig {
                                p.insert("thoughtSignature".into(), sig.into());
                            }
                            parts.push(Value::Object(p));
                        }
                        AssistantContent::Thinking(t) => {
                            if same {
                                let sig = signature(t.thinking_signature.as_ref());
                                if t.thinking.trim().is_empty() && sig.is_none() {
                                    continue;
                                }
                                let mut p = Map::new();
                                p.insert("thought".into(), true.into());
                                p.insert("text".into(), t.thinking.clone().into());
                                if let Some(sig) = sig {
                                    p.insert("thoughtSignature".into(), sig.into());
                                }
                                parts.push(Value::Object(p));
                            } else if !t.thinking.trim().is_empty() {
                                parts.push(json!({ "text": t.thinking }));
                            }
                        }
                        AssistantContent::ToolCall(tc) => {
                            let mut call = Map::new();
                            call.insert("name".into(), tc.name.clone().into());
                            call.insert("args".into(), Value::Object(tc.arguments.clone()));
                            if needs_id {
                                call.insert("id".into(), tc.id.clone().into());
                            }
                            let mut p = Map::new();
                            p.insert("functionCall".into(), Value::Object(call));
                            if let Some(sig) = signature(tc.thought_signature.as_ref()) {
                                p.insert("thoughtSignature".into(), sig.into());
                            }
                            parts.push(Value::Object(p));
                        }
                    }
                }
                if !parts.is_empty() {
                    contents.push(json!({ "role": "model", "parts": parts }));
                }
            }
            Message::ToolResult(t) => {
                let text: Vec<&str> = t.content.iter().filter_map(UserContent::as_text).collect();
                let text = text.join("\n");
                let images: Vec<Value> = if model.supports_images() {
                    t.content
                        .iter()
                        .filter_map(|c| match c {
                            UserContent::Image(i) => Some(inline_data(&i.data, &i.mime_type)),
                            UserContent::Text(_) => None,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let nested = supports_multimodal_function_response(&model.id);
                let value = if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_owned()
                } else {
                    String::new()
                };
                let mut response = Map::new();
                response.insert("name".into(), t.tool_name.clone().into());
                let key = if t.is_error { "error" } else { "output" };
                response.insert("response".into(), json!({ key: value }));
                if !images.is_empty() && nested {
                    response.insert("parts".into(), Value::Array(images.clone()));
                }
                if needs_id {
                    response.insert("id".into(), t.tool_call_id.clone().into());
                }
                let part = json!({ "functionResponse": Value::Object(response) });
                let merged = contents.last_mut().and_then(|last| {
                    let is_user = last.get("role").and_then(Value::as_str) == Some("user");
                    let parts = last.get_mut("parts")?.as_array_mut()?;
                    let has_response = parts.iter().any(|p| p.get("functionResponse").is_some());
                    (is_user && has_response).then_some(parts)
                });
                match merged {
                    Some(parts) => parts.push(part),
                    None => contents.push(json!({ "role": "user", "parts": [part] })),
                }
                if !images.is_empty() && !nested {
                    let mut parts = vec![json!({ "text": "Tool result image:" })];
                    parts.extend(images);
                    contents.push(json!({ "role": "user", "parts": parts }));
                }
            }
        }
    }
    contents
}

/// `tools: [{functionDeclarations: [{name, description, parametersJsonSchema}]}]` and
/// whether any tool is strict (strict sampling needs Gemini ≥ 3).
///
/// `Err` when a tool requires JSON-schema constrained sampling that cannot be honoured.
fn convert_tools(tools: &[Tool], supports_strict: bool) -> Result<(Value, bool), StreamError> {
    let mut declarations = Vec::with_capacity(tools.len());
    let mut any_strict = false;
    for tool in tools {
        let strict = resolve_strict(tool, supports_strict)?;
        any_strict |= strict == Some(true);
        declarations.push(json!({
            "name": tool.name,
            "description": tool.description,
            "parametersJsonSchema": tool_parameters(tool, strict),
        }));
    }
    Ok((
        json!([{ "functionDeclarations": declarations }]),
        any_strict,
    ))
}

/// `resolveGoogleFunctionCallingMode`: `none`/`any` explicit, then `VALIDATED` when a tool is
/// strict, then `AUTO` for any other choice; nothing → no `toolConfig`.
fn function_calling_mode(choice: Option<&Value>, any_strict: bool) -> Option<&'static str> {
    match choice {
        Some(Value::String(s)) if s == "none" => Some("NONE"),
        Some(Value::String(s)) if s == "any" => Some("ANY"),
        _ if any_strict => Some("VALIDATED"),
        None | Some(Value::Null | Value::Bool(false)) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(_) => Some("AUTO"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        AssistantMessage, ImageContent, InputKind, StopReason, TextContent, ThinkingContent,
        ToolCall, ToolResultMessage, UserMessage,
    };

    fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            api: "google-generative-ai".into(),
            provider: "google".into(),
            base_url: "http://h/v1beta/".into(),
            input: vec![InputKind::Text, InputKind::Image],
            max_tokens: 8192,
            ..Default::default()
        }
    }

    fn header<'a>(r: &'a WireRequest, name: &str) -> Option<&'a str> {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn url_headers_and_missing_key() {
        let ctx = Context {
            system_prompt: Some("sys".into()),
            messages: vec![UserMessage::text("hi").into()],
            tools: None,
        };
        let m = model("gemini-2.0-flash");
        assert_eq!(
            build_request(&m, &ctx, &StreamOptions::default(), "")
                .unwrap_err()
                .to_string(),
            "No API key for provider: google"
        );
        let r = build_request(&m, &ctx, &StreamOptions::default(), "g-key").unwrap();
        assert_eq!(
            r.url,
            "http://h/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(header(&r, "x-goog-api-key"), Some("g-key"));
        assert_eq!(header(&r, "user-agent"), Some(pi_user_agent()));
        assert_eq!(
            r.body["systemInstruction"],
            json!({"role": "user", "parts": [{"text": "sys"}]})
        );
        assert_eq!(r.body["generationConfig"], json!({"maxOutputTokens": 8192}));
    }

    #[test]
    fn gemini3_replays_ids_signatures_and_thoughts() {
        let sig = "c2lnbmF0dXJl".to_owned();
        let mut a = AssistantMessage::empty("google-generative-ai", "google", "gemini-3-pro");
        a.stop_reason = StopReason::ToolUse;
        a.content = vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: Some(sig.clone()),
                redacted: None,
            }),
            AssistantContent::Text(TextContent {
                text: String::new(),
                text_signature: Some(sig.clone()),
            }),
            AssistantContent::Text(TextContent {
                text: "bad sig".into(),
                text_signature: Some("not base64!".into()),
            }),
            AssistantContent::ToolCall(ToolCall {
                id: "call|1".into(),
                name: "read".into(),
                thought_signature: Some(sig.clone()),
                ..Default::default()
            }),
        ];
        let results = [("call|1", false), ("x", true)].map(|(id, is_error)| {
            Message::ToolResult(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content: vec![
                    UserContent::text("out"),
                    UserContent::Image(ImageContent {
                        data: "AA==".into(),
                        mime_type: "image/png".into(),
                    }),
                ],
                is_error,
                ..Default::default()
            })
        });
        let ctx = Context {
            system_prompt: None,
            messages: [
                vec![UserMessage::text("q").into(), a.into()],
                results.to_vec(),
            ]
            .concat(),
            tools: None,
        };
        let c = convert_messages(&model("gemini-3-pro"), &ctx);
        assert_eq!(
            c[1]["parts"],
            json!([
                {"thought": true, "text": "hmm", "thoughtSignature": sig},
                {"text": "", "thoughtSignature": sig},
                {"text": "bad sig"},
                {"functionCall": {"name": "read", "args": {}, "id": "call|1"}, "thoughtSignature": sig},
            ])
        );
        let parts = c[2]["parts"].as_array().unwrap();
        assert_eq!(c.len(), 3, "both results merge into one user turn");
        assert_eq!(
            parts[0]["functionResponse"]["response"],
            json!({"output": "out"})
        );
        assert_eq!(parts[0]["functionResponse"]["id"], json!("call|1"));
        assert_eq!(
            parts[0]["functionResponse"]["parts"][0]["inlineData"]["data"],
            json!("AA==")
        );
        assert_eq!(
            parts[1]["functionResponse"]["response"],
            json!({"error": "out"})
        );
    }

    #[test]
    fn other_models_drop_foreign_thinking_signatures_and_ids() {
        let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "claude");
        a.stop_reason = StopReason::Stop;
        a.content = vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "why".into(),
                thinking_signature: Some("c2ln".into()),
                redacted: None,
            }),
            AssistantContent::Text(TextContent::new("answer")),
        ];
        let tr = Message::ToolResult(ToolResultMessage {
            tool_call_id: "t".into(),
            tool_name: "read".into(),
            content: vec![UserContent::Image(ImageContent {
                data: "AA==".into(),
                mime_type: "image/png".into(),
            })],
            ..Default::default()
        });
        let ctx = Context {
            system_prompt: None,
            messages: vec![a.into(), tr],
            tools: None,
        };
        let c = convert_messages(&model("gemini-2.5-flash"), &ctx);
        assert_eq!(c[0]["parts"], json!([{"text": "why"}, {"text": "answer"}]));
        assert_eq!(
            c[1]["parts"][0],
            json!({"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}})
        );
        assert_eq!(c[2]["parts"][0], json!({"text": "Tool result image:"}));
    }

    #[test]
    fn tools_and_function_calling_mode() {
        let tools = vec![Tool {
            name: "read".into(),
            description: "Read".into(),
            parameters: json!({"type": "object", "properties": {"p": {"type": "string", "description": "d"}}}),
            constrained_sampling: None,
        }];
        let ctx = Context {
            system_prompt: None,
            messages: vec![UserMessage::text("q").into()],
            tools: Some(tools),
        };
        let options = StreamOptions {
            tool_choice: Some(json!("any")),
            temperature: Some(0.25),
            ..Default::default()
        };
        let r = build_request(&model("gemini-2.0-flash"), &ctx, &options, "k").unwrap();
        assert_eq!(
            r.body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]["properties"]["p"]
                ["description"],
            json!("d")
        );
        assert_eq!(
            r.body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY"}})
        );
        assert_eq!(r.body["generationConfig"]["temperature"], json!(0.25));
        let r = build_request(
            &model("gemini-2.0-flash"),
            &ctx,
            &StreamOptions::default(),
            "k",
        )
        .unwrap();
        assert!(r.body.get("toolConfig").is_none());
    }

    #[test]
    fn versions_and_signatures() {
        assert_eq!(gemini_major_version("gemini-3-pro"), Some(3));
        assert_eq!(gemini_major_version("gemini-live-2.5-flash"), Some(2));
        assert_eq!(gemini_major_version("gemma-4"), None);
        assert!(requires_tool_call_id("claude-sonnet") && !requires_tool_call_id("gemini-2.5-pro"));
        assert!(valid_signature(Some("QUJD")).is_some());
        assert!(valid_signature(Some("QUI=")).is_some());
        assert!(valid_signature(Some("QU==")).is_some());
        assert!(valid_signature(Some("Q===")).is_none());
        assert!(valid_signature(Some("QUJ")).is_none());
        assert!(valid_signature(Some("QU-D")).is_none());
    }
}
