//! One-time start-up migrations of old agent-directory layouts.
//!
//! Mirrors pi-coding-agent 0.85.0 `migrations.js` (`runMigrations`):
//! - `oauth.json` and settings `apiKeys` → `auth.json` (only when `auth.json` does not exist;
//!   written before anything is removed, see [`migrate_auth_to_auth_json`];
//!   `oauth.json` is renamed `oauth.json.migrated`; `apiKeys` is removed from settings);
//! - stray `<agentDir>/*.jsonl` sessions → `sessions/--<cwd>--/` by their header's `cwd`;
//! - `commands/` → `prompts/` (global and project), reported as
//!   `Migrated <Global|Project> commands/ → prompts/`;
//! - warnings for deprecated `hooks/` and custom `tools/` directories.
//!
//! Not mirrored: `tools/` → `bin/` for managed binaries and the keybindings file format.

use std::path::Path;

use serde_json::{Map, Value};

use super::agent_paths::CONFIG_DIR_NAME;
use super::replace::replace_file;
use super::text::strip_bom;

/// What the migrations did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MigrationReport {
    /// Providers whose credentials moved into `auth.json`.
    pub migrated_auth_providers: Vec<String>,
    /// Lines pi prints on stdout (`Migrated … commands/ → prompts/`, or a warning).
    pub messages: Vec<String>,
    /// Deprecation warnings (printed as `Warning: <w>` in interactive mode).
    pub deprecation_warnings: Vec<String>,
}

fn read_json(path: &Path) -> Option<Value> {
    let text = crate::config::text::read_config_text(path).ok()?;
    pi_ai::json_depth::from_str(strip_bom(&text), pi_ai::json_depth::MAX_DOCUMENT_DEPTH).ok()
}

/// `migrateAuthToAuthJson`.
///
/// Order (pi-rs): `auth.json` is written first (atomically, `0600`); only once it is on disk are
/// `apiKeys` removed from `settings.json` and `oauth.json` renamed, so a crash in between leaves
/// every credential readable somewhere (pi removes them first). When `auth.json` cannot be
/// written, nothing is removed or renamed.
pub(crate) fn migrate_auth_to_auth_json(agent_dir: &Path) -> Vec<String> {
    let auth_path = agent_dir.join("auth.json");
    if auth_path.exists() {
        return Vec::new();
    }
    let mut migrated = Map::new();
    let mut providers = Vec::new();
    let oauth_path = agent_dir.join("oauth.json");
    let mut from_oauth = false;
    if let Some(Value::Object(oauth)) = read_json(&oauth_path) {
        for (provider, cred) in oauth {
            let mut entry = Map::new();
            entry.insert("type".into(), Value::from("oauth"));
            if let Value::Object(fields) = cred {
                entry.extend(fields);
            }
            migrated.insert(provider.clone(), Value::Object(entry));
            providers.push(provider);
        }
        from_oauth = true;
    }
    let settings_path = agent_dir.join("settings.json");
    let mut settings_without_keys = None;
    if let Some(Value::Object(mut settings)) = read_json(&settings_path)
        && let Some(Value::Object(keys)) = settings.get("apiKeys").cloned()
    {
        for (provider, key) in keys {
            if let Value::String(k) = key
                && !migrated.contains_key(&provider)
            {
                let mut entry = Map::new();
                entry.insert("type".into(), Value::from("api_key"));
                entry.insert("key".into(), Value::from(k));
                migrated.insert(provider.clone(), Value::Object(entry));
                providers.push(provider);
            }
        }
        settings.remove("apiKeys");
        settings_without_keys = Some(settings);
    }
    if !migrated.is_empty() {
        let Ok(text) = pi_ai::json::to_string_pretty(&Value::Object(migrated)) else {
            return Vec::new();
        };
        let _ = std::fs::create_dir_all(agent_dir);
        if replace_file(&auth_path, text.as_bytes(), 0o600).is_err() {
            return Vec::new();
        }
    }
    if let Some(settings) = settings_without_keys
        && let Ok(text) = pi_ai::json::to_string_pretty(&Value::Object(settings))
    {
        let _ = replace_file(&settings_path, text.as_bytes(), 0o666);
    }
    if from_oauth {
        let _ = std::fs::rename(&oauth_path, agent_dir.join("oauth.json.migrated"));
    }
    providers
}

/// The session directory name of a cwd: `--<path with / \ : as ->--`.
pub(crate) fn encode_session_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// The first line of `path` without its `\n`, if it is UTF-8, not blank and at most
/// [`crate::config::text::MAX_CONFIG_BYTES`] long (a session header is far shorter; the
/// limit of what the start-up migrations read).
fn first_line(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let limit = crate::config::text::MAX_CONFIG_BYTES;
    let mut reader = std::io::BufReader::new(file.take(limit + 1));
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.len() as u64 > limit {
        return None;
    }
    let line = String::from_utf8(line).ok()?;
    (!line.trim().is_empty()).then_some(line)
}

/// `migrateSessionsFromAgentRoot`.
pub(crate) fn migrate_sessions_from_agent_root(agent_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(agent_dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if !path.is_file() || path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        // Only the first line is read (pi reads the whole file to split off its first line),
        // and at most a session line's limit of it.
        let Some(first) = first_line(&path) else {
            continue;
        };
        let Ok(header) =
            pi_ai::json_depth::from_str::<Value>(&first, pi_ai::json_depth::MAX_DOCUMENT_DEPTH)
        else {
            continue;
        };
        let (Some("session"), Some(cwd)) = (
            header.get("type").and_then(Value::as_str),
            header
                .get("cwd")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty()),
        ) else {
            continue;
        };
        let dir = agent_dir
            .join("sessions")
            .join(encode_session_dir_name(cwd));
        if std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        let Some(name) = path.file_name() else {
            continue;
        };
        let target = dir.join(name);
        if !target.exists() {
            let _ = std::fs::rename(&path, target);
        }
    }
}

fn migrate_commands_to_prompts(base: &Path, label: &str, messages: &mut Vec<String>) {
    let commands = base.join("commands");
    let prompts = base.join("prompts");
    if commands.exists() && !prompts.exists() {
        match std::fs::rename(&commands, &prompts) {
            Ok(()) => messages.push(format!("Migrated {label} commands/ → prompts/")),
            Err(e) => messages.push(format!(
                "Warning: Could not migrate {label} commands/ to prompts/: {e}"
            )),
        }
    }
}

fn deprecated_dirs(base: &Path, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    if base.join("hooks").exists() {
        out.push(format!(
            "{label} hooks/ directory found. Hooks have been renamed to extensions."
        ));
    }
    if let Ok(entries) = std::fs::read_dir(base.join("tools")) {
        let custom = entries.filter_map(Result::ok).any(|e| {
            let name = e.file_name().to_string_lossy().to_lowercase();
            !matches!(name.as_str(), "fd" | "rg" | "fd.exe" | "rg.exe") && !name.starts_with('.')
        });
        if custom {
            out.push(format!(
                "{label} tools/ directory contains custom tools. Custom tools have been merged into extensions."
            ));
        }
    }
    out
}

/// `runMigrations(cwd)`.
pub(crate) fn run_migrations(agent_dir: &Path, cwd: &Path) -> MigrationReport {
    let mut report = MigrationReport {
        migrated_auth_providers: migrate_auth_to_auth_json(agent_dir),
        ..Default::default()
    };
    migrate_sessions_from_agent_root(agent_dir);
    let project = cwd.join(CONFIG_DIR_NAME);
    migrate_commands_to_prompts(agent_dir, "Global", &mut report.messages);
    migrate_commands_to_prompts(&project, "Project", &mut report.messages);
    report.deprecation_warnings = deprecated_dirs(agent_dir, "Global");
    report
        .deprecation_warnings
        .extend(deprecated_dirs(&project, "Project"));
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    #[test]
    fn sessions_in_the_agent_root_move_by_their_first_line_only() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path();
        let header = r#"{"type":"session","id":"s","timestamp":"t","cwd":"/w/p"}"#;
        // A session whose later lines are large: only its first line is read.
        let mut big = format!("{header}\n");
        big.push_str(&"x".repeat(3 << 20));
        fs::write(a.join("big.jsonl"), &big).unwrap();
        fs::write(a.join("blank.jsonl"), "\n{}").unwrap();
        fs::write(a.join("other.jsonl"), "{\"type\":\"message\"}\n").unwrap();
        migrate_sessions_from_agent_root(a);
        let moved = a.join("sessions").join("--w-p--").join("big.jsonl");
        assert_eq!(fs::read_to_string(moved).unwrap(), big);
        assert!(a.join("blank.jsonl").exists());
        assert!(a.join("other.jsonl").exists());
        assert_eq!(
            first_line(&a.join("other.jsonl")).unwrap(),
            "{\"type\":\"message\"}"
        );
    }

    #[test]
    fn legacy_credentials_move_to_auth_json() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path();
        fs::write(
            a.join("oauth.json"),
            r#"{"anthropic": {"access": "x", "refresh": "y", "expires": 1}}"#,
        )
        .unwrap();
        fs::write(
            a.join("settings.json"),
            r#"{"apiKeys": {"anthropic": "ignored", "openai": "sk"}, "theme": "dark"}"#,
        )
        .unwrap();
        let providers = migrate_auth_to_auth_json(a);
        assert_eq!(providers, vec!["anthropic", "openai"]);
        let auth: Value =
            serde_json::from_str(&fs::read_to_string(a.join("auth.json")).unwrap()).unwrap();
        assert_eq!(
            auth,
            json!({"anthropic": {"type": "oauth", "access": "x", "refresh": "y", "expires": 1},
                   "openai": {"type": "api_key", "key": "sk"}})
        );
        assert!(a.join("oauth.json.migrated").exists());
        assert_eq!(
            fs::read_to_string(a.join("settings.json")).unwrap(),
            "{\n  \"theme\": \"dark\"\n}"
        );
        // Runs only while auth.json does not exist.
        fs::write(a.join("settings.json"), r#"{"apiKeys": {"groq": "g"}}"#).unwrap();
        assert!(migrate_auth_to_auth_json(a).is_empty());
    }

    /// When `auth.json` cannot be written, the credentials stay where they were.
    #[cfg(unix)]
    #[test]
    fn an_unwritable_auth_json_removes_no_credential() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path();
        let oauth = r#"{"anthropic": {"access": "x"}}"#;
        let settings = r#"{"apiKeys": {"openai": "sk"}}"#;
        fs::write(a.join("oauth.json"), oauth).unwrap();
        fs::write(a.join("settings.json"), settings).unwrap();
        // A link into a missing directory: `auth.json` does not exist, and cannot be created.
        std::os::unix::fs::symlink("missing/auth.json", a.join("auth.json")).unwrap();
        assert!(migrate_auth_to_auth_json(a).is_empty());
        assert_eq!(fs::read_to_string(a.join("oauth.json")).unwrap(), oauth);
        assert_eq!(
            fs::read_to_string(a.join("settings.json")).unwrap(),
            settings
        );
        assert!(!a.join("oauth.json.migrated").exists());
    }

    #[test]
    fn stray_sessions_and_commands_move() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(a.join("commands")).unwrap();
        fs::create_dir_all(cwd.join(".pi/hooks")).unwrap();
        fs::write(
            a.join("s1.jsonl"),
            "{\"type\":\"session\",\"cwd\":\"/home/u/p\"}\n{}\n",
        )
        .unwrap();
        fs::write(a.join("other.jsonl"), "not json\n").unwrap();
        let r = run_migrations(&a, &cwd);
        assert!(a.join("sessions/--home-u-p--/s1.jsonl").exists());
        assert!(a.join("other.jsonl").exists());
        assert!(a.join("prompts").is_dir() && !a.join("commands").exists());
        assert_eq!(r.messages, vec!["Migrated Global commands/ → prompts/"]);
        assert_eq!(
            r.deprecation_warnings,
            vec!["Project hooks/ directory found. Hooks have been renamed to extensions."]
        );
        assert_eq!(encode_session_dir_name("C:\\x\\y"), "--C--x-y--");
    }
}
