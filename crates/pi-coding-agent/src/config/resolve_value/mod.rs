//! One resolver for configured secrets and header values (`models.json`, `auth.json`).
//!
//! Mirrors pi-coding-agent 0.85.0 `core/resolve-config-value.js`:
//! - `!command`: the rest runs through `/bin/sh -c` (stdin and stderr ignored, 10 s timeout);
//!   trimmed stdout, empty/failed/timed-out → unresolved. [`resolve_config_value`] caches the
//!   result (also a failure) per command for the life of the process — that is how `auth.json`
//!   keys resolve; the `*_uncached` / `*_or_throw` forms run the command every time — that is how
//!   `models.json` keys and all header values resolve.
//! - otherwise a template: `$NAME` (longest `[A-Za-z_][A-Za-z0-9_]*`) and `${NAME}` read the
//!   environment (an explicit overlay first, then the process; empty counts as unset, and any
//!   unset variable makes the whole value unresolved); `$$` is a literal `$`, `$!` a literal `!`;
//!   `${` without `}`, `${bad name}` and a lone `$` stay literal.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Extra variables consulted before the process environment (`auth.json` `env`, …).
pub type EnvOverlay = BTreeMap<String, String>;

/// Limit for a `!command`.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Env(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Reference {
    /// The whole configured value, starting with `!`.
    Command(String),
    Template(Vec<Part>),
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && is_name_start(b[0]) && b.iter().all(|&c| is_name_char(c))
}

fn push_literal(parts: &mut Vec<Part>, s: &str) {
    if s.is_empty() {
        return;
    }
    if let Some(Part::Literal(prev)) = parts.last_mut() {
        prev.push_str(s);
    } else {
        parts.push(Part::Literal(s.to_owned()));
    }
}

fn parse_template(config: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let bytes = config.as_bytes();
    let mut index = 0;
    while index < config.len() {
        let Some(offset) = config[index..].find('$') else {
            push_literal(&mut parts, &config[index..]);
            break;
        };
        let dollar = index + offset;
        push_literal(&mut parts, &config[index..dollar]);
        match bytes.get(dollar + 1) {
            Some(b'$') => {
                push_literal(&mut parts, "$");
                index = dollar + 2;
            }
            Some(b'!') => {
                push_literal(&mut parts, "!");
                index = dollar + 2;
            }
            Some(b'{') => match config[dollar + 2..].find('}') {
                None => {
                    push_literal(&mut parts, "$");
                    index = dollar + 1;
                }
                Some(rel) => {
                    let end = dollar + 2 + rel;
                    let name = &config[dollar + 2..end];
                    if is_env_name(name) {
                        parts.push(Part::Env(name.to_owned()));
                    } else {
                        push_literal(&mut parts, &config[dollar..=end]);
                    }
                    index = end + 1;
                }
            },
            Some(&c) if is_name_start(c) => {
                let len = bytes[dollar + 1..]
                    .iter()
                    .take_while(|&&c| is_name_char(c))
                    .count();
                parts.push(Part::Env(config[dollar + 1..dollar + 1 + len].to_owned()));
                index = dollar + 1 + len;
            }
            _ => {
                push_literal(&mut parts, "$");
                index = dollar + 1;
            }
        }
    }
    parts
}

fn parse(config: &str) -> Reference {
    if config.starts_with('!') {
        Reference::Command(config.to_owned())
    } else {
        Reference::Template(parse_template(config))
    }
}

/// An environment variable: the overlay first, then the process; empty counts as unset.
pub fn lookup_env(name: &str, env: Option<&EnvOverlay>) -> Option<String> {
    env.and_then(|m| m.get(name))
        .filter(|v| !v.is_empty())
        .cloned()
        .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

fn resolve_template(parts: &[Part], env: Option<&EnvOverlay>) -> Option<String> {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Literal(s) => out.push_str(s),
            Part::Env(name) => out.push_str(&lookup_env(name, env)?),
        }
    }
    Some(out)
}

/// The variable names a template value reads, each once, in order (empty for `!command`).
pub fn config_value_env_var_names(config: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if let Reference::Template(parts) = parse(config) {
        for part in parts {
            if let Part::Env(name) = part
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
    }
    names
}

/// The variable when the whole value is exactly one `$NAME` / `${NAME}`.
pub fn config_value_env_var_name(config: &str) -> Option<String> {
    match parse(config) {
        Reference::Template(parts) => match parts.as_slice() {
            [Part::Env(name)] => Some(name.clone()),
            _ => None,
        },
        Reference::Command(_) => None,
    }
}

/// The variables the value reads that are unset.
pub fn missing_config_value_env_var_names(config: &str, env: Option<&EnvOverlay>) -> Vec<String> {
    config_value_env_var_names(config)
        .into_iter()
        .filter(|n| lookup_env(n, env).is_none())
        .collect()
}

/// Whether the value is a `!command`.
pub fn is_command_config_value(config: &str) -> bool {
    config.starts_with('!')
}

/// Whether every variable the value reads is set (commands count as configured).
pub fn is_config_value_configured(config: &str, env: Option<&EnvOverlay>) -> bool {
    missing_config_value_env_var_names(config, env).is_empty()
}

fn command_cache() -> &'static Mutex<HashMap<String, Option<String>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Runs `command` through `/bin/sh -c`; trimmed stdout, `None` on failure, timeout or no output.
fn run_command(command: &str) -> Option<String> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let output = reader.join().unwrap_or_default();
    if !status?.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn execute_cached(config: &str) -> Option<String> {
    if let Ok(cache) = command_cache().lock()
        && let Some(hit) = cache.get(config)
    {
        return hit.clone();
    }
    let result = run_command(&config[1..]);
    if let Ok(mut cache) = command_cache().lock() {
        cache.insert(config.to_owned(), result.clone());
    }
    result
}

/// Resolves a value; `!command` results are cached for the process (pi's `resolveConfigValue`).
pub fn resolve_config_value(config: &str, env: Option<&EnvOverlay>) -> Option<String> {
    match parse(config) {
        Reference::Command(c) => execute_cached(&c),
        Reference::Template(parts) => resolve_template(&parts, env),
    }
}

/// Resolves a value, running a `!command` every time (`resolveConfigValueUncached`).
pub fn resolve_config_value_uncached(config: &str, env: Option<&EnvOverlay>) -> Option<String> {
    match parse(config) {
        Reference::Command(c) => run_command(&c[1..]),
        Reference::Template(parts) => resolve_template(&parts, env),
    }
}

/// A configuration value that did not resolve; `description` names what it was for (e.g.
/// `API key for provider "p"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// A `!command` that failed or printed nothing.
    #[error("Failed to resolve {description} from shell command: {command}")]
    Command {
        /// What the value was for.
        description: String,
        /// The command, without its `!`.
        command: String,
    },
    /// One referenced environment variable is unset.
    #[error("Failed to resolve {description} from environment variable: {name}")]
    EnvVar {
        /// What the value was for.
        description: String,
        /// The unset variable.
        name: String,
    },
    /// Several referenced environment variables are unset.
    #[error("Failed to resolve {description} from environment variables: {}", names.join(", "))]
    EnvVars {
        /// What the value was for.
        description: String,
        /// The unset variables, in reference order.
        names: Vec<String>,
    },
    /// Anything else.
    #[error("Failed to resolve {description}")]
    Unresolved {
        /// What the value was for.
        description: String,
    },
}

/// Resolves (uncached) or explains why not, naming `description`.
///
/// # Errors
/// [`ResolveError`].
pub fn resolve_config_value_or_throw(
    config: &str,
    description: &str,
    env: Option<&EnvOverlay>,
) -> Result<String, ResolveError> {
    if let Some(v) = resolve_config_value_uncached(config, env) {
        return Ok(v);
    }
    let description = description.to_owned();
    if let Some(command) = config.strip_prefix('!') {
        return Err(ResolveError::Command {
            description,
            command: command.to_owned(),
        });
    }
    let mut missing = missing_config_value_env_var_names(config, env);
    Err(match missing.len() {
        0 => ResolveError::Unresolved { description },
        1 => ResolveError::EnvVar {
            description,
            name: missing.remove(0),
        },
        _ => ResolveError::EnvVars {
            description,
            names: missing,
        },
    })
}

/// Resolves every header value (cached form); unresolved or empty values are dropped; `None`
/// when nothing remains.
pub fn resolve_headers(
    headers: &[(String, String)],
    env: Option<&EnvOverlay>,
) -> Option<Vec<(String, String)>> {
    let out: Vec<(String, String)> = headers
        .iter()
        .filter_map(|(k, v)| {
            resolve_config_value(v, env)
                .filter(|r| !r.is_empty())
                .map(|r| (k.clone(), r))
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// Resolves every header value (uncached) or fails naming `<description> header "<name>"`.
///
/// # Errors
/// [`ResolveError`] of the first header that does not resolve.
pub fn resolve_headers_or_throw(
    headers: &[(String, String)],
    description: &str,
    env: Option<&EnvOverlay>,
) -> Result<Option<Vec<(String, String)>>, ResolveError> {
    let mut out = Vec::with_capacity(headers.len());
    for (k, v) in headers {
        let d = format!("{description} header \"{k}\"");
        out.push((k.clone(), resolve_config_value_or_throw(v, &d, env)?));
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Forgets cached command results (`clearConfigValueCache`).
pub fn clear_config_value_cache() {
    if let Ok(mut cache) = command_cache().lock() {
        cache.clear();
    }
}

#[cfg(test)]
mod tests;
