//! `pi --list-models [search]`.
//!
//! Mirrors pi-coding-agent 0.85.0 `cli/list-models.js` and pi-tui's `fuzzyFilter`: available
//! models only; an optional fuzzy search over `"<provider> <id>"`; sorted by provider, then id
//! (`localeCompare`); a table `provider  model  context  max-out  thinking  images` whose
//! columns are padded to their widest cell and joined by two spaces. No models →
//! `No models available. …`; no match → `No models matching "<search>"`. Exit code 0 always.

use std::path::Path;

use pi_ai::Model;

use super::collate::locale_compare;
use super::model_resolver::format_no_models_available;
use super::registry::ModelRegistry;

/// What `--list-models` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListModelsOutput {
    /// Standard output (each line ends with `\n`).
    pub stdout: String,
    /// Standard error (`Warning: errors loading models.json:\n…`), if any.
    pub stderr: String,
}

/// `formatTokenCount`: `200000` → `200K`, `1000000` → `1M`, `1250000` → `1.3M` (halves up).
pub fn format_token_count(count: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        if count.is_multiple_of(unit) {
            format!("{}{suffix}", count / unit)
        } else {
            let tenths = (count * 10 + unit / 2) / unit;
            format!("{}.{}{suffix}", tenths / 10, tenths % 10)
        }
    };
    if count >= 1_000_000 {
        scaled(1_000_000, "M")
    } else if count >= 1_000 {
        scaled(1_000, "K")
    } else {
        count.to_string()
    }
}

/// Renders `--list-models [search]` for the registry's available models.
pub fn list_models(
    registry: &ModelRegistry,
    search: Option<&str>,
    docs_dir: &Path,
) -> ListModelsOutput {
    let mut out = ListModelsOutput::default();
    if let Some(e) = registry.error() {
        out.stderr = format!("Warning: errors loading models.json:\n{e}\n");
    }
    let models = registry.available();
    if models.is_empty() {
        out.stdout = format!("{}\n", format_no_models_available(docs_dir));
        return out;
    }
    let mut filtered = match search {
        Some(q) => {
            let texts: Vec<(String, &Model)> = models
                .into_iter()
                .map(|m| (format!("{} {}", m.provider, m.id), m))
                .collect();
            pi_tui::fuzzy::fuzzy_filter(texts, q, |(t, _)| t.as_str())
                .into_iter()
                .map(|(_, m)| m)
                .collect()
        }
        None => models,
    };
    if filtered.is_empty() {
        out.stdout = format!("No models matching \"{}\"\n", search.unwrap_or_default());
        return out;
    }
    filtered.sort_by(|a, b| {
        locale_compare(&a.provider, &b.provider).then_with(|| locale_compare(&a.id, &b.id))
    });
    out.stdout = render_table(&filtered);
    out
}

fn render_table(models: &[&Model]) -> String {
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ]
    .map(str::to_owned);
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                (if m.reasoning { "yes" } else { "no" }).to_owned(),
                (if m.supports_images() { "yes" } else { "no" }).to_owned(),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain(std::iter::once(header[i].len()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..6).map(width).collect();
    let line = |cells: &[String; 6]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        format!("{}\n", padded.join("  "))
    };
    let mut s = line(&header);
    for r in &rows {
        s.push_str(&line(r));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::auth::AuthStorage;
    use crate::config::models_json::ModelsConfig;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn registry(json: &str) -> ModelRegistry {
        ModelRegistry::new(
            ModelsConfig::parse(json, Path::new("/a/models.json")),
            AuthStorage::in_memory(Default::default()),
        )
        .with_env_key_lookup(no_env)
    }

    #[test]
    fn token_counts() {
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(1_048_576), "1.0M");
        assert_eq!(format_token_count(1_250_000), "1.3M");
        assert_eq!(format_token_count(128_000), "128K");
        assert_eq!(format_token_count(16_384), "16.4K");
        assert_eq!(format_token_count(999), "999");
        assert_eq!(format_token_count(0), "0");
    }

    #[test]
    fn table_of_available_models_sorted() {
        let r = registry(
            r#"{"providers": {
              "zeta": {"baseUrl": "u", "api": "openai-completions", "apiKey": "k",
                       "models": [{"id": "b-model", "reasoning": true, "input": ["text", "image"]}, {"id": "a", "contextWindow": 1000000, "maxTokens": 999}]},
              "alpha": {"baseUrl": "u", "api": "openai-completions", "apiKey": "k", "models": [{"id": "only"}]}
            }}"#,
        );
        let out = list_models(&r, None, Path::new("/d"));
        assert_eq!(out.stderr, "");
        assert_eq!(
            out.stdout,
            "provider  model    context  max-out  thinking  images\n\
             alpha     only     128K     16.4K    no        no    \n\
             zeta      a        1M       999      no        no    \n\
             zeta      b-model  128K     16.4K    yes       yes   \n"
        );
        let out = list_models(&r, Some("zeta bmod"), Path::new("/d"));
        assert_eq!(out.stdout.lines().count(), 2);
        assert!(out.stdout.contains("b-model"));
        let out = list_models(&r, Some("qqq"), Path::new("/d"));
        assert_eq!(out.stdout, "No models matching \"qqq\"\n");
    }

    #[test]
    fn matches_the_reference_output_for_the_conformance_models() {
        // Golden: the TS pi's `--list-models` with the conformance harness's models.json.
        let golden = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/config/list-models-conformance.txt"
        ));
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/config/conformance-models.json"
        );
        let r = ModelRegistry::with_models_file(
            Path::new(path),
            AuthStorage::in_memory(Default::default()),
        )
        .with_env_key_lookup(no_env);
        let out = list_models(&r, None, Path::new("/d"));
        assert_eq!(out.stdout, golden);
        assert_eq!(out.stderr, "");
        let out = list_models(&r, Some("thinker google"), Path::new("/d"));
        assert_eq!(
            out.stdout,
            "provider       model           context  max-out  thinking  images\n\
             replay-google  replay-thinker  128K     16.4K    yes       no    \n"
        );
    }

    #[test]
    fn no_models_message_and_models_json_warning() {
        let r = registry("{ bad");
        let out = list_models(&r, None, Path::new("/d"));
        assert!(out.stdout.starts_with("No models available. Use /login"));
        assert!(
            out.stderr
                .starts_with("Warning: errors loading models.json:\nFailed to parse models.json")
        );
    }
}
