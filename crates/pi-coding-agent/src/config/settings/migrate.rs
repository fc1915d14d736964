//! Load-time migrations of old `settings.json` shapes.
//!
//! Mirrors pi-coding-agent 0.85.0 `SettingsManager.migrateSettings`:
//! - `queueMode` → `steeringMode` (when `steeringMode` is absent);
//! - boolean `websockets` → `transport` (`"websocket"` / `"sse"`, when `transport` is absent);
//! - object `skills: {enableSkillCommands?, customDirectories?}` → `enableSkillCommands` and the
//!   array `skills` (dropped when there are no directories);
//! - `retry.maxDelayMs` → `retry.provider.maxRetryDelayMs` (unless already set), then removed.

use serde_json::{Map, Value};

/// Applies every migration to a parsed settings object.
pub fn migrate(mut settings: Map<String, Value>) -> Map<String, Value> {
    if !settings.contains_key("steeringMode")
        && let Some(v) = settings.remove("queueMode")
    {
        settings.insert("steeringMode".into(), v);
    }

    if !settings.contains_key("transport")
        && let Some(Value::Bool(ws)) = settings.get("websockets")
    {
        let transport = if *ws { "websocket" } else { "sse" };
        settings.insert("transport".into(), Value::from(transport));
        settings.remove("websockets");
    }

    if let Some(Value::Object(skills)) = settings.get("skills").cloned() {
        if let Some(enable) = skills.get("enableSkillCommands")
            && !settings.contains_key("enableSkillCommands")
        {
            settings.insert("enableSkillCommands".into(), enable.clone());
        }
        match skills.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                settings.insert("skills".into(), Value::Array(dirs.clone()));
            }
            _ => {
                settings.remove("skills");
            }
        }
    }

    if let Some(Value::Object(retry)) = settings.get_mut("retry") {
        if let Some(max_delay) = retry.get("maxDelayMs").filter(|v| v.is_number()).cloned() {
            let provider_has = retry
                .get("provider")
                .and_then(Value::as_object)
                .and_then(|p| p.get("maxRetryDelayMs"))
                .is_some_and(|v| !v.is_null());
            if !provider_has {
                let mut provider = retry
                    .get("provider")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                provider.insert("maxRetryDelayMs".into(), max_delay);
                retry.insert("provider".into(), Value::Object(provider));
            }
        }
        retry.remove("maxDelayMs");
    }

    settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn queue_mode_becomes_steering_mode() {
        let m = migrate(obj(json!({"queueMode": "all"})));
        assert_eq!(Value::Object(m), json!({"steeringMode": "all"}));
        let m = migrate(obj(
            json!({"queueMode": "all", "steeringMode": "one-at-a-time"}),
        ));
        assert_eq!(m["steeringMode"], "one-at-a-time");
        assert_eq!(m["queueMode"], "all");
    }

    #[test]
    fn websockets_boolean_becomes_transport() {
        assert_eq!(
            Value::Object(migrate(obj(json!({"websockets": true})))),
            json!({"transport": "websocket"})
        );
        assert_eq!(
            Value::Object(migrate(obj(json!({"websockets": false})))),
            json!({"transport": "sse"})
        );
        let m = migrate(obj(json!({"websockets": true, "transport": "auto"})));
        assert_eq!(m["transport"], "auto");
        assert_eq!(m["websockets"], true);
    }

    #[test]
    fn skills_object_becomes_array() {
        let m = migrate(obj(
            json!({"skills": {"enableSkillCommands": false, "customDirectories": ["~/s"]}}),
        ));
        assert_eq!(
            Value::Object(m),
            json!({"skills": ["~/s"], "enableSkillCommands": false})
        );
        let m = migrate(obj(json!({"skills": {"customDirectories": []}})));
        assert_eq!(Value::Object(m), json!({}));
        let m = migrate(obj(json!({"skills": ["a"]})));
        assert_eq!(m["skills"], json!(["a"]));
    }

    #[test]
    fn retry_max_delay_moves_to_provider() {
        let m = migrate(obj(json!({"retry": {"enabled": true, "maxDelayMs": 5000}})));
        assert_eq!(
            Value::Object(m),
            json!({"retry": {"enabled": true, "provider": {"maxRetryDelayMs": 5000}}})
        );
        let m = migrate(obj(
            json!({"retry": {"maxDelayMs": 5000, "provider": {"maxRetryDelayMs": 7}}}),
        ));
        assert_eq!(
            Value::Object(m),
            json!({"retry": {"provider": {"maxRetryDelayMs": 7}}})
        );
    }
}
