//! The `grep` tool: regex or literal search of file contents.
//!
//! Mirrors pi 0.85.0 `core/tools/grep.ts`, which runs
//! `rg --json --line-number --color=never --hidden [--ignore-case] [--fixed-strings]
//! [--glob G] -- <pattern> <path>`; pi-rs implements that search in-process with the `ignore`
//! crate (ripgrep's own walker) and `regex`, so no `rg` binary is needed:
//!
//! - hidden files are searched (`.git/` included, as `rg --hidden` does); `.gitignore` and
//!   git's exclude files count only inside a git repository, `.ignore`/`.rgignore` always;
//!   `glob` is a ripgrep `--glob` override (`!` negates; a glob without `/` matches file names,
//!   one with `/` is anchored at the tool's cwd, ripgrep's working directory);
//! - an explicitly named file is always searched, even if ignored or binary; files found by
//!   the walk that contain a NUL byte are skipped as binary;
//! - a byte-order mark is sniffed as rg does: a UTF-8 BOM is not part of line 1, UTF-16 files
//!   with a BOM are transcoded and searched as text (context lines are read back raw, as pi
//!   reads them itself);
//! - a file whose name is not UTF-8 is reported with U+FFFD in its name (pi drops such
//!   matches: rg gives their paths as bytes, which it does not read);
//! - each line (without its `\n`) is matched on its own; `ignoreCase` is ripgrep's
//!   `--ignore-case`, `literal` its `--fixed-strings`; a pattern that needs a newline fails
//!   with ripgrep's message;
//! - **ordering (deliberate improvement):** ripgrep runs unsorted, so its order, and which
//!   matches survive `limit`, vary between runs; pi-rs walks each directory in byte order of
//!   the entry names and reports matches file by file, lines ascending, then stops at `limit`.
//!
//! Output lines are `<path>:<N>: <text>` (path relative to the searched directory, or the file
//! name when a file was searched), context lines `<path>-<N>- <text>`; each match gets its own
//! block. Lines over 500 characters are cut (`... [truncated]`); the text is then cut at 50 KB.
//! Notices: `[<L> matches limit reached. Use limit=<2L> for more, or refine pattern]`,
//! `[50.0KB limit reached]`, `[Some lines truncated to 500 chars. Use read tool to see full
//! lines]`, joined with `. ` in one bracket. Errors: `Path not found: <abs>`,
//! `Operation aborted`, the regex parser's message (with ripgrep's `--pcre2` hint for
//! look-around and backreferences); no match gives `No matches found`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use regex::bytes::{Regex, RegexBuilder};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::path_args::resolve_to_cwd;
use crate::tools::search::{IgnoreRules, js_number_value, walker};
use crate::tools::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TruncationOptions, format_size, truncate_head,
    truncate_line,
};
use crate::tools::{check_aborted, js_number};

/// The system-prompt snippet of the grep tool.
pub const GREP_PROMPT_SNIPPET: &str = "Search file contents for patterns (respects .gitignore)";

/// Matches returned when `limit` is not given.
pub const DEFAULT_GREP_LIMIT: f64 = 100.0;

const NEWLINE_ERROR: &str = "the literal '\"\\n\"' is not allowed in a regex\n\n\
Consider enabling multiline mode with the --multiline flag (or -U for short).\n\
When multiline mode is enabled, new line characters can be matched.";

/// The `grep` tool.
pub struct GrepTool {
    cwd: PathBuf,
    parameters: Value,
}

impl GrepTool {
    /// A grep tool resolving relative paths against `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        GrepTool {
            cwd: cwd.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression to search for (or plain text with literal=true)."},
                    "path": {"type": "string", "description": "File or directory to search; defaults to the working directory."},
                    "glob": {"type": "string", "description": "Only search files matching this glob, such as '*.rs' or 'src/**/*.ts'."},
                    "ignoreCase": {"type": "boolean", "description": "Match without regard to case (default false)."},
                    "literal": {"type": "boolean", "description": "Search for the pattern as plain text rather than a regex (default false)."},
                    "context": {"type": "number", "description": "Lines of context to show around each match (default 0)."},
                    "limit": {"type": "number", "description": "Stop after this many matches (default 100)."}
                },
                "required": ["pattern"]
            }),
        }
    }

    async fn run(
        &self,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<AgentToolResult, ToolError> {
        check_aborted(&cancel)?;
        let args = GrepArgs::parse(&args)?;
        let root = resolve_to_cwd(args.path.as_deref().unwrap_or("."), &self.cwd);
        let is_dir = match std::fs::metadata(&root) {
            Ok(meta) => meta.is_dir(),
            Err(_) => {
                return Err(ToolError::new(format!(
                    "Path not found: {}",
                    root.display()
                )));
            }
        };
        let regex = build_regex(&args.pattern, args.literal, args.ignore_case)?;
        let search = Search {
            root: root.clone(),
            glob_root: self.cwd.clone(),
            is_dir,
            glob: args.glob.clone(),
            regex,
            limit: args.limit,
            cancel: cancel.clone(),
        };
        let found = tokio::task::spawn_blocking(move || search.run())
            .await
            .map_err(|e| ToolError::new(e.to_string()))??;
        check_aborted(&cancel)?;
        if !found.limit_reached && !found.errors.is_empty() {
            return Err(ToolError::new(found.errors.join("\n")));
        }
        if found.matches.is_empty() {
            return Ok(AgentToolResult::text("No matches found", None));
        }
        Ok(format_result(
            &found,
            &root,
            is_dir,
            args.context,
            args.limit,
        ))
    }
}

impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }
    fn label(&self) -> &str {
        "grep"
    }
    fn description(&self) -> &str {
        "Search file contents with a regular expression (or plain text) and get matching lines \
         with their file paths and line numbers. Honours .gitignore. Returns at most 100 \
         matches or 50KB by default; lines longer than 500 characters are shortened."
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search file contents by regex or literal text (honours .gitignore)")
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(self.run(args, cancel))
    }
}

struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: usize,
    limit: f64,
}

impl GrepArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let pattern = args
            .get("pattern")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("pattern must be a string"))?;
        let string = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
        let context = args.get("context").and_then(Value::as_f64).unwrap_or(0.0);
        let limit = args
            .get("limit")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_GREP_LIMIT);
        Ok(GrepArgs {
            pattern: pattern.to_owned(),
            path: string("path"),
            glob: string("glob"),
            ignore_case: flag("ignoreCase"),
            literal: flag("literal"),
            // Fractional context is rounded down (pi would index between lines).
            context: if context > 0.0 {
                context.floor() as usize
            } else {
                0
            },
            limit: limit.max(1.0),
        })
    }
}

/// ripgrep's matcher: Unicode-aware, per line, optionally case-insensitive or literal.
fn build_regex(pattern: &str, literal: bool, ignore_case: bool) -> Result<Regex, ToolError> {
    let source = if literal {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .build()
        .parse(&source)
        .map_err(|e| ToolError::new(suggest_pcre2(e.to_string())))?;
    if has_newline_literal(&hir) {
        return Err(ToolError::new(NEWLINE_ERROR));
    }
    RegexBuilder::new(&source)
        .case_insensitive(ignore_case)
        .multi_line(true)
        .build()
        .map_err(|e| ToolError::new(e.to_string()))
}

/// ripgrep's `suggest_pcre2`: a parse error about backreferences or look-around gets a hint
/// to use `--pcre2` (ripgrep's releases are built with PCRE2).
fn suggest_pcre2(message: String) -> String {
    if message.contains("backreferences") || message.contains("look-around") {
        format!(
            "{message}\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle \
             backreferences\nand look-around."
        )
    } else {
        message
    }
}

/// Whether the pattern contains a literal line feed (ripgrep refuses those without
/// `--multiline`; a line feed inside a character class is merely never matched).
fn has_newline_literal(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(lit) => lit.0.contains(&b'\n'),
        HirKind::Repetition(rep) => has_newline_literal(&rep.sub),
        HirKind::Capture(cap) => has_newline_literal(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(has_newline_literal),
        HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => false,
    }
}

struct Match {
    path: PathBuf,
    line_number: usize,
    /// The line as ripgrep reports it (`None` when it is not valid UTF-8).
    text: Option<String>,
}

struct Found {
    matches: Vec<Match>,
    limit_reached: bool,
    errors: Vec<String>,
}

struct Search {
    root: PathBuf,
    /// Globs with a `/` are anchored here: ripgrep anchors them at its working directory,
    /// which is the tool's cwd.
    glob_root: PathBuf,
    is_dir: bool,
    glob: Option<String>,
    regex: Regex,
    limit: f64,
    cancel: CancellationToken,
}

impl Search {
    fn run(self) -> Result<Found, ToolError> {
        let mut found = Found {
            matches: Vec::new(),
            limit_reached: false,
            errors: Vec::new(),
        };
        if !self.is_dir {
            self.search_file(&self.root, false, &mut found);
            return Ok(found);
        }
        let mut builder = walker(&self.root, IgnoreRules::Ripgrep);
        if let Some(glob) = &self.glob {
            let mut overrides = ignore::overrides::OverrideBuilder::new(&self.glob_root);
            overrides
                .add(glob)
                .map_err(|e| ToolError::new(e.to_string()))?;
            builder.overrides(
                overrides
                    .build()
                    .map_err(|e| ToolError::new(e.to_string()))?,
            );
        }
        for entry in builder.build() {
            check_aborted(&self.cancel)?;
            match entry {
                Err(err) => found.errors.push(format!("rg: {err}")),
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                    self.search_file(entry.path(), true, &mut found);
                }
                Ok(_) => {}
            }
            if found.limit_reached {
                break;
            }
        }
        Ok(found)
    }

    fn search_file(&self, path: &Path, skip_binary: bool, found: &mut Found) {
        let data = match std::fs::read(path) {
            Ok(data) => data,
            Err(err) => {
                found.errors.push(format!("rg: {}: {err}", path.display()));
                return;
            }
        };
        let data = decode_bom(&data);
        if skip_binary && data.contains(&0) {
            return;
        }
        let body = data.strip_suffix(b"\n").unwrap_or(&data);
        if data.is_empty() {
            return;
        }
        for (index, line) in body.split(|&b| b == b'\n').enumerate() {
            if !self.regex.is_match(line) {
                continue;
            }
            found.matches.push(Match {
                path: path.to_path_buf(),
                line_number: index + 1,
                text: std::str::from_utf8(line).ok().map(str::to_owned),
            });
            if found.matches.len() as f64 >= self.limit {
                found.limit_reached = true;
                return;
            }
        }
    }
}

/// A file's bytes as rg searches them: rg sniffs a byte-order mark, drops a UTF-8 one and
/// transcodes UTF-16 (LE or BE) to UTF-8 (an unpaired surrogate or odd final byte becomes
/// U+FFFD); without a BOM the bytes are searched as they are. Mirrors pi 0.85.0 `grep`, whose
/// match lines are rg's.
fn decode_bom(data: &[u8]) -> Cow<'_, [u8]> {
    let utf16 = |body: &[u8], from: fn([u8; 2]) -> u16| -> Cow<'_, [u8]> {
        let units = body.chunks_exact(2).map(|p| from([p[0], p[1]]));
        let mut text: String = char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
        if body.len() % 2 == 1 {
            text.push(char::REPLACEMENT_CHARACTER);
        }
        Cow::Owned(text.into_bytes())
    };
    if let Some(body) = data.strip_prefix(b"\xef\xbb\xbf") {
        Cow::Borrowed(body)
    } else if let Some(body) = data.strip_prefix(b"\xff\xfe") {
        utf16(body, u16::from_le_bytes)
    } else if let Some(body) = data.strip_prefix(b"\xfe\xff") {
        utf16(body, u16::from_be_bytes)
    } else {
        Cow::Borrowed(data)
    }
}

/// Formats matches, applies the 50 KB cut and appends the notices.
fn format_result(
    found: &Found,
    root: &Path,
    is_dir: bool,
    context: usize,
    limit: f64,
) -> AgentToolResult {
    let display_path = |file: &Path| -> String {
        if is_dir
            && let Ok(rel) = file.strip_prefix(root)
            && !rel.as_os_str().is_empty()
        {
            return rel.to_string_lossy().into_owned();
        }
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut files: HashMap<PathBuf, Option<Vec<String>>> = HashMap::new();
    let mut lines_truncated = false;
    let mut out: Vec<String> = Vec::new();
    let mut push_line = |out: &mut Vec<String>, prefix: String, text: &str| {
        let cut = truncate_line(text, GREP_MAX_LINE_LENGTH);
        lines_truncated |= cut.was_truncated;
        out.push(format!("{prefix} {}", cut.text));
    };
    for m in &found.matches {
        let rel = display_path(&m.path);
        if context == 0
            && let Some(text) = &m.text
        {
            let clean = text.replace('\r', "");
            push_line(&mut out, format!("{rel}:{}:", m.line_number), &clean);
            continue;
        }
        let lines = files
            .entry(m.path.clone())
            .or_insert_with(|| read_lines(&m.path));
        let Some(lines) = lines else {
            out.push(format!("{rel}:{}: (unable to read file)", m.line_number));
            continue;
        };
        let start = m.line_number.saturating_sub(context).max(1);
        let end = (m.line_number + context).min(lines.len());
        for current in start..=end.max(m.line_number) {
            let text = lines.get(current - 1).map(String::as_str).unwrap_or("");
            let clean = text.replace('\r', "");
            let prefix = if current == m.line_number {
                format!("{rel}:{current}:")
            } else {
                format!("{rel}-{current}-")
            };
            push_line(&mut out, prefix, &clean);
        }
    }
    let raw = out.join("\n");
    let truncation = truncate_head(
        &raw,
        TruncationOptions {
            max_lines: usize::MAX,
            max_bytes: DEFAULT_MAX_BYTES,
        },
    );
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if found.limit_reached {
        notices.push(format!(
            "{} matches limit reached. Use limit={} for more, or refine pattern",
            js_number(limit),
            js_number(limit * 2.0)
        ));
        details.insert("matchLimitReached".into(), js_number_value(limit));
    }
    if truncation.truncated {
        notices.push(format!(
            "{} limit reached",
            format_size(DEFAULT_MAX_BYTES as u64)
        ));
        details.insert(
            "truncation".into(),
            serde_json::to_value(&truncation).unwrap_or(Value::Null),
        );
    }
    if lines_truncated {
        notices.push(format!(
            "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        ));
        details.insert("linesTruncated".into(), Value::Bool(true));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let details = (!details.is_empty()).then_some(Value::Object(details));
    AgentToolResult::text(text, details)
}

/// The file's lines as pi reads them for context: decoded lossily, CRLF and lone CR as line
/// breaks, a final empty line after a trailing newline kept. `None` if unreadable.
fn read_lines(path: &Path) -> Option<Vec<String>> {
    let data = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&data)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    Some(text.split('\n').map(str::to_owned).collect())
}
