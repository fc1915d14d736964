//! Skills: directories with `SKILL.md` (or top-level `*.md` files with a description).
//!
//! Mirrors pi-coding-agent 0.85.0 `core/skills.js` and the skill sources of
//! `core/package-manager.js`:
//! - sources in pi's precedence order (`DefaultPackageManager.resolve` ranks; first name
//!   wins, the same real file once): the project settings' `skills` entries (resolved against
//!   `<cwd>/.pi`), trusted `<cwd>/.pi/skills`, trusted `.agents/skills` of the cwd and its
//!   ancestors up to the git root (not `~/.agents/skills`), the global settings' entries
//!   (resolved against `<agentDir>`), `<agentDir>/skills`, `~/.agents/skills`, then `--skill`
//!   paths; a settings entry that does not exist is skipped silently; the settings' pattern
//!   entries switch skills off and on (`super::resource_filter`);
//! - in a directory: a `SKILL.md` makes it a skill root (no recursion below); otherwise `*.md`
//!   files (directly in a `.pi`-style root; below the root of an `.agents` directory) and
//!   subdirectories (not hidden, not `node_modules`, not ignored by `.gitignore`/`.ignore`/
//!   `.fdignore` rules found on the way) are searched;
//! - frontmatter `name` (default: the directory name), `description` (required, ≤ 1024),
//!   `disable-model-invocation`; name rules produce warnings but the skill still loads;
//! - `/skill:name args` → `<skill name="N" location="P">\nReferences are relative to D.\n\n
//!   BODY\n</skill>` + `\n\n<args>` when args are given; an unknown name is left unchanged;
//! - the system prompt block lists skills without `disable-model-invocation`, XML-escaped.

use std::path::{Path, PathBuf};

use super::agent_paths::{CONFIG_DIR_NAME, resolve_path};
use super::frontmatter::{parse_frontmatter, strip_frontmatter};
use super::ignore_rules::IgnoreRules;
#[cfg(test)]
use super::ignore_rules::prefix_ignore_pattern;
use super::resource_filter::{apply_patterns, is_enabled_by_overrides};
use super::settings::ScopedResourcePaths;
use super::text::read_text_lossy;
use super::trust::canonicalize;

/// Longest valid name.
const MAX_NAME_LENGTH: usize = 64;
/// Longest valid description.
const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Name (`/skill:<name>`).
    pub name: String,
    /// Description (shown to the model).
    pub description: String,
    /// The skill file.
    pub file_path: PathBuf,
    /// Its directory.
    pub base_dir: PathBuf,
    /// Hidden from the system prompt; only explicit `/skill:` invokes it.
    pub disable_model_invocation: bool,
}

/// A problem found while loading skills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillDiagnostic {
    /// `warning` or `collision`.
    pub kind: &'static str,
    /// E.g. `description is required`, `name "x" collision`.
    pub message: String,
    /// The file concerned.
    pub path: PathBuf,
}

/// Skills and diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedSkills {
    /// In discovery order.
    pub skills: Vec<Skill>,
    /// Warnings first, then collisions.
    pub diagnostics: Vec<SkillDiagnostic>,
}

fn validate_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let len = name.chars().count();
    if len > MAX_NAME_LENGTH {
        errors.push(format!("name exceeds {MAX_NAME_LENGTH} characters ({len})"));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                .to_owned(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".to_owned());
    }
    errors
}

/// Loads one skill file (`SKILL.md`, or a `*.md` with a description).
pub fn load_skill_from_file(path: &Path, diagnostics: &mut Vec<SkillDiagnostic>) -> Option<Skill> {
    let declared = path.file_name().is_some_and(|n| n == "SKILL.md");
    let warn = |diagnostics: &mut Vec<SkillDiagnostic>, message: String| {
        diagnostics.push(SkillDiagnostic {
            kind: "warning",
            message,
            path: path.to_path_buf(),
        });
    };
    let raw = match read_text_lossy(path) {
        Ok(r) => r,
        Err(e) => {
            warn(diagnostics, e.to_string());
            return None;
        }
    };
    let front = match parse_frontmatter(&raw) {
        Ok(f) => f,
        Err(e) => {
            if declared {
                warn(diagnostics, e.to_string());
            }
            return None;
        }
    };
    let description = front.string("description").map(str::to_owned);
    let has_description = description.as_deref().is_some_and(|d| !d.trim().is_empty());
    if !declared && !has_description {
        return None;
    }
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    match &description {
        Some(d) if !d.trim().is_empty() => {
            let n = d.chars().count();
            if n > MAX_DESCRIPTION_LENGTH {
                warn(
                    diagnostics,
                    format!("description exceeds {MAX_DESCRIPTION_LENGTH} characters ({n})"),
                );
            }
        }
        _ => warn(diagnostics, "description is required".to_owned()),
    }
    let dir_name = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = front
        .string("name")
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .unwrap_or(dir_name);
    for e in validate_name(&name) {
        warn(diagnostics, e);
    }
    if !has_description {
        return None;
    }
    Some(Skill {
        name,
        description: description.unwrap_or_default(),
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation: front.bool("disable-model-invocation") == Some(true),
    })
}

/// How a skill directory is searched (pi's package-manager modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillDirMode {
    /// `~/.pi/agent/skills`, `.pi/skills`, explicit paths: `*.md` files directly in the root
    /// are candidates too.
    Pi,
    /// `.agents/skills`: `*.md` files in subdirectories (without a `SKILL.md`) are candidates,
    /// root files are not.
    Agents,
}

/// Loads the skills under `dir` (see [`SkillDirMode`]); `.gitignore`, `.ignore` and
/// `.fdignore` files inside the tree exclude paths as in the reference.
pub fn load_skills_from_dir(dir: &Path, mode: SkillDirMode) -> (Vec<Skill>, Vec<SkillDiagnostic>) {
    let mut skills = Vec::new();
    let mut diagnostics = Vec::new();
    let mut walker = Walker {
        root: dir.to_path_buf(),
        mode,
        rules: IgnoreRules::new(dir),
        skills: &mut skills,
        diags: &mut diagnostics,
    };
    walker.walk(dir);
    (skills, diagnostics)
}

struct Walker<'a> {
    root: PathBuf,
    mode: SkillDirMode,
    rules: IgnoreRules,
    skills: &'a mut Vec<Skill>,
    diags: &'a mut Vec<SkillDiagnostic>,
}

impl Walker<'_> {
    fn walk(&mut self, dir: &Path) {
        self.rules.add_dir(dir);
        let skill_md = dir.join("SKILL.md");
        if skill_md.is_file() && !self.rules.is_ignored(&skill_md, false) {
            if let Some(s) = load_skill_from_file(&skill_md, self.diags) {
                self.skills.push(s);
            }
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let at_root = dir == self.root;
        for (name, path) in entries {
            if name.starts_with('.') || name == "node_modules" {
                continue;
            }
            let is_dir = path.is_dir();
            if self.rules.is_ignored(&path, is_dir) {
                continue;
            }
            if is_dir {
                self.walk(&path);
                continue;
            }
            let md_here = match self.mode {
                SkillDirMode::Pi => at_root,
                SkillDirMode::Agents => !at_root,
            };
            if md_here
                && path.is_file()
                && name.ends_with(".md")
                && let Some(s) = load_skill_from_file(&path, self.diags)
            {
                self.skills.push(s);
            }
        }
    }
}

/// Where skills come from.
#[derive(Clone, Debug)]
pub struct SkillSources<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The agent directory.
    pub agent_dir: &'a Path,
    /// The home directory (`~/.agents/skills`).
    pub home: &'a Path,
    /// Whether project resources may load.
    pub project_trusted: bool,
    /// Settings `skills` entries, resolved per file.
    pub settings: &'a ScopedResourcePaths,
    /// `--skill` paths.
    pub cli_paths: &'a [String],
    /// `--no-skills`: only the explicit `--skill` paths load.
    pub no_skills: bool,
}

impl<'a> SkillSources<'a> {
    /// Default sources of `cwd` (trusted, no extra paths).
    pub fn new(cwd: &'a Path, agent_dir: &'a Path, home: &'a Path) -> Self {
        SkillSources {
            cwd,
            agent_dir,
            home,
            project_trusted: true,
            settings: &NO_SETTINGS_PATHS,
            cli_paths: &[],
            no_skills: false,
        }
    }
}

static NO_SETTINGS_PATHS: ScopedResourcePaths = ScopedResourcePaths {
    project: Vec::new(),
    user: Vec::new(),
    project_entries: Vec::new(),
    user_entries: Vec::new(),
    project_base: PathBuf::new(),
    user_base: PathBuf::new(),
};

fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let git_root = cwd.ancestors().find(|d| d.join(".git").exists());
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        out.push(dir.join(".agents").join("skills"));
        if Some(dir) == git_root {
            break;
        }
    }
    out
}

/// Found skills and their diagnostics, as one source yields them.
type Found = (Vec<Skill>, Vec<SkillDiagnostic>);

/// Loads an explicit path that exists: a directory (searched like `<agentDir>/skills`) or one
/// `.md` file.
fn load_path(path: &Path, out: &mut LoadedSkills, add: &mut dyn FnMut(Found, &mut LoadedSkills)) {
    if path.is_dir() {
        add(load_skills_from_dir(path, SkillDirMode::Pi), out);
    } else if path.is_file() && path.extension().is_some_and(|e| e == "md") {
        let mut diags = Vec::new();
        match load_skill_from_file(path, &mut diags) {
            Some(s) => add((vec![s], diags), out),
            None => out.diagnostics.extend(diags),
        }
    } else {
        out.diagnostics.push(SkillDiagnostic {
            kind: "warning",
            message: "skill path is not a markdown file".to_owned(),
            path: path.to_path_buf(),
        });
    }
}

/// The skills under one settings file's path entries that its pattern entries leave on.
fn settings_scope(paths: &[PathBuf], entries: &[String], base: &Path) -> Found {
    let mut found = LoadedSkills::default();
    let mut collect = |(skills, diags): Found, out: &mut LoadedSkills| {
        out.diagnostics.extend(diags);
        out.skills.extend(skills);
    };
    for path in paths.iter().filter(|p| p.exists()) {
        load_path(path, &mut found, &mut collect);
    }
    let files: Vec<PathBuf> = found.skills.iter().map(|s| s.file_path.clone()).collect();
    let on = apply_patterns(&files, entries, base);
    let skills = found
        .skills
        .into_iter()
        .filter(|s| on.contains(&s.file_path))
        .collect();
    (skills, found.diagnostics)
}

/// Auto-discovered skills that a settings file's `!`/`+`/`-` entries leave on.
fn auto_scope((skills, diags): Found, entries: &[String], base: &Path) -> Found {
    let skills = skills
        .into_iter()
        .filter(|s| is_enabled_by_overrides(&s.file_path, entries, base))
        .collect();
    (skills, diags)
}

/// Discovers all skills (see the module docs for the order).
pub fn load_skills(src: &SkillSources<'_>) -> LoadedSkills {
    let mut out = LoadedSkills::default();
    let mut collisions = Vec::new();
    let mut real_paths: Vec<PathBuf> = Vec::new();
    let mut add = |(skills, diags): Found, out: &mut LoadedSkills| {
        out.diagnostics.extend(diags);
        for s in skills {
            let real = canonicalize(&s.file_path);
            if real_paths.contains(&real) {
                continue;
            }
            if out.skills.iter().any(|e| e.name == s.name) {
                collisions.push(SkillDiagnostic {
                    kind: "collision",
                    message: format!("name \"{}\" collision", s.name),
                    path: s.file_path.clone(),
                });
            } else {
                real_paths.push(real);
                out.skills.push(s);
            }
        }
    };
    if !src.no_skills {
        let set = src.settings;
        let user_agents = src.home.join(".agents").join("skills");
        add(
            settings_scope(&set.project, &set.project_entries, &set.project_base),
            &mut out,
        );
        if src.project_trusted {
            let dir = src.cwd.join(CONFIG_DIR_NAME).join("skills");
            let found = load_skills_from_dir(&dir, SkillDirMode::Pi);
            add(
                auto_scope(found, &set.project_entries, &set.project_base),
                &mut out,
            );
            for dir in ancestor_agents_skill_dirs(src.cwd) {
                if dir != user_agents {
                    let found = load_skills_from_dir(&dir, SkillDirMode::Agents);
                    let base = dir.parent().unwrap_or(&dir);
                    add(auto_scope(found, &set.project_entries, base), &mut out);
                }
            }
        }
        add(
            settings_scope(&set.user, &set.user_entries, &set.user_base),
            &mut out,
        );
        let found = load_skills_from_dir(&src.agent_dir.join("skills"), SkillDirMode::Pi);
        add(
            auto_scope(found, &set.user_entries, &set.user_base),
            &mut out,
        );
        let found = load_skills_from_dir(&user_agents, SkillDirMode::Agents);
        let base = user_agents.parent().unwrap_or(&user_agents);
        add(auto_scope(found, &set.user_entries, base), &mut out);
    }
    for raw in src.cli_paths {
        let path = resolve_path(raw.trim(), src.cwd);
        if path.exists() {
            load_path(&path, &mut out, &mut add);
        } else {
            out.diagnostics.push(SkillDiagnostic {
                kind: "warning",
                message: "skill path does not exist".to_owned(),
                path,
            });
        }
    }
    out.diagnostics.extend(collisions);
    out
}

/// XML-escapes `& < > " '`.
pub fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The system-prompt block for skills the model may invoke (empty when none).
/// `read_tool` is `read` or `bash`: the tool the model uses to load a skill file.
pub fn format_skills_for_prompt(skills: &[Skill], read_tool: &str) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let how = if read_tool == "read" {
        "Load a skill's file with the read tool when a task matches its description."
    } else {
        "Load a skill's file with bash when a task matches its description."
    };
    let mut lines = vec![
        "\n\nThese skills hold specialized instructions for particular tasks.".to_owned(),
        how.to_owned(),
        "Resolve relative paths inside a skill file against that skill's directory, and use the absolute path in tool calls.".to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for s in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&s.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&s.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&s.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// A `/skill:` command whose skill file can no longer be read; the text is the I/O error's.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct SkillReadError {
    /// The skill's file.
    pub path: std::path::PathBuf,
    /// Why it could not be read.
    pub source: std::io::Error,
}

/// Expands `/skill:name [args]`; any other text, or an unknown skill, is returned unchanged.
///
/// Errors: the skill file can no longer be read (the caller reports it and keeps the text).
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Result<String, SkillReadError> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(text.to_owned());
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(text.to_owned());
    };
    let content = read_text_lossy(&skill.file_path).map_err(|source| SkillReadError {
        path: skill.file_path.clone(),
        source,
    })?;
    let body = strip_frontmatter(&content);
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    Ok(if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    })
}

#[cfg(test)]
mod tests;
