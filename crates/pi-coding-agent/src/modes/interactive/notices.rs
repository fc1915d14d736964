//! Notices pi derives from finished assistant messages, with pi's texts: a significant
//! prompt-cache miss (`Cache miss after model switch: 45k tokens re-billed (~$0.12)`) and
//! thinking blocks the Anthropic adapter had to drop (`Anthropic dropped thinking block:
//! …`). Both are shown only with the `showCacheMissNotices` setting, as in pi 0.85.0
//! (`core/cache-stats.js` and `maybeShowAssistantDiagnostics` of `interactive-mode.js`).

use std::collections::HashMap;

use pi_ai::AssistantMessage;
use serde_json::Value;

use super::footer::format_tokens;

/// pi's prompt-cache TTL (Anthropic's default, 5 minutes): an idle gap at least this long is
/// named as the likely cause of a miss. Milliseconds.
pub(crate) const CACHE_TTL_MS: i64 = 5 * 60 * 1000;

/// A per-turn miss at or below this many tokens is cache-breakpoint noise (pi's floor).
const NOISE_FLOOR_TOKENS: f64 = 1024.0;

/// A miss is shown from this many re-billed tokens…
const SHOW_TOKENS: f64 = 20_000.0;
/// …or from this many dollars.
const SHOW_COST: f64 = 0.1;

/// One counted cache miss: prompt tokens the previous request had in its prompt that this
/// one paid for again.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CacheMiss {
    /// Tokens re-billed (in the input or cache-write bucket instead of cache reads).
    pub missed_tokens: f64,
    /// Their extra cost in dollars over the cache-read price.
    pub missed_cost: f64,
    /// Milliseconds since the previous request's message.
    pub idle_ms: i64,
    /// The previous request went to another `provider/model`.
    pub model_changed: bool,
}

impl CacheMiss {
    /// pi's transcript line for this miss, or `None` below its thresholds (20k tokens and
    /// $0.10).
    pub(crate) fn notice(&self) -> Option<String> {
        if self.missed_tokens < SHOW_TOKENS && self.missed_cost < SHOW_COST {
            return None;
        }
        let cost = if self.missed_cost >= 0.01 {
            format!(
                " (~${})",
                crate::tools::image::to_fixed(self.missed_cost, 2)
            )
        } else {
            String::new()
        };
        let label = if self.model_changed {
            "Cache miss after model switch".to_owned()
        } else if self.idle_ms >= CACHE_TTL_MS {
            // JavaScript's `Math.round`: halves up.
            let minutes = (self.idle_ms as f64 / 60_000.0 + 0.5).floor();
            format!("Cache miss after {minutes}m idle")
        } else {
            "Cache miss".to_owned()
        };
        Some(format!(
            "{label}: {} tokens re-billed{cost}",
            format_tokens(self.missed_tokens)
        ))
    }
}

#[derive(Clone, Debug)]
struct PreviousRequest {
    prompt_tokens: f64,
    model_key: String,
    timestamp: i64,
    reported_cache: bool,
}

/// Follows the assistant messages of one branch in order and counts cache misses as pi's
/// `cache-stats.js` scan does. A compaction or branch summary resets it (the context changed
/// on purpose); a model switch does not (it re-bills the whole prompt).
#[derive(Clone, Debug, Default)]
pub(crate) struct CacheTracker {
    prev: Option<PreviousRequest>,
    /// Cache-read prices by `provider/model`, dollars per million tokens: the price of a miss
    /// when the message itself read nothing from the cache.
    read_prices: HashMap<String, f64>,
}

impl CacheTracker {
    /// A tracker that prices misses with these models' cache-read costs.
    pub(crate) fn new<'a>(models: impl IntoIterator<Item = &'a pi_ai::Model>) -> Self {
        Self {
            prev: None,
            read_prices: models
                .into_iter()
                .map(|m| (format!("{}/{}", m.provider, m.id), m.cost.cache_read))
                .collect(),
        }
    }

    /// Forgets the previous request (a compaction, a branch summary, a new transcript).
    pub(crate) fn reset(&mut self) {
        self.prev = None;
    }

    /// The miss `message` paid for, if any; then `message` becomes the previous request.
    /// Every assistant message goes through here (failed ones too, as in pi's scan); the
    /// caller shows the miss only for a message that did not fail.
    pub(crate) fn observe(&mut self, message: &AssistantMessage) -> Option<CacheMiss> {
        let miss = self.detect(message);
        let u = &message.usage;
        let prompt = u.input + u.cache_read + u.cache_write;
        if prompt > 0.0 {
            let reported_before = self.prev.as_ref().is_some_and(|p| p.reported_cache);
            self.prev = Some(PreviousRequest {
                prompt_tokens: prompt,
                model_key: format!("{}/{}", message.provider, message.model),
                timestamp: message.timestamp,
                reported_cache: reported_before || u.cache_read + u.cache_write > 0.0,
            });
        }
        miss
    }

    fn detect(&self, message: &AssistantMessage) -> Option<CacheMiss> {
        let prev = self.prev.as_ref()?;
        let u = &message.usage;
        let prompt = u.input + u.cache_read + u.cache_write;
        // A turn without cache activity counts only once caching was reported before: on a
        // provider that never reports it, zero means nothing.
        if prompt.is_nan()
            || prompt <= 0.0
            || (u.cache_read + u.cache_write == 0.0 && !prev.reported_cache)
        {
            return None;
        }
        let missed_tokens = prev.prompt_tokens.min(prompt) - u.cache_read;
        if missed_tokens.is_nan() || missed_tokens <= NOISE_FLOOR_TOKENS {
            return None;
        }
        let paid = u.input + u.cache_write;
        let paid_per_token = if paid > 0.0 {
            (u.cost.input + u.cost.cache_write) / paid
        } else {
            0.0
        };
        let key = format!("{}/{}", message.provider, message.model);
        let read_per_token = if u.cache_read > 0.0 {
            u.cost.cache_read / u.cache_read
        } else {
            self.read_prices.get(&key).copied().unwrap_or(0.0) / 1_000_000.0
        };
        Some(CacheMiss {
            missed_tokens,
            missed_cost: missed_tokens * (paid_per_token - read_per_token).max(0.0),
            idle_ms: message.timestamp.saturating_sub(prev.timestamp).max(0),
            model_changed: key != prev.model_key,
        })
    }
}

/// pi's notice for what a compaction's (or a branch summary's) summarization cost, from its
/// usage JSON (`{input, output, cacheRead, cacheWrite, cost: {total}}`):
/// `Compaction: 12k tokens billed (~$0.04)` (the cost from a cent); `None` without usage.
pub(crate) fn summary_cost(label: &str, usage: &Value) -> Option<String> {
    let n = |k: &str| usage.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    if !usage.is_object() {
        return None;
    }
    let tokens = n("input") + n("output") + n("cacheRead") + n("cacheWrite");
    let total = usage
        .get("cost")
        .and_then(|c| c.get("total"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let cost = if total >= 0.01 {
        format!(" (~${})", crate::tools::image::to_fixed(total, 2))
    } else {
        String::new()
    };
    Some(format!(
        "{label}: {} tokens billed{cost}",
        format_tokens(tokens)
    ))
}

/// pi's notices for the thinking blocks the Anthropic adapter dropped from the request
/// (the `anthropic_input_transformations` diagnostic, entries of type `thinking_dropped`):
/// one line per diagnostic, `Anthropic dropped thinking block: <reason> at <path>` or
/// `Anthropic dropped N thinking blocks: <reason>; <reason>`.
pub(crate) fn dropped_thinking(message: &AssistantMessage) -> Vec<String> {
    let mut out = Vec::new();
    for d in message.diagnostics.iter().flatten() {
        if d.kind != "anthropic_input_transformations" {
            continue;
        }
        let Some(Value::Array(list)) = d.details.as_ref().and_then(|v| v.get("transformations"))
        else {
            continue;
        };
        let dropped: Vec<String> = list
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("thinking_dropped"))
            .map(|t| {
                let reason = t
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown reason");
                match t.get("path").and_then(Value::as_str) {
                    Some(path) => format!("{reason} at {path}"),
                    None => reason.to_owned(),
                }
            })
            .collect();
        if dropped.is_empty() {
            continue;
        }
        let noun = if dropped.len() == 1 {
            "thinking block".to_owned()
        } else {
            format!("{} thinking blocks", dropped.len())
        };
        out.push(format!("Anthropic dropped {noun}: {}", dropped.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{Cost, Diagnostic, Usage};
    use serde_json::json;

    fn message(model: &str, at: i64, input: f64, read: f64, write: f64) -> AssistantMessage {
        let mut m = AssistantMessage::empty("anthropic-messages", "anthropic", model);
        m.timestamp = at;
        m.usage = Usage {
            input,
            cache_read: read,
            cache_write: write,
            // $3/M input, $3.75/M cache write, $0.30/M cache read.
            cost: Cost {
                input: input * 3e-6,
                cache_write: write * 3.75e-6,
                cache_read: read * 0.3e-6,
                ..Cost::default()
            },
            ..Usage::default()
        };
        m
    }

    #[test]
    fn a_model_switch_re_bills_the_prompt() {
        let mut t = CacheTracker::default();
        assert_eq!(t.observe(&message("a", 0, 10.0, 0.0, 50_000.0)), None);
        // The same model reads it back: no miss.
        assert_eq!(t.observe(&message("a", 1_000, 10.0, 50_000.0, 100.0)), None);
        let miss = t
            .observe(&message("b", 2_000, 10.0, 0.0, 50_110.0))
            .unwrap();
        assert!(miss.model_changed);
        assert_eq!(miss.missed_tokens, 50_110.0);
        // Paid at (10×3 + 50110×3.75)/50120 per million, less nothing read back (no price
        // known for the model): about $0.19.
        assert_eq!(
            miss.notice().unwrap(),
            "Cache miss after model switch: 50k tokens re-billed (~$0.19)"
        );
    }

    #[test]
    fn idle_gaps_small_misses_and_resets() {
        let mut t = CacheTracker::default();
        t.observe(&message("a", 0, 10.0, 0.0, 30_000.0));
        let idle = t
            .observe(&message("a", 7 * 60_000 + 30_000, 10.0, 0.0, 30_000.0))
            .unwrap();
        // 7.5 minutes round up, as JavaScript's Math.round does.
        assert_eq!(
            idle.notice().unwrap(),
            "Cache miss after 8m idle: 30k tokens re-billed (~$0.11)"
        );
        // Below 20k tokens and $0.10: counted, not shown.
        let small = t
            .observe(&message("a", 8 * 60_000, 5_000.0, 25_000.0, 0.0))
            .unwrap();
        assert_eq!(small.missed_tokens, 5_000.0);
        assert_eq!(small.notice(), None);
        // At or under the noise floor: not a miss at all.
        assert_eq!(
            t.observe(&message("a", 9 * 60_000, 1_000.0, 29_000.0, 0.0)),
            None
        );
        t.reset();
        assert_eq!(t.observe(&message("b", 0, 40_000.0, 0.0, 0.0)), None);
    }

    #[test]
    fn providers_that_never_report_caching_have_no_misses() {
        let mut t = CacheTracker::default();
        t.observe(&message("a", 0, 40_000.0, 0.0, 0.0));
        assert_eq!(t.observe(&message("b", 1, 40_000.0, 0.0, 0.0)), None);
    }

    #[test]
    fn the_read_price_comes_from_the_model_when_nothing_was_read() {
        let mut model = pi_ai::Model {
            provider: "anthropic".into(),
            id: "a".into(),
            ..pi_ai::Model::default()
        };
        model.cost.cache_read = 3.75;
        // Read as dear as written: the miss costs nothing extra, only its tokens show.
        let mut t = CacheTracker::new([&model]);
        t.observe(&message("a", 0, 10.0, 0.0, 30_000.0));
        let miss = t.observe(&message("a", 1, 0.0, 0.0, 30_000.0)).unwrap();
        assert!(miss.missed_cost < 1e-9, "{}", miss.missed_cost);
        assert_eq!(miss.notice().unwrap(), "Cache miss: 30k tokens re-billed");
    }

    #[test]
    fn summary_costs_in_pi_words() {
        let usage = json!({"input": 12000, "output": 800, "cacheRead": 0, "cacheWrite": 0,
                           "cost": {"total": 0.0444}});
        assert_eq!(
            summary_cost("Compaction", &usage).unwrap(),
            "Compaction: 13k tokens billed (~$0.04)"
        );
        let cheap = json!({"input": 500, "output": 20, "cost": {"total": 0.001}});
        assert_eq!(
            summary_cost("Branch summary", &cheap).unwrap(),
            "Branch summary: 520 tokens billed"
        );
        assert_eq!(summary_cost("Compaction", &Value::Null), None);
    }

    #[test]
    fn dropped_thinking_blocks_in_pi_words() {
        let mut m = message("a", 0, 1.0, 0.0, 0.0);
        let diag = |t: Value| Diagnostic {
            kind: "anthropic_input_transformations".into(),
            timestamp: 0,
            error: None,
            details: Some(json!({ "transformations": t })),
        };
        m.diagnostics = Some(vec![
            diag(json!([
                {"type": "thinking_dropped", "reason": "missing signature", "path": "messages[1].content[0]"}
            ])),
            diag(json!([
                {"type": "thinking_dropped", "reason": "model changed"},
                {"type": "other"},
                {"type": "thinking_dropped"}
            ])),
            diag(json!([{"type": "other"}])),
        ]);
        assert_eq!(
            dropped_thinking(&m),
            [
                "Anthropic dropped thinking block: missing signature at messages[1].content[0]",
                "Anthropic dropped 2 thinking blocks: model changed; unknown reason"
            ]
        );
    }
}
