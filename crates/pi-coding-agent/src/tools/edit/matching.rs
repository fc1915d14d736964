//! Matching and applying `edits[]` to LF-normalized text.
//!
//! Mirrors pi 0.85.0 `core/tools/edit-diff.ts` (`normalizeForFuzzyMatch`, `fuzzyFindText`,
//! `applyEditsToNormalizedContent`, `applyReplacementsPreservingUnchangedLines`). Every edit is
//! matched against the original content: first as an exact substring, then in "fuzzy" space
//! (NFKC, trailing whitespace removed per line, smart quotes → ASCII, Unicode dashes → `-`,
//! special spaces → space). If any edit needs fuzzy matching, all edits are matched and counted
//! in fuzzy space, and only the lines a replacement touches are rewritten from the fuzzy text;
//! every other line keeps its original bytes. Offsets here are byte offsets (pi: UTF-16 units);
//! they never leave this module.

use pi_agent_core::ToolError;

/// One requested replacement (`{oldText, newText}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// Text to find; must be unique in the file.
    pub old_text: String,
    /// Replacement text.
    pub new_text: String,
}

/// `text` with CRLF and lone CR turned into LF (pi `normalizeToLF`).
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// `"\r\n"` when the first line break of `content` is CRLF, else `"\n"` (pi `detectLineEnding`).
pub fn detect_line_ending(content: &str) -> &'static str {
    match (content.find("\r\n"), content.find('\n')) {
        (Some(crlf), Some(lf)) if crlf < lf => "\r\n",
        _ => "\n",
    }
}

/// LF line breaks turned back into `ending` (pi `restoreLineEndings`).
pub fn restore_line_endings(text: &str, ending: &str) -> String {
    if ending == "\r\n" {
        text.replace('\n', "\r\n")
    } else {
        text.to_owned()
    }
}

/// JavaScript's `String.prototype.trimEnd` whitespace: WhiteSpace (TAB, VT, FF, SP, NBSP,
/// ZWNBSP, Zs) and LineTerminator (LF, CR, LS, PS).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{000B}' | '\u{000C}' | '\r' | ' ' | '\u{00A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The fuzzy view of `text` (pi `normalizeForFuzzyMatch`): NFKC; trailing whitespace removed
/// from every line; U+2018–U+201B → `'`; U+201C–U+201F → `"`; U+2010–U+2015 and U+2212 → `-`;
/// U+00A0, U+2002–U+200A, U+202F, U+205F, U+3000 → space.
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc().normalize(text);
    let mut out = String::with_capacity(nfkc.len());
    for (i, line) in nfkc.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for c in line.trim_end_matches(is_js_whitespace).chars() {
            out.push(match c {
                '\u{2018}'..='\u{201B}' => '\'',
                '\u{201C}'..='\u{201F}' => '"',
                '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
                '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
                other => other,
            });
        }
    }
    out
}

/// Where an edit matched: byte offset and length in the content it was searched in.
struct Found {
    index: usize,
    length: usize,
    fuzzy: bool,
}

/// Exact search, then search in fuzzy space (pi `fuzzyFindText`).
fn fuzzy_find(content: &str, old_text: &str) -> Option<Found> {
    if let Some(index) = content.find(old_text) {
        return Some(Found {
            index,
            length: old_text.len(),
            fuzzy: false,
        });
    }
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old_text);
    fuzzy_content.find(&fuzzy_old).map(|index| Found {
        index,
        length: fuzzy_old.len(),
        fuzzy: true,
    })
}

/// Occurrences of `old_text` in `content`, both in fuzzy space (pi `countOccurrences`:
/// `split(old).length - 1`, i.e. non-overlapping matches).
fn count_occurrences(content: &str, old_text: &str) -> usize {
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old_text);
    if fuzzy_old.is_empty() {
        // JS: "abc".split("") has one element per UTF-16 unit.
        return fuzzy_content.encode_utf16().count().saturating_sub(1);
    }
    fuzzy_content.matches(fuzzy_old.as_str()).count()
}

/// A matched edit: byte range in the replacement base content and its new text.
#[derive(Clone, Debug)]
struct Replacement {
    edit_index: usize,
    index: usize,
    length: usize,
    new_text: String,
}

/// The content before and after applying the edits (both LF-normalized, BOM-less).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedEdits {
    /// The original content (pi `baseContent`).
    pub base_content: String,
    /// The edited content.
    pub new_content: String,
}

/// Applies `edits` to LF-normalized `content` (pi `applyEditsToNormalizedContent`).
///
/// Errors (pi's texts; the `edits[i]` forms when several edits are given):
/// `oldText must not be empty in <path>.`, `Could not find the exact text in <path>. …`,
/// `Found N occurrences of the text in <path>. …`, `edits[i] and edits[j] overlap in <path>. …`,
/// `No changes made to <path>. …`.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<AppliedEdits, ToolError> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: normalize_to_lf(&e.old_text),
            new_text: normalize_to_lf(&e.new_text),
        })
        .collect();
    for (i, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(ToolError::new(if total == 1 {
                format!("oldText must not be empty in {path}.")
            } else {
                format!("edits[{i}].oldText must not be empty in {path}.")
            }));
        }
    }

    let used_fuzzy = edits
        .iter()
        .any(|e| fuzzy_find(content, &e.old_text).is_some_and(|f| f.fuzzy));
    let base = if used_fuzzy {
        normalize_for_fuzzy_match(content)
    } else {
        content.to_owned()
    };

    let mut matched = Vec::with_capacity(total);
    for (i, edit) in edits.iter().enumerate() {
        let found = fuzzy_find(&base, &edit.old_text).ok_or_else(|| not_found(path, i, total))?;
        let occurrences = count_occurrences(&base, &edit.old_text);
        if occurrences > 1 {
            return Err(duplicate(path, i, total, occurrences));
        }
        matched.push(Replacement {
            edit_index: i,
            index: found.index,
            length: found.length,
            new_text: edit.new_text.clone(),
        });
    }
    matched.sort_by_key(|r| r.index);
    for pair in matched.windows(2) {
        let (prev, cur) = (&pair[0], &pair[1]);
        if prev.index + prev.length > cur.index {
            return Err(ToolError::new(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target \
                 disjoint regions.",
                prev.edit_index, cur.edit_index
            )));
        }
    }

    let new_content = if used_fuzzy {
        apply_preserving_unchanged_lines(content, &base, &matched)?
    } else {
        apply_replacements(&base, &matched, 0)
    };
    if new_content == content {
        return Err(ToolError::new(if total == 1 {
            format!(
                "No changes made to {path}. The replacement produced identical content. This \
                 might indicate an issue with special characters or the text not existing as \
                 expected."
            )
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        }));
    }
    Ok(AppliedEdits {
        base_content: content.to_owned(),
        new_content,
    })
}

fn not_found(path: &str, i: usize, total: usize) -> ToolError {
    ToolError::new(if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including \
             all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{i}] in {path}. The oldText must match exactly including all \
             whitespace and newlines."
        )
    })
}

fn duplicate(path: &str, i: usize, total: usize, occurrences: usize) -> ToolError {
    ToolError::new(if total == 1 {
        format!(
            "Found {occurrences} occurrences of the text in {path}. The text must be unique. \
             Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be \
             unique. Please provide more context to make it unique."
        )
    })
}

/// Applies sorted, disjoint replacements back to front; `offset` is where `content` starts in
/// the text the replacement offsets refer to.
fn apply_replacements(content: &str, replacements: &[Replacement], offset: usize) -> String {
    let mut result = content.to_owned();
    for r in replacements.iter().rev() {
        let start = r.index - offset;
        result.replace_range(start..start + r.length, &r.new_text);
    }
    result
}

/// Byte span of one line (with its `\n`).
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

fn line_spans(content: &str) -> Vec<Span> {
    let mut offset = 0;
    content
        .split_inclusive('\n')
        .map(|line| {
            let span = Span {
                start: offset,
                end: offset + line.len(),
            };
            offset = span.end;
            span
        })
        .collect()
}

fn outside_base() -> ToolError {
    ToolError::new("Replacement range is outside the base content.")
}

/// The half-open line range `[start, end)` a replacement touches.
fn replacement_lines(lines: &[Span], r: &Replacement) -> Result<(usize, usize), ToolError> {
    let start = lines
        .iter()
        .position(|l| r.index >= l.start && r.index < l.end)
        .ok_or_else(outside_base)?;
    let end_offset = r.index + r.length;
    let mut end = start;
    while end < lines.len() && lines[end].end < end_offset {
        end += 1;
    }
    if end >= lines.len() {
        return Err(outside_base());
    }
    Ok((start, end + 1))
}

/// Rewrites only the lines the replacements touch from the fuzzy `base`; all other lines are
/// copied from `original` (pi `applyReplacementsPreservingUnchangedLines`).
fn apply_preserving_unchanged_lines(
    original: &str,
    base: &str,
    replacements: &[Replacement],
) -> Result<String, ToolError> {
    let original_lines: Vec<&str> = original.split_inclusive('\n').collect();
    let base_lines = line_spans(base);
    if original_lines.len() != base_lines.len() {
        return Err(ToolError::new(
            "Cannot preserve unchanged lines because the base content has a different line count.",
        ));
    }
    // Groups of replacements whose line ranges overlap: (start line, end line, replacements).
    let mut groups: Vec<(usize, usize, Vec<Replacement>)> = Vec::new();
    for r in replacements {
        let (start, end) = replacement_lines(&base_lines, r)?;
        match groups.last_mut() {
            Some(group) if start < group.1 => {
                group.1 = group.1.max(end);
                group.2.push(r.clone());
            }
            _ => groups.push((start, end, vec![r.clone()])),
        }
    }
    let mut result = String::with_capacity(original.len());
    let mut next_line = 0;
    for (start, end, group) in &groups {
        result.extend(original_lines[next_line..*start].iter().copied());
        let from = base_lines[*start].start;
        let to = base_lines[*end - 1].end;
        result.push_str(&apply_replacements(&base[from..to], group, from));
        next_line = *end;
    }
    result.extend(original_lines[next_line..].iter().copied());
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    fn apply(content: &str, edits: &[Edit]) -> Result<String, String> {
        apply_edits(content, edits, "f.txt")
            .map(|a| a.new_content)
            .map_err(|e| e.0)
    }

    #[test]
    fn line_endings() {
        assert_eq!(detect_line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(detect_line_ending("a\nb\r\n"), "\n");
        assert_eq!(detect_line_ending("a\rb"), "\n");
        assert_eq!(normalize_to_lf("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(restore_line_endings("a\nb", "\r\n"), "a\r\nb");
    }

    #[test]
    fn fuzzy_normalization() {
        assert_eq!(
            normalize_for_fuzzy_match("a  \t\nb\u{00A0}\n\u{2018}x\u{2019} \u{201C}y\u{201D}"),
            "a\nb\n'x' \"y\""
        );
        assert_eq!(
            normalize_for_fuzzy_match("1\u{2013}2\u{2014}3\u{2212}4"),
            "1-2-3-4"
        );
        assert_eq!(
            normalize_for_fuzzy_match("ＡＢＣ１２３ cafe\u{0301}"),
            "ABC123 caf\u{e9}"
        );
        assert_eq!(normalize_for_fuzzy_match("x\u{FEFF}\ny"), "x\ny");
    }

    #[test]
    fn exact_error_texts_for_one_edit() {
        assert_eq!(
            apply("Hello, world!", &[edit("nonexistent", "x")]).unwrap_err(),
            "Could not find the exact text in f.txt. The old text must match exactly including \
             all whitespace and newlines."
        );
        assert_eq!(
            apply("foo foo foo", &[edit("foo", "bar")]).unwrap_err(),
            "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide \
             more context to make it unique."
        );
        assert_eq!(
            apply("abc", &[edit("", "x")]).unwrap_err(),
            "oldText must not be empty in f.txt."
        );
        assert_eq!(
            apply("abc", &[edit("b", "b")]).unwrap_err(),
            "No changes made to f.txt. The replacement produced identical content. This might \
             indicate an issue with special characters or the text not existing as expected."
        );
    }

    #[test]
    fn exact_error_texts_for_several_edits() {
        assert_eq!(
            apply("a\nb\n", &[edit("a", "A"), edit("zz", "x")]).unwrap_err(),
            "Could not find edits[1] in f.txt. The oldText must match exactly including all \
             whitespace and newlines."
        );
        assert_eq!(
            apply("a b b", &[edit("a", "A"), edit("b", "B")]).unwrap_err(),
            "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please \
             provide more context to make it unique."
        );
        assert_eq!(
            apply("abc", &[edit("a", "A"), edit("", "x")]).unwrap_err(),
            "edits[1].oldText must not be empty in f.txt."
        );
        assert_eq!(
            apply(
                "one\ntwo\nthree\n",
                &[edit("one\ntwo\n", "x"), edit("two\nthree\n", "y")]
            )
            .unwrap_err(),
            "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint \
             regions."
        );
        assert_eq!(
            apply("a b", &[edit("a", "a"), edit("b", "b")]).unwrap_err(),
            "No changes made to f.txt. The replacements produced identical content."
        );
    }

    #[test]
    fn edits_match_the_original_not_incrementally() {
        assert_eq!(
            apply(
                "foo\nbar\nbaz\n",
                &[edit("foo\n", "foo bar\n"), edit("bar\n", "BAR\n")]
            )
            .unwrap(),
            "foo bar\nBAR\nbaz\n"
        );
        assert_eq!(
            apply(
                "alpha\nbeta\ngamma\ndelta\n",
                &[edit("gamma\n", "GAMMA\n"), edit("alpha\n", "ALPHA\n")]
            )
            .unwrap(),
            "ALPHA\nbeta\nGAMMA\ndelta\n"
        );
    }

    #[test]
    fn fuzzy_matching_cases() {
        assert_eq!(
            apply(
                "line one   \nline two  \nline three\n",
                &[edit("line one\nline two\n", "replaced\n")]
            )
            .unwrap(),
            "replaced\nline three\n"
        );
        assert_eq!(
            apply(
                "你好，世界\n你好（世界）\n",
                &[edit("你好,世界\n你好(世界)\n", "你好，pi\n你好(pi)\n")]
            )
            .unwrap(),
            "你好，pi\n你好(pi)\n"
        );
        assert_eq!(
            apply(
                "ＡＢＣ１２３\ncafe\u{0301}\n",
                &[edit("ABC123\ncaf\u{e9}\n", "XYZ789\ncoffee\n")]
            )
            .unwrap(),
            "XYZ789\ncoffee\n"
        );
        assert_eq!(
            apply(
                "console.log(\u{2018}hello\u{2019});\n",
                &[edit("console.log('hello');", "console.log('world');")]
            )
            .unwrap(),
            "console.log('world');\n"
        );
        assert_eq!(
            apply(
                "range: 1\u{2013}5\nbreak\u{2014}here\n",
                &[edit("range: 1-5\nbreak-here", "range: 10-50\nbreak--here")]
            )
            .unwrap(),
            "range: 10-50\nbreak--here\n"
        );
        assert_eq!(
            apply(
                "hello\u{00A0}world\n",
                &[edit("hello world", "hello universe")]
            )
            .unwrap(),
            "hello universe\n"
        );
        assert_eq!(
            apply(
                "hello world   \nhello world\n",
                &[edit("hello world", "replaced")]
            )
            .unwrap_err(),
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide \
             more context to make it unique."
        );
    }

    #[test]
    fn exact_match_preferred_and_untouched_lines_keep_their_bytes() {
        assert_eq!(
            apply(
                "const x = 'exact';\nconst y = 'other';\n",
                &[edit("const x = 'exact';", "const x = 'changed';")]
            )
            .unwrap(),
            "const x = 'changed';\nconst y = 'other';\n"
        );
        assert_eq!(
            apply(
                "replace me   \nafter   \n",
                &[edit("replace me\n", "after\n")]
            )
            .unwrap(),
            "after\nafter   \n"
        );
        let original = "keep before  \nfirst target  \nfirst after\nkeep middle   \nsecond target  \nsecond after\nkeep after  \n";
        assert_eq!(
            apply(
                original,
                &[
                    edit("first target\nfirst after", "FIRST\nFIRST2"),
                    edit("second target\nsecond after", "SECOND\nSECOND2"),
                ]
            )
            .unwrap(),
            "keep before  \nFIRST\nFIRST2\nkeep middle   \nSECOND\nSECOND2\nkeep after  \n"
        );
        assert_eq!(
            apply(
                "console.log(\u{2018}hello\u{2019});\nhello\u{00A0}world\n",
                &[
                    edit("console.log('hello');\n", "console.log('world');\n"),
                    edit("hello world\n", "hello universe\n"),
                ]
            )
            .unwrap(),
            "console.log('world');\nhello universe\n"
        );
    }

    #[test]
    fn crlf_in_old_text_is_normalized() {
        assert_eq!(
            apply(
                "hello\nworld\n---\nhello\nworld\n",
                &[edit("hello\r\nworld\r\n", "x\n")]
            )
            .unwrap_err(),
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide \
             more context to make it unique."
        );
    }
}
