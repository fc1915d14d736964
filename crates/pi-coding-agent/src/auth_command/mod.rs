//! `pi auth`: print a provider's credential or check that it is ready, without a session.
//!
//! Mirrors pi-coding-agent 0.85.0 `cli/auth-command.js`, `cli/auth-check.js`,
//! `cli/credential-print.js` and `runAuthCommand` in `main.js`:
//! - `pi auth print-api-key [--provider P] [--model M]`: the provider's API key (an OAuth
//!   provider's is refused); exit 1 on failure;
//! - `pi auth print-bearer-token [--provider P] [--model M] [--min-expiry <n>(ms|s|m|h)]`: an
//!   OAuth access token lasting at least `--min-expiry` (default 30 min), refreshed and stored
//!   when it would not; exit 1 on failure;
//! - `pi auth check [--provider P] [--model M] [--json] [--credentials] [--no-refresh]`:
//!   `ready` (exit 0), `not_ready` (exit 1) or `invalid` (exit 2), as text or
//!   `{"status","provider","authType"|"reason"[,"credentials"]}`; an expired OAuth entry is
//!   refreshed first unless `--no-refresh`.
//!
//! These print secrets on purpose: it is what they are for. Errors are `Error: <text>` on
//! stderr. One difference: `check --model M` resolves `M` against the catalog, where pi 0.85.0
//! checks with an empty model store and so reports every `--model` without `--provider` as
//! `invalid`.

mod parse;

use std::io::Write;
use std::path::Path;
use std::sync::RwLock;
use std::time::Duration;

use pi_ai::auth::oauth;
use serde_json::{Map, Value, json};

use crate::cli::args::parse_args;
use crate::config::agent_paths::AgentPaths;
use crate::config::model_resolver::resolve_cli_model;
use crate::config::oauth::{Refreshed, refresh_stored};
use crate::config::registry::ModelRegistry;

pub(crate) use parse::{AuthCommand, Kind, parse_auth_command};

/// `--min-expiry` when not given.
const DEFAULT_BEARER_MIN_EXPIRY: Duration = Duration::from_secs(30 * 60);

const HELP: &str = "Usage:
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Auth commands require at least one of --provider or --model. Checks refresh expired OAuth credentials by default; --no-refresh prevents this. --credentials emits the credential, or includes it in JSON output.
";

/// Runs `pi auth …` (`argv` starts with `auth`) and returns the exit status.
pub(crate) fn run(
    argv: &[String],
    agent_dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    if parse::is_help(argv) {
        let _ = write!(stdout, "{HELP}");
        return 0;
    }
    let command = match parse_auth_command(argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            return 1;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            return 1;
        }
    };
    runtime.block_on(run_command(&command, agent_dir, stdout, stderr))
}

async fn run_command(
    command: &AuthCommand,
    agent_dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let parsed = parse_args(&command.args);
    if let Some((name, _)) = parsed.unknown_flags.first() {
        let _ = writeln!(
            stderr,
            "Unknown option --{name} for \"{}\".",
            command.kind.name()
        );
        let _ = writeln!(stderr, "Use \"pi --help\" or \"{}\".", command.kind.usage());
        return 1;
    }
    let failure_code = if command.kind == Kind::Check { 2 } else { 1 };
    let fail = |stderr: &mut dyn Write, text: &str| {
        let _ = writeln!(stderr, "Error: {text}");
        failure_code
    };
    if !parsed.diagnostics.is_empty() {
        let text: Vec<String> = parsed
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        return fail(stderr, &text.join("\n"));
    }
    let (provider, model) = match parse::validate(&parsed, command.kind) {
        Ok(pm) => pm,
        Err(e) => return fail(stderr, &e.to_string()),
    };
    let registry = RwLock::new(ModelRegistry::load(&AgentPaths::new(
        agent_dir.to_path_buf(),
    )));
    if command.kind != Kind::Check {
        let min = (command.kind == Kind::BearerToken)
            .then(|| command.min_expiry.unwrap_or(DEFAULT_BEARER_MIN_EXPIRY));
        return match print_credential(
            &registry,
            command.kind,
            provider.as_deref(),
            model.as_deref(),
            min,
        )
        .await
        {
            Ok(value) => {
                let _ = writeln!(stdout, "{value}");
                0
            }
            Err(PrintError::Command(e)) => fail(stderr, &e),
            Err(PrintError::Resolve) => fail(stderr, "Failed to resolve credential"),
        };
    }
    let requested = provider
        .clone()
        .or_else(|| model.clone())
        .unwrap_or_default();
    let refresh = !command.no_refresh;
    let (mut result, mut credential) =
        match check(&registry, provider.as_deref(), model.as_deref(), refresh).await {
            Ok(r) => (r, None),
            Err(()) => (CheckResult::invalid(&requested), None),
        };
    if command.credentials && result.status == "ready" {
        match provider_credential(&registry, &result.provider, refresh).await {
            Ok(Some(value)) => credential = Some(value),
            Ok(None) => {
                result = CheckResult::not_ready(&result.provider, "credential_not_available");
            }
            Err(()) => result = CheckResult::invalid(&requested),
        }
    }
    let output = if command.json {
        let mut v = result.to_json();
        if let Some(c) = &credential {
            v.insert("credentials".into(), Value::from(c.clone()));
        }
        Value::Object(v).to_string()
    } else {
        credential
            .clone()
            .unwrap_or_else(|| result.status.to_owned())
    };
    let _ = writeln!(stdout, "{output}");
    match result.status {
        "ready" => 0,
        "not_ready" => 1,
        _ => 2,
    }
}

/// A check's outcome (pi's `checkProviderAuth` result).
#[derive(Debug, Clone, PartialEq)]
struct CheckResult {
    status: &'static str,
    provider: String,
    auth_type: Option<&'static str>,
    reason: Option<&'static str>,
}

impl CheckResult {
    fn invalid(provider: &str) -> Self {
        CheckResult {
            status: "invalid",
            provider: provider.to_owned(),
            auth_type: None,
            reason: Some("invalid_state"),
        }
    }

    fn not_ready(provider: &str, reason: &'static str) -> Self {
        CheckResult {
            status: "not_ready",
            provider: provider.to_owned(),
            auth_type: None,
            reason: Some(reason),
        }
    }

    fn to_json(&self) -> Map<String, Value> {
        let mut v = json!({"status": self.status, "provider": self.provider});
        if let Some(t) = self.auth_type {
            v["authType"] = json!(t);
        }
        if let Some(r) = self.reason {
            v["reason"] = json!(r);
        }
        v.as_object().cloned().unwrap_or_default()
    }
}

fn read(registry: &RwLock<ModelRegistry>) -> std::sync::RwLockReadGuard<'_, ModelRegistry> {
    registry.read().unwrap_or_else(|e| e.into_inner())
}

/// The type of auth `provider` has without refreshing anything (pi's `checkAuth`).
fn auth_type(registry: &ModelRegistry, provider: &str) -> Option<&'static str> {
    if registry.auth().oauth_entry(provider).is_some() {
        return oauth::is_oauth_provider(provider).then_some("oauth");
    }
    registry.has_configured_auth(provider).then_some("api_key")
}

async fn check(
    registry: &RwLock<ModelRegistry>,
    provider: Option<&str>,
    model: Option<&str>,
    refresh: bool,
) -> Result<CheckResult, ()> {
    let provider = {
        let r = read(registry);
        match model {
            Some(m) => {
                let resolved = resolve_cli_model(provider, Some(m), None, &*r);
                match (resolved.error, resolved.model) {
                    (None, Some(model)) => model.provider,
                    _ => return Err(()),
                }
            }
            None => provider.unwrap_or_default().to_owned(),
        }
    };
    {
        let r = read(registry);
        if r.error().is_some() || r.auth().error().is_some() {
            return Ok(CheckResult::invalid(&provider));
        }
        if !r.all().iter().any(|m| m.provider == provider) {
            return Ok(CheckResult::not_ready(&provider, "provider_not_found"));
        }
    }
    let Some(kind) = auth_type(&read(registry), &provider) else {
        return Ok(CheckResult::not_ready(
            &provider,
            "credentials_not_configured",
        ));
    };
    if refresh && get_auth(registry, &provider, None).await?.is_none() {
        return Ok(CheckResult::not_ready(
            &provider,
            "credentials_not_configured",
        ));
    }
    Ok(CheckResult {
        status: "ready",
        provider,
        auth_type: Some(kind),
        reason: None,
    })
}

/// pi's `getProviderCredential`: the stored access token as is with `--no-refresh`, else the
/// credential a request would use.
async fn provider_credential(
    registry: &RwLock<ModelRegistry>,
    provider: &str,
    refresh: bool,
) -> Result<Option<String>, ()> {
    if !refresh && let Some(entry) = read(registry).auth().oauth_entry(provider) {
        return Ok(oauth::access(entry).map(str::to_owned));
    }
    get_auth(registry, provider, None).await
}

/// The credential a request to `provider` authenticates with (pi's `getAuth` +
/// `getAuthCredential`): an OAuth entry refreshed first when it expires within
/// `max(5 min, min_validity)`; the API key, else the bearer token of an `Authorization`
/// header. `Err` when resolving fails (a failed refresh, a key command that fails).
async fn get_auth(
    registry: &RwLock<ModelRegistry>,
    provider: &str,
    min_validity: Option<Duration>,
) -> Result<Option<String>, ()> {
    let (due, path, entry) = {
        let r = read(registry);
        let entry = r.auth().oauth_entry(provider).cloned();
        let due = entry.as_ref().is_some_and(|e| {
            oauth::is_oauth_provider(provider) && oauth::expires_soon(e, min_validity)
        });
        (due, r.auth().path().map(Path::to_path_buf), entry)
    };
    if due {
        match path {
            Some(path) => {
                match refresh_stored(&path, provider, min_validity, oauth::REFRESH_TIMEOUT).await {
                    Ok(Refreshed::Entry(entry)) => {
                        registry
                            .write()
                            .unwrap_or_else(|e| e.into_inner())
                            .apply_refreshed(provider, entry);
                    }
                    Ok(Refreshed::Gone) => return Ok(None),
                    Err(_) => return Err(()),
                }
            }
            None => return Err(()),
        }
    }
    let _ = entry;
    let r = read(registry);
    if let Some(entry) = r.auth().oauth_entry(provider) {
        if !oauth::is_oauth_provider(provider) {
            return Ok(None);
        }
        let derived = oauth::to_auth(provider, entry);
        return Ok(derived.api_key.or_else(|| bearer_of(&derived.headers)));
    }
    let key = r.api_key(provider).map_err(|_| ())?;
    if key.is_some() {
        return Ok(key);
    }
    let Some(model) = r.all().into_iter().find(|m| m.provider == provider) else {
        return Ok(None);
    };
    let headers = r.request_headers(model, None).map_err(|_| ())?;
    Ok(headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .and_then(|(_, v)| v.as_deref())
        .and_then(strip_bearer))
}

fn bearer_of(headers: &[(String, String)]) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .and_then(|(_, v)| strip_bearer(v))
}

/// `/^Bearer\s+(.+)$/i`.
fn strip_bearer(value: &str) -> Option<String> {
    let rest = value
        .get(..6)
        .filter(|p| p.eq_ignore_ascii_case("bearer"))
        .map(|_| &value[6..])?;
    let trimmed = rest.trim_start();
    (trimmed.len() < rest.len() && !trimmed.is_empty()).then(|| trimmed.to_owned())
}

enum PrintError {
    /// pi's `AuthCommandError` text.
    Command(String),
    /// Anything else: `Failed to resolve credential`.
    Resolve,
}

/// pi's `resolveCredentialForPrint`.
async fn print_credential(
    registry: &RwLock<ModelRegistry>,
    kind: Kind,
    cli_provider: Option<&str>,
    cli_model: Option<&str>,
    min_validity: Option<Duration>,
) -> Result<String, PrintError> {
    let (providers, types) = {
        let r = read(registry);
        if r.auth().syntax_error().is_some() {
            return Err(PrintError::Resolve);
        }
        let types: Vec<(String, &'static str)> = r
            .auth()
            .stored_providers()
            .into_iter()
            .filter_map(|p| Some((p.clone(), r.auth().credential(&p)?.kind())))
            .collect();
        let mut providers: Vec<String> = Vec::new();
        if let Some(p) = cli_provider {
            if !r.all().iter().any(|m| m.provider == p) {
                return Err(PrintError::Command(format!(
                    "Unknown provider \"{p}\". Use --list-models to see available providers."
                )));
            }
            if let Some(m) = cli_model {
                let resolved = resolve_cli_model(Some(p), Some(m), None, &*r);
                if let Some(e) = resolved.error {
                    return Err(PrintError::Command(e));
                }
                if resolved.model.is_none() {
                    return Err(PrintError::Command(
                        "Unable to resolve the requested provider/model".into(),
                    ));
                }
            }
            providers.push(p.to_owned());
        } else {
            let mut seen: Vec<String> = Vec::new();
            for m in r.all() {
                if !seen.contains(&m.provider) {
                    seen.push(m.provider.clone());
                }
            }
            for p in seen {
                if !types.iter().any(|(t, _)| *t == p) {
                    continue;
                }
                let resolved = resolve_cli_model(Some(&p), cli_model, None, &*r);
                let custom = resolved
                    .warning
                    .as_deref()
                    .is_some_and(|w| w.contains("Using custom model id"));
                if resolved.model.is_some() && resolved.error.is_none() && !custom {
                    providers.push(p);
                }
            }
            if providers.is_empty() {
                return Err(PrintError::Command(format!(
                    "Model \"{}\" not found. Use --list-models to see available models.",
                    cli_model.unwrap_or("")
                )));
            }
        }
        (providers, types)
    };
    let type_of = |p: &str| types.iter().find(|(t, _)| t == p).map(|(_, k)| *k);
    let mut found: Vec<(String, String)> = Vec::new();
    for p in &providers {
        let stored = type_of(p);
        if kind == Kind::ApiKey && stored == Some("oauth") {
            continue;
        }
        if kind == Kind::BearerToken && stored != Some("oauth") {
            continue;
        }
        if let Some(value) = get_auth(registry, p, min_validity)
            .await
            .map_err(|()| PrintError::Resolve)?
        {
            found.push((p.clone(), value));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0).1),
        0 => {
            let first = providers.first().map(String::as_str);
            let stored = first.and_then(type_of);
            if cli_provider.is_some() && kind == Kind::ApiKey && stored == Some("oauth") {
                return Err(PrintError::Command(format!(
                    "Provider \"{}\" is configured with OAuth, not an API key",
                    first.unwrap_or("")
                )));
            }
            if cli_provider.is_some() && kind == Kind::BearerToken && stored != Some("oauth") {
                return Err(PrintError::Command(format!(
                    "Provider \"{}\" is not configured with an OAuth bearer token",
                    first.unwrap_or("")
                )));
            }
            let what = if kind == Kind::ApiKey {
                "API key"
            } else {
                "OAuth bearer token"
            };
            Err(PrintError::Command(format!(
                "No usable {what} is configured"
            )))
        }
        _ => {
            let ids: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
            Err(PrintError::Command(format!(
                "Multiple configured providers matched ({}). Specify --provider.",
                ids.join(", ")
            )))
        }
    }
}
