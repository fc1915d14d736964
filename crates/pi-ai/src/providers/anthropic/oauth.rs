//! Anthropic OAuth (Claude Code) mode: token detection, identity and tool-name casing.
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts` (`isOAuthToken`, `claudeCodeTools`,
//! `toClaudeCodeName`).

/// The identity system block sent first in OAuth mode.
pub(super) const CLAUDE_CODE_IDENTITY: &str =
    "You are Claude Code, Anthropic's official CLI for Claude.";

/// The Claude Code version in the OAuth `user-agent`.
pub(super) const CLAUDE_CODE_VERSION: &str = "2.1.251";

/// Claude Code 2.x tool names in canonical casing.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Keys containing `sk-ant-oat` are OAuth tokens.
pub(super) fn is_oauth_token(api_key: &str) -> bool {
    api_key.contains("sk-ant-oat")
}

/// The Claude Code casing of `name` when it matches a Claude Code tool case-insensitively.
pub(super) fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_owned(), |t| (*t).to_owned())
}

/// The tool name pi meant when the model answers with a Claude Code name in OAuth mode.
///
/// pi maps the name back case-insensitively onto `context.tools`; the stream mapper has no
/// context, so a name that is exactly a Claude Code canonical name (which pi-rs itself
/// produced from a lower-case tool name such as pi's `read`) is lower-cased, and any other
/// name is kept. Differs from pi only for a tool literally named in Claude Code casing.
pub(super) fn from_claude_code_name(name: &str) -> String {
    if CLAUDE_CODE_TOOLS.contains(&name) {
        name.to_ascii_lowercase()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casing_and_detection() {
        assert_eq!(to_claude_code_name("read"), "Read");
        assert_eq!(to_claude_code_name("todowrite"), "TodoWrite");
        assert_eq!(to_claude_code_name("ls"), "ls");
        assert!(is_oauth_token("sk-ant-oat01-x"));
        assert!(!is_oauth_token("sk-ant-api03-x"));
        assert_eq!(from_claude_code_name("Read"), "read");
        assert_eq!(from_claude_code_name("TodoWrite"), "todowrite");
        assert_eq!(from_claude_code_name("my_tool"), "my_tool");
        assert_eq!(from_claude_code_name("READ"), "READ");
    }
}
