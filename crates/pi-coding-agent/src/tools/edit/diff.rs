//! The edit tool's diffs: a numbered display diff and a unified patch.
//!
//! Mirrors pi 0.85.0 `core/tools/edit-diff.ts` (`generateDiffString`, `generateUnifiedPatch`),
//! which use jsdiff's `diffLines` and `createTwoFilesPatch` (jsdiff 8, 4 context lines, file
//! headers only). The line diff is jsdiff's ([`super::line_diff`]).

use super::line_diff::{Kind, Part, diff_lines};

impl Kind {
    fn changed(self) -> bool {
        self != Kind::Equal
    }
}

/// The line diff in jsdiff's form ([`diff_lines`]).
fn diff_parts<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    diff_lines(old, new)
}

fn strip_newline(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// The display diff and the first changed line (1-based, in the new file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayDiff {
    /// Lines `+NN text`, `-NN text`, ` NN text` and ` <pad> ...` for skipped context, joined
    /// with `\n`.
    pub diff: String,
    /// First changed line in the new file, `None` without changes.
    pub first_changed_line: Option<usize>,
}

/// pi `generateDiffString(old, new, contextLines)`: numbered lines, numbers right-aligned to
/// the width of the larger line count; unchanged runs show at most `context` lines next to a
/// change, the rest collapse into one `...` line.
pub fn display_diff(old: &str, new: &str, context: usize) -> DisplayDiff {
    let parts = diff_parts(old, new);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut last_was_change = false;
    let mut first_changed_line = None;
    let numbered = |prefix: char, n: usize, line: &str| format!("{prefix}{n:>width$} {line}");
    let ellipsis = format!(" {} ...", " ".repeat(width));

    for (i, part) in parts.iter().enumerate() {
        let raw: Vec<&str> = part.lines.iter().map(|l| strip_newline(l)).collect();
        if part.kind.changed() {
            first_changed_line.get_or_insert(new_no);
            for line in raw {
                if part.kind == Kind::Added {
                    out.push(numbered('+', new_no, line));
                    new_no += 1;
                } else {
                    out.push(numbered('-', old_no, line));
                    old_no += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = parts.get(i + 1).is_some_and(|p| p.kind.changed());
        let context_lines =
            |lines: &[&str], out: &mut Vec<String>, old_no: &mut usize, new_no: &mut usize| {
                for line in lines {
                    out.push(numbered(' ', *old_no, line));
                    *old_no += 1;
                    *new_no += 1;
                }
            };
        match (last_was_change, next_is_change) {
            (true, true) if raw.len() <= context * 2 => {
                context_lines(&raw, &mut out, &mut old_no, &mut new_no);
            }
            (true, true) => {
                context_lines(&raw[..context], &mut out, &mut old_no, &mut new_no);
                out.push(ellipsis.clone());
                let skipped = raw.len() - 2 * context;
                old_no += skipped;
                new_no += skipped;
                context_lines(
                    &raw[raw.len() - context..],
                    &mut out,
                    &mut old_no,
                    &mut new_no,
                );
            }
            (true, false) => {
                let shown = raw.len().min(context);
                context_lines(&raw[..shown], &mut out, &mut old_no, &mut new_no);
                let skipped = raw.len() - shown;
                if skipped > 0 {
                    out.push(ellipsis.clone());
                    old_no += skipped;
                    new_no += skipped;
                }
            }
            (false, true) => {
                let skipped = raw.len().saturating_sub(context);
                if skipped > 0 {
                    out.push(ellipsis.clone());
                    old_no += skipped;
                    new_no += skipped;
                }
                context_lines(&raw[skipped..], &mut out, &mut old_no, &mut new_no);
            }
            (false, false) => {
                old_no += raw.len();
                new_no += raw.len();
            }
        }
        last_was_change = false;
    }
    DisplayDiff {
        diff: out.join("\n"),
        first_changed_line,
    }
}

/// One hunk of a unified patch.
struct Hunk {
    old_start: usize,
    old_lines: usize,
    new_start: usize,
    new_lines: usize,
    lines: Vec<String>,
}

/// pi `generateUnifiedPatch(path, old, new)`: jsdiff `createTwoFilesPatch(path, path, old, new)`
/// with `context` lines and file headers only — `--- path`, `+++ path`, `@@ -a,b +c,d @@` hunks,
/// `\ No newline at end of file` after a last line without one, and a final `\n`.
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    let mut parts = diff_parts(old, new);
    // jsdiff appends an empty equal part so the last hunk is always closed.
    parts.push(Part {
        kind: Kind::Equal,
        lines: Vec::new(),
    });
    let mut hunks: Vec<Hunk> = Vec::new();
    let (mut old_range_start, mut new_range_start) = (0usize, 0usize);
    let mut current: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1usize, 1usize);
    let ctx_lines =
        |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| format!(" {l}")).collect() };

    for i in 0..parts.len() {
        let part = &parts[i];
        if part.kind.changed() {
            if old_range_start == 0 {
                old_range_start = old_line;
                new_range_start = new_line;
                if i > 0 {
                    let prev = &parts[i - 1].lines;
                    current = ctx_lines(&prev[prev.len().saturating_sub(context)..]);
                    old_range_start -= current.len();
                    new_range_start -= current.len();
                }
            }
            let sign = if part.kind == Kind::Added { '+' } else { '-' };
            current.extend(part.lines.iter().map(|l| format!("{sign}{l}")));
            if part.kind == Kind::Added {
                new_line += part.lines.len();
            } else {
                old_line += part.lines.len();
            }
            continue;
        }
        if old_range_start != 0 {
            if part.lines.len() <= context * 2 && i + 2 < parts.len() {
                current.extend(ctx_lines(&part.lines));
            } else {
                let shown = part.lines.len().min(context);
                current.extend(ctx_lines(&part.lines[..shown]));
                hunks.push(Hunk {
                    old_start: old_range_start,
                    old_lines: old_line - old_range_start + shown,
                    new_start: new_range_start,
                    new_lines: new_line - new_range_start + shown,
                    lines: std::mem::take(&mut current),
                });
                old_range_start = 0;
                new_range_start = 0;
            }
        }
        old_line += part.lines.len();
        new_line += part.lines.len();
    }

    let mut out = vec![format!("--- {path}"), format!("+++ {path}")];
    for hunk in hunks {
        let old_start = if hunk.old_lines == 0 {
            hunk.old_start - 1
        } else {
            hunk.old_start
        };
        let new_start = if hunk.new_lines == 0 {
            hunk.new_start - 1
        } else {
            hunk.new_start
        };
        out.push(format!(
            "@@ -{old_start},{} +{new_start},{} @@",
            hunk.old_lines, hunk.new_lines
        ));
        for line in hunk.lines {
            match line.strip_suffix('\n') {
                Some(stripped) => out.push(stripped.to_owned()),
                None => {
                    out.push(line);
                    out.push("\\ No newline at end of file".to_owned());
                }
            }
        }
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "def greet():\n    print(\"Hello, world\")\n\ngreet()\n";
    const NEW: &str = "def greet():\n    print(\"Goodbye, world\")\n\ngreet()\n";

    #[test]
    fn golden_tool_edit_diff_and_patch() {
        // conformance scenario tool_edit (pi 0.85.0 output).
        let d = display_diff(OLD, NEW, 4);
        assert_eq!(
            d.diff,
            " 1 def greet():\n-2     print(\"Hello, world\")\n+2     print(\"Goodbye, world\")\n 3 \n 4 greet()"
        );
        assert_eq!(d.first_changed_line, Some(2));
        assert_eq!(
            unified_patch("greet.py", OLD, NEW, 4),
            "--- greet.py\n+++ greet.py\n@@ -1,4 +1,4 @@\n def greet():\n-    print(\"Hello, world\")\n+    print(\"Goodbye, world\")\n \n greet()\n"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        assert_eq!(
            unified_patch("f", "Hello, world!", "Hello, testing!", 4),
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-Hello, world!\n\\ No newline at end of file\n+Hello, testing!\n\\ No newline at end of file\n"
        );
        let d = display_diff("Hello, world!", "Hello, testing!", 4);
        assert_eq!(d.diff, "-1 Hello, world!\n+1 Hello, testing!");
    }

    fn numbered_lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i:03}\n")).collect()
    }

    #[test]
    fn large_gaps_collapse_and_numbers_are_padded() {
        let old = numbered_lines(600);
        let new = old
            .replace("line 100\n", "LINE 100\n")
            .replace("line 300\n", "LINE 300\n")
            .replace("line 500\n", "LINE 500\n");
        let d = display_diff(&old, &new, 4);
        let lines: Vec<&str> = d.diff.lines().collect();
        assert_eq!(lines[0], "     ...");
        assert_eq!(lines[1], "  96 line 096");
        assert_eq!(lines[5], "-100 line 100");
        assert_eq!(lines[6], "+100 LINE 100");
        assert_eq!(lines[11], "     ...");
        assert!(d.diff.contains("+300 LINE 300") && d.diff.contains("+500 LINE 500"));
        assert!(!d.diff.contains("line 250"));
        assert_eq!(lines.last(), Some(&"     ..."));
        assert_eq!(lines.len(), 3 * 10 + 4);
        assert_eq!(d.first_changed_line, Some(100));

        let patch = unified_patch("f", &old, &new, 4);
        assert_eq!(patch.matches("@@ -").count(), 3);
        assert!(patch.contains("@@ -96,9 +96,9 @@\n line 096\n"));
    }

    #[test]
    fn close_changes_share_a_hunk_and_pure_insertions_use_start_minus_one() {
        let patch = unified_patch("f", "a\nb\nc\n", "a\nb\nc\nd\n", 0);
        assert_eq!(patch, "--- f\n+++ f\n@@ -3,0 +4,1 @@\n+d\n");
        let patch = unified_patch("f", "1\n2\n3\n4\n5\n", "X\n2\n3\n4\nY\n", 4);
        assert_eq!(
            patch,
            "--- f\n+++ f\n@@ -1,5 +1,5 @@\n-1\n+X\n 2\n 3\n 4\n-5\n+Y\n"
        );
    }
}
