//! Settings tests: merge, migrations, broken files, locked partial writes (all in temp dirs).

use super::*;
use pi_ai::ModelThinkingLevel;
use serde_json::json;
use std::fs;

struct Dirs {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let cwd = tmp.path().join("project");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(cwd.join(".pi")).unwrap();
    Dirs {
        _tmp: tmp,
        agent,
        cwd,
    }
}

fn write(path: &Path, v: Value) {
    fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn deep_merge_objects_recursive_arrays_and_scalars_replaced() {
    let base = json!({"a": {"x": 1, "y": {"z": 1}}, "list": [1, 2], "s": "g"});
    let over = json!({"a": {"y": {"w": 2}}, "list": [3], "s": "p"});
    let merged = deep_merge(base.as_object().unwrap(), over.as_object().unwrap());
    assert_eq!(
        Value::Object(merged),
        json!({"a": {"x": 1, "y": {"z": 1, "w": 2}}, "list": [3], "s": "p"})
    );
}

#[test]
fn project_overrides_global_when_trusted_only() {
    let d = dirs();
    write(
        &d.agent.join("settings.json"),
        json!({"defaultModel": "g", "compaction": {"enabled": false, "reserveTokens": 1000}}),
    );
    write(
        &d.cwd.join(".pi/settings.json"),
        json!({"defaultModel": "p", "compaction": {"reserveTokens": 2000}}),
    );
    let trusted = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(trusted.default_model(), Some("p"));
    let c = trusted.compaction();
    assert!(!c.enabled);
    assert_eq!(c.reserve_tokens, 2000);
    assert_eq!(c.keep_recent_tokens, 20000);

    let mut untrusted = SettingsManager::load(&d.cwd, &d.agent, false);
    assert_eq!(untrusted.default_model(), Some("g"));
    assert_eq!(untrusted.compaction().reserve_tokens, 1000);
    untrusted.set_project_trusted(true);
    assert_eq!(untrusted.default_model(), Some("p"));
    untrusted.set_project_trusted(false);
    assert_eq!(untrusted.default_model(), Some("g"));
}

#[test]
fn defaults_when_nothing_is_set() {
    let d = dirs();
    let s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.default_provider(), None);
    assert_eq!(s.default_thinking_level(), None);
    assert_eq!(s.steering_mode(), QueueMode::OneAtATime);
    assert_eq!(s.follow_up_mode(), QueueMode::OneAtATime);
    assert_eq!(s.transport(), "auto");
    assert_eq!(s.http_idle_timeout_ms(), Ok(300_000));
    assert_eq!(s.websocket_connect_timeout_ms(), Ok(None));
    assert_eq!(
        s.retry(),
        RetrySettings {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000
        }
    );
    assert_eq!(
        s.provider_retry(),
        ProviderRetrySettings {
            timeout_ms: None,
            max_retries: None,
            max_retry_delay_ms: 60_000
        }
    );
    assert_eq!(
        s.compaction(),
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000
        }
    );
    assert_eq!(
        s.branch_summary(),
        BranchSummarySettings {
            reserve_tokens: 16384,
            skip_prompt: false
        }
    );
    assert!(s.image_auto_resize());
    assert!(!s.block_images());
    assert!(s.enable_skill_commands());
    assert_eq!(s.default_project_trust(), ProjectTrustDefault::Ask);
    assert_eq!(s.default_tools(), None);
    assert_eq!(s.enabled_models(), None);
    assert_eq!(s.shell_path(), None);
    assert_eq!(s.shell_command_prefix(), None);
    assert_eq!(s.session_dir(), None);
    assert_eq!(s.thinking_budgets(), None);
}

#[test]
fn typed_values_are_read() {
    let s = SettingsManager::in_memory(
        json!({
            "defaultProvider": "anthropic",
            "defaultModel": "claude-x",
            "defaultThinkingLevel": "high",
            "modelThinkingLevels": {"openai/gpt-5": "low", "bad/x": "nope"},
            "enabledModels": ["anthropic/*", "gpt-5:high"],
            "steeringMode": "all",
            "followUpMode": "all",
            "retry": {"enabled": false, "maxRetries": 5, "baseDelayMs": 100,
                      "provider": {"timeoutMs": 9000, "maxRetries": 2, "maxRetryDelayMs": 0}},
            "images": {"autoResize": false, "blockImages": true},
            "shellPath": "/bin/zsh",
            "shellCommandPrefix": "shopt -s expand_aliases",
            "sessionDir": "/tmp/sessions",
            "defaultTools": ["read", "ls"],
            "thinkingBudgets": {"low": 100},
            "defaultProjectTrust": "always",
        })
        .as_object()
        .unwrap()
        .clone(),
    );
    assert_eq!(s.default_provider(), Some("anthropic"));
    assert_eq!(s.default_model(), Some("claude-x"));
    assert_eq!(s.default_thinking_level(), Some(ModelThinkingLevel::High));
    assert_eq!(
        s.model_thinking_level("openai", "gpt-5"),
        Some(ModelThinkingLevel::Low)
    );
    // Not a level: pi passes it on and clamps it to the model's lowest level (`off`).
    assert_eq!(
        s.model_thinking_level("bad", "x"),
        Some(ModelThinkingLevel::Off)
    );
    assert_eq!(s.all_model_thinking_levels().len(), 2);
    assert_eq!(
        s.enabled_models(),
        Some(vec!["anthropic/*".to_owned(), "gpt-5:high".to_owned()])
    );
    assert_eq!(s.steering_mode(), QueueMode::All);
    assert_eq!(s.follow_up_mode(), QueueMode::All);
    assert!(!s.retry().enabled);
    assert_eq!(s.retry().max_retries, 5);
    assert_eq!(s.retry().base_delay_ms, 100);
    assert_eq!(s.provider_retry().timeout_ms, Some(9000));
    assert_eq!(s.provider_retry().max_retries, Some(2));
    assert_eq!(s.provider_retry().max_retry_delay_ms, 0);
    assert!(!s.image_auto_resize());
    assert!(s.block_images());
    assert_eq!(s.shell_path(), Some(PathBuf::from("/bin/zsh")));
    assert_eq!(s.shell_command_prefix(), Some("shopt -s expand_aliases"));
    assert_eq!(s.session_dir(), Some(PathBuf::from("/tmp/sessions")));
    assert_eq!(
        s.default_tools(),
        Some(vec!["read".to_owned(), "ls".to_owned()])
    );
    let b = s.thinking_budgets().unwrap();
    assert_eq!(
        (b.minimal, b.low, b.medium, b.high),
        (1024, 100, 8192, 16384)
    );
    assert_eq!(s.default_project_trust(), ProjectTrustDefault::Always);
}

#[test]
fn default_project_trust_is_global_only() {
    let d = dirs();
    write(
        &d.cwd.join(".pi/settings.json"),
        json!({"defaultProjectTrust": "always"}),
    );
    let s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.default_project_trust(), ProjectTrustDefault::Ask);
}

#[test]
fn http_idle_timeout_forms() {
    let s = |v: Value| {
        SettingsManager::in_memory(json!({"httpIdleTimeoutMs": v}).as_object().unwrap().clone())
    };
    assert_eq!(s(json!(0)).http_idle_timeout_ms(), Ok(0));
    assert_eq!(s(json!(1500.7)).http_idle_timeout_ms(), Ok(1500));
    assert_eq!(s(json!("disabled")).http_idle_timeout_ms(), Ok(0));
    assert_eq!(s(json!(" 2000 ")).http_idle_timeout_ms(), Ok(2000));
    assert_eq!(
        s(json!(-1))
            .http_idle_timeout_ms()
            .map_err(|e| e.to_string()),
        Err("Invalid httpIdleTimeoutMs setting: -1".to_owned())
    );
    assert_eq!(
        s(json!("soon"))
            .http_idle_timeout_ms()
            .map_err(|e| e.to_string()),
        Err("Invalid httpIdleTimeoutMs setting: soon".to_owned())
    );
}

#[test]
fn stream_settings_zero_idle_means_no_request_limit() {
    let s =
        SettingsManager::in_memory(json!({"httpIdleTimeoutMs": 0}).as_object().unwrap().clone());
    let st = s.stream_settings().unwrap();
    assert_eq!(st.idle_timeout_ms, 0);
    assert_eq!(st.timeout_ms, 2_147_483_647);
    assert_eq!(st.max_retry_delay_ms, 60_000);
    assert_eq!(st.max_retries, None);
    assert_eq!(st.transport, "auto");

    let s = SettingsManager::in_memory(
        json!({"httpIdleTimeoutMs": 1000, "retry": {"provider": {"timeoutMs": 5}}})
            .as_object()
            .unwrap()
            .clone(),
    );
    let st = s.stream_settings().unwrap();
    assert_eq!(st.idle_timeout_ms, 1000);
    assert_eq!(st.timeout_ms, 5);

    let s = SettingsManager::in_memory(Map::new());
    assert_eq!(s.stream_settings().unwrap().timeout_ms, 300_000);
}

#[test]
fn migrations_apply_on_load_without_rewriting_the_file() {
    let d = dirs();
    let path = d.agent.join("settings.json");
    write(
        &path,
        json!({"queueMode": "all", "retry": {"maxDelayMs": 1234}}),
    );
    let before = fs::read_to_string(&path).unwrap();
    let s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.steering_mode(), QueueMode::All);
    assert_eq!(s.provider_retry().max_retry_delay_ms, 1234);
    assert_eq!(fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn broken_global_file_is_reported_with_line_and_never_overwritten() {
    let d = dirs();
    let path = d.agent.join("settings.json");
    let broken = "{\n  \"defaultModel\": \"x\",\n  oops\n}";
    fs::write(&path, broken).unwrap();
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.default_model(), None);
    let errors = s.drain_errors();
    assert_eq!(errors.len(), 1);
    // The reference's text for the same file.
    assert_eq!(
        errors[0].diagnostic(),
        format!(
            "Invalid settings file {}: Expected double-quoted property name in JSON at position 27 (line 3 column 3)",
            path.display()
        )
    );
    s.set_default_model("y");
    assert_eq!(s.default_model(), Some("y"));
    assert_eq!(fs::read_to_string(&path).unwrap(), broken);
    assert!(s.drain_errors().is_empty());
}

#[test]
fn broken_project_file_is_a_diagnostic_and_global_still_loads() {
    let d = dirs();
    write(&d.agent.join("settings.json"), json!({"defaultModel": "g"}));
    fs::write(d.cwd.join(".pi/settings.json"), "[1,").unwrap();
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.default_model(), Some("g"));
    let errors = s.drain_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].scope, SettingsScope::Project);
}

#[test]
fn non_object_settings_is_an_error() {
    assert_eq!(
        parse_settings("[]").unwrap_err().to_string(),
        "expected a JSON object"
    );
    assert_eq!(parse_settings("\u{feff}{}"), Ok(Map::new()));
    assert_eq!(parse_settings(""), Ok(Map::new()));
}

#[test]
fn setter_writes_global_file_two_space_no_trailing_newline() {
    let d = dirs();
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    s.set_default_model_and_provider("openai", "gpt-5");
    let text = fs::read_to_string(d.agent.join("settings.json")).unwrap();
    assert_eq!(
        text,
        "{\n  \"defaultProvider\": \"openai\",\n  \"defaultModel\": \"gpt-5\"\n}"
    );
    assert!(!d.agent.join("settings.json.lock").exists());
}

#[test]
fn setter_preserves_external_edits_of_other_fields() {
    // settings-manager-bug: fields changed by another process survive our write.
    let d = dirs();
    let path = d.agent.join("settings.json");
    write(&path, json!({"theme": "dark", "defaultModel": "a"}));
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    write(
        &path,
        json!({"theme": "light", "defaultModel": "a", "packages": ["npm:x"]}),
    );
    s.set_default_model("b");
    assert_eq!(
        read(&path),
        json!({"theme": "light", "defaultModel": "b", "packages": ["npm:x"]})
    );
}

#[test]
fn nested_setter_replaces_only_its_key() {
    let d = dirs();
    let path = d.agent.join("settings.json");
    write(&path, json!({"retry": {"maxRetries": 7}}));
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    write(
        &path,
        json!({"retry": {"maxRetries": 9, "baseDelayMs": 10}}),
    );
    s.set_retry_enabled(false);
    assert_eq!(
        read(&path),
        json!({"retry": {"maxRetries": 9, "baseDelayMs": 10, "enabled": false}})
    );
    assert!(!s.retry().enabled);
    s.set_compaction_enabled(false);
    assert_eq!(read(&path)["compaction"], json!({"enabled": false}));
}

#[test]
fn project_values_are_never_written_to_the_global_file() {
    let d = dirs();
    write(
        &d.cwd.join(".pi/settings.json"),
        json!({"defaultModel": "project-model"}),
    );
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    s.set_default_thinking_level(ModelThinkingLevel::Low);
    assert_eq!(
        read(&d.agent.join("settings.json")),
        json!({"defaultThinkingLevel": "low"})
    );
    assert_eq!(s.default_model(), Some("project-model"));
}

#[test]
fn model_thinking_level_setter_and_enabled_models_removal() {
    let d = dirs();
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    s.set_model_thinking_level("openai", "gpt-5", ModelThinkingLevel::High);
    s.set_enabled_models(Some(vec!["a".into()]));
    assert_eq!(
        read(&d.agent.join("settings.json")),
        json!({"modelThinkingLevels": {"openai/gpt-5": "high"}, "enabledModels": ["a"]})
    );
    s.set_enabled_models(None);
    assert_eq!(
        read(&d.agent.join("settings.json")),
        json!({"modelThinkingLevels": {"openai/gpt-5": "high"}})
    );
}

#[test]
fn in_memory_manager_writes_nothing() {
    let mut s = SettingsManager::in_memory(Map::new());
    s.set_default_model("m");
    assert_eq!(s.default_model(), Some("m"));
    assert!(s.drain_errors().is_empty());
}

#[test]
fn conformance_scenario_settings_load() {
    // The settings the conformance scenarios write.
    let d = dirs();
    write(
        &d.agent.join("settings.json"),
        json!({"compaction": {"keepRecentTokens": 10}}),
    );
    let s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.compaction().keep_recent_tokens, 10);
    assert_eq!(s.compaction().reserve_tokens, 16384);
    write(
        &d.agent.join("settings.json"),
        json!({"retry": {"baseDelayMs": 50}}),
    );
    let s = SettingsManager::load(&d.cwd, &d.agent, true);
    assert_eq!(s.retry().base_delay_ms, 50);
    assert_eq!(s.retry().max_retries, 3);
    assert!(s.retry().enabled);
}

/// Observed on pi 0.85.0: `defaultThinkingLevel: "bogus"` runs a reasoning model with `off`
/// (`clampThinkingLevel` of an unknown level), silently; `null` means unset.
#[test]
fn a_default_thinking_level_that_is_not_a_level_reads_as_off() {
    let level = |v: Value| {
        SettingsManager::in_memory(
            json!({"defaultThinkingLevel": v})
                .as_object()
                .unwrap()
                .clone(),
        )
        .default_thinking_level()
    };
    assert_eq!(level(json!("bogus")), Some(ModelThinkingLevel::Off));
    assert_eq!(level(json!(3)), Some(ModelThinkingLevel::Off));
    assert_eq!(level(json!("high")), Some(ModelThinkingLevel::High));
    assert_eq!(level(json!(null)), None);
}

#[test]
fn a_settings_file_past_the_size_limit_is_an_error_and_is_never_written() {
    let d = dirs();
    let path = d.agent.join("settings.json");
    // A sparse file one byte past the limit.
    let f = fs::File::create(&path).unwrap();
    f.set_len(crate::config::text::MAX_CONFIG_BYTES + 1)
        .unwrap();
    drop(f);
    let mut s = SettingsManager::load(&d.cwd, &d.agent, true);
    let errors = s.drain_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].scope, SettingsScope::Global);
    assert_eq!(
        errors[0].message,
        "file larger than 67108864 bytes, the limit of a configuration file"
    );
    // A setter does not write over a file it could not read.
    s.set_default_model_and_provider("openai", "gpt-5");
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        crate::config::text::MAX_CONFIG_BYTES + 1
    );
}
