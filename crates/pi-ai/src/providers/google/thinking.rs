//! Gemini thinking configuration: model families, levels and budgets.
//!
//! Mirrors pi-ai 0.85.1 `api/google-generative-ai.ts` (`streamSimple`, `getThinkingLevel`,
//! `getGoogleBudget`, `getDisabledThinkingConfig`) and `api/google-shared.ts`
//! (`resolveGoogleThinkingLevel`).

use crate::providers::StreamError;
use serde_json::{Value, json};

use super::Flavor;
use crate::types::{Model, ModelThinkingLevel, StreamOptions, ThinkingLevel};

/// Gemini 3 Pro (`gemini-3[.N]-pro…`).
fn is_gemini3_pro(id: &str) -> bool {
    family_match(id, "-pro")
}

/// Gemini 3 Flash (`gemini-3[.N]-flash…`, `gemini-flash-latest`, `gemini-flash-lite-latest`).
fn is_gemini3_flash(id: &str) -> bool {
    family_match(id, "-flash") || id == "gemini-flash-latest" || id == "gemini-flash-lite-latest"
}

/// `/gemini-3(?:\.\d+)?<suffix>/` anywhere in the lower-cased id.
fn family_match(id: &str, suffix: &str) -> bool {
    let id = id.to_ascii_lowercase();
    let mut rest = id.as_str();
    while let Some(pos) = rest.find("gemini-3") {
        let mut tail = &rest[pos + "gemini-3".len()..];
        if let Some(after_dot) = tail.strip_prefix('.') {
            let digits = after_dot.chars().take_while(char::is_ascii_digit).count();
            if digits > 0 {
                tail = &after_dot[digits..];
            }
        }
        if tail.starts_with(suffix) {
            return true;
        }
        rest = &rest[pos + 1..];
    }
    false
}

/// Gemma 4 (`gemma-4`, `gemma4`) on the Gemini API (pi's Vertex adapter has no Gemma case).
fn is_gemma4_on(flavor: Flavor, id: &str) -> bool {
    flavor == Flavor::Gemini && is_gemma4(id)
}

/// Gemma 4 (`gemma-4`, `gemma4`).
fn is_gemma4(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    id.contains("gemma-4") || id.contains("gemma4")
}

/// A pi level resolved to Google's four (`minimal|low|medium|high`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GoogleLevel {
    Minimal,
    Low,
    Medium,
    High,
}

/// `resolveGoogleThinkingLevel`: `off` → high; a string map entry (lower-cased) or the level
/// itself must be one of the four, else `Err` with pi's text.
fn resolve_level(model: &Model, level: ModelThinkingLevel) -> Result<GoogleLevel, StreamError> {
    if level == ModelThinkingLevel::Off {
        return Ok(GoogleLevel::High);
    }
    let mapped = model.thinking_map_entry(level);
    let resolved = match mapped {
        Some(Some(s)) => s.to_ascii_lowercase(),
        _ => level.as_str().to_owned(),
    };
    match resolved.as_str() {
        "minimal" => Ok(GoogleLevel::Minimal),
        "low" => Ok(GoogleLevel::Low),
        "medium" => Ok(GoogleLevel::Medium),
        "high" => Ok(GoogleLevel::High),
        _ => {
            let shown = match mapped {
                Some(Some(s)) => s.to_owned(),
                Some(None) => "null".to_owned(),
                None => "undefined".to_owned(),
            };
            Err(StreamError::UnsupportedThinkingLevel {
                model: format!("{}/{}", model.provider, model.id),
                level: level.as_str().to_owned(),
                mapped: shown,
            })
        }
    }
}

/// `getThinkingLevel` for level-based families.
fn level_name(level: GoogleLevel, id: &str, flavor: Flavor) -> &'static str {
    use GoogleLevel::*;
    if is_gemini3_pro(id) {
        return if matches!(level, Minimal | Low) {
            "LOW"
        } else {
            "HIGH"
        };
    }
    if is_gemma4_on(flavor, id) {
        return if matches!(level, Minimal | Low) {
            "MINIMAL"
        } else {
            "HIGH"
        };
    }
    match level {
        Minimal => "MINIMAL",
        Low => "LOW",
        Medium => "MEDIUM",
        High => "HIGH",
    }
}

/// `getGoogleBudget`: custom budgets first, then per-family defaults, else −1 (dynamic).
/// pi's Vertex adapter has no Flash-Lite row (its Flash-Lite models get the Flash budgets).
fn budget(model: &Model, level: GoogleLevel, options: &StreamOptions, flavor: Flavor) -> i64 {
    let as_pi = match level {
        GoogleLevel::Minimal => ThinkingLevel::Minimal,
        GoogleLevel::Low => ThinkingLevel::Low,
        GoogleLevel::Medium => ThinkingLevel::Medium,
        GoogleLevel::High => ThinkingLevel::High,
    };
    if let Some(b) = &options.thinking_budgets {
        return b.for_level(as_pi) as i64;
    }
    let table: [i64; 4] = if model.id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if flavor == Flavor::Gemini && model.id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if model.id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    table[level as usize]
}

/// The config of a reasoning model with thinking off: Gemini 3 Pro `LOW`, Gemini 3 Flash and
/// Gemma 4 `MINIMAL` (they cannot turn thinking off), others `thinkingBudget: 0`.
fn disabled_config(model: &Model, flavor: Flavor) -> Value {
    if is_gemini3_pro(&model.id) {
        json!({ "thinkingLevel": "LOW" })
    } else if is_gemini3_flash(&model.id) || is_gemma4_on(flavor, &model.id) {
        json!({ "thinkingLevel": "MINIMAL" })
    } else {
        json!({ "thinkingBudget": 0 })
    }
}

/// The `thinkingConfig` for this request, `None` for non-reasoning models.
///
/// Reasoning on: `{includeThoughts:true, thinkingLevel}` for Gemini 3 / Gemma 4, else
/// `{includeThoughts:true, thinkingBudget}`; the level is first clamped to the model's
/// supported levels.
pub(super) fn thinking_config(
    model: &Model,
    options: &StreamOptions,
    flavor: Flavor,
) -> Result<Option<Value>, StreamError> {
    let Some(level) = options.reasoning else {
        return Ok(model.reasoning.then(|| disabled_config(model, flavor)));
    };
    let clamped = model.clamp_thinking_level(level.into());
    let resolved = resolve_level(model, clamped)?;
    if !model.reasoning {
        return Ok(None);
    }
    let id = &model.id;
    if is_gemini3_pro(id) || is_gemini3_flash(id) || is_gemma4_on(flavor, id) {
        Ok(Some(
            json!({ "includeThoughts": true, "thinkingLevel": level_name(resolved, id, flavor) }),
        ))
    } else {
        let budget = budget(model, resolved, options, flavor);
        Ok(Some(
            json!({ "includeThoughts": true, "thinkingBudget": budget }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, reasoning: bool) -> Model {
        Model {
            id: id.into(),
            provider: "google".into(),
            reasoning,
            ..Default::default()
        }
    }

    fn gemini_config(model: &Model, options: &StreamOptions) -> Result<Option<Value>, StreamError> {
        thinking_config(model, options, Flavor::Gemini)
    }

    #[test]
    fn vertex_has_no_gemma_or_flash_lite_rows() {
        let v = |m: &Model, o: &StreamOptions| thinking_config(m, o, Flavor::Vertex).unwrap();
        assert_eq!(
            v(
                &model("gemini-2.5-flash-lite", true),
                &with(ThinkingLevel::Minimal)
            ),
            Some(json!({"includeThoughts": true, "thinkingBudget": 128}))
        );
        assert_eq!(
            gemini_config(
                &model("gemini-2.5-flash-lite", true),
                &with(ThinkingLevel::Minimal)
            )
            .unwrap(),
            Some(json!({"includeThoughts": true, "thinkingBudget": 512}))
        );
        assert_eq!(
            v(&model("gemma-4-27b", true), &StreamOptions::default()),
            Some(json!({"thinkingBudget": 0}))
        );
    }

    fn with(level: ThinkingLevel) -> StreamOptions {
        StreamOptions {
            reasoning: Some(level),
            ..Default::default()
        }
    }

    #[test]
    fn families() {
        assert!(is_gemini3_pro("gemini-3-pro-preview"));
        assert!(is_gemini3_pro("models/Gemini-3.1-Pro"));
        assert!(!is_gemini3_pro("gemini-3-flash"));
        assert!(is_gemini3_flash("gemini-3.5-flash-lite"));
        assert!(is_gemini3_flash("gemini-flash-latest"));
        assert!(is_gemma4("gemma-4-27b") && is_gemma4("Gemma4"));
        assert!(!is_gemma4("gemma-3"));
    }

    #[test]
    fn off_configs() {
        let off = StreamOptions::default();
        assert_eq!(
            gemini_config(&model("gemini-2.0-flash", false), &off).unwrap(),
            None
        );
        assert_eq!(
            gemini_config(&model("gemini-2.5-pro", true), &off).unwrap(),
            Some(json!({"thinkingBudget": 0}))
        );
        assert_eq!(
            gemini_config(&model("gemini-3-pro-preview", true), &off).unwrap(),
            Some(json!({"thinkingLevel": "LOW"}))
        );
        assert_eq!(
            gemini_config(&model("gemini-3-flash-preview", true), &off).unwrap(),
            Some(json!({"thinkingLevel": "MINIMAL"}))
        );
    }

    #[test]
    fn levels_and_budgets() {
        assert_eq!(
            gemini_config(
                &model("gemini-3-pro-preview", true),
                &with(ThinkingLevel::Medium)
            )
            .unwrap(),
            Some(json!({"includeThoughts": true, "thinkingLevel": "HIGH"}))
        );
        assert_eq!(
            gemini_config(&model("gemini-3-flash", true), &with(ThinkingLevel::Medium)).unwrap(),
            Some(json!({"includeThoughts": true, "thinkingLevel": "MEDIUM"}))
        );
        assert_eq!(
            gemini_config(
                &model("gemini-2.5-pro", true),
                &with(ThinkingLevel::Minimal)
            )
            .unwrap(),
            Some(json!({"includeThoughts": true, "thinkingBudget": 128}))
        );
        // xhigh is not supported unless mapped: clamped down to high.
        assert_eq!(
            gemini_config(
                &model("gemini-2.5-flash-lite", true),
                &with(ThinkingLevel::Xhigh)
            )
            .unwrap(),
            Some(json!({"includeThoughts": true, "thinkingBudget": 24576}))
        );
        assert_eq!(
            gemini_config(&model("gemini-exp", true), &with(ThinkingLevel::Low)).unwrap(),
            Some(json!({"includeThoughts": true, "thinkingBudget": -1}))
        );
    }

    #[test]
    fn bad_mappings_fail_with_pis_text() {
        let mut m = model("gemini-2.5-pro", true);
        m.thinking_level_map = Some(serde_json::from_str(r#"{"high": "ultra"}"#).unwrap());
        assert_eq!(
            gemini_config(&m, &with(ThinkingLevel::High))
                .unwrap_err()
                .to_string(),
            "Unsupported Google thinking level mapping for google/gemini-2.5-pro: high -> ultra"
        );
    }
}
