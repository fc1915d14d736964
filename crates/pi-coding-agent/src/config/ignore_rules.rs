//! The ignore files of a directory walk (`.gitignore`, `.ignore`, `.fdignore`), as pi's
//! resource loaders read them.
//!
//! Mirrors pi-coding-agent 0.85.0 `prefixIgnorePattern` / `addIgnoreRules` (the same in
//! `skills.js` and `package-manager.js`): one matcher rooted at the walk's root; each directory
//! visited adds its files' rules, prefixed with the directory's path relative to the root, so
//! a rule only reaches below its own directory; among matching rules the last one wins.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The files read in each directory.
pub(crate) const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// pi's `prefixIgnorePattern`: a rule of a nested ignore file, made relative to the root
/// (`None` for blank lines and comments).
pub(crate) fn prefix_ignore_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (
            false,
            if line.starts_with("\\!") {
                &line[1..]
            } else {
                line
            },
        ),
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated {
        format!("!{prefixed}")
    } else {
        prefixed
    })
}

/// The rules met so far in a walk from `root` (see the module docs).
pub(crate) struct IgnoreRules {
    root: PathBuf,
    patterns: Vec<String>,
    matcher: Option<Gitignore>,
}

impl IgnoreRules {
    /// No rules yet; paths are matched relative to `root`.
    pub(crate) fn new(root: &Path) -> Self {
        IgnoreRules {
            root: root.to_path_buf(),
            patterns: Vec::new(),
            matcher: None,
        }
    }

    /// Adds the rules of `dir`'s ignore files (the matcher is rebuilt only when there are).
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let rel = dir.strip_prefix(&self.root).unwrap_or(Path::new(""));
        let prefix = if rel.as_os_str().is_empty() {
            String::new()
        } else {
            format!("{}/", rel.to_string_lossy().replace('\\', "/"))
        };
        let before = self.patterns.len();
        for name in IGNORE_FILE_NAMES {
            if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
                self.patterns.extend(
                    text.lines()
                        .filter_map(|l| prefix_ignore_pattern(l.trim_end_matches('\r'), &prefix)),
                );
            }
        }
        if self.patterns.len() > before {
            let mut builder = GitignoreBuilder::new(&self.root);
            for p in &self.patterns {
                let _ = builder.add_line(None, p);
            }
            self.matcher = builder.build().ok();
        }
    }

    /// Whether the rules so far ignore `path`.
    pub(crate) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|g| g.matched(path, is_dir).is_ignore())
    }
}
