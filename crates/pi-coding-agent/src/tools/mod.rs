//! The built-in tools.
//!
//! Mirrors pi 0.85.0 `core/tools/index.ts`. Each tool implements [`pi_agent_core::AgentTool`]
//! and is bound to a working directory at construction (`ReadTool::new(cwd, options)`, …).
//! This module also holds the default active set and the allow/deny filter by name
//! (pi `sdk.ts` / `AgentSession`); changing the active set at run time belongs to the session.

pub mod bash;
pub mod edit;
pub(crate) mod file_mutex;
pub mod find;
pub mod grep;
pub(crate) mod image;
pub mod ls;
pub(crate) mod path_args;
pub mod read;
pub(crate) mod search;
pub mod truncate;
pub mod write;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use pi_agent_core::{AgentTool, ToolError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use bash::{BashTool, BashToolOptions};
pub use edit::EditTool;
pub use ls::LsTool;
pub use read::{ReadTool, ReadToolOptions};
pub use write::WriteTool;

/// The tools active by default, in this order (pi `defaultActiveToolNames`).
pub const DEFAULT_ACTIVE_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];

/// Every built-in tool name pi-rs knows (pi `allToolNames` without the Windows-only
/// `powershell`).
pub const ALL_TOOL_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The allow/deny filter on tool names (pi `--tools` allowlist and `--exclude-tools` denylist).
///
/// A name passes when there is no allowlist or the allowlist contains it, and the denylist
/// does not contain it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Option<BTreeSet<String>>,
    deny: BTreeSet<String>,
}

impl ToolFilter {
    /// A filter from an optional allowlist and a denylist.
    pub fn new<A, D>(allow: Option<A>, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: Into<String>,
        D: IntoIterator,
        D::Item: Into<String>,
    {
        ToolFilter {
            allow: allow.map(|a| a.into_iter().map(Into::into).collect()),
            deny: deny.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether there is an allowlist (pi: `--tools` was given, or `--no-tools`, an empty one).
    pub fn has_allowlist(&self) -> bool {
        self.allow.is_some()
    }

    /// Whether `name` passes the filter.
    pub fn allows(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.contains(name)) && !self.deny.contains(name)
    }

    /// The names that pass, in their given order.
    pub fn apply<'a, I>(&self, names: I) -> Vec<String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        names
            .into_iter()
            .filter(|n| self.allows(n))
            .map(str::to_owned)
            .collect()
    }
}

/// The initially active tool names (pi `sdk.ts`): the explicit `tools` list if given, else none
/// when `no_tools`, else the configured `defaultTools` setting, else
/// [`DEFAULT_ACTIVE_TOOL_NAMES`]; names in `exclude` are then dropped.
pub fn initial_active_tool_names(
    tools: Option<&[String]>,
    no_tools: bool,
    configured_default: Option<&[String]>,
    exclude: &[String],
) -> Vec<String> {
    let base: Vec<String> = match (tools, no_tools, configured_default) {
        (Some(t), _, _) => t.to_vec(),
        (None, true, _) => Vec::new(),
        (None, false, Some(d)) => d.to_vec(),
        (None, false, None) => DEFAULT_ACTIVE_TOOL_NAMES.map(str::to_owned).to_vec(),
    };
    base.into_iter().filter(|n| !exclude.contains(n)).collect()
}

/// Options of the built-in tools that have any (pi `ToolsOptions`).
#[derive(Clone, Default)]
pub struct BuiltinToolOptions {
    /// Options of `read` (`images.autoResize`, the model's image support).
    pub read: ReadToolOptions,
    /// Options of `bash`.
    pub bash: BashToolOptions,
}

/// The built-in tool called `name`, bound to `cwd` (pi `createTool`); `None` for a name that
/// is not (yet) a pi-rs built-in.
pub fn create_builtin_tool(
    name: &str,
    cwd: &Path,
    options: &BuiltinToolOptions,
) -> Option<Arc<dyn AgentTool>> {
    let cwd = cwd.to_path_buf();
    Some(match name {
        "read" => Arc::new(ReadTool::new(cwd, options.read.clone())),
        "bash" => Arc::new(BashTool::new(cwd, options.bash.clone())),
        "edit" => Arc::new(EditTool::new(cwd)),
        "write" => Arc::new(WriteTool::new(cwd)),
        "ls" => Arc::new(LsTool::new(cwd)),
        "grep" => Arc::new(grep::GrepTool::new(cwd)),
        "find" => Arc::new(find::FindTool::new(cwd)),
        _ => return None,
    })
}

/// `Err("Operation aborted")` once `cancel` fired (pi's abort text for every built-in tool).
pub(crate) fn check_aborted(cancel: &CancellationToken) -> Result<(), ToolError> {
    if cancel.is_cancelled() {
        Err(aborted())
    } else {
        Ok(())
    }
}

/// pi's abort error: `Operation aborted`.
pub(crate) fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// A required string argument (the agent loop validated the schema; this only guards direct
/// calls).
pub(crate) fn required_str<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("Missing required string argument: {name}")))
}

/// An optional numeric argument.
pub(crate) fn optional_number(args: &Value, name: &str) -> Option<f64> {
    args.get(name).and_then(Value::as_f64)
}

/// A JSON number for `n`: an integer when `n` is whole (as JavaScript makes no difference).
pub(crate) fn js_number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// A number spelled as JavaScript prints it (`3`, `2.5`).
pub(crate) fn js_number(n: f64) -> String {
    pi_ai::json::to_string(&n).unwrap_or_else(|_| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_name_creates_its_tool() {
        let cwd = std::env::temp_dir();
        for name in ALL_TOOL_NAMES {
            let tool = create_builtin_tool(name, &cwd, &BuiltinToolOptions::default())
                .unwrap_or_else(|| panic!("{name} is not created"));
            assert_eq!(tool.name(), name);
        }
        assert!(create_builtin_tool("powershell", &cwd, &BuiltinToolOptions::default()).is_none());
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_active_set_is_read_bash_edit_write() {
        assert_eq!(
            initial_active_tool_names(None, false, None, &[]),
            names(&["read", "bash", "edit", "write"])
        );
    }

    #[test]
    fn explicit_tools_win_then_no_tools_then_configured_defaults() {
        let explicit = names(&["read", "ls"]);
        let configured = names(&["grep"]);
        assert_eq!(
            initial_active_tool_names(Some(&explicit), true, Some(&configured), &[]),
            explicit
        );
        assert!(initial_active_tool_names(None, true, Some(&configured), &[]).is_empty());
        assert_eq!(
            initial_active_tool_names(None, false, Some(&configured), &[]),
            configured
        );
        assert_eq!(
            initial_active_tool_names(None, false, None, &names(&["bash", "write"])),
            names(&["read", "edit"])
        );
    }

    #[test]
    fn filter_applies_allowlist_and_denylist() {
        let filter = ToolFilter::new(Some(["read", "ls", "bash"]), ["bash"]);
        assert!(filter.allows("read"));
        assert!(!filter.allows("bash"));
        assert!(!filter.allows("write"));
        assert_eq!(filter.apply(ALL_TOOL_NAMES), names(&["read", "ls"]));

        let open = ToolFilter::new(None::<Vec<String>>, ["edit"]);
        assert_eq!(
            open.apply(DEFAULT_ACTIVE_TOOL_NAMES),
            names(&["read", "bash", "write"])
        );
    }

    #[test]
    fn factory_builds_tools_by_name() {
        let options = BuiltinToolOptions::default();
        for name in ["read", "bash", "edit", "write", "ls"] {
            let tool = create_builtin_tool(name, Path::new("/"), &options).unwrap();
            assert_eq!(tool.name(), name);
            assert_eq!(tool.label(), name);
        }
        assert!(create_builtin_tool("nope", Path::new("/"), &options).is_none());
    }

    #[test]
    fn js_number_spelling() {
        assert_eq!(js_number(100.0), "100");
        assert_eq!(js_number(2.5), "2.5");
    }
}
