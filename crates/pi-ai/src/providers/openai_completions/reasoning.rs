//! Chat Completions reasoning fields: the effort to request and the per-dialect request fields
//! (`reasoning_effort`, `reasoning`, `thinking`, `enable_thinking`, chat-template kwargs) plus
//! the top-level reasoning budget.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `buildParams` (reasoning part),
//! `buildChatTemplateValues`, `resolveClampedThinkingBudget`.

use serde_json::{Map, Value, json};

use super::compat::{Compat, ThinkingFormat};
use super::sdk::{put, truthy};
use crate::types::{Model, StreamOptions, ThinkingLevel};

/// The reasoning level to request: `options.reasoning` clamped to the model (`None` = off).
pub(crate) fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    options
        .reasoning
        .and_then(|l| model.clamp_thinking_level(l.into()).reasoning())
}

/// The raw `thinkingLevelMap` entry for `key` (`None` = undefined).
pub(crate) fn level_map<'a>(model: &'a Model, key: &str) -> Option<&'a Value> {
    model.thinking_level_map.as_ref()?.get(key)
}

/// `map[level] ?? level`.
fn mapped_or_level(model: &Model, level: ThinkingLevel) -> Value {
    let key = crate::types::ModelThinkingLevel::from(level).as_str();
    match level_map(model, key) {
        Some(v) if !v.is_null() => v.clone(),
        _ => Value::String(key.to_owned()),
    }
}

fn level_str(level: ThinkingLevel) -> &'static str {
    crate::types::ModelThinkingLevel::from(level).as_str()
}

/// The reasoning dialect fields, then the top-level budget field.
pub(crate) fn apply_reasoning(
    body: &mut Map<String, Value>,
    model: &Model,
    options: &StreamOptions,
    compat: &Compat,
    effort: Option<ThinkingLevel>,
    max_tokens: u64,
) {
    let budget = effort.filter(|_| model.reasoning).and_then(|l| {
        let b = options.thinking_budgets.unwrap_or_default().for_level(l);
        let b = b.min(max_tokens.saturating_sub(1024));
        (b > 0).then_some(b)
    });
    if model.reasoning {
        let off = level_map(model, "off");
        match compat.thinking_format {
            ThinkingFormat::Zai => {
                let thinking = if effort.is_some() {
                    json!({"type": "enabled", "clear_thinking": false})
                } else {
                    json!({"type": "disabled"})
                };
                put(body, "thinking", thinking);
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    let v = level_map(model, level_str(l))
                        .cloned()
                        .unwrap_or_else(|| json!(level_str(l)));
                    if v.is_string() {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::Qwen => {
                put(body, "enable_thinking", effort.is_some());
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    let v = mapped_or_level(model, l);
                    if v.is_string() {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::QwenChatTemplate => {
                put(
                    body,
                    "chat_template_kwargs",
                    json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
                );
            }
            ThinkingFormat::ChatTemplate => {
                if let Some(v) =
                    chat_template_values(model, effort, &compat.chat_template_kwargs, budget)
                {
                    put(body, "chat_template_kwargs", v);
                }
            }
            ThinkingFormat::Baseten => {
                if let Some(v) =
                    chat_template_values(model, effort, &compat.chat_template_args, budget)
                {
                    put(body, "chat_template_args", v);
                }
                if compat.supports_reasoning_effort {
                    let mapped = match effort {
                        Some(l) => level_map(model, level_str(l)),
                        None => off,
                    };
                    let v = match mapped {
                        None => effort.map(|l| json!(level_str(l))),
                        Some(v) => Some(v.clone()),
                    };
                    if let Some(v) = v.filter(Value::is_string) {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::DeepSeek => {
                if effort.is_some() {
                    put(body, "thinking", json!({"type": "enabled"}));
                } else if off.is_none_or(|v| !v.is_null()) {
                    put(body, "thinking", json!({"type": "disabled"}));
                }
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    put(body, "reasoning_effort", mapped_or_level(model, l));
                }
            }
            ThinkingFormat::OpenRouter => {
                if let Some(l) = effort {
                    put(
                        body,
                        "reasoning",
                        json!({"effort": mapped_or_level(model, l)}),
                    );
                } else if off.is_none_or(|v| !v.is_null()) {
                    let v = off.cloned().unwrap_or_else(|| json!("none"));
                    put(body, "reasoning", json!({ "effort": v }));
                }
            }
            ThinkingFormat::AntLing => {
                if let Some(v) = effort
                    .and_then(|l| level_map(model, level_str(l)))
                    .filter(|v| v.is_string())
                {
                    put(body, "reasoning", json!({ "effort": v }));
                }
            }
            ThinkingFormat::Together => {
                put(body, "reasoning", json!({"enabled": effort.is_some()}));
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    put(body, "reasoning_effort", mapped_or_level(model, l));
                }
            }
            ThinkingFormat::StringThinking => {
                if let Some(l) = effort {
                    put(body, "thinking", mapped_or_level(model, l));
                } else if off.is_none_or(|v| !v.is_null()) {
                    put(
                        body,
                        "thinking",
                        off.cloned().unwrap_or_else(|| json!("none")),
                    );
                }
            }
            ThinkingFormat::OpenAi => {
                if compat.supports_reasoning_effort {
                    match effort {
                        Some(l) => put(body, "reasoning_effort", mapped_or_level(model, l)),
                        None => {
                            if let Some(v) = off.filter(|v| v.is_string()) {
                                put(body, "reasoning_effort", v.clone());
                            }
                        }
                    }
                }
            }
        }
    }
    if let (Some(field), Some(b)) = (&compat.thinking_token_budget_field, budget) {
        put(body, field, b);
    }
}

/// `chatTemplateKwargs` / `chatTemplateArgs` with `{$var, omitWhenOff}` resolved; `None` when
/// nothing remains.
fn chat_template_values(
    model: &Model,
    effort: Option<ThinkingLevel>,
    values: &Map<String, Value>,
    budget: Option<u64>,
) -> Option<Value> {
    let mut out = Map::new();
    for (k, v) in values {
        let resolved = match v {
            Value::Object(o) => {
                if effort.is_none() && o.get("omitWhenOff").is_some_and(truthy) {
                    None
                } else {
                    match o.get("$var").and_then(Value::as_str) {
                        Some("thinking.enabled") => Some(json!(effort.is_some())),
                        Some("thinking.budget") => budget.map(|b| json!(b)),
                        _ => {
                            let mapped = match effort {
                                Some(l) => level_map(model, level_str(l)),
                                None => level_map(model, "off"),
                            };
                            match mapped {
                                None => effort.map(|l| json!(level_str(l))),
                                Some(Value::String(s)) => Some(json!(s)),
                                Some(_) => None,
                            }
                        }
                    }
                }
            }
            other => Some(other.clone()),
        };
        if let Some(r) = resolved {
            out.insert(k.clone(), r);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}
