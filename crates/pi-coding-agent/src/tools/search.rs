//! Helpers shared by the `grep` and `find` tools: path resolution, JavaScript number
//! spelling, and the ignore-aware directory walk.

use std::path::{Component, Path, PathBuf};

use ignore::WalkBuilder;
use serde_json::Value;

/// Resolves a tool path argument against `cwd` the way pi's `resolveToCwd` does for the
/// common cases: one leading `@` stripped, Unicode spaces mapped to a space, `~` and `~/…`
/// expanded, `file://` accepted, relative paths joined to `cwd`, `.`/`..` resolved lexically.
///
/// A private stand-in until the shared path module lands; the rules are pi 0.85.0
/// `core/tools/path-utils.ts`.
pub(crate) fn resolve_to_cwd(path: &str, cwd: &Path) -> PathBuf {
    let path = path.strip_prefix('@').unwrap_or(path);
    let path: String = path
        .chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect();
    let path = path.strip_prefix("file://").unwrap_or(&path);
    let expanded = match (path, std::env::var_os("HOME")) {
        ("~", Some(home)) => PathBuf::from(home),
        (p, Some(home)) if p.starts_with("~/") => PathBuf::from(home).join(&p[2..]),
        (p, _) => PathBuf::from(p),
    };
    normalize(&cwd.join(expanded))
}

/// Lexical normalization of an absolute path (Node's `path.resolve` without the cwd part).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// A JSON number for `n`: an integer when `n` is integral (so it serializes as JavaScript
/// would), else a float.
pub(crate) fn js_number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// `n` spelled as JavaScript's `String(n)`.
pub(crate) fn js_number(n: f64) -> String {
    pi_ai::json::to_string(&js_number_value(n)).unwrap_or_default()
}

/// Which ignore files a walk honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IgnoreRules {
    /// ripgrep's defaults: `.gitignore` (and git's exclude files) only inside a git
    /// repository; `.ignore` and `.rgignore` everywhere.
    Ripgrep,
    /// fd with `--no-require-git`: `.gitignore` everywhere; `.ignore`, `.fdignore` and fd's
    /// global ignore file (`$XDG_CONFIG_HOME/fd/ignore`, else `~/.config/fd/ignore`).
    Fd,
}

/// A deterministic walk of `root`: hidden entries included (the tools pass `--hidden`, so
/// `.git/` itself is walked too), symlinks not followed, each directory's entries visited in
/// byte order of their names — so results come out ordered by path, component by component.
pub(crate) fn walker(root: &Path, rules: IgnoreRules) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .parents(true)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    match rules {
        IgnoreRules::Ripgrep => {
            builder
                .require_git(true)
                .add_custom_ignore_filename(".rgignore");
        }
        IgnoreRules::Fd => {
            builder
                .require_git(false)
                .add_custom_ignore_filename(".fdignore");
            if let Some(global) = fd_global_ignore().filter(|p| p.is_file()) {
                // A malformed global file is skipped, as fd does.
                let _ = builder.add_ignore(global);
            }
        }
    }
    builder
}

fn fd_global_ignore() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("fd").join("ignore"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_pi() {
        let cwd = Path::new("/work/project");
        assert_eq!(resolve_to_cwd(".", cwd), PathBuf::from("/work/project"));
        assert_eq!(
            resolve_to_cwd("src/", cwd),
            PathBuf::from("/work/project/src")
        );
        assert_eq!(
            resolve_to_cwd("@src/a.rs", cwd),
            PathBuf::from("/work/project/src/a.rs")
        );
        assert_eq!(resolve_to_cwd("../x", cwd), PathBuf::from("/work/x"));
        assert_eq!(resolve_to_cwd("/abs/./p", cwd), PathBuf::from("/abs/p"));
        assert_eq!(
            resolve_to_cwd("a\u{00A0}b", cwd),
            PathBuf::from("/work/project/a b")
        );
        assert_eq!(
            resolve_to_cwd("file:///etc/hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
    }

    #[test]
    fn numbers_spelled_like_javascript() {
        assert_eq!(js_number(100.0), "100");
        assert_eq!(js_number(2.5), "2.5");
        assert_eq!(js_number_value(3.0), serde_json::json!(3));
    }
}
