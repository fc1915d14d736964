//! Model patterns, `--models` scoping and `--provider/--model` resolution.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/model-resolver.js`:
//! - exact references: `provider/id` or a bare id, case-insensitive; an ambiguous bare id
//!   matches nothing;
//! - fuzzy: ids or names containing the pattern; aliases (no `-YYYYMMDD` suffix, or `-latest`)
//!   beat dated versions; the highest id in `localeCompare` order wins;
//! - `pattern:level` (last colon) sets a thinking level; an invalid suffix warns
//!   (`Invalid thinking level "<s>" in pattern "<p>". Using default instead.`) in scope mode
//!   and fails in CLI mode;
//! - globs (`*`, `?`, `[`) match `provider/id` or the id (case-insensitive, `*` stops at `/`);
//! - CLI resolution with provider inference, ambiguity errors and the custom-id fallback.
//!
//! Start-up choice, restoring and messages live in `initial.rs`.

mod cycle;
mod initial;
mod messages;

pub use cycle::{CycleStep, next_model_in_cycle, thinking_level_for_switch};

pub use initial::{
    CliModelError, DEFAULT_MODEL_PER_PROVIDER, DEFAULT_THINKING_LEVEL, InitialModel,
    InitialModelOptions, RestoredModel, SessionModelChoice, SessionModelInputs,
    choose_session_model, find_initial_model, restore_model_from_session,
};
pub use messages::{
    API_KEY_REQUIRES_MODEL, format_no_api_key_found, format_no_model_selected,
    format_no_models_available, provider_login_help,
};

use globset::GlobBuilder;
use pi_ai::{Model, ModelThinkingLevel};

use super::collate::locale_compare;
use super::registry::ModelRegistry;

/// What the resolver needs from a model registry.
pub trait ModelSource {
    /// Every model.
    fn all_models(&self) -> Vec<&Model>;
    /// Models whose provider has auth.
    fn available_models(&self) -> Vec<&Model>;
    /// Whether a provider has auth.
    fn provider_has_auth(&self, provider: &str) -> bool;
    /// `provider/id`, exact.
    fn find_model(&self, provider: &str, id: &str) -> Option<&Model> {
        self.all_models()
            .into_iter()
            .find(|m| m.provider == provider && m.id == id)
    }
}

impl ModelSource for ModelRegistry {
    fn all_models(&self) -> Vec<&Model> {
        self.all()
    }
    fn available_models(&self) -> Vec<&Model> {
        self.available()
    }
    fn provider_has_auth(&self, provider: &str) -> bool {
        self.has_configured_auth(provider)
    }
    fn find_model(&self, provider: &str, id: &str) -> Option<&Model> {
        self.find(provider, id)
    }
}

/// Parses a thinking level as the CLI accepts it (`off|minimal|low|medium|high|xhigh|max`).
pub fn parse_thinking_level(s: &str) -> Option<ModelThinkingLevel> {
    ModelThinkingLevel::parse(s)
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// `findExactModelReferenceMatch`: `provider/id` or a unique bare id, case-insensitive.
pub fn find_exact_model_reference_match<'a>(
    reference: &str,
    models: &[&'a Model],
) -> Option<&'a Model> {
    let trimmed = reference.trim();
    if trimmed.is_empty() {
        return None;
    }
    let normalized = lower(trimmed);
    let canonical: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| lower(&format!("{}/{}", m.provider, m.id)) == normalized)
        .collect();
    match canonical.len() {
        1 => return Some(canonical[0]),
        n if n > 1 => return None,
        _ => {}
    }
    if let Some(slash) = trimmed.find('/') {
        let provider = trimmed[..slash].trim();
        let id = trimmed[slash + 1..].trim();
        if !provider.is_empty() && !id.is_empty() {
            let (lp, li) = (lower(provider), lower(id));
            let matches: Vec<&Model> = models
                .iter()
                .copied()
                .filter(|m| lower(&m.provider) == lp && lower(&m.id) == li)
                .collect();
            match matches.len() {
                1 => return Some(matches[0]),
                n if n > 1 => return None,
                _ => {}
            }
        }
    }
    let ids: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| lower(&m.id) == normalized)
        .collect();
    (ids.len() == 1).then(|| ids[0])
}

/// An id without a date suffix (`-YYYYMMDD`), or ending in `-latest`.
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let b = id.as_bytes();
    let dated =
        b.len() >= 9 && b[b.len() - 9] == b'-' && b[b.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

fn try_match_model<'a>(pattern: &str, models: &[&'a Model]) -> Option<&'a Model> {
    if let Some(m) = find_exact_model_reference_match(pattern, models) {
        return Some(m);
    }
    let p = lower(pattern);
    let matches: Vec<&Model> = models
        .iter()
        .copied()
        .filter(|m| lower(&m.id).contains(&p) || lower(&m.name).contains(&p))
        .collect();
    let (mut aliases, mut dated): (Vec<&Model>, Vec<&Model>) =
        matches.into_iter().partition(|m| is_alias(&m.id));
    let pick = if aliases.is_empty() {
        &mut dated
    } else {
        &mut aliases
    };
    pick.sort_by(|a, b| locale_compare(&b.id, &a.id));
    pick.first().copied()
}

/// The result of [`parse_model_pattern`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedPattern<'a> {
    /// The matched model.
    pub model: Option<&'a Model>,
    /// The `:level` suffix, when valid and applied.
    pub thinking_level: Option<ModelThinkingLevel>,
    /// A warning about an invalid suffix.
    pub warning: Option<String>,
}

/// `parseModelPattern`: match the whole pattern, else split at the last colon; a valid level
/// suffix applies to the prefix's match; an invalid one warns (`allow_invalid_fallback`) or
/// fails.
pub fn parse_model_pattern<'a>(
    pattern: &str,
    models: &[&'a Model],
    allow_invalid_fallback: bool,
) -> ParsedPattern<'a> {
    if let Some(m) = try_match_model(pattern, models) {
        return ParsedPattern {
            model: Some(m),
            thinking_level: None,
            warning: None,
        };
    }
    let none = ParsedPattern {
        model: None,
        thinking_level: None,
        warning: None,
    };
    let Some(colon) = pattern.rfind(':') else {
        return none;
    };
    let (prefix, suffix) = (&pattern[..colon], &pattern[colon + 1..]);
    if let Some(level) = parse_thinking_level(suffix) {
        let inner = parse_model_pattern(prefix, models, allow_invalid_fallback);
        if inner.model.is_some() {
            return ParsedPattern {
                thinking_level: if inner.warning.is_some() {
                    None
                } else {
                    Some(level)
                },
                ..inner
            };
        }
        return inner;
    }
    if !allow_invalid_fallback {
        return none;
    }
    let inner = parse_model_pattern(prefix, models, allow_invalid_fallback);
    if inner.model.is_some() {
        return ParsedPattern {
            model: inner.model,
            thinking_level: None,
            warning: Some(format!(
                "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
            )),
        };
    }
    inner
}

/// A model in the `--models` / `enabledModels` scope, with its pattern's level if any.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedModel {
    /// The model.
    pub model: Model,
    /// `None` = inherit the session's level while cycling.
    pub thinking_level: Option<ModelThinkingLevel>,
}

/// A warning produced while resolving a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeDiagnostic {
    /// `no-match` or `invalid-thinking-level`.
    pub code: &'static str,
    /// E.g. `No models match pattern "x"` (printed as `Warning: <message>`).
    pub message: String,
    /// The pattern.
    pub pattern: String,
}

fn glob_matches(glob: &str, text: &str) -> bool {
    GlobBuilder::new(glob)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

/// `resolveModelScopeFromModels`: patterns (exact, fuzzy, glob, `:level`) → scoped models
/// without duplicates, in pattern order, plus warnings. pi scopes `--models` / `enabledModels`
/// over the *available* models (`ModelRegistry::available`); warnings print as
/// `Warning: <message>`.
pub fn resolve_model_scope(
    patterns: &[String],
    models: &[&Model],
) -> (Vec<ScopedModel>, Vec<ScopeDiagnostic>) {
    let mut scoped: Vec<ScopedModel> = Vec::new();
    let mut diagnostics = Vec::new();
    let push = |scoped: &mut Vec<ScopedModel>, m: &Model, level: Option<ModelThinkingLevel>| {
        if !scoped.iter().any(|s| s.model.same_as(m)) {
            scoped.push(ScopedModel {
                model: m.clone(),
                thinking_level: level,
            });
        }
    };
    let no_match = |pattern: &str| ScopeDiagnostic {
        code: "no-match",
        message: format!("No models match pattern \"{pattern}\""),
        pattern: pattern.to_owned(),
    };
    for pattern in patterns {
        if pattern.contains(['*', '?', '[']) {
            let mut glob = pattern.as_str();
            let mut level = None;
            if let Some(colon) = pattern.rfind(':')
                && let Some(l) = parse_thinking_level(&pattern[colon + 1..])
            {
                level = Some(l);
                glob = &pattern[..colon];
            }
            if let Some(m) = find_exact_model_reference_match(glob, models) {
                push(&mut scoped, m, level);
                continue;
            }
            let matching: Vec<&Model> = models
                .iter()
                .copied()
                .filter(|m| {
                    glob_matches(glob, &format!("{}/{}", m.provider, m.id))
                        || glob_matches(glob, &m.id)
                })
                .collect();
            if matching.is_empty() {
                diagnostics.push(no_match(pattern));
                continue;
            }
            for m in matching {
                push(&mut scoped, m, level);
            }
            continue;
        }
        let parsed = parse_model_pattern(pattern, models, true);
        if let Some(w) = parsed.warning {
            diagnostics.push(ScopeDiagnostic {
                code: "invalid-thinking-level",
                message: w,
                pattern: pattern.clone(),
            });
        }
        match parsed.model {
            Some(m) => push(&mut scoped, m, parsed.thinking_level),
            None => diagnostics.push(no_match(pattern)),
        }
    }
    (scoped, diagnostics)
}

/// The result of [`resolve_cli_model`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CliModelResolution {
    /// The model (possibly a custom id built on a provider's default model).
    pub model: Option<Model>,
    /// A `:level` suffix from the pattern.
    pub thinking_level: Option<ModelThinkingLevel>,
    /// A warning to print (`Warning: …`).
    pub warning: Option<String>,
    /// An error (printed as `Error: …`, exit 1).
    pub error: Option<String>,
}

fn found(model: &Model) -> CliModelResolution {
    CliModelResolution {
        model: Some(model.clone()),
        ..Default::default()
    }
}

/// `resolveCliModel`: `--provider`/`--model` against **all** models (so `--api-key` can
/// set up a first provider). `cli_thinking` is the explicit `--thinking`, if any.
pub fn resolve_cli_model(
    cli_provider: Option<&str>,
    cli_model: Option<&str>,
    cli_thinking: Option<ModelThinkingLevel>,
    source: &dyn ModelSource,
) -> CliModelResolution {
    let Some(cli_model) = cli_model else {
        return CliModelResolution::default();
    };
    let all = source.all_models();
    if all.is_empty() {
        return CliModelResolution {
            error: Some(
                "No models available. Check your installation or add models to models.json.".into(),
            ),
            ..Default::default()
        };
    }
    let canonical_provider = |p: &str| {
        let lp = lower(p);
        all.iter()
            .rev()
            .find(|m| lower(&m.provider) == lp)
            .map(|m| m.provider.clone())
    };
    let mut provider = cli_provider.and_then(canonical_provider);
    if let Some(p) = cli_provider
        && provider.is_none()
    {
        return CliModelResolution {
            error: Some(format!(
                "Unknown provider \"{p}\". Use --list-models to see available providers/models."
            )),
            ..Default::default()
        };
    }
    let mut pattern = cli_model.to_owned();
    let mut inferred = false;
    if provider.is_none()
        && let Some(slash) = cli_model.find('/')
        && let Some(p) = canonical_provider(&cli_model[..slash])
    {
        provider = Some(p);
        pattern = cli_model[slash + 1..].to_owned();
        inferred = true;
    }
    let lower_model = lower(cli_model);
    let exact_raw = |m: &&Model| {
        lower(&m.id) == lower_model || lower(&format!("{}/{}", m.provider, m.id)) == lower_model
    };
    if provider.is_none() {
        let exact: Vec<&Model> = all.iter().copied().filter(exact_raw).collect();
        if exact.len() == 1 {
            return found(exact[0]);
        }
        if exact.len() > 1 {
            let authed: Vec<&Model> = exact
                .iter()
                .copied()
                .filter(|m| source.provider_has_auth(&m.provider))
                .collect();
            if authed.len() == 1 {
                return found(authed[0]);
            }
            let mut names: Vec<String> = exact
                .iter()
                .map(|m| format!("{}/{}", m.provider, m.id))
                .collect();
            names.sort_by(|a, b| locale_compare(a, b));
            let hint = if authed.is_empty() {
                "No matching provider is authenticated."
            } else {
                "More than one matching provider is authenticated."
            };
            return CliModelResolution {
                error: Some(format!(
                    "Model \"{cli_model}\" is ambiguous across providers: {}. {hint} Use --provider or provider/model.",
                    names.join(", ")
                )),
                ..Default::default()
            };
        }
    }
    if cli_provider.is_some()
        && let Some(p) = &provider
    {
        let prefix = format!("{p}/");
        if lower(cli_model).starts_with(&lower(&prefix)) {
            pattern = cli_model[prefix.len()..].to_owned();
        }
    }
    let candidates: Vec<&Model> = match &provider {
        Some(p) => all.iter().copied().filter(|m| &m.provider == p).collect(),
        None => all.clone(),
    };
    let parsed = parse_model_pattern(&pattern, &candidates, false);
    if let Some(model) = parsed.model {
        if inferred {
            let raw: Vec<&Model> = all
                .iter()
                .copied()
                .filter(|m| lower(&m.id) == lower_model && !m.same_as(model))
                .collect();
            if !raw.is_empty() && !source.provider_has_auth(&model.provider) {
                let authed: Vec<&Model> = raw
                    .into_iter()
                    .filter(|m| source.provider_has_auth(&m.provider))
                    .collect();
                if authed.len() == 1 {
                    return found(authed[0]);
                }
            }
        }
        return CliModelResolution {
            model: Some(model.clone()),
            thinking_level: parsed.thinking_level,
            warning: parsed.warning,
            error: None,
        };
    }
    if inferred {
        if let Some(exact) = all.iter().copied().find(exact_raw) {
            return found(exact);
        }
        let fallback = parse_model_pattern(cli_model, &all, false);
        if let Some(m) = fallback.model {
            return CliModelResolution {
                model: Some(m.clone()),
                thinking_level: fallback.thinking_level,
                warning: fallback.warning,
                error: None,
            };
        }
    }
    if let Some(p) = &provider {
        let mut fallback_pattern = pattern.clone();
        let mut fallback_thinking = None;
        if cli_thinking.is_none()
            && let Some(colon) = pattern.rfind(':')
            && let Some(l) = parse_thinking_level(&pattern[colon + 1..])
        {
            fallback_pattern = pattern[..colon].to_owned();
            fallback_thinking = Some(l);
        }
        if let Some(mut model) = build_fallback_model(p, &fallback_pattern, &all) {
            let requested = cli_thinking.or(fallback_thinking);
            if requested.is_some_and(|l| l != ModelThinkingLevel::Off) {
                model.reasoning = true;
            }
            let base = format!(
                "Model \"{fallback_pattern}\" not found for provider \"{p}\". Using custom model id."
            );
            return CliModelResolution {
                model: Some(model),
                thinking_level: fallback_thinking,
                warning: Some(match parsed.warning {
                    Some(w) => format!("{w} {base}"),
                    None => base,
                }),
                error: None,
            };
        }
    }
    let display = match &provider {
        Some(p) => format!("{p}/{pattern}"),
        None => cli_model.to_owned(),
    };
    CliModelResolution {
        model: None,
        thinking_level: None,
        warning: parsed.warning,
        error: Some(format!(
            "Model \"{display}\" not found. Use --list-models to see available models."
        )),
    }
}

/// `buildFallbackModel`: the provider's default (or first) model, renamed to `id`.
fn build_fallback_model(provider: &str, id: &str, all: &[&Model]) -> Option<Model> {
    let of_provider: Vec<&Model> = all
        .iter()
        .copied()
        .filter(|m| m.provider == provider)
        .collect();
    let first = *of_provider.first()?;
    let default_id = initial::default_model_for(provider);
    let base = default_id
        .and_then(|d| of_provider.iter().copied().find(|m| m.id == d))
        .unwrap_or(first);
    let mut model = base.clone();
    model.id = id.to_owned();
    model.name = id.to_owned();
    Some(model)
}

#[cfg(test)]
mod tests;
