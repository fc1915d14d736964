//! Token usage and cost.
//!
//! Mirrors pi-ai 0.85.1 `Usage` and `calculateCost` (`models.ts`), including its exact
//! floating-point order, which decides the last digit of the written cost.

use serde::{Deserialize, Serialize};

use super::model::{Model, ModelCost};

/// Cost in US dollars per component: `{input, output, cacheRead, cacheWrite, total}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Cost of uncached input tokens.
    pub input: f64,
    /// Cost of output tokens.
    pub output: f64,
    /// Cost of cache reads.
    pub cache_read: f64,
    /// Cost of cache writes.
    pub cache_write: f64,
    /// Sum of the four, added in that order.
    pub total: f64,
}

/// Token usage of one response:
/// `{input, output, cacheRead, cacheWrite, totalTokens, cost, cacheWrite1h?, reasoning?}`, or with
/// the optional keys right after `cacheWrite` (see [`Usage::optional_before_total`]).
///
/// Counts are JavaScript numbers (`f64`), as in pi: providers' counts arrive as JSON numbers
/// of any size, and sums are done in doubles as pi does them, so no count wraps or panics and
/// the written JSON is what pi writes (two counts of 2^64 total `36893488147419103000`).
/// Integral counts up to 2^53 are written as integers (`180`, never `180.0`).
///
/// `input` excludes cache traffic; `cache_write_1h` ⊂ `cache_write` (Anthropic only);
/// `reasoning` ⊂ `output`, set only by adapters that report it. Written and read by hand
/// (`usage_serde.rs`) to keep pi's key order; otherwise as a derive with camelCase keys
/// (`cost` may be missing, the optional keys are left out when unset).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Tokens read from the prompt cache.
    pub cache_read: f64,
    /// Tokens written to the prompt cache.
    pub cache_write: f64,
    /// Total tokens (component sum, or the provider's total where pi copies it).
    pub total_tokens: f64,
    /// Cost in dollars.
    pub cost: Cost,
    /// Of `cache_write`, tokens written with a 1-hour TTL (Anthropic).
    pub cache_write_1h: Option<f64>,
    /// Of `output`, reasoning tokens, when the adapter reports them.
    pub reasoning: Option<f64>,
    /// Not a field of its own: `cacheWrite1h` and `reasoning` are written right after
    /// `cacheWrite`, before `totalTokens`. pi's OpenAI (Completions, Responses) and Google
    /// adapters and its `combineUsage` build their usage whole with them there; Anthropic's
    /// adapter adds them last. Recorded when a usage is read.
    pub optional_before_total: bool,
}

impl Usage {
    /// `input + output + cacheRead + cacheWrite`.
    pub fn component_sum(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// A token count as a `u64` for integer arithmetic (estimates, budgets): exact for integral
/// counts below 2^64, saturating above, 0 for negative counts and NaN. Callers add such values
/// with saturating arithmetic.
pub fn count_to_u64(count: f64) -> u64 {
    // `as` from f64 to u64 saturates and maps NaN to 0.
    count as u64
}

/// Computes `usage.cost` from the model's prices (dollars per million tokens) and returns it.
///
/// Mirrors pi-ai 0.85.1 `calculateCost`: a tier applies when its `inputTokensAbove` is the
/// highest one strictly below `input + cacheRead + cacheWrite`; each component is
/// `(rate / 1000000) * tokens` in exactly that order; the cache-write component is
/// `(rate.cacheWrite·(cacheWrite − cacheWrite1h) + rate.input·2·cacheWrite1h) / 1000000`;
/// `total` sums input, output, cacheRead, cacheWrite in that order.
pub fn calculate_cost(model: &Model, usage: &mut Usage) -> Cost {
    let rates = select_rates(&model.cost, usage);
    let c1h = usage.cache_write_1h.unwrap_or(0.0);
    let input = (rates.input / 1_000_000.0) * usage.input;
    let output = (rates.output / 1_000_000.0) * usage.output;
    let cache_read = (rates.cache_read / 1_000_000.0) * usage.cache_read;
    let cache_write =
        (rates.cache_write * (usage.cache_write - c1h) + rates.input * 2.0 * c1h) / 1_000_000.0;
    let total = input + output + cache_read + cache_write;
    usage.cost = Cost {
        input,
        output,
        cache_read,
        cache_write,
        total,
    };
    usage.cost
}

struct Rates {
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
}

fn select_rates(cost: &ModelCost, usage: &Usage) -> Rates {
    let prompt = usage.input + usage.cache_read + usage.cache_write;
    let tier = cost
        .tiers
        .iter()
        .flatten()
        .filter(|t| t.input_tokens_above < prompt)
        .max_by(|a, b| a.input_tokens_above.total_cmp(&b.input_tokens_above));
    match tier {
        Some(t) => Rates {
            input: t.input,
            output: t.output,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
        },
        None => Rates {
            input: cost.input,
            output: cost.output,
            cache_read: cost.cache_read,
            cache_write: cost.cache_write,
        },
    }
}
