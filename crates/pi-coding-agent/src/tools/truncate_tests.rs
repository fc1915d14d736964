use super::*;

fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
    TruncationOptions {
        max_lines,
        max_bytes,
    }
}

#[test]
fn format_size_matches_pi() {
    assert_eq!(format_size(0), "0B");
    assert_eq!(format_size(1023), "1023B");
    assert_eq!(format_size(1024), "1.0KB");
    assert_eq!(format_size(51200), "50.0KB");
    // 1280 / 1024 = 1.25 exactly: JavaScript's toFixed rounds the tie up.
    assert_eq!(format_size(1280), "1.3KB");
    assert_eq!(format_size(1024 * 1024 - 1), "1024.0KB");
    assert_eq!(format_size(1024 * 1024), "1.0MB");
    assert_eq!(format_size(5 * 1024 * 1024 + 512 * 1024), "5.5MB");
}

#[test]
fn count_lines_ignores_trailing_newline() {
    assert_eq!(count_lines(""), 0);
    assert_eq!(count_lines("a"), 1);
    assert_eq!(count_lines("a\n"), 1);
    assert_eq!(count_lines("a\nb"), 2);
    assert_eq!(count_lines("\n\n"), 2);
}

#[test]
fn head_untouched_within_limits() {
    let r = truncate_head("a\nb\n", TruncationOptions::default());
    assert!(!r.truncated);
    assert_eq!(r.truncated_by, None);
    assert_eq!(r.content, "a\nb\n");
    assert_eq!((r.total_lines, r.output_lines), (2, 2));
    assert_eq!((r.total_bytes, r.output_bytes), (4, 4));
    assert_eq!((r.max_lines, r.max_bytes), (2000, 51200));
}

#[test]
fn head_by_lines() {
    let text: String = (1..=10).map(|i| format!("line{i}\n")).collect();
    let r = truncate_head(&text, opts(3, 1000));
    assert!(r.truncated);
    assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(r.content, "line1\nline2\nline3");
    assert_eq!(r.output_lines, 3);
    assert_eq!(r.output_bytes, 17);
    assert_eq!(r.total_lines, 10);
}

#[test]
fn head_by_bytes_counts_separators() {
    // "aaaa" (4) + "\nbbbb" (5) = 9 bytes; the third line would need 5 more.
    let r = truncate_head("aaaa\nbbbb\ncccc", opts(100, 12));
    assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(r.content, "aaaa\nbbbb");
    assert_eq!(r.output_lines, 2);
    assert_eq!(r.output_bytes, 9);
    assert!(!r.first_line_exceeds_limit);
}

#[test]
fn head_first_line_over_limit() {
    let r = truncate_head("0123456789\nshort", opts(100, 5));
    assert!(r.truncated);
    assert!(r.first_line_exceeds_limit);
    assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(r.content, "");
    assert_eq!((r.output_lines, r.output_bytes), (0, 0));
}

#[test]
fn head_exact_line_limit_is_lines() {
    let r = truncate_head("a\nb\nc", opts(2, 3));
    // "a\nb" is exactly 3 bytes and 2 lines: both limits are reached, lines wins.
    assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(r.content, "a\nb");
}

#[test]
fn tail_by_lines() {
    let text: String = (1..=10).map(|i| format!("line{i}\n")).collect();
    let r = truncate_tail(&text, opts(3, 1000));
    assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(r.content, "line8\nline9\nline10");
    assert_eq!(r.output_lines, 3);
    assert_eq!(r.total_lines, 10);
    assert!(!r.last_line_partial);
}

#[test]
fn tail_by_bytes() {
    let r = truncate_tail("aaaa\nbbbb\ncccc\n", opts(100, 10));
    assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(r.content, "bbbb\ncccc");
    assert_eq!(r.output_lines, 2);
    assert_eq!(r.output_bytes, 9);
    assert_eq!(r.total_bytes, 15);
}

#[test]
fn tail_partial_last_line_respects_utf8() {
    // "é" is two bytes; keeping 5 bytes of "aéééé" would start inside a character.
    let r = truncate_tail("x\naéééé", opts(100, 5));
    assert!(r.last_line_partial);
    assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(r.content, "éé");
    assert_eq!(r.output_lines, 1);
    assert_eq!(r.output_bytes, 4);
}

#[test]
fn tail_serializes_with_pi_field_names() {
    let r = truncate_tail("a\nb\nc", opts(1, 100));
    let json = serde_json::to_value(&r).unwrap_or_default();
    assert_eq!(
        json,
        serde_json::json!({
            "content": "c", "truncated": true, "truncatedBy": "lines", "totalLines": 3,
            "totalBytes": 5, "outputLines": 1, "outputBytes": 1, "lastLinePartial": false,
            "firstLineExceedsLimit": false, "maxLines": 1, "maxBytes": 100
        })
    );
    let none = serde_json::to_value(truncate_tail("a", opts(1, 100))).unwrap_or_default();
    assert_eq!(none["truncatedBy"], serde_json::Value::Null);
}

#[test]
fn truncate_line_counts_utf16_units() {
    let short = truncate_line("abc", 3);
    assert_eq!(short.text, "abc");
    assert!(!short.was_truncated);
    let long = truncate_line("abcdef", 3);
    assert_eq!(long.text, "abc... [truncated]");
    assert!(long.was_truncated);
    // "😀" is two UTF-16 units: at a limit of 3 the cut lands mid-pair and backs off.
    let emoji = truncate_line("ab😀cd", 3);
    assert_eq!(emoji.text, "ab... [truncated]");
    let exact = truncate_line("a😀", 3);
    assert!(!exact.was_truncated);
    let grep = truncate_line(&"x".repeat(501), GREP_MAX_LINE_LENGTH);
    assert_eq!(grep.text, format!("{}... [truncated]", "x".repeat(500)));
}
