//! Tool-call ids: sanitizing for providers that restrict ids, and distinct ids within one
//! message.
//!
//! [`sanitize_tool_call_id`] mirrors pi-ai 0.85.1 `normalizeToolCallId` (Anthropic, and Google
//! for models that need ids): `id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64)`.
//! [`ToolCallIds`] is pi-rs's own: pi keeps whatever id the provider sent, so two calls sharing
//! one id would get two tool results with that id in the next request.

use std::collections::{HashMap, HashSet};

/// The ids of one assistant message's tool calls, keeping them distinct.
///
/// [`ToolCallIds::claim`] returns the provider's id the first time it is seen; a repeat of
/// `id` becomes `id_2`, then `id_3`, … (the first such suffix no call of the message holds).
/// O(1) amortized per call, however many calls repeat one id.
#[derive(Debug, Default)]
pub(crate) struct ToolCallIds {
    used: HashSet<String>,
    /// Per repeated id, the next suffix to try.
    next_suffix: HashMap<String, u64>,
}

impl ToolCallIds {
    /// The id the call with provider id `id` gets in the message (see the type's docs).
    pub(crate) fn claim(&mut self, id: &str) -> String {
        if self.used.insert(id.to_owned()) {
            return id.to_owned();
        }
        let n = self.next_suffix.entry(id.to_owned()).or_insert(2);
        loop {
            let candidate = format!("{id}_{n}");
            *n += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// Every character outside `[A-Za-z0-9_-]` becomes `_` once per UTF-16 code unit (as
/// JavaScript's code-unit regex replace does), then the id is cut to 64 characters.
pub(crate) fn sanitize_tool_call_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len().min(64));
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out.truncate(64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_per_utf16_unit_and_cuts_at_64() {
        assert_eq!(sanitize_tool_call_id("call|a.b"), "call_a_b");
        assert_eq!(sanitize_tool_call_id("x😀é"), "x___");
        assert_eq!(sanitize_tool_call_id(&"a".repeat(70)).len(), 64);
        assert_eq!(sanitize_tool_call_id("toolu_01-AZ"), "toolu_01-AZ");
    }

    #[test]
    fn repeated_ids_get_the_first_free_suffix() {
        let mut ids = ToolCallIds::default();
        assert_eq!(ids.claim("call_1"), "call_1");
        assert_eq!(ids.claim("call_1_2"), "call_1_2");
        assert_eq!(ids.claim("call_1"), "call_1_3");
        assert_eq!(ids.claim("call_1"), "call_1_4");
        assert_eq!(ids.claim("other"), "other");
        let mut many = ToolCallIds::default();
        let claimed: HashSet<String> = (0..10_000).map(|_| many.claim("x")).collect();
        assert_eq!(claimed.len(), 10_000);
    }
}
