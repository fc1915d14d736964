//! Node's lexical path normalization, which pi applies to every path it resolves.

use std::path::{Component, Path, PathBuf};

/// Node's `path.resolve` normalization of an already absolute path: drops `.` and empty
/// segments, applies `..` (never above the root) and removes a trailing separator.
pub(crate) fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}
