//! The YAML of a frontmatter block, read as far as pi's skills and prompt templates use it.
//!
//! pi 0.85.0 parses frontmatter with the `yaml` package and drops a template or skill whose
//! YAML does not parse. pi-rs reads the top-level mapping itself and rejects what that parser
//! rejects in practice (checked against the reference binary), so the same files load:
//!
//! - accepted: `key: value` lines at one indentation; plain scalars (a trailing ` #comment`
//!   removed, indented continuation lines folded with spaces); `'…'` / `"…"` scalars (also
//!   over several lines); `|` / `>` block scalars with a valid header (`|`, `|-`, `>+`, `|2`);
//!   an empty value followed by an indented block (kept as `null`); flow collections `[…]` /
//!   `{…}` (read as JSON when they are JSON, else `null`); anchors (`&a`) and tags (`!t`)
//!   before a value; a document that is not a mapping (`just words`, `- item`, `? key`),
//!   which yields no fields;
//! - errors: a repeated key; a plain value holding `: ` or ending in `:` (`description:
//!   Review: a file`); a value starting with `@`, `` ` ``, `%`, `*` (alias), `]`, `}`, or
//!   `- ` / `? `; an unclosed quote or flow collection; text after a closing quote; a bad
//!   block scalar header (`|bad`); a tab used as indentation; a line indented less than the
//!   first or more than it without belonging to a value; a line that is not `key: value`.
//!
//! Error texts are ours (pi shows them only in its interactive resource list).

use serde_json::{Map, Value};

/// One line: its indentation (spaces) and the text after it.
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

fn line(raw: &str) -> Line<'_> {
    let text = raw.trim_start_matches(' ');
    Line {
        indent: raw.len() - text.len(),
        text,
    }
}

fn is_blank_or_comment(raw: &str) -> bool {
    let t = raw.trim();
    t.is_empty() || t.starts_with('#')
}

/// Splits `key: rest` (the separator is a `:` followed by a blank or the end of the line);
/// `None` when the text is not a mapping entry.
fn split_entry(text: &str) -> Option<(String, &str)> {
    if let Some(q) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = text[1..].find(q)? + 1;
        let after = text[close + 1..].trim_start_matches([' ', '\t']);
        let rest = after.strip_prefix(':')?;
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            return None;
        }
        return Some((text[1..close].to_owned(), rest));
    }
    if text.starts_with(['[', '{', '#', '&', '*', '!', '|', '>', '@', '`', '%'])
        || text == "-"
        || text.starts_with("- ")
        || text == "?"
        || text.starts_with("? ")
    {
        return None;
    }
    let bytes = text.as_bytes();
    let sep = (0..bytes.len()).find(|&i| {
        bytes[i] == b':' && bytes.get(i + 1).is_none_or(|c| *c == b' ' || *c == b'\t')
    })?;
    let key = text[..sep].trim_end();
    if key.is_empty() {
        return None;
    }
    Some((key.to_owned(), &text[sep + 1..]))
}

/// Removes a ` #comment` (or a value that is only a comment).
fn strip_comment(text: &str) -> &str {
    if text.starts_with('#') {
        return "";
    }
    let bytes = text.as_bytes();
    let cut = (1..bytes.len()).find(|&i| bytes[i] == b'#' && matches!(bytes[i - 1], b' ' | b'\t'));
    cut.map_or(text, |i| &text[..i]).trim_end()
}

fn plain_value(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => Value::from(text),
    }
}

/// Why a frontmatter block is not YAML pi's parser (the `yaml` package) accepts; `Display` is
/// that parser's wording, which pi shows in its skill warnings.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum YamlError {
    /// A tab used to indent a line (1-based line number).
    #[error("Tabs are not allowed as indentation at line {0}")]
    TabIndentationAt(usize),
    /// A tab used to indent a line of a nested block.
    #[error("Tabs are not allowed as indentation")]
    TabIndentation,
    /// A plain scalar starting with a reserved indicator.
    #[error("Plain value cannot start with {0:?}")]
    PlainValueStart(String),
    /// `key: - item` or `key: ? x` on one line.
    #[error("Block collections cannot start on the line of their key")]
    BlockCollectionOnKeyLine,
    /// A `|` / `>` header that is not one chomping and one indentation indicator.
    #[error("Invalid block scalar header {0:?}")]
    BlockScalarHeader(String),
    /// A quoted scalar that never closes.
    #[error("Missing closing {0}quote")]
    MissingClosingQuote(char),
    /// Text after the closing quote.
    #[error("Unexpected text after a quoted value")]
    TextAfterQuotedValue,
    /// A double-quoted scalar with an invalid escape (the JSON parser's message).
    #[error("{0}")]
    DoubleQuotedEscape(String),
    /// A `[` or `{` without its closing bracket.
    #[error("Flow collection is not closed")]
    FlowCollectionNotClosed,
    /// Text after a flow collection.
    #[error("Unexpected text after a flow collection")]
    TextAfterFlowCollection,
    /// `a: b: c` on one line.
    #[error("Nested mappings are not allowed in compact mappings")]
    NestedCompactMapping,
    /// A line that is neither a `key: value` entry nor a scalar document.
    #[error("Implicit keys need to be followed by map values at line {0}")]
    ImplicitKeyWithoutValueAt(usize),
    /// A mapping entry indented differently from the first.
    #[error("Bad indentation of a mapping entry at line {0}")]
    BadIndentationAt(usize),
    /// A key given twice.
    #[error("Map keys must be unique at line {0}")]
    DuplicateKeyAt(usize),
}

/// The value of one entry, starting at `rest` (the text after `key:`), with the lines after
/// the entry's line (`next` is advanced past the lines the value uses).
struct ValueReader<'a, 'b> {
    lines: &'b [&'a str],
    next: &'b mut usize,
    base: usize,
}

impl<'a> ValueReader<'a, '_> {
    /// Lines indented deeper than the entry (blank lines included, but not trailing ones).
    fn take_indented(&mut self) -> Result<Vec<&'a str>, YamlError> {
        let mut end = *self.next;
        let mut taken = *self.next;
        while end < self.lines.len() {
            let raw = self.lines[end];
            if raw.trim().is_empty() {
                end += 1;
                continue;
            }
            if raw.starts_with('\t') {
                return Err(YamlError::TabIndentationAt(end + 1));
            }
            if line(raw).indent <= self.base {
                break;
            }
            end += 1;
            taken = end;
        }
        let out = self.lines[*self.next..taken].to_vec();
        *self.next = taken;
        Ok(out)
    }

    fn read(&mut self, rest: &'a str) -> Result<Value, YamlError> {
        let mut rest = rest.trim_start_matches([' ', '\t']);
        // Node properties: anchors and tags.
        while rest.starts_with(['&', '!']) {
            let end = rest.find([' ', '\t']).unwrap_or(rest.len());
            rest = rest[end..].trim_start_matches([' ', '\t']);
        }
        let first = rest.chars().next();
        match first {
            None | Some('#') => self.nested(),
            Some('|') | Some('>') => self.block_scalar(rest),
            Some('"') | Some('\'') => self.quoted(rest),
            Some('[') | Some('{') => self.flow(rest),
            Some('@' | '`' | '%' | '*' | ']' | '}') => {
                Err(YamlError::PlainValueStart(rest.to_owned()))
            }
            Some('-' | '?') if rest.len() == 1 || rest[1..].starts_with([' ', '\t']) => {
                Err(YamlError::BlockCollectionOnKeyLine)
            }
            Some(_) => self.plain(rest),
        }
    }

    /// An empty value: an indented block (or `- ` items at the key's indentation) follows.
    fn nested(&mut self) -> Result<Value, YamlError> {
        while *self.next < self.lines.len() {
            let raw = self.lines[*self.next];
            if raw.starts_with('\t') {
                return Err(YamlError::TabIndentation);
            }
            let l = line(raw);
            let item = l.indent == self.base && (l.text == "-" || l.text.starts_with("- "));
            if raw.trim().is_empty() || l.indent > self.base || item {
                *self.next += 1;
            } else {
                break;
            }
        }
        Ok(Value::Null)
    }

    fn block_scalar(&mut self, rest: &str) -> Result<Value, YamlError> {
        let style = &rest[..1];
        let header_end = rest.find([' ', '\t']).unwrap_or(rest.len());
        let header = &rest[1..header_end];
        let after = rest[header_end..].trim_start_matches([' ', '\t']);
        let valid_header = header.len() <= 2
            && header.chars().filter(|c| *c == '+' || *c == '-').count() <= 1
            && header.chars().filter(char::is_ascii_digit).count() <= 1
            && header
                .chars()
                .all(|c| c == '+' || c == '-' || ('1'..='9').contains(&c));
        if !valid_header || !(after.is_empty() || after.starts_with('#')) {
            return Err(YamlError::BlockScalarHeader(rest.to_owned()));
        }
        let block = self.take_indented()?;
        let indent = block
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or(0, |l| line(l).indent);
        let body: Vec<&str> = block
            .iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end_matches(' '))
            .collect();
        let text = if style == "|" {
            body.join("\n")
        } else {
            body.join(" ")
        };
        let keep = if header.contains('-') { "" } else { "\n" };
        Ok(Value::from(format!("{text}{keep}")))
    }

    /// Text of the first line and the indented lines after it, folded with spaces.
    fn folded(&mut self, first: &str) -> Result<String, YamlError> {
        let mut text = first.trim_end().to_owned();
        for l in self.take_indented()? {
            let t = l.trim();
            if t.is_empty() {
                text.push('\n');
            } else {
                if !text.ends_with('\n') {
                    text.push(' ');
                }
                text.push_str(t);
            }
        }
        Ok(text)
    }

    fn quoted(&mut self, rest: &str) -> Result<Value, YamlError> {
        let q = rest.as_bytes()[0];
        let close = |s: &str| -> Option<usize> {
            let b = s.as_bytes();
            let mut i = 1;
            while i < b.len() {
                if q == b'"' && b[i] == b'\\' {
                    i += 2;
                    continue;
                }
                if b[i] == q {
                    if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return Some(i);
                }
                i += 1;
            }
            None
        };
        let text = match close(rest) {
            Some(_) => rest.to_owned(),
            None => self.folded(rest)?,
        };
        let end = close(&text).ok_or(YamlError::MissingClosingQuote(q as char))?;
        if !strip_comment(text[end + 1..].trim_start_matches([' ', '\t'])).is_empty() {
            return Err(YamlError::TextAfterQuotedValue);
        }
        let inner = &text[1..end];
        if q == b'"' {
            serde_json::from_str::<String>(&format!("\"{}\"", inner.replace('\n', "\\n")))
                .map(Value::from)
                .map_err(|e| YamlError::DoubleQuotedEscape(e.to_string()))
        } else {
            Ok(Value::from(inner.replace("''", "'")))
        }
    }

    fn flow(&mut self, rest: &str) -> Result<Value, YamlError> {
        let balanced_end = |s: &str| -> Option<usize> {
            let mut depth = 0usize;
            let mut quote: Option<char> = None;
            for (i, c) in s.char_indices() {
                match (quote, c) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), _) => {}
                    (None, '"' | '\'') => quote = Some(c),
                    (None, '[' | '{') => depth += 1,
                    (None, ']' | '}') => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => {}
                }
            }
            None
        };
        let text = match balanced_end(rest) {
            Some(_) => rest.to_owned(),
            None => self.folded(rest)?,
        };
        let end = balanced_end(&text).ok_or(YamlError::FlowCollectionNotClosed)?;
        if !strip_comment(text[end + 1..].trim_start_matches([' ', '\t'])).is_empty() {
            return Err(YamlError::TextAfterFlowCollection);
        }
        Ok(serde_json::from_str(&text[..=end]).unwrap_or(Value::Null))
    }

    fn plain(&mut self, rest: &str) -> Result<Value, YamlError> {
        let text = self.folded(strip_comment(rest))?;
        let nested = text.contains(": ") || text.contains(":\t") || text.ends_with(':');
        if nested || text.contains(":\n") {
            return Err(YamlError::NestedCompactMapping);
        }
        Ok(plain_value(&text))
    }
}

/// The top-level fields of `yaml` (see the module docs).
///
/// # Errors
/// The YAML the reference's parser rejects, as listed in the module docs.
pub(crate) fn parse_yaml_subset(yaml: &str) -> Result<Map<String, Value>, YamlError> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut fields = Map::new();
    let Some(first) = lines.iter().position(|l| !is_blank_or_comment(l)) else {
        return Ok(fields);
    };
    if lines[first].starts_with('\t') {
        return Err(YamlError::TabIndentationAt(first + 1));
    }
    let base = line(lines[first]).indent;
    let head = line(lines[first]).text;
    if split_entry(head).is_none() {
        // Not a mapping: a sequence, complex key or flow document carries no fields; a plain
        // scalar document must not hide a mapping entry.
        if head.starts_with(['-', '?', '[', '{']) {
            return Ok(fields);
        }
        let all: Vec<&str> = lines[first..]
            .iter()
            .map(|l| strip_comment(l.trim()))
            .collect();
        let text = all.join(" ");
        if text.contains(": ") || text.ends_with(':') {
            return Err(YamlError::ImplicitKeyWithoutValueAt(first + 1));
        }
        return Ok(fields);
    }
    let mut i = first;
    while i < lines.len() {
        let raw = lines[i];
        i += 1;
        if is_blank_or_comment(raw) {
            continue;
        }
        if raw.starts_with('\t') {
            return Err(YamlError::TabIndentationAt(i));
        }
        let l = line(raw);
        if l.indent != base {
            return Err(YamlError::BadIndentationAt(i));
        }
        let Some((key, rest)) = split_entry(l.text) else {
            return Err(YamlError::ImplicitKeyWithoutValueAt(i));
        };
        if fields.contains_key(&key) {
            return Err(YamlError::DuplicateKeyAt(i));
        }
        let value = ValueReader {
            lines: &lines,
            next: &mut i,
            base,
        }
        .read(rest)?;
        fields.insert(key, value);
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(yaml: &str) -> Map<String, Value> {
        parse_yaml_subset(yaml).unwrap_or_else(|e| panic!("{yaml:?}: {e}"))
    }

    /// The frontmatters pi 0.85.0 accepts (each checked with the reference binary: a prompt
    /// template with it loads).
    #[test]
    fn accepted_like_the_reference() {
        for yaml in [
            "description: a #c",
            "description: &anc val",
            "description: !tag val",
            "description: 'it''s'",
            "description: {a: 1}",
            "description: [1, 2]",
            "  indented: x",
            "just text",
            "description: |\n  block\n  text",
            "key with space: v",
            "? complex",
            "description: foo:bar",
            "description: >-\n  folded",
            "- list",
            "description: x]",
            "description: a, b",
            "description: a\n  continued",
            "description:\n  - a\n  - b",
            "argument-hint: <file>",
            "description: null",
            "description: 3",
            "description: yes",
        ] {
            ok(yaml);
        }
    }

    /// The frontmatters pi 0.85.0 rejects (the template is not loaded).
    #[test]
    fn rejected_like_the_reference() {
        for yaml in [
            "description: [bad",
            "description: Review: a file",
            "description: @at",
            "description: `tick",
            "description: *alias",
            "description: %pct",
            "description: - item",
            "description: x\ndescription: y",
            "description: \"unterminated",
            "a: 1\n b: 2",
            "description: x\n\tTab: y",
            "description: \"a\" trailing",
            "description: {",
            "description: }",
            "description: \"a\\qb\"",
            "description: |bad",
            "just text\nkey: value",
        ] {
            assert!(parse_yaml_subset(yaml).is_err(), "{yaml:?} was accepted");
        }
    }

    #[test]
    fn values() {
        let f = ok(concat!(
            "a: plain # comment\n",
            "b: \"esc\\\"aped\"\n",
            "c: 'single ''q'''\n",
            "d: &x !t anchored\n",
            "e: folded\n  over lines\n",
            "f: |\n  one\n    two\n\n",
            "g: >\n  x\n  y\n",
            "h: [\"j\", 1]\n",
            "i: \"two\n  lines\"\n",
            "j: true\n",
            "k:\n  nested: map\n",
            "l: ~\n",
        ));
        assert_eq!(f["a"], "plain");
        assert_eq!(f["b"], "esc\"aped");
        assert_eq!(f["c"], "single 'q'");
        assert_eq!(f["d"], "anchored");
        assert_eq!(f["e"], "folded over lines");
        assert_eq!(f["f"], "one\n  two\n");
        assert_eq!(f["g"], "x y\n");
        assert_eq!(f["h"], serde_json::json!(["j", 1]));
        assert_eq!(f["i"], "two lines");
        assert_eq!(f["j"], true);
        assert_eq!(f["k"], Value::Null);
        assert_eq!(f["l"], Value::Null);
        assert!(ok("just words\n").is_empty());
    }
}
