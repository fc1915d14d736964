//! Thinking budgets fitted under the output cap, for budget-based wire APIs.
//!
//! Mirrors pi-ai 0.85.1 `api/simple-options.ts` (`adjustMaxTokensForThinking`,
//! `clampThinkingBudgetToAnswerRoom`). The context clamp of the output cap lives in
//! [`crate::providers::registry::clamp_max_tokens_to_context`].

use crate::types::{ThinkingBudgets, ThinkingLevel};

/// Tokens always left for the answer when a thinking budget shares the output cap.
pub const MIN_ANSWER_TOKENS: u64 = 1024;

/// `(max_tokens, thinking_budget)` for a budget-based model: the budget of `level` (custom
/// budgets first; `xhigh`/`max` use `high`); the cap is `min(base + budget, model cap)` (the
/// model cap when `base` is `None`); a budget that does not fit keeps ≥ 1024 answer tokens.
pub fn adjust_max_tokens_for_thinking(
    base: Option<u64>,
    model_max_tokens: u64,
    level: ThinkingLevel,
    budgets: Option<&ThinkingBudgets>,
) -> (u64, u64) {
    let mut budget = budgets.copied().unwrap_or_default().for_level(level);
    let max_tokens = match base {
        None => model_max_tokens,
        Some(b) => (b + budget).min(model_max_tokens),
    };
    if max_tokens <= budget {
        budget = budget.min(max_tokens.saturating_sub(MIN_ANSWER_TOKENS));
    }
    (max_tokens, budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_budget_on_a_16k_model_leaves_1024_answer_tokens() {
        // thinking_anthropic golden: max_tokens 16384, budget_tokens 15360.
        let (max, budget) =
            adjust_max_tokens_for_thinking(Some(16384), 16384, ThinkingLevel::High, None);
        assert_eq!((max, budget), (16384, 15360));
        let (max, budget) = adjust_max_tokens_for_thinking(None, 64000, ThinkingLevel::Low, None);
        assert_eq!((max, budget), (64000, 2048));
        let (max, budget) =
            adjust_max_tokens_for_thinking(Some(4000), 64000, ThinkingLevel::Max, None);
        assert_eq!((max, budget), (20384, 16384));
        let (max, budget) =
            adjust_max_tokens_for_thinking(Some(100), 600, ThinkingLevel::Medium, None);
        assert_eq!((max, budget), (600, 0));
    }
}
