//! Prompt templates: `*.md` files expanded by `/name args`.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/prompt-templates.js`:
//! - sources, in pi's precedence order (`DefaultPackageManager.resolve` ranks, then the
//!   resource loader's first-wins de-duplication by name): the project settings' `prompts`
//!   entries, trusted `<cwd>/.pi/prompts`, the global settings' entries, `<agentDir>/prompts`,
//!   then `--prompt-template` / extension paths. Settings directories are walked recursively
//!   (dot entries, `node_modules` and what `.gitignore` / `.ignore` / `.fdignore` files
//!   exclude skipped; the default directories honour their own ignore files); explicit
//!   directories are not; a file must end in `.md`; the settings' pattern entries switch
//!   files off and on (`super::resource_filter`); name = file stem;
//!   description = frontmatter `description`, else the first non-empty body line (60 chars,
//!   `...` when cut); `argument-hint` is kept;
//! - arguments split bash-like (quotes group, no escapes);
//! - substitution on the template only (no recursion): `$1…`, `$@`, `$ARGUMENTS`,
//!   `${N:-default}`, `${@:-default}`, `${ARGUMENTS:-default}`, `${@:N}`, `${@:N:L}`; missing
//!   → empty.

use std::path::{Path, PathBuf};

use super::frontmatter::parse_frontmatter;
use super::ignore_rules::IgnoreRules;

use super::agent_paths::{CONFIG_DIR_NAME, resolve_path};
use super::resource_filter::{apply_patterns, is_enabled_by_overrides};
use super::settings::ScopedResourcePaths;
use super::text::read_text_lossy;

/// A loaded template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptTemplate {
    /// `/name`.
    pub name: String,
    /// Shown in command lists.
    pub description: String,
    /// `argument-hint` frontmatter.
    pub argument_hint: Option<String>,
    /// The body (frontmatter removed).
    pub content: String,
    /// The file.
    pub file_path: PathBuf,
}

/// Loads one template file (bytes that are not UTF-8 read as U+FFFD, as Node reads them);
/// `None` when unreadable or its frontmatter is not valid YAML.
pub fn load_template_from_file(path: &Path) -> Option<PromptTemplate> {
    let raw = read_text_lossy(path).ok()?;
    let front = parse_frontmatter(&raw).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let name = name.strip_suffix(".md").unwrap_or(&name).to_owned();
    let mut description = front.string("description").unwrap_or_default().to_owned();
    if description.is_empty()
        && let Some(first) = front.body.split('\n').find(|l| !l.trim().is_empty())
    {
        let units: Vec<u16> = first.encode_utf16().collect();
        description = String::from_utf16_lossy(&units[..units.len().min(60)]);
        if units.len() > 60 {
            description.push_str("...");
        }
    }
    Some(PromptTemplate {
        name,
        description,
        argument_hint: front
            .string("argument-hint")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        content: front.body,
        file_path: path.to_path_buf(),
    })
}

/// Non-recursive `*.md` files of `dir`, sorted by name.
pub fn load_templates_from_dir(dir: &Path) -> Vec<PromptTemplate> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| load_template_from_file(p))
        .collect()
}

/// `*.md` files under `dir`, recursively, sorted per directory; dot entries, `node_modules` and
/// what the ignore files met on the way exclude are skipped (pi's `collectFiles` for a
/// settings directory).
fn collect_md_files(dir: &Path, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    rules.add_dir(dir);
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "node_modules"
        })
        .map(|e| e.path())
        .collect();
    paths.sort();
    for p in paths {
        let is_dir = p.is_dir();
        if rules.is_ignored(&p, is_dir) {
            continue;
        }
        if is_dir {
            collect_md_files(&p, rules, out);
        } else if p.is_file() && p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// Where templates come from (see the module docs for the order).
#[derive(Clone, Copy, Debug)]
pub struct TemplateSources<'a> {
    /// The working directory (explicit paths resolve against it).
    pub cwd: &'a Path,
    /// The agent directory.
    pub agent_dir: &'a Path,
    /// Whether `<cwd>/.pi/prompts` may load.
    pub project_trusted: bool,
    /// Whether the settings entries and the default directories load (not with
    /// `--no-prompt-templates`).
    pub include_defaults: bool,
    /// The settings' `prompts` entries, already resolved per file.
    pub settings: &'a ScopedResourcePaths,
    /// `--prompt-template` and extension paths (resolved against `cwd`).
    pub paths: &'a [String],
}

/// Loads the templates of `src`, first of each name winning (a later namesake is dropped,
/// as pi's `dedupePrompts` does).
pub fn load_templates(src: &TemplateSources<'_>) -> Vec<PromptTemplate> {
    // `auto`: a default directory, whose dot entries and ignored files pi's
    // `collectAutoPromptEntries` skips.
    let md_files = |dir: &Path, auto: bool| -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut rules = IgnoreRules::new(dir);
        if auto {
            rules.add_dir(dir);
        }
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !auto || !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| !rules.is_ignored(p, false))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
            .collect();
        paths.sort();
        paths
    };
    // (file, enabled) in precedence order; the first sighting of a file decides (pi's
    // `addResource` keeps the first entry of a path).
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    let settings_scope = |paths: &[PathBuf], entries: &[String], base: &Path| {
        let mut found = Vec::new();
        for p in paths {
            if p.is_dir() {
                collect_md_files(p, &mut IgnoreRules::new(p), &mut found);
            } else if p.is_file() && p.extension().is_some_and(|e| e == "md") {
                found.push(p.clone());
            }
        }
        let on = apply_patterns(&found, entries, base);
        found
            .into_iter()
            .map(|f| {
                let enabled = on.contains(&f);
                (f, enabled)
            })
            .collect::<Vec<_>>()
    };
    let auto_scope = |dir: &Path, entries: &[String], base: &Path| {
        md_files(dir, true)
            .into_iter()
            .map(|f| {
                let enabled = is_enabled_by_overrides(&f, entries, base);
                (f, enabled)
            })
            .collect::<Vec<_>>()
    };
    let set = src.settings;
    if src.include_defaults {
        files.extend(settings_scope(
            &set.project,
            &set.project_entries,
            &set.project_base,
        ));
        if src.project_trusted {
            let dir = src.cwd.join(CONFIG_DIR_NAME).join("prompts");
            files.extend(auto_scope(&dir, &set.project_entries, &set.project_base));
        }
        files.extend(settings_scope(&set.user, &set.user_entries, &set.user_base));
        let dir = src.agent_dir.join("prompts");
        files.extend(auto_scope(&dir, &set.user_entries, &set.user_base));
    }
    for raw in src.paths {
        let p = resolve_path(raw.trim(), src.cwd);
        if p.is_dir() {
            files.extend(md_files(&p, false).into_iter().map(|f| (f, true)));
        } else if p.is_file() && p.extension().is_some_and(|e| e == "md") {
            files.push((p, true));
        }
    }
    let mut seen_files: Vec<PathBuf> = Vec::new();
    let mut out: Vec<PromptTemplate> = Vec::new();
    for (f, enabled) in files {
        let real = std::fs::canonicalize(&f).unwrap_or_else(|_| f.clone());
        if seen_files.contains(&real) {
            continue;
        }
        seen_files.push(real);
        if !enabled {
            continue;
        }
        if let Some(t) = load_template_from_file(&f)
            && !out.iter().any(|e| e.name == t.name)
        {
            out.push(t);
        }
    }
    out
}

/// Loads templates from the default directories (`include_defaults`) and explicit paths,
/// without settings entries (see [`load_templates`]).
pub fn load_prompt_templates(
    cwd: &Path,
    agent_dir: &Path,
    project_trusted: bool,
    include_defaults: bool,
    paths: &[String],
) -> Vec<PromptTemplate> {
    load_templates(&TemplateSources {
        cwd,
        agent_dir,
        project_trusted,
        include_defaults,
        settings: &ScopedResourcePaths::default(),
        paths,
    })
}

/// `parseCommandArgs`: whitespace-separated, `"…"` / `'…'` group (quotes removed).
pub fn parse_command_args(s: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c.is_whitespace() => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

fn digits_at(b: &[u8], i: usize) -> usize {
    b[i..].iter().take_while(|c| c.is_ascii_digit()).count()
}

fn parse_index(s: &str) -> usize {
    s.parse::<usize>().unwrap_or(usize::MAX)
}

/// `substituteArgs` (see the module docs).
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let positional = |n: usize| -> Option<&str> {
        n.checked_sub(1)
            .and_then(|i| args.get(i))
            .map(String::as_str)
    };
    let b = content.as_bytes();
    let mut out = String::with_capacity(content.len());
    let mut i = 0;
    let mut literal_start = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        let rest = &content[i + 1..];
        let mut replacement: Option<(String, usize)> = None;
        if let Some(inner) = rest.strip_prefix('{') {
            // ${N:-d}, ${@:-d}, ${ARGUMENTS:-d}
            let target_len = if inner.starts_with('@') {
                1
            } else if inner.starts_with("ARGUMENTS") {
                9
            } else {
                digits_at(inner.as_bytes(), 0)
            };
            if target_len > 0
                && inner[target_len..].starts_with(":-")
                && let Some(close) = inner[target_len + 2..].find('}')
            {
                let target = &inner[..target_len];
                let default = &inner[target_len + 2..target_len + 2 + close];
                let value = if target == "@" || target == "ARGUMENTS" {
                    Some(all.as_str())
                } else {
                    positional(parse_index(target))
                };
                let text = value
                    .filter(|v| !v.is_empty())
                    .unwrap_or(default)
                    .to_owned();
                replacement = Some((text, 1 + 1 + target_len + 2 + close + 1));
            } else if let Some(slice) = inner.strip_prefix("@:") {
                // ${@:N} / ${@:N:L}
                let n = digits_at(slice.as_bytes(), 0);
                if n > 0 {
                    let start = parse_index(&slice[..n]).saturating_sub(1);
                    let after = &slice[n..];
                    let (len, consumed) = if let Some(l) = after.strip_prefix(':') {
                        let m = digits_at(l.as_bytes(), 0);
                        if m > 0 && l[m..].starts_with('}') {
                            (Some(parse_index(&l[..m])), n + 1 + m + 1)
                        } else {
                            (None, 0)
                        }
                    } else if after.starts_with('}') {
                        (None, n + 1)
                    } else {
                        (None, 0)
                    };
                    if consumed > 0 {
                        let tail: Vec<&str> = args.iter().skip(start).map(String::as_str).collect();
                        let take = len.unwrap_or(usize::MAX).min(tail.len());
                        replacement = Some((tail[..take].join(" "), 1 + 1 + 2 + consumed));
                    }
                }
            }
        } else if rest.starts_with("ARGUMENTS") {
            replacement = Some((all.clone(), 1 + 9));
        } else if rest.starts_with('@') {
            replacement = Some((all.clone(), 2));
        } else {
            let n = digits_at(rest.as_bytes(), 0);
            if n > 0 {
                let text = positional(parse_index(&rest[..n])).unwrap_or("").to_owned();
                replacement = Some((text, 1 + n));
            }
        }
        match replacement {
            Some((text, consumed)) => {
                out.push_str(&content[literal_start..i]);
                out.push_str(&text);
                i += consumed;
                literal_start = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&content[literal_start..]);
    out
}

/// `expandPromptTemplate`: `/name args` → the template with arguments substituted; anything
/// else (or an unknown name) is returned unchanged.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> String {
    let Some(rest) = text.strip_prefix('/') else {
        return text.to_owned();
    };
    let name_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..name_end];
    if name.is_empty() {
        return text.to_owned();
    }
    let args = rest[name_end..].trim_start();
    match templates.iter().find(|t| t.name == name) {
        Some(t) => substitute_args(&t.content, &parse_command_args(args)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bash_like_splitting() {
        assert_eq!(
            parse_command_args(r#"one "two three" 'four "5"'  six"#),
            args(&["one", "two three", "four \"5\"", "six"])
        );
        assert!(parse_command_args("   ").is_empty());
        assert_eq!(parse_command_args(r#"a"b c"d"#), args(&["ab cd"]));
    }

    #[test]
    fn positional_and_all() {
        let a = args(&["x", "y z", "w"]);
        assert_eq!(substitute_args("$1|$2|$3|$4|$10", &a), "x|y z|w||");
        assert_eq!(
            substitute_args("[$@] [$ARGUMENTS]", &a),
            "[x y z w] [x y z w]"
        );
        assert_eq!(substitute_args("cost $ 5 $x", &a), "cost $ 5 $x");
    }

    #[test]
    fn defaults_and_slices() {
        let a = args(&["a", "", "c", "d"]);
        assert_eq!(substitute_args("${1:-def}", &a), "a");
        assert_eq!(substitute_args("${2:-def}", &a), "def");
        assert_eq!(substitute_args("${9:-nine}", &a), "nine");
        assert_eq!(substitute_args("${@:-none}", &[]), "none");
        assert_eq!(substitute_args("${ARGUMENTS:-none}", &a), "a  c d");
        assert_eq!(substitute_args("${@:3}", &a), "c d");
        assert_eq!(substitute_args("${@:2:2}", &a), " c");
        assert_eq!(substitute_args("${@:0}", &a), "a  c d");
        assert_eq!(substitute_args("${@:9}", &a), "");
        assert_eq!(substitute_args("${x:-y} ${@:}", &a), "${x:-y} ${@:}");
    }

    #[test]
    fn no_recursive_substitution() {
        let a = args(&["$2", "second"]);
        assert_eq!(substitute_args("$1 ${3:-$1}", &a), "$2 $1");
    }

    #[test]
    fn templates_load_and_expand() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(agent.join("prompts/sub")).unwrap();
        fs::create_dir_all(cwd.join(".pi/prompts")).unwrap();
        fs::write(
            agent.join("prompts/review.md"),
            "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1 carefully. All: $@",
        )
        .unwrap();
        fs::write(agent.join("prompts/sub/nested.md"), "not loaded").unwrap();
        let long = "x".repeat(70);
        fs::write(cwd.join(".pi/prompts/fix.md"), format!("\n\n{long}\nmore")).unwrap();
        let t = load_prompt_templates(&cwd, &agent, true, true, &[]);
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        // Project templates come first (pi's precedence: project before user).
        assert_eq!(names, vec!["fix", "review"]);
        assert_eq!(t[1].description, "Review code");
        assert_eq!(t[1].argument_hint.as_deref(), Some("<file>"));
        assert_eq!(t[0].description, format!("{}...", "x".repeat(60)));
        assert_eq!(
            expand_prompt_template("/review \"src/a b.rs\" now", &t),
            "Review src/a b.rs carefully. All: src/a b.rs now"
        );
        assert_eq!(expand_prompt_template("/unknown x", &t), "/unknown x");
        assert_eq!(expand_prompt_template("review x", &t), "review x");
        let untrusted = load_prompt_templates(&cwd, &agent, false, true, &[]);
        assert_eq!(untrusted.len(), 1);
    }

    #[test]
    fn precedence_settings_entries_and_first_of_a_name_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        let put = |p: PathBuf, text: &str| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        put(agent.join("prompts/a.md"), "user auto a");
        put(agent.join("prompts/b.md"), "user auto b");
        put(agent.join("prompts/.hidden.md"), "skipped");
        put(agent.join("mine/deep/b.md"), "user settings b");
        put(agent.join("mine/node_modules/c.md"), "skipped");
        put(cwd.join(".pi/prompts/a.md"), "project auto a");
        put(cwd.join(".pi/team/a.md"), "project settings a");
        put(cwd.join("cli/a.md"), "cli a");
        put(cwd.join("cli/d.md"), "cli d");
        let settings = ScopedResourcePaths {
            project: vec![cwd.join(".pi/team")],
            user: vec![agent.join("mine")],
            project_entries: vec!["team".into()],
            user_entries: vec!["mine".into()],
            project_base: cwd.join(".pi"),
            user_base: agent.clone(),
        };
        let paths = vec!["cli".to_owned()];
        let src = TemplateSources {
            cwd: &cwd,
            agent_dir: &agent,
            project_trusted: true,
            include_defaults: true,
            settings: &settings,
            paths: &paths,
        };
        let t = load_templates(&src);
        let got: Vec<(&str, &str)> = t
            .iter()
            .map(|t| (t.name.as_str(), t.content.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", "project settings a"),
                ("b", "user settings b"),
                ("d", "cli d")
            ]
        );
        let only_cli = load_templates(&TemplateSources {
            include_defaults: false,
            ..src
        });
        assert_eq!(only_cli.len(), 2);
        assert_eq!(only_cli[0].content, "cli a");
    }
}
