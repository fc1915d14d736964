//! Keeping the extension's copy of the session current: before each call the host sends
//! what changed since the last one — a new session, the entries appended, a moved leaf, the
//! state values that differ — and never the whole session again.

use serde_json::{Map, Value, json};

use super::connection::Connection;
use crate::extensions::api::Pi;
use crate::extensions::context::ExtensionContext;
use crate::extensions::extension::FlagValue;

/// Entries per `mirror/entries` notification (a resumed session arrives in batches).
const ENTRIES_PER_BATCH: usize = 500;

/// What the extension was last told.
#[derive(Default)]
pub struct Mirror {
    session_id: Option<String>,
    next_entry: usize,
    leaf_id: Option<String>,
    state: Map<String, Value>,
}

fn flag_json(v: &FlagValue) -> Value {
    match v {
        FlagValue::Bool(b) => Value::Bool(*b),
        FlagValue::String(s) => Value::String(s.clone()),
    }
}

impl Mirror {
    /// Sends what changed since the last sync: the session of `ctx`, its entries, leaf and
    /// state, and the values of `flags` (the extension's own).
    pub fn sync(
        &mut self,
        conn: &Connection,
        ctx: &ExtensionContext,
        pi: Option<&Pi>,
        flags: &[String],
    ) {
        let mut state = Map::new();
        if let Some(pi) = pi {
            let values: Map<String, Value> = flags
                .iter()
                .filter_map(|f| {
                    pi.get_flag(f)
                        .ok()
                        .flatten()
                        .map(|v| (f.clone(), flag_json(&v)))
                })
                .collect();
            state.insert("flags".into(), Value::Object(values));
        }
        if let Some(view) = ctx.session() {
            let id = view.session_id();
            if self.session_id.as_deref() != Some(id.as_str()) {
                conn.notify(
                    "mirror/session",
                    json!({
                        "sessionId": id,
                        "sessionFile": view.session_file().map(|p| p.display().to_string()),
                        "cwd": ctx.cwd().display().to_string(),
                        "models": view.available_models().iter().map(model_wire).collect::<Vec<_>>(),
                    }),
                );
                self.session_id = Some(id);
                self.next_entry = 0;
                self.leaf_id = None;
                self.state.clear();
            }
            let mut last_sent: Option<String> = None;
            loop {
                let log = view.entries_since(self.next_entry, ENTRIES_PER_BATCH);
                if !log.entries.is_empty() {
                    last_sent = log
                        .entries
                        .last()
                        .and_then(|e| e.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    conn.notify("mirror/entries", json!({"entries": log.entries}));
                }
                self.next_entry = log.next;
                if !log.more {
                    if log.leaf_id != self.leaf_id {
                        if log.leaf_id != last_sent {
                            conn.notify("mirror/leaf", json!({"leafId": log.leaf_id}));
                        }
                        self.leaf_id = log.leaf_id;
                    }
                    break;
                }
            }
            let model = view.model().map(|m| model_wire(&m));
            state.insert("model".into(), model.unwrap_or(Value::Null));
            state.insert(
                "thinkingLevel".into(),
                json!(view.thinking_level().as_str()),
            );
            state.insert("activeTools".into(), json!(view.active_tools()));
            // `pi.getAllTools()`: every tool the session could activate.
            let all: Vec<Value> = view
                .all_tools()
                .into_iter()
                .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
                .collect();
            state.insert("allTools".into(), Value::Array(all));
            state.insert("isIdle".into(), json!(view.is_idle()));
        }
        let changed: Map<String, Value> = state
            .into_iter()
            .filter(|(k, v)| self.state.get(k) != Some(v))
            .collect();
        if !changed.is_empty() {
            for (k, v) in &changed {
                self.state.insert(k.clone(), v.clone());
            }
            conn.notify("mirror/state", Value::Object(changed));
        }
    }
}

/// A model as an extension process sees it (`ctx.model`, `model_select`): pi's model fields
/// without `headers`, which may carry credentials from `models.json`.
pub(super) fn model_wire(m: &pi_ai::Model) -> Value {
    json!({
        "provider": m.provider, "id": m.id, "name": m.name, "api": m.api,
        "baseUrl": m.base_url, "reasoning": m.reasoning, "input": m.input, "cost": m.cost,
        "contextWindow": m.context_window, "maxTokens": m.max_tokens,
    })
}
