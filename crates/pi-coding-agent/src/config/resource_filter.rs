//! The pattern entries of the settings' `skills` / `prompts` lists, which switch resource
//! files off and on.
//!
//! Mirrors pi 0.85.0 `core/package-manager.js` (`isPattern`, `matchesAnyPattern`,
//! `matchesAnyExactPattern`, `isEnabledByOverrides`, `applyPatterns`):
//! - an entry starting with `!`, `+` or `-`, or holding `*` or `?`, is a pattern; the others
//!   are paths;
//! - a glob matches a file when it matches the file's path relative to the settings file's
//!   base (`<cwd>/.pi`, the agent directory), its name, or its absolute path; for a `SKILL.md`
//!   also its directory (relative, name or absolute). `+x` / `-x` compare exactly (relative or
//!   absolute, `./` dropped);
//! - the files under the path entries: kept when they match a plain glob (all of them when
//!   there is none), then `!glob` removes, `+path` adds back, `-path` removes;
//! - the auto-discovered files (`.pi/…`, the agent directory's): enabled unless `!glob` matches,
//!   then `+path` enables and `-path` disables.
//!
//! Globs are `globset` globs with `*` not crossing `/` (minimatch's rule); unlike minimatch,
//! `*` also matches a leading dot.

use crate::platform::lexical_path::node_relative;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;

/// pi's `isPattern`: an entry that filters rather than names a path.
pub(crate) fn is_pattern(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-']) || entry.contains(['*', '?'])
}

fn posix(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// The spellings of `file` a pattern is compared with: relative, name, absolute, and for a
/// `SKILL.md` the same three of its directory.
struct Names {
    rel: String,
    name: String,
    abs: String,
    skill_dir: Option<(String, String, String)>,
}

fn names(file: &Path, base: &Path) -> Names {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let skill_dir = (name == "SKILL.md")
        .then(|| file.parent())
        .flatten()
        .map(|dir| {
            (
                node_relative(base, dir),
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                posix(dir),
            )
        });
    Names {
        rel: node_relative(base, file),
        name,
        abs: posix(file),
        skill_dir,
    }
}

/// `pattern` compiled once (`None` when it is not a valid glob: it matches nothing).
fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    GlobBuilder::new(&pattern.replace('\\', "/"))
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// `matchesAnyPattern`: whether a glob of `patterns` matches `file` (relative to `base`,
/// its name, its absolute path, or a `SKILL.md`'s directory).
pub(crate) fn matches_any(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let n = names(file, base);
    patterns.iter().filter_map(|p| glob(p)).any(|g| {
        g.is_match(&n.rel)
            || g.is_match(&n.name)
            || g.is_match(&n.abs)
            || n.skill_dir.as_ref().is_some_and(|(rel, name, abs)| {
                g.is_match(rel) || g.is_match(name) || g.is_match(abs)
            })
    })
}

/// `matchesAnyExactPattern`: whether an entry of `patterns` names `file` exactly.
pub(crate) fn matches_any_exact(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let n = names(file, base);
    patterns.iter().any(|p| {
        let p = p
            .strip_prefix("./")
            .or_else(|| p.strip_prefix(".\\"))
            .unwrap_or(p)
            .replace('\\', "/");
        p == n.rel
            || p == n.abs
            || n.skill_dir
                .as_ref()
                .is_some_and(|(rel, _, abs)| p == *rel || p == *abs)
    })
}

/// The patterns of `entries` that start with `prefix`, without it.
fn with_prefix(entries: &[String], prefix: char) -> Vec<&str> {
    entries
        .iter()
        .filter_map(|e| e.strip_prefix(prefix))
        .collect()
}

/// `isEnabledByOverrides`: whether an auto-discovered `file` stays on under a settings
/// file's `entries` (only its `!`, `+`, `-` patterns count), `base` being that file's base.
pub(crate) fn is_enabled_by_overrides(file: &Path, entries: &[String], base: &Path) -> bool {
    let mut enabled = !matches_any(file, &with_prefix(entries, '!'), base);
    if matches_any_exact(file, &with_prefix(entries, '+'), base) {
        enabled = true;
    }
    if matches_any_exact(file, &with_prefix(entries, '-'), base) {
        enabled = false;
    }
    enabled
}

/// `applyPatterns`: the `files` found under a settings file's path entries that its pattern
/// entries leave on, in their order.
pub(crate) fn apply_patterns(files: &[PathBuf], entries: &[String], base: &Path) -> Vec<PathBuf> {
    let patterns: Vec<&String> = entries.iter().filter(|e| is_pattern(e)).collect();
    let includes: Vec<&str> = patterns
        .iter()
        .filter(|p| !p.starts_with(['!', '+', '-']))
        .map(|p| p.as_str())
        .collect();
    let owned: Vec<String> = patterns.iter().map(|p| (*p).clone()).collect();
    let excludes = with_prefix(&owned, '!');
    let force_in = with_prefix(&owned, '+');
    let force_out = with_prefix(&owned, '-');
    let mut result: Vec<PathBuf> = files
        .iter()
        .filter(|f| includes.is_empty() || matches_any(f, &includes, base))
        .filter(|f| !matches_any(f, &excludes, base))
        .cloned()
        .collect();
    for f in files {
        if !result.contains(f) && matches_any_exact(f, &force_in, base) {
            result.push(f.clone());
        }
    }
    result.retain(|f| !matches_any_exact(f, &force_out, base));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn overrides_switch_auto_files() {
        let base = Path::new("/a");
        let z = Path::new("/a/prompts/z.md");
        assert!(is_enabled_by_overrides(z, &v(&["mine"]), base));
        assert!(!is_enabled_by_overrides(z, &v(&["!z.md"]), base));
        assert!(!is_enabled_by_overrides(z, &v(&["!prompts/*"]), base));
        assert!(is_enabled_by_overrides(
            z,
            &v(&["!*", "+prompts/z.md"]),
            base
        ));
        assert!(!is_enabled_by_overrides(
            z,
            &v(&["+./prompts/z.md", "-/a/prompts/z.md"]),
            base
        ));
        let skill = Path::new("/a/skills/foo/SKILL.md");
        assert!(!is_enabled_by_overrides(skill, &v(&["!foo"]), base));
        assert!(!is_enabled_by_overrides(skill, &v(&["-skills/foo"]), base));
        assert!(is_enabled_by_overrides(skill, &v(&["!bar"]), base));
    }

    #[test]
    fn patterns_filter_the_files_of_path_entries() {
        let base = Path::new("/a");
        let files = vec![
            PathBuf::from("/a/myp/a.md"),
            PathBuf::from("/a/myp/sub/c.md"),
        ];
        assert_eq!(apply_patterns(&files, &v(&["myp"]), base), files);
        assert_eq!(
            apply_patterns(&files, &v(&["myp", "!myp/sub/*"]), base),
            vec![PathBuf::from("/a/myp/a.md")]
        );
        assert!(apply_patterns(&files, &v(&["myp", "sub/*.md"]), base).is_empty());
        assert_eq!(
            apply_patterns(&files, &v(&["myp", "?.md", "!a*"]), base),
            vec![PathBuf::from("/a/myp/sub/c.md")]
        );
        assert_eq!(
            apply_patterns(&files, &v(&["!*.md", "+myp/a.md"]), base),
            vec![PathBuf::from("/a/myp/a.md")]
        );
        assert_eq!(
            node_relative(Path::new("/a/b"), Path::new("/a/c/d")),
            "../c/d"
        );
    }
}
