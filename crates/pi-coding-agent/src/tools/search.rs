//! Helpers shared by the `grep` and `find` tools: integral JSON numbers and the ignore-aware
//! directory walk.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use serde_json::Value;

/// A JSON number for `n`: an integer when `n` is integral (so it serializes as JavaScript
/// would), else a float.
pub(crate) fn js_number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
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
    fn integral_numbers_stay_integers() {
        assert_eq!(js_number_value(3.0), serde_json::json!(3));
        assert_eq!(js_number_value(2.5), serde_json::json!(2.5));
    }
}
