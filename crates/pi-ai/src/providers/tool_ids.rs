//! Tool-call id sanitizing for providers that restrict ids.
//!
//! Mirrors pi-ai 0.85.1 `normalizeToolCallId` (Anthropic, and Google for models that need
//! ids): `id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64)`.

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
}
