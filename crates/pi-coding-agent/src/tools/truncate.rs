//! Output truncation shared by the built-in tools.
//!
//! Mirrors pi 0.85.0 `core/tools/truncate.ts`: two independent limits — lines
//! ([`DEFAULT_MAX_LINES`]) and UTF-8 bytes ([`DEFAULT_MAX_BYTES`]) — whichever is hit first
//! wins. Head truncation (file reads, grep, find, ls) keeps whole leading lines; tail
//! truncation (bash) keeps whole trailing lines, except that an oversized final line is cut
//! to its last bytes at a UTF-8 boundary. [`truncate_line`] shortens one grep match line.
//!
//! Line counting follows pi: the text is split on `\n`, and a trailing empty piece (text ending
//! in `\n`) is not a line. Kept lines are re-joined with `\n`, each separator costing one byte,
//! so a truncated result never ends with `\n`.

use serde::{Deserialize, Serialize};

/// Default line limit of tool output (pi `DEFAULT_MAX_LINES`).
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default byte limit of tool output: 50 KB = 51 200 bytes (pi `DEFAULT_MAX_BYTES`).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep match line, in UTF-16 code units as JavaScript counts (pi `GREP_MAX_LINE_LENGTH`).
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Which limit truncated the output (`"lines"` / `"bytes"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit was hit first.
    Lines,
    /// The byte limit was hit first.
    Bytes,
}

/// The limits to apply. `Default` gives pi's defaults (2000 lines, 51 200 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncationOptions {
    /// Maximum number of lines kept.
    pub max_lines: usize,
    /// Maximum number of UTF-8 bytes kept (separators included).
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        TruncationOptions {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The outcome of a truncation; serialized as pi's `TruncationResult` (tool `details.truncation`):
/// `{content, truncated, truncatedBy, totalLines, totalBytes, outputLines, outputBytes,
/// lastLinePartial, firstLineExceedsLimit, maxLines, maxBytes}` (`truncatedBy` is `null` when
/// nothing was cut). Byte counts are UTF-8 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    /// The kept text.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit cut it (`None` when not truncated).
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the input.
    pub total_lines: usize,
    /// UTF-8 bytes in the input.
    pub total_bytes: usize,
    /// Lines in `content` (a partial line counts as one).
    pub output_lines: usize,
    /// UTF-8 bytes in `content`.
    pub output_bytes: usize,
    /// Tail truncation only: the single kept line is the end of a longer line.
    pub last_line_partial: bool,
    /// Head truncation only: the first line alone exceeds the byte limit (`content` is empty).
    pub first_line_exceeds_limit: bool,
    /// The line limit applied.
    pub max_lines: usize,
    /// The byte limit applied.
    pub max_bytes: usize,
}

/// `text` split into lines as pi counts them: no lines for `""`, and a trailing `\n` does not
/// start another line.
fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// Number of lines in `text` as the truncation functions count them.
pub fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

fn untruncated(content: &str, total_lines: usize, opts: TruncationOptions) -> TruncationResult {
    TruncationResult {
        content: content.to_owned(),
        truncated: false,
        truncated_by: None,
        total_lines,
        total_bytes: content.len(),
        output_lines: total_lines,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: opts.max_lines,
        max_bytes: opts.max_bytes,
    }
}

/// Keeps the first lines of `content` within both limits; never returns a partial line.
///
/// When the first line alone exceeds `max_bytes`, the result is empty with
/// `first_line_exceeds_limit` set. Mirrors pi `truncateHead`.
pub fn truncate_head(content: &str, opts: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if total_lines <= opts.max_lines && content.len() <= opts.max_bytes {
        return untruncated(content, total_lines, opts);
    }
    let mut result = TruncationResult {
        content: String::new(),
        truncated: true,
        truncated_by: Some(TruncatedBy::Bytes),
        total_lines,
        total_bytes: content.len(),
        output_lines: 0,
        output_bytes: 0,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: opts.max_lines,
        max_bytes: opts.max_bytes,
    };
    if lines.first().is_some_and(|l| l.len() > opts.max_bytes) {
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().take(opts.max_lines).enumerate() {
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > opts.max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        bytes += cost;
        kept += 1;
    }
    if kept >= opts.max_lines && bytes <= opts.max_bytes {
        by = TruncatedBy::Lines;
    }
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// Keeps the last lines of `content` within both limits.
///
/// When the last line alone exceeds `max_bytes`, its final `max_bytes` bytes are kept
/// (starting at a UTF-8 character boundary) and `last_line_partial` is set. Mirrors pi
/// `truncateTail`.
pub fn truncate_tail(content: &str, opts: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if total_lines <= opts.max_lines && content.len() <= opts.max_bytes {
        return untruncated(content, total_lines, opts);
    }
    let mut start = lines.len();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial: Option<&str> = None;
    while start > 0 && lines.len() - start < opts.max_lines {
        let line = lines[start - 1];
        let kept = lines.len() - start;
        let cost = line.len() + usize::from(kept > 0);
        if bytes + cost > opts.max_bytes {
            by = TruncatedBy::Bytes;
            if kept == 0 {
                let tail = tail_bytes(line, opts.max_bytes);
                bytes = tail.len();
                partial = Some(tail);
            }
            break;
        }
        bytes += cost;
        start -= 1;
    }
    let (text, output_lines) = match partial {
        Some(tail) => (tail.to_owned(), 1),
        None => (lines[start..].join("\n"), lines.len() - start),
    };
    if output_lines >= opts.max_lines && bytes <= opts.max_bytes {
        by = TruncatedBy::Lines;
    }
    TruncationResult {
        output_bytes: text.len(),
        content: text,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        output_lines,
        last_line_partial: partial.is_some(),
        first_line_exceeds_limit: false,
        max_lines: opts.max_lines,
        max_bytes: opts.max_bytes,
    }
}

/// The longest suffix of `s` of at most `max_bytes` bytes that starts on a character boundary.
fn tail_bytes(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Formats a byte count as pi's `formatSize`: `"<n>B"` below 1024, `"<x.y>KB"` below 1 MiB,
/// else `"<x.y>MB"` (one decimal, rounded half up like JavaScript's `toFixed(1)`).
///
/// `format_size(51200)` is `"50.0KB"`.
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes < KIB {
        return format!("{bytes}B");
    }
    let (unit, suffix) = if bytes < MIB {
        (KIB, "KB")
    } else {
        (MIB, "MB")
    };
    // bytes / unit is exact in binary floating point, so toFixed(1) is exact half-up rounding.
    let tenths = (u128::from(bytes) * 10 + u128::from(unit / 2)) / u128::from(unit);
    format!("{}.{}{suffix}", tenths / 10, tenths % 10)
}

/// Result of [`truncate_line`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineTruncation {
    /// The line, possibly cut and suffixed with `... [truncated]`.
    pub text: String,
    /// Whether the line was cut.
    pub was_truncated: bool,
}

/// Cuts `line` to `max_chars` UTF-16 code units (JavaScript string length) and appends
/// `... [truncated]`; shorter lines are returned unchanged. A cut never splits a character.
/// Mirrors pi `truncateLine` (grep match and context lines, limit [`GREP_MAX_LINE_LENGTH`]).
pub fn truncate_line(line: &str, max_chars: usize) -> LineTruncation {
    let mut units = 0usize;
    let mut cut: Option<usize> = None;
    for (idx, ch) in line.char_indices() {
        let next = units + ch.len_utf16();
        if next > max_chars && cut.is_none() {
            cut = Some(idx);
        }
        units = next;
    }
    match cut {
        Some(end) if units > max_chars => LineTruncation {
            text: format!("{}... [truncated]", &line[..end]),
            was_truncated: true,
        },
        _ => LineTruncation {
            text: line.to_owned(),
            was_truncated: false,
        },
    }
}

#[cfg(test)]
#[path = "truncate_tests.rs"]
mod tests;
