//! System prompt assembly.
//!
//! Mirrors the structure of pi-coding-agent 0.85.0 `buildSystemPrompt` (`core/system-prompt.js`)
//! and the prompt sources of `DefaultResourceLoader`; the prose written for the model is ours.
//!
//! Default base: an intro sentence; `Available tools:` with `- name: snippet` for each active
//! tool that has a snippet (else `(none)`); a sentence on other custom tools; `Guidelines:`
//! bullets, deduplicated — a file-exploration hint when bash (or PowerShell) is active without
//! grep/find/ls, then the active tools' guidelines in tool order, then the two fixed ones; then
//! the block pointing at the installed README, docs and examples. A custom base
//! (`--system-prompt`, `.pi/SYSTEM.md` when trusted, `<agentDir>/SYSTEM.md`) replaces all of
//! that. Both then get `\n\n` + the append text, the `<project_context>` block, the skills
//! block (when `read` or `bash` is active), and `\nCurrent working directory: <cwd>` (`/`
//! separators; a custom base adds a final `\n`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::agent_paths::CONFIG_DIR_NAME;
use super::context_files::ContextFile;
use super::skills::{Skill, format_skills_for_prompt};
use super::text::strip_bom;

/// `(active tools, in order) → base system prompt`: pi's `_rebuildSystemPrompt`, for a session
/// whose tools change while it lives (extensions' `setActiveTools`, `registerTool`). Each tool
/// carries its prompt snippet and guidelines ([`pi_agent_core::AgentTool::prompt_snippet`],
/// [`pi_agent_core::AgentTool::prompt_guidelines`]);
/// [`ToolPromptParts::of`] collects them.
pub type SystemPromptFn = Arc<dyn Fn(&[Arc<dyn pi_agent_core::AgentTool>]) -> String + Send + Sync>;

/// The tools active when none are selected.
pub const DEFAULT_ACTIVE_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Where the installed documentation lives (named in the default prompt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocsPaths {
    /// The README.
    pub readme: PathBuf,
    /// The docs directory.
    pub docs: PathBuf,
    /// The examples directory.
    pub examples: PathBuf,
}

/// Everything the prompt is built from.
#[derive(Clone, Debug)]
pub struct SystemPromptOptions<'a> {
    /// A custom base prompt (text already resolved).
    pub custom_prompt: Option<&'a str>,
    /// Active tool names in order (`None` → read, bash, edit, write).
    pub selected_tools: Option<&'a [String]>,
    /// One-line snippets by tool name.
    pub tool_snippets: &'a [(String, String)],
    /// Guidelines of the active tools, in tool order.
    pub prompt_guidelines: &'a [String],
    /// The append text (already joined with `\n\n`).
    pub append_system_prompt: Option<&'a str>,
    /// The working directory.
    pub cwd: &'a Path,
    /// Context files in order.
    pub context_files: &'a [ContextFile],
    /// Loaded skills.
    pub skills: &'a [Skill],
    /// Documentation paths.
    pub docs: &'a DocsPaths,
}

/// Collapses a snippet to one line (whitespace runs become one space).
pub fn one_line(snippet: &str) -> String {
    snippet.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The parts of the default prompt that come from the active tools, in tool order: their
/// names, their snippets (one line each; tools without one, or with only whitespace, are not
/// listed) and their guidelines (trimmed, empty ones dropped; [`build_system_prompt`] drops
/// duplicates). Mirrors pi-coding-agent 0.85.0 `_refreshToolRegistry` /
/// `_rebuildSystemPrompt` (`_normalizePromptSnippet`, `_normalizePromptGuidelines`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolPromptParts {
    /// Active tool names in order ([`SystemPromptOptions::selected_tools`]).
    pub names: Vec<String>,
    /// `(name, snippet)` pairs ([`SystemPromptOptions::tool_snippets`]).
    pub snippets: Vec<(String, String)>,
    /// Guidelines in tool order ([`SystemPromptOptions::prompt_guidelines`]).
    pub guidelines: Vec<String>,
}

impl ToolPromptParts {
    /// Collects the parts of `tools` (see the type docs).
    pub fn of(tools: &[Arc<dyn AgentTool>]) -> Self {
        let mut parts = ToolPromptParts::default();
        for tool in tools {
            let name = tool.name().to_owned();
            if let Some(snippet) = tool
                .prompt_snippet()
                .map(one_line)
                .filter(|s| !s.is_empty())
            {
                parts.snippets.push((name.clone(), snippet));
            }
            parts.guidelines.extend(
                tool.prompt_guidelines()
                    .iter()
                    .map(|g| g.trim())
                    .filter(|g| !g.is_empty())
                    .map(str::to_owned),
            );
            parts.names.push(name);
        }
        parts
    }
}

fn project_context(files: &[ContextFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut s =
        String::from("\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n");
    for f in files {
        s.push_str(&format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>\n\n",
            f.path.display(),
            f.content
        ));
    }
    s.push_str("</project_context>\n");
    s
}

fn guidelines(tools: &[&str], extra: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |g: &str| {
        if !out.iter().any(|x| x == g) {
            out.push(g.to_owned());
        }
    };
    let has = |t: &str| tools.contains(&t);
    if (has("bash") || has("powershell")) && !has("grep") && !has("find") && !has("ls") {
        if has("bash") && has("powershell") {
            add("Use bash or PowerShell to list, search and find files");
        } else if has("powershell") {
            add("Use PowerShell to list, search and find files");
        } else {
            add("Use bash (ls, rg, find) to list, search and find files");
        }
    }
    for g in extra {
        let g = g.trim();
        if !g.is_empty() {
            add(g);
        }
    }
    add("Keep answers short and to the point");
    add("Name file paths explicitly when you work with files");
    out
}

/// Everything the default prompt is built from except the tools, owned: what a session needs
/// to rebuild its prompt whenever its active tools change (pi 0.85.0 `_rebuildSystemPrompt`,
/// which reads the same inputs from its resource loader).
#[derive(Clone, Debug)]
pub struct SystemPromptBase {
    /// A custom base prompt (text already resolved).
    pub custom_prompt: Option<String>,
    /// The append text (already joined with `\n\n`).
    pub append_system_prompt: Option<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Context files in order.
    pub context_files: Vec<ContextFile>,
    /// Loaded skills.
    pub skills: Vec<Skill>,
    /// Documentation paths.
    pub docs: DocsPaths,
}

impl SystemPromptBase {
    /// The prompt for the active `tools`, in order ([`ToolPromptParts::of`] +
    /// [`build_system_prompt`]).
    pub fn build(&self, tools: &[Arc<dyn AgentTool>]) -> String {
        let parts = ToolPromptParts::of(tools);
        build_system_prompt(&SystemPromptOptions {
            custom_prompt: self.custom_prompt.as_deref(),
            selected_tools: Some(&parts.names),
            tool_snippets: &parts.snippets,
            prompt_guidelines: &parts.guidelines,
            append_system_prompt: self.append_system_prompt.as_deref(),
            cwd: &self.cwd,
            context_files: &self.context_files,
            skills: &self.skills,
            docs: &self.docs,
        })
    }

    /// [`Self::build`] as a session's prompt function, for
    /// [`AgentSessionBuilder::system_prompt_for_tools`](crate::session::AgentSessionBuilder::system_prompt_for_tools).
    pub fn into_prompt_fn(self) -> SystemPromptFn {
        Arc::new(move |tools: &[Arc<dyn AgentTool>]| self.build(tools))
    }
}

/// Builds the prompt (see the module docs for the structure).
pub fn build_system_prompt(o: &SystemPromptOptions<'_>) -> String {
    let cwd = o.cwd.to_string_lossy().replace('\\', "/");
    let tools: Vec<&str> = match o.selected_tools {
        Some(t) => t.iter().map(String::as_str).collect(),
        None => DEFAULT_ACTIVE_TOOLS.to_vec(),
    };
    let skill_tool = ["read", "bash"].into_iter().find(|t| tools.contains(t));
    let tail = |prompt: &mut String| {
        if let Some(a) = o.append_system_prompt.filter(|a| !a.is_empty()) {
            prompt.push_str("\n\n");
            prompt.push_str(a);
        }
        prompt.push_str(&project_context(o.context_files));
        if let Some(t) = skill_tool {
            prompt.push_str(&format_skills_for_prompt(o.skills, t));
        }
        prompt.push_str(&format!("\nCurrent working directory: {cwd}"));
    };
    if let Some(custom) = o.custom_prompt.filter(|c| !c.is_empty()) {
        let mut prompt = custom.to_owned();
        tail(&mut prompt);
        prompt.push('\n');
        return prompt;
    }
    let listed: Vec<String> = tools
        .iter()
        .filter_map(|name| {
            o.tool_snippets
                .iter()
                .find(|(n, s)| n == name && !s.is_empty())
                .map(|(n, s)| format!("- {n}: {}", one_line(s)))
        })
        .collect();
    let tools_list = if listed.is_empty() {
        "(none)".to_owned()
    } else {
        listed.join("\n")
    };
    let guideline_lines: Vec<String> = guidelines(&tools, o.prompt_guidelines)
        .into_iter()
        .map(|g| format!("- {g}"))
        .collect();
    let mut prompt = format!(
        "You are a skilled software engineer working inside pi, a coding agent harness. You help the user by reading files, running commands, editing code and writing new files.\n\n\
Available tools:\n{tools_list}\n\n\
Depending on the project, further custom tools may be available besides the ones above.\n\n\
Guidelines:\n{}\n\n\
Pi documentation (consult it only when the user asks about pi itself: its SDK, extensions, themes, skills or TUI):\n\
- Main documentation: {}\n\
- Additional docs: {}\n\
- Examples: {} (extensions, custom tools, SDK)\n\
- Resolve docs/... against the additional docs and examples/... against the examples, never against the working directory\n\
- Topics: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK (docs/sdk.md), custom providers (docs/custom-provider.md), models (docs/models.md), packages (docs/packages.md), environment variables (docs/environment-variables.md)\n\
- For pi topics, read the relevant docs and examples completely and follow their .md cross-references before implementing",
        guideline_lines.join("\n"),
        o.docs.readme.display(),
        o.docs.docs.display(),
        o.docs.examples.display(),
    );
    tail(&mut prompt);
    prompt
}

/// pi's `resolvePromptInput`: an existing file's text (BOM stripped; bytes that are not
/// UTF-8 become U+FFFD, as Node's `readFileSync(p, "utf-8")` does), else the text itself.
/// Errors reading an existing file yield the input text and a warning, without the
/// `Warning: ` prefix its printer adds: `Could not read <what> file <input>: Error: <Node's
/// message>` (e.g. `Error: EISDIR: illegal operation on a directory, read`).
pub fn resolve_prompt_input(input: &str, what: &str) -> (String, Option<String>) {
    let path = Path::new(input);
    if !input.is_empty() && path.exists() {
        return match std::fs::read(path) {
            Ok(bytes) => (strip_bom(&String::from_utf8_lossy(&bytes)).to_owned(), None),
            Err(e) => (
                input.to_owned(),
                Some(format!(
                    "Could not read {what} file {input}: Error: {}",
                    crate::platform::fs_error::read_file_message(&e, path)
                )),
            ),
        };
    }
    (input.to_owned(), None)
}

fn discover(cwd: &Path, agent_dir: &Path, trusted: bool, name: &str) -> Option<PathBuf> {
    let project = cwd.join(CONFIG_DIR_NAME).join(name);
    if trusted && project.exists() {
        return Some(project);
    }
    let global = agent_dir.join(name);
    global.exists().then_some(global)
}

/// The custom base and append text with their sources resolved: `--system-prompt` (text or
/// file) else `SYSTEM.md` (trusted project, else global); `--append-system-prompt` values
/// (each text or file) else `APPEND_SYSTEM.md` (trusted project, else global), joined `\n\n`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptSources {
    /// The custom base, if any.
    pub system_prompt: Option<String>,
    /// The append text, if any.
    pub append_system_prompt: Option<String>,
    /// Read warnings.
    pub warnings: Vec<String>,
}

/// Resolves [`PromptSources`].
pub fn resolve_prompt_sources(
    cwd: &Path,
    agent_dir: &Path,
    project_trusted: bool,
    cli_system_prompt: Option<&str>,
    cli_append: &[String],
) -> PromptSources {
    let mut out = PromptSources::default();
    let base = cli_system_prompt.map(str::to_owned).or_else(|| {
        discover(cwd, agent_dir, project_trusted, "SYSTEM.md")
            .map(|p| p.to_string_lossy().into_owned())
    });
    if let Some(b) = base {
        let (text, warn) = resolve_prompt_input(&b, "system prompt");
        out.warnings.extend(warn);
        out.system_prompt = Some(text);
    }
    let appends: Vec<String> = if cli_append.is_empty() {
        discover(cwd, agent_dir, project_trusted, "APPEND_SYSTEM.md")
            .map(|p| vec![p.to_string_lossy().into_owned()])
            .unwrap_or_default()
    } else {
        cli_append.to_vec()
    };
    let texts: Vec<String> = appends
        .iter()
        .map(|a| {
            let (text, warn) = resolve_prompt_input(a, "append system prompt");
            out.warnings.extend(warn);
            text
        })
        .collect();
    if !texts.is_empty() {
        out.append_system_prompt = Some(texts.join("\n\n"));
    }
    out
}

#[cfg(test)]
mod tests;
