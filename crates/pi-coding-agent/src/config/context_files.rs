//! Context files (`AGENTS.md` and friends) that become the system prompt's project context.
//!
//! Mirrors pi-coding-agent 0.85.0 `loadProjectContextFiles` (`core/resource-loader.js`):
//! the agent directory's file first, then one file per directory from the filesystem root down
//! to the cwd (outermost first) — the first regular file among `AGENTS.override.md`,
//! `AGENTS.md`, `AGENTS.MD`, `CLAUDE.md`, `CLAUDE.MD`; a BOM is stripped; no path twice; in a
//! git worktree nested inside its main checkout, the main checkout's file that the worktree's
//! own file shadows is skipped. Untrusted projects still load context files.

use std::path::{Path, PathBuf};

use super::text::strip_bom;
use super::trust::canonicalize;

/// Candidate names, in priority order.
pub(crate) const CONTEXT_FILE_NAMES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

/// One loaded file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Its path (as found, not canonicalized).
    pub path: PathBuf,
    /// Its text, BOM stripped.
    pub content: String,
}

/// The files, and warnings for unreadable ones (`Could not read <path>: Error: <Node's
/// message>`, printed with a `Warning: ` prefix).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ContextFiles {
    /// Files in prompt order.
    pub files: Vec<ContextFile>,
    /// Read failures.
    pub warnings: Vec<String>,
}

/// The first regular candidate file in `dir`.
pub(crate) fn load_context_file_from_dir(
    dir: &Path,
    warnings: &mut Vec<String>,
) -> Option<ContextFile> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                return Some(ContextFile {
                    content: strip_bom(&text).to_owned(),
                    path,
                });
            }
            Err(e) => warnings.push(format!(
                "Could not read {}: Error: {}",
                path.display(),
                crate::platform::fs_error::read_file_message(&e, &path)
            )),
        }
    }
    None
}

struct GitPaths {
    repo_dir: PathBuf,
    common_git_dir: PathBuf,
}

/// pi's `findGitPaths`: the nearest `.git` (directory, or file with `gitdir:`) with a HEAD.
fn find_git_paths(cwd: &Path) -> Option<GitPaths> {
    for dir in cwd.ancestors() {
        let git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&git) else {
            continue;
        };
        if meta.is_file() {
            let content = std::fs::read_to_string(&git).ok()?;
            let target = content.trim().strip_prefix("gitdir: ")?;
            let git_dir = dir.join(target.trim());
            if !git_dir.join("HEAD").exists() {
                return None;
            }
            let common = match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(c) => git_dir.join(c.trim()),
                Err(_) => git_dir.clone(),
            };
            return Some(GitPaths {
                repo_dir: dir.to_path_buf(),
                common_git_dir: common,
            });
        }
        if meta.is_dir() {
            if !git.join("HEAD").exists() {
                return None;
            }
            return Some(GitPaths {
                repo_dir: dir.to_path_buf(),
                common_git_dir: git,
            });
        }
    }
    None
}

/// The main checkout's context file shadowed by a nested linked worktree's own file
/// (canonical path), if any.
fn find_shadowed_context_file(cwd: &Path) -> Option<PathBuf> {
    let git = find_git_paths(cwd)?;
    let common = canonicalize(&git.common_git_dir);
    let worktree_root = canonicalize(&git.repo_dir);
    let main_root = common.parent()?.to_path_buf();
    if worktree_root == main_root || !worktree_root.starts_with(&main_root) {
        return None;
    }
    if canonicalize(&main_root.join(".git")) != common {
        return None;
    }
    let own = load_context_file_from_dir(&worktree_root, &mut Vec::new())?;
    Some(main_root.join(own.path.file_name()?))
}

/// Loads the context files for `cwd` (see the module docs for the order).
pub(crate) fn load_project_context_files(cwd: &Path, agent_dir: &Path) -> ContextFiles {
    let mut out = ContextFiles::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    if let Some(global) = load_context_file_from_dir(agent_dir, &mut out.warnings) {
        seen.push(global.path.clone());
        out.files.push(global);
    }
    let shadowed = find_shadowed_context_file(cwd);
    let mut ancestors = Vec::new();
    for dir in cwd.ancestors() {
        let Some(file) = load_context_file_from_dir(dir, &mut out.warnings) else {
            continue;
        };
        let is_shadowed = shadowed
            .as_ref()
            .is_some_and(|s| canonicalize(&file.path) == *s);
        if !is_shadowed && !seen.contains(&file.path) {
            seen.push(file.path.clone());
            ancestors.push(file);
        }
    }
    ancestors.reverse();
    out.files.extend(ancestors);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(files: &ContextFiles, root: &Path) -> Vec<String> {
        files
            .files
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn agent_dir_first_then_root_to_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        let agent = root.join("agent");
        let cwd = root.join("a/b/c");
        fs::create_dir_all(&agent).unwrap();
        fs::create_dir_all(&cwd).unwrap();
        fs::write(agent.join("AGENTS.md"), "global").unwrap();
        fs::write(root.join("a/CLAUDE.md"), "outer").unwrap();
        fs::write(root.join("a/b/c/AGENTS.md"), "\u{feff}inner").unwrap();
        let files = load_project_context_files(&cwd, &agent);
        assert_eq!(
            names(&files, &root),
            vec!["agent/AGENTS.md", "a/CLAUDE.md", "a/b/c/AGENTS.md"]
        );
        assert_eq!(files.files[2].content, "inner");
        assert!(files.warnings.is_empty());
    }

    #[test]
    fn file_name_priority_and_directories_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        let dir = root.join("p");
        fs::create_dir_all(dir.join("AGENTS.override.md")).unwrap();
        fs::write(dir.join("AGENTS.md"), "a").unwrap();
        fs::write(dir.join("CLAUDE.md"), "c").unwrap();
        let files = load_project_context_files(&dir, &root.join("no-agent"));
        assert_eq!(names(&files, &root), vec!["p/AGENTS.md"]);
        fs::remove_dir(dir.join("AGENTS.override.md")).unwrap();
        fs::write(dir.join("AGENTS.override.md"), "o").unwrap();
        let files = load_project_context_files(&dir, &root.join("no-agent"));
        assert_eq!(names(&files, &root), vec!["p/AGENTS.override.md"]);
    }

    #[test]
    fn no_path_twice_when_agent_dir_is_an_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        fs::write(root.join("AGENTS.md"), "x").unwrap();
        let cwd = root.join("sub");
        fs::create_dir_all(&cwd).unwrap();
        let files = load_project_context_files(&cwd, &root);
        assert_eq!(files.files.len(), 1);
    }

    #[test]
    fn nested_worktree_skips_the_shadowed_main_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        let main = root.join("repo");
        let gitdir = main.join(".git/worktrees/feat");
        fs::create_dir_all(&gitdir).unwrap();
        fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(gitdir.join("HEAD"), "ref: refs/heads/feat\n").unwrap();
        fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        let wt = main.join("wt/feat");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        fs::write(main.join("AGENTS.md"), "main").unwrap();
        fs::write(wt.join("AGENTS.md"), "worktree").unwrap();
        let files = load_project_context_files(&wt, &root.join("agent"));
        assert_eq!(names(&files, &root), vec!["repo/wt/feat/AGENTS.md"]);
        // Without its own file the worktree inherits the main checkout's.
        fs::remove_file(wt.join("AGENTS.md")).unwrap();
        let files = load_project_context_files(&wt, &root.join("agent"));
        assert_eq!(names(&files, &root), vec!["repo/AGENTS.md"]);
    }
}
