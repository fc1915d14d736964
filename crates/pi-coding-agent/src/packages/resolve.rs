//! The resources of the configured packages.
//!
//! Mirrors pi 0.85.0 `DefaultPackageManager.resolve` / `collectPackageResources`:
//! - a package's `package.json` `pi` manifest lists its `extensions`, `skills`, `prompts` and
//!   `themes` (paths, globs, `!`/`+`/`-` patterns); without a manifest its `extensions/`,
//!   `skills/`, `prompts/` and `themes/` directories are used; a local path that is a file,
//!   or a directory with neither, is one extension;
//! - an object entry (`{"source": …, "skills": [...]}`) filters the package's resources per
//!   kind: a list keeps what its patterns select, `[]` keeps nothing, a missing key keeps the
//!   defaults;
//! - the project's entries come first and win over a user entry of the same package
//!   (`npm:<name>`, `git:<host>/<path>`, or the resolved local path);
//! - an npm or git package that is not on disk is installed first (not under PI_OFFLINE).

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use serde_json::{Map, Value};

use super::Scope;
use super::manager::{PackageManager, entry_source, offline};
use super::source::{PackageSource, parse_source};
use crate::config::resource_filter::{matches_any, matches_any_exact};
use crate::platform::lexical_path::lexical_normalize;
use crate::platform::lexical_path::node_relative;

/// The four kinds of package resources.
pub const KINDS: [&str; 4] = ["extensions", "skills", "prompts", "themes"];

/// The enabled resources of some packages, in resolution order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackageResources {
    /// Extension entry points (files, or a directory the extension loader resolves).
    pub extensions: Vec<PathBuf>,
    /// Skill files.
    pub skills: Vec<PathBuf>,
    /// Prompt-template files.
    pub prompts: Vec<PathBuf>,
    /// Theme files.
    pub themes: Vec<PathBuf>,
}

impl PackageResources {
    fn kind_mut(&mut self, kind: &str) -> &mut Vec<PathBuf> {
        match kind {
            "extensions" => &mut self.extensions,
            "skills" => &mut self.skills,
            "prompts" => &mut self.prompts,
            _ => &mut self.themes,
        }
    }

    fn add(&mut self, kind: &str, path: PathBuf) {
        let list = self.kind_mut(kind);
        if !list.contains(&path) {
            list.push(path);
        }
    }
}

/// A settings entry and its file.
pub type Entry = (Value, Scope);

/// The `packages` entries of both files, deduplicated: project entries first, a user entry
/// whose package the project also lists is dropped.
pub fn dedupe(pm: &PackageManager<'_>, project: &[Value], user: &[Value]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let tagged = project
        .iter()
        .map(|v| (v, Scope::Project))
        .chain(user.iter().map(|v| (v, Scope::User)));
    for (v, scope) in tagged {
        let Some(s) = entry_source(v) else { continue };
        let id = pm.identity(s, Some(scope));
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        out.push((v.clone(), scope));
    }
    out
}

/// The resources of `entries`, installing missing npm/git packages first; install failures
/// become `warnings`.
pub fn resolve(
    pm: &PackageManager<'_>,
    entries: &[Entry],
    warnings: &mut Vec<String>,
) -> PackageResources {
    let mut out = PackageResources::default();
    for (entry, scope) in entries {
        let Some(source) = entry_source(entry) else {
            continue;
        };
        let filter = entry.as_object();
        let parsed = parse_source(source);
        let path = pm.package_path(source, *scope);
        if let PackageSource::Local(_) = parsed {
            // A file, or a directory without resources, is one extension.
            let one =
                path.is_file() || (path.is_dir() && !collect_package(&path, filter, &mut out));
            if one {
                out.add("extensions", path);
            }
            continue;
        }
        let stale = match &parsed {
            PackageSource::Npm(n) if n.pinned => {
                n.version.as_deref() != installed_version(&path).as_deref()
            }
            _ => false,
        };
        if !path.exists() || stale {
            if offline() {
                continue;
            }
            if let Err(e) = pm.install_parsed(&parsed, *scope) {
                warnings.push(format!("Failed to install package {source}: {e}"));
                continue;
            }
        }
        if path.is_dir() {
            collect_package(&path, filter, &mut out);
        }
    }
    out
}

fn installed_version(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    v.get("version")?.as_str().map(str::to_owned)
}

/// `readPiManifest`: the `pi` object's string lists (`None` without a `pi` object).
pub fn read_manifest(root: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let pi = v.get("pi")?.as_object()?;
    let mut out = Map::new();
    for kind in KINDS {
        if let Some(list) = pi.get(kind).and_then(Value::as_array)
            && list.iter().all(Value::is_string)
        {
            out.insert(kind.to_owned(), Value::Array(list.clone()));
        }
    }
    Some(out)
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    Some(
        v?.as_array()?
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
    )
}

fn is_override(e: &str) -> bool {
    e.starts_with(['!', '+', '-'])
}

/// `collectPackageResources`; false when the package has neither a manifest, nor a
/// resource directory, nor a filter.
fn collect_package(
    root: &Path,
    filter: Option<&Map<String, Value>>,
    out: &mut PackageResources,
) -> bool {
    let manifest = read_manifest(root);
    if let Some(filter) = filter {
        for kind in KINDS {
            match strings(filter.get(kind)) {
                Some(patterns) => {
                    let all = manifest_files(root, manifest.as_ref(), kind);
                    if patterns.is_empty() {
                        continue;
                    }
                    for f in apply_patterns(&all, &patterns, root) {
                        out.add(kind, f);
                    }
                }
                None => {
                    for f in manifest_files(root, manifest.as_ref(), kind) {
                        out.add(kind, f);
                    }
                }
            }
        }
        return true;
    }
    if let Some(m) = &manifest {
        // A manifest names each kind it brings; a kind it leaves out brings nothing.
        for kind in KINDS.iter().filter(|k| m.contains_key(**k)) {
            for f in manifest_files(root, manifest.as_ref(), kind) {
                out.add(kind, f);
            }
        }
        return true;
    }
    let mut any = false;
    for kind in KINDS {
        let dir = root.join(kind);
        if dir.exists() {
            any = true;
            for f in collect_resource_files(&dir, kind) {
                out.add(kind, f);
            }
        }
    }
    any
}

/// `collectManifestFiles`: a kind's files per the manifest (its patterns applied), else per
/// the kind's directory.
fn manifest_files(root: &Path, manifest: Option<&Map<String, Value>>, kind: &str) -> Vec<PathBuf> {
    if let Some(entries) = strings(manifest.and_then(|m| m.get(kind))) {
        let sources: Vec<PathBuf> = entries
            .iter()
            .filter(|e| !is_override(e))
            .flat_map(|e| {
                if e.contains(['*', '?']) {
                    expand_glob(e, root)
                } else {
                    vec![lexical_normalize(&root.join(e))]
                }
            })
            .collect();
        let all = files_from_paths(&sources, kind);
        let overrides: Vec<String> = entries.into_iter().filter(|e| is_override(e)).collect();
        if overrides.is_empty() {
            return all;
        }
        return apply_patterns(&all, &overrides, root);
    }
    let dir = root.join(kind);
    if dir.exists() {
        collect_resource_files(&dir, kind)
    } else {
        Vec::new()
    }
}

/// `applyPatterns`: plain entries and globs include (all files when there are none), `!x`
/// excludes, `+x` adds back exactly, `-x` removes exactly.
pub fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> Vec<PathBuf> {
    let pick = |prefix: char| -> Vec<&str> {
        patterns
            .iter()
            .filter_map(|p| p.strip_prefix(prefix))
            .collect()
    };
    let includes: Vec<&str> = patterns
        .iter()
        .filter(|p| !is_override(p))
        .map(String::as_str)
        .collect();
    let (excludes, plus, minus) = (pick('!'), pick('+'), pick('-'));
    let mut result: Vec<PathBuf> = all
        .iter()
        .filter(|f| includes.is_empty() || matches_any(f, &includes, base))
        .filter(|f| excludes.is_empty() || !matches_any(f, &excludes, base))
        .cloned()
        .collect();
    for f in all {
        if !result.contains(f) && !plus.is_empty() && matches_any_exact(f, &plus, base) {
            result.push(f.clone());
        }
    }
    result.retain(|f| minus.is_empty() || !matches_any_exact(f, &minus, base));
    result
}

/// `expandPackageGlob`: the paths under `root` the glob matches, none under a dot segment,
/// sorted.
fn expand_glob(pattern: &str, root: &Path) -> Vec<PathBuf> {
    let Ok(glob) = GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
    else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in read.flatten() {
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if matcher.is_match(node_relative(root, &p)) {
                out.push(p.clone());
            }
            if p.is_dir() && e.file_name() != "node_modules" {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn files_from_paths(paths: &[PathBuf], kind: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
        } else if p.is_dir() {
            out.extend(collect_resource_files(p, kind));
        }
    }
    out
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        !name.starts_with('.') && name != "node_modules"
    });
    v.sort();
    v
}

fn has_ext(p: &Path, exts: &[&str]) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.contains(&e))
}

/// `collectResourceFiles`: skills as pi's skill directories, extensions by their entry
/// points, prompts (`*.md`) and themes (`*.json`) recursively.
fn collect_resource_files(dir: &Path, kind: &str) -> Vec<PathBuf> {
    match kind {
        "skills" => skill_entries(dir, dir),
        "extensions" => extension_entries(dir),
        "prompts" => files_recursive(dir, &["md"]),
        _ => files_recursive(dir, &["json"]),
    }
}

fn files_recursive(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in sorted_entries(dir) {
        if p.is_dir() {
            out.extend(files_recursive(&p, exts));
        } else if p.is_file() && has_ext(&p, exts) {
            out.push(p);
        }
    }
    out
}

/// A directory's `SKILL.md` (and nothing under it), else its root-level `*.md` files and the
/// skills of its subdirectories.
fn skill_entries(dir: &Path, root: &Path) -> Vec<PathBuf> {
    let skill = dir.join("SKILL.md");
    if skill.is_file() {
        return vec![skill];
    }
    let mut out = Vec::new();
    for p in sorted_entries(dir) {
        if p.is_file() && dir == root && has_ext(&p, &["md"]) {
            out.push(p);
        } else if p.is_dir() {
            out.extend(skill_entries(&p, root));
        }
    }
    out
}

/// `resolveExtensionEntries`: the manifest's existing `pi.extensions`, else `index.ts`, else
/// `index.js` (also the rule of a directory named as an extension source).
pub(crate) fn declared_extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(list) = strings(
        read_manifest(dir)
            .as_ref()
            .and_then(|m| m.get("extensions")),
    ) {
        let found: Vec<PathBuf> = list
            .iter()
            .map(|e| lexical_normalize(&dir.join(e)))
            .filter(|p| p.exists())
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .map(|p| vec![p])
}

/// `collectAutoExtensionEntries`.
fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    if let Some(entries) = declared_extension_entries(dir) {
        return entries;
    }
    let mut out = Vec::new();
    for p in sorted_entries(dir) {
        if p.is_file() && has_ext(&p, &["ts", "js"]) {
            out.push(p);
        } else if p.is_dir()
            && let Some(entries) = declared_extension_entries(&p)
        {
            out.extend(entries);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_manifest_with_globs_and_exclusions_selects_the_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(
            &root.join("package.json"),
            r#"{"pi":{"extensions":["./src/*.ts","!**/skip.ts"],"prompts":["prompts"]}}"#,
        );
        write(&root.join("src/a.ts"), "");
        write(&root.join("src/skip.ts"), "");
        write(&root.join("prompts/p.md"), "");
        write(&root.join("skills/s/SKILL.md"), "");
        let mut out = PackageResources::default();
        assert!(collect_package(root, None, &mut out));
        assert_eq!(out.extensions, vec![root.join("src/a.ts")]);
        assert_eq!(out.prompts, vec![root.join("prompts/p.md")]);
        // The manifest lists no skills: its skills directory does not count.
        assert!(out.skills.is_empty());
    }

    #[test]
    fn without_a_manifest_the_directories_count_and_filters_narrow_them() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(&root.join("extensions/one.ts"), "");
        write(&root.join("extensions/two/index.ts"), "");
        write(&root.join("extensions/two/helper.ts"), "");
        write(&root.join("skills/a/SKILL.md"), "");
        write(&root.join("skills/b/SKILL.md"), "");
        write(&root.join("themes/t.json"), "{}");
        let mut out = PackageResources::default();
        assert!(collect_package(root, None, &mut out));
        assert_eq!(
            out.extensions,
            vec![
                root.join("extensions/one.ts"),
                root.join("extensions/two/index.ts")
            ]
        );
        assert_eq!(out.skills.len(), 2);
        assert_eq!(out.themes, vec![root.join("themes/t.json")]);
        let filter: Value = serde_json::json!({"source": "x", "extensions": [], "skills": ["!a"]});
        let mut narrowed = PackageResources::default();
        collect_package(root, filter.as_object(), &mut narrowed);
        assert!(narrowed.extensions.is_empty());
        assert_eq!(narrowed.skills, vec![root.join("skills/b/SKILL.md")]);
        assert_eq!(narrowed.themes.len(), 1);
    }
}
