//! The `find` tool: file search by glob.
//!
//! Mirrors pi 0.85.0 `core/tools/find.ts`, which runs `fd --glob --color=never --hidden
//! [--no-require-git] --max-results <L> [--full-path] -- <pattern> <path>`; pi-rs implements
//! that search in-process with the `ignore` crate (fd's walker) and `globset` (fd's glob
//! translation), so no `fd` binary is needed:
//!
//! - hidden entries are listed (`.git/` included, as `fd --hidden` does); `.gitignore` is
//!   honoured inside and outside git repositories, as are `.ignore`, `.fdignore` and fd's
//!   global ignore file; symlinks are listed, not followed;
//! - a pattern without `/` matches entry names; with `/` it matches the absolute path, and
//!   `**/` is prepended unless it starts with `/` or `**/` or is `**`; `*` never crosses `/`;
//!   matching is case-insensitive unless the pattern has an uppercase letter (fd's smart case);
//!   an empty pattern matches everything;
//! - results are files, directories (with a trailing `/`) and symlinks, relative to the
//!   searched directory, one per line;
//! - **ordering (deliberate improvement):** fd runs unsorted, so its order, and which results
//!   survive `limit`, vary between runs; pi-rs walks each directory in byte order of the entry
//!   names (depth first) and stops after `limit` results.
//!
//! Texts: `No files found matching pattern`; notices `[<L> results limit reached. Use
//! limit=<2L> for more, or refine pattern]` and `[50.0KB limit reached]` joined with `. `;
//! errors as fd prints them (`[fd error]: Search path '<p>' is not a directory.` …,
//! `[fd error]: error parsing glob …`), `Operation aborted`.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use globset::GlobBuilder;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use regex::bytes::{Regex, RegexBuilder};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::path_args::resolve_to_cwd;
use crate::tools::search::{IgnoreRules, js_number_value, walker};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};
use crate::tools::{check_aborted, js_number};

/// The system-prompt snippet of the find tool.
pub const FIND_PROMPT_SNIPPET: &str = "Find files by glob pattern (respects .gitignore)";

/// Results returned when `limit` is not given.
pub const DEFAULT_FIND_LIMIT: f64 = 1000.0;

/// The `find` tool.
pub struct FindTool {
    cwd: PathBuf,
    parameters: Value,
}

impl FindTool {
    /// A find tool resolving relative paths against `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        FindTool {
            cwd: cwd.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob to match, such as '*.rs', '**/*.json' or 'src/**/*.test.ts'."},
                    "path": {"type": "string", "description": "Directory to search; defaults to the working directory."},
                    "limit": {"type": "number", "description": "Stop after this many results (default 1000)."}
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
        let pattern = args
            .get("pattern")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("pattern must be a string"))?
            .to_owned();
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let limit = args
            .get("limit")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_FIND_LIMIT);
        let root = resolve_to_cwd(path, &self.cwd);
        if !root.is_dir() {
            return Err(ToolError::new(format!(
                "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
                root.display()
            )));
        }
        let matcher = Matcher::new(&pattern)?;
        let walk_root = root.clone();
        let walk_cancel = cancel.clone();
        let results = tokio::task::spawn_blocking(move || {
            find_entries(&walk_root, &matcher, limit, &walk_cancel)
        })
        .await
        .map_err(|e| ToolError::new(e.to_string()))??;
        check_aborted(&cancel)?;
        if results.is_empty() {
            return Ok(AgentToolResult::text(
                "No files found matching pattern",
                None,
            ));
        }
        Ok(format_result(&results, limit))
    }
}

impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
    }
    fn label(&self) -> &str {
        "find"
    }
    fn description(&self) -> &str {
        "Find files and directories whose names or paths match a glob, listed relative to the \
         searched directory. Honours .gitignore. Returns at most 1000 results or 50KB by \
         default."
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Find files by glob pattern (honours .gitignore)")
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

/// fd's glob matcher: the glob translated to a regex, matched against the entry name or,
/// for patterns containing `/`, the absolute path.
struct Matcher {
    regex: Option<Regex>,
    full_path: bool,
}

impl Matcher {
    fn new(pattern: &str) -> Result<Self, ToolError> {
        let full_path = pattern.contains('/');
        let effective = if full_path
            && !pattern.starts_with('/')
            && !pattern.starts_with("**/")
            && pattern != "**"
        {
            format!("**/{pattern}")
        } else {
            pattern.to_owned()
        };
        if effective.is_empty() {
            return Ok(Matcher {
                regex: None,
                full_path,
            });
        }
        let glob = GlobBuilder::new(&effective)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?;
        let smart_case_sensitive = effective.chars().any(char::is_uppercase);
        let regex = RegexBuilder::new(glob.regex())
            .case_insensitive(!smart_case_sensitive)
            .dot_matches_new_line(true)
            .build()
            .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?;
        Ok(Matcher {
            regex: Some(regex),
            full_path,
        })
    }

    fn matches(&self, path: &Path) -> bool {
        let Some(regex) = &self.regex else {
            return true;
        };
        let subject = if self.full_path {
            path.as_os_str()
        } else {
            match path.file_name() {
                Some(name) => name,
                None => return false,
            }
        };
        regex.is_match(subject.as_encoded_bytes())
    }
}

/// Walks `root` and returns up to `limit` matching entries as relative POSIX paths
/// (directories with a trailing `/`). A `limit` of zero or less means no limit (fd ignores
/// `--max-results 0`).
fn find_entries(
    root: &Path,
    matcher: &Matcher,
    limit: f64,
    cancel: &CancellationToken,
) -> Result<Vec<String>, ToolError> {
    let mut results = Vec::new();
    for entry in walker(root, IgnoreRules::Fd).build() {
        check_aborted(cancel)?;
        // fd reports walk errors on stderr and keeps going; pi ignores stderr when there is
        // output.
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 || !matcher.matches(entry.path()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut line = rel.to_string_lossy().trim().to_owned();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            line.push('/');
        }
        results.push(line);
        if limit > 0.0 && results.len() as f64 >= limit {
            break;
        }
    }
    Ok(results)
}

fn format_result(results: &[String], limit: f64) -> AgentToolResult {
    let raw = results.join("\n");
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
    if results.len() as f64 >= limit {
        notices.push(format!(
            "{} results limit reached. Use limit={} for more, or refine pattern",
            js_number(limit),
            js_number(limit * 2.0)
        ));
        details.insert("resultLimitReached".into(), js_number_value(limit));
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
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let details = (!details.is_empty()).then_some(Value::Object(details));
    AgentToolResult::text(text, details)
}
