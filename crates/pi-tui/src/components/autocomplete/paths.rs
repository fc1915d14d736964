//! Path suggestions: the directory listing behind Tab completion and the project-wide file
//! search behind `@` (pi-tui's `CombinedAutocompleteProvider`, which asks `fd`; here an
//! in-process walk that honours `.gitignore` the same way, kept in a short-lived cache so
//! keystrokes do not walk the tree).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::components::select_list::SelectItem;

/// How long a walk's result is reused before the tree is walked again.
const INDEX_TTL: Duration = Duration::from_secs(10);
/// The most entries one walk keeps (a home directory must not cost a full disk scan).
const INDEX_CAP: usize = 50_000;
/// `@` shows at most this many suggestions, as pi.
const FUZZY_RESULTS: usize = 20;

/// Characters that end a path token (pi's `PATH_DELIMITERS`).
pub(super) fn is_delimiter(c: char) -> bool {
    matches!(c, ' ' | '\t' | '"' | '\'' | '=')
}

/// The prefix as typed, split into its parts.
pub(super) struct PathPrefix<'a> {
    pub raw: &'a str,
    pub at: bool,
    pub quoted: bool,
}

pub(super) fn parse_prefix(prefix: &str) -> PathPrefix<'_> {
    if let Some(raw) = prefix.strip_prefix("@\"") {
        PathPrefix {
            raw,
            at: true,
            quoted: true,
        }
    } else if let Some(raw) = prefix.strip_prefix('"') {
        PathPrefix {
            raw,
            at: false,
            quoted: true,
        }
    } else if let Some(raw) = prefix.strip_prefix('@') {
        PathPrefix {
            raw,
            at: true,
            quoted: false,
        }
    } else {
        PathPrefix {
            raw: prefix,
            at: false,
            quoted: false,
        }
    }
}

/// `path` as the editor gets it: `@` kept, quoted when asked or when it has a space.
fn completion_value(path: &str, at: bool, quoted: bool) -> String {
    let at = if at { "@" } else { "" };
    if quoted || path.contains(' ') {
        format!("{at}\"{path}\"")
    } else {
        format!("{at}{path}")
    }
}

fn expand_home(path: &str, home: Option<&Path>) -> String {
    match (path, home) {
        ("~", Some(h)) => h.display().to_string(),
        (p, Some(h)) if p.starts_with("~/") => {
            let mut s = h.join(&p[2..]).display().to_string();
            if p.ends_with('/') && !s.ends_with('/') {
                s.push('/');
            }
            s
        }
        (p, _) => p.to_owned(),
    }
}

/// Joins like Node's `path.join` for the cases completion meets: `.` segments dropped,
/// `..` kept (the file system resolves them).
fn join_display(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches('/');
    match dir {
        "" | "." => name.to_owned(),
        _ => format!("{}/{name}", dir.strip_prefix("./").unwrap_or(dir)),
    }
}

fn dirname(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    match t.rfind('/') {
        Some(0) => "/",
        Some(i) => &t[..i],
        None => ".",
    }
}

fn basename(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    t.rsplit('/').next().unwrap_or(t)
}

fn is_dir_entry(entry: &std::fs::DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if t.is_dir() => true,
        Ok(t) if t.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()),
        _ => false,
    }
}

/// The entries of the directory `prefix` names whose names start with its last part
/// (ignoring case), directories first, then by name — pi's `getFileSuggestions`.
pub(super) fn directory_suggestions(
    prefix: &str,
    base: &Path,
    home: Option<&Path>,
) -> Vec<SelectItem> {
    let p = parse_prefix(prefix);
    let raw = p.raw;
    let expanded = if raw.starts_with('~') {
        expand_home(raw, home)
    } else {
        raw.to_owned()
    };
    let absolute = raw.starts_with('~') || expanded.starts_with('/');
    let root = matches!(raw, "" | "./" | "../" | "~" | "~/" | "/");
    let (search_dir, search_prefix) = if root || raw.ends_with('/') {
        (expanded.clone(), String::new())
    } else {
        (
            dirname(&expanded).to_owned(),
            basename(&expanded).to_owned(),
        )
    };
    let dir = if absolute {
        PathBuf::from(&search_dir)
    } else {
        base.join(&search_dir)
    };
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let needle = search_prefix.to_lowercase();
    let mut out: Vec<(bool, SelectItem)> = Vec::new();
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.to_lowercase().starts_with(&needle) {
            continue;
        }
        let is_dir = is_dir_entry(&entry);
        let relative = if raw.ends_with('/') {
            format!("{raw}{name}")
        } else if raw.contains('/') {
            if let Some(rest) = raw.strip_prefix("~/") {
                format!("~/{}", join_display(dirname(rest), &name))
            } else if raw.starts_with('/') {
                match dirname(raw) {
                    "/" => format!("/{name}"),
                    d => format!("{d}/{name}"),
                }
            } else {
                let joined = join_display(dirname(raw), &name);
                if raw.starts_with("./") && !joined.starts_with("./") {
                    format!("./{joined}")
                } else {
                    joined
                }
            }
        } else if raw.starts_with('~') {
            format!("~/{name}")
        } else {
            name.clone()
        };
        let path = if is_dir {
            format!("{relative}/")
        } else {
            relative
        };
        let label = if is_dir { format!("{name}/") } else { name };
        out.push((
            is_dir,
            SelectItem::new(completion_value(&path, p.at, p.quoted)).with_label(label),
        ));
    }
    out.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| compare_names(&a.1.label, &b.1.label))
    });
    out.into_iter().map(|(_, item)| item).collect()
}

/// Names in a locale-like order: case-insensitive first, then as written.
fn compare_names(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// One walked entry: its path relative to the walk's root, `/`-separated, and the
/// lower-case forms the ranking compares (made once per walk, not per keystroke).
#[derive(Clone, Debug)]
struct Entry {
    path: String,
    lower_path: String,
    lower_name: String,
    is_dir: bool,
}

/// Recent walks, by root.
#[derive(Default)]
pub(super) struct FileIndex {
    walks: HashMap<PathBuf, (Instant, Vec<Entry>)>,
}

impl FileIndex {
    fn entries(&mut self, root: &Path) -> &[Entry] {
        let now = Instant::now();
        let fresh = self
            .walks
            .get(root)
            .is_some_and(|(at, _)| now.duration_since(*at) < INDEX_TTL);
        if !fresh {
            // One cached walk per root at a time: stale roots are dropped, not accumulated.
            self.walks
                .retain(|_, (at, _)| now.duration_since(*at) < INDEX_TTL);
            self.walks.insert(root.to_path_buf(), (now, walk(root)));
        }
        self.walks.get(root).map_or(&[], |(_, e)| e.as_slice())
    }

    /// pi's `getFuzzyFileSuggestions` for the text after `@`: files and directories whose
    /// name (or, for a query with `/`, path) contains the query, ranked by pi's
    /// `scoreEntry` (exact name, name prefix, name substring, path substring; directories
    /// first among equals), then shallower, shorter, by name; the first 20.
    pub(super) fn fuzzy(
        &mut self,
        query: &str,
        quoted: bool,
        base: &Path,
        home: Option<&Path>,
    ) -> Vec<SelectItem> {
        let (root, query, display_base) = scoped(query, base, home)
            .unwrap_or_else(|| (base.to_path_buf(), query.to_owned(), String::new()));
        let q = query.to_lowercase();
        let mut scored: Vec<(u32, &Entry)> = self
            .entries(&root)
            .iter()
            .filter_map(|e| {
                let score = if q.is_empty() { 1 } else { score_entry(e, &q) };
                (score > 0).then_some((score, e))
            })
            .collect();
        scored.sort_by(|(sa, a), (sb, b)| {
            sb.cmp(sa)
                .then_with(|| depth(&a.path).cmp(&depth(&b.path)))
                .then_with(|| a.path.len().cmp(&b.path.len()))
                .then_with(|| compare_names(&a.path, &b.path))
        });
        scored
            .into_iter()
            .take(FUZZY_RESULTS)
            .map(|(_, e)| {
                let shown = format!("{display_base}{}", e.path);
                let name = basename(&e.path);
                let (value, label) = if e.is_dir {
                    (format!("{shown}/"), format!("{name}/"))
                } else {
                    (shown.clone(), name.to_owned())
                };
                SelectItem::new(completion_value(&value, true, quoted))
                    .with_label(label)
                    .with_description(shown)
            })
            .collect()
    }
}

fn depth(path: &str) -> usize {
    path.split('/').filter(|s| !s.is_empty()).count()
}

/// pi's `scoreEntry`: 100 exact name, 80 name prefix, 50 name substring, 30 path substring,
/// +10 for a directory that matched; 0 when nothing matched. `query` is lower-case.
fn score_entry(e: &Entry, query: &str) -> u32 {
    let name = e.lower_name.as_str();
    let score = if name == query {
        100
    } else if name.starts_with(query) {
        80
    } else if name.contains(query) {
        50
    } else if e.lower_path.contains(query) {
        30
    } else {
        0
    };
    if e.is_dir && score > 0 {
        score + 10
    } else {
        score
    }
}

/// A query with a `/` whose directory part exists searches inside that directory (pi's
/// `resolveScopedFuzzyQuery`): the walk's root, the rest of the query, and the typed
/// directory to put back in front of each result.
fn scoped(query: &str, base: &Path, home: Option<&Path>) -> Option<(PathBuf, String, String)> {
    let slash = query.rfind('/')?;
    let (display_base, rest) = (&query[..=slash], &query[slash + 1..]);
    let dir = if display_base.starts_with("~/") {
        PathBuf::from(expand_home(display_base, home))
    } else if display_base.starts_with('/') {
        PathBuf::from(display_base)
    } else {
        base.join(display_base)
    };
    dir.is_dir()
        .then(|| (dir, rest.to_owned(), display_base.to_owned()))
}

/// Files and directories under `root`, hidden ones included, `.gitignore` (and `.ignore`)
/// honoured, `.git` left out, symlinks followed — what pi asks `fd` for — up to
/// [`INDEX_CAP`] entries.
fn walk(root: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .follow_links(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = rel.to_string_lossy().replace('\\', "/");
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let lower_path = path.to_lowercase();
        let lower_name = basename(&lower_path).to_owned();
        out.push(Entry {
            path,
            lower_path,
            lower_name,
            is_dir,
        });
        if out.len() >= INDEX_CAP {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src/modes")).unwrap();
        std::fs::create_dir_all(p.join("target/debug")).unwrap();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(p.join("src/main.rs"), "").unwrap();
        std::fs::write(p.join("src/modes/main_mode.rs"), "").unwrap();
        std::fs::write(p.join("target/debug/main.rs"), "").unwrap();
        std::fs::write(p.join("README.md"), "").unwrap();
        std::fs::write(p.join("my notes.txt"), "").unwrap();
        std::fs::write(p.join(".git/config"), "").unwrap();
        d
    }

    fn values(items: &[SelectItem]) -> Vec<&str> {
        items.iter().map(|i| i.value.as_str()).collect()
    }

    #[test]
    fn fuzzy_ranks_names_and_skips_ignored_and_git() {
        let d = tree();
        let mut index = FileIndex::default();
        let items = index.fuzzy("main", false, d.path(), None);
        // Exact-name beats prefix; the ignored target/ and .git never appear.
        assert_eq!(values(&items), ["@src/main.rs", "@src/modes/main_mode.rs"]);
        assert_eq!(items[0].label, "main.rs");
        assert_eq!(items[0].description.as_deref(), Some("src/main.rs"));
        let all = index.fuzzy("", false, d.path(), None);
        assert!(
            values(&all)
                .iter()
                .all(|v| !v.contains(".git/") && !v.contains("target"))
        );
        // Shallow first: the top-level entries lead.
        assert!(values(&all)[..3].contains(&"@src/"));
    }

    #[test]
    fn fuzzy_scoped_to_a_directory_and_quoted_when_spaced() {
        let d = tree();
        let mut index = FileIndex::default();
        let items = index.fuzzy("src/mo", false, d.path(), None);
        assert_eq!(values(&items)[0], "@src/modes/");
        let spaced = index.fuzzy("notes", false, d.path(), None);
        assert_eq!(values(&spaced), ["@\"my notes.txt\""]);
    }

    #[test]
    fn directory_listing_as_pi_builds_it() {
        let d = tree();
        let items = directory_suggestions("src/", d.path(), None);
        assert_eq!(values(&items), ["src/modes/", "src/main.rs"]);
        let items = directory_suggestions("./R", d.path(), None);
        assert_eq!(values(&items), ["./README.md"]);
        let items = directory_suggestions("@src/ma", d.path(), None);
        assert_eq!(values(&items), ["@src/main.rs"]);
        let home = d.path().join("src");
        let items = directory_suggestions("~/mo", d.path(), Some(&home));
        assert_eq!(values(&items), ["~/modes/"]);
        assert!(directory_suggestions("nowhere/x", d.path(), None).is_empty());
    }
}
