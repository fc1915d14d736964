//! The layering rule inside each library crate: its top-level modules form layers, so no
//! group of them imports each other in a cycle.
//!
//! The test walks each crate's module tree from `lib.rs` along its `mod` declarations
//! (skipping those under `#[cfg(test)]`), reads the code of every file — comments, doc links,
//! string literals and `#[cfg(test)]` items left out — and records every `crate::<module>`
//! (and `super::` reaching the crate root) that names another top-level module. A strongly
//! connected group of two or more modules fails the test, naming one import per edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library crates whose modules must form layers. pi-ai is not listed yet: its `auth`
/// and `providers` modules import each other (the OAuth HTTP client and the Codex provider).
const CRATES: [&str; 3] = ["pi-agent-core", "pi-tui", "pi-coding-agent"];

/// `from → to → the first file seen importing it`.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The code of a Rust file with comments, string and char literals replaced by spaces (line
/// structure kept; lifetimes stay).
fn strip_comments_and_literals(src: &str) -> Vec<u8> {
    let s = src.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }));
    };
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if let Some(len) = raw_string_len(s, i) {
            blank(&mut out, &s[i..i + len]);
            i += len;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', a multi-byte char) or a lifetime.
            let len = char_literal_len(rest);
            match len {
                Some(len) => {
                    blank(&mut out, &rest[..len]);
                    i += len;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    out
}

/// The length of a raw (byte) string literal starting at `i`.
fn raw_string_len(s: &[u8], i: usize) -> Option<usize> {
    if i > 0 && is_ident(s[i - 1]) {
        return None;
    }
    let mut j = i;
    if s.get(j) == Some(&b'b') {
        j += 1;
    }
    if s.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|&&b| b == b'#').count();
    j += hashes;
    if s.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let end = s[j..]
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(j + end + close.len() - i)
}

fn char_literal_len(rest: &[u8]) -> Option<usize> {
    if rest.get(1) == Some(&b'\\') {
        let close = rest[2..].iter().position(|&b| b == b'\'')?;
        return Some(close + 3);
    }
    // One (possibly multi-byte) character, then the closing quote.
    let text = std::str::from_utf8(&rest[1..rest.len().min(6)])
        .unwrap_or_else(|e| std::str::from_utf8(&rest[1..1 + e.valid_up_to()]).unwrap_or_default());
    let c = text.chars().next()?;
    let after = 1 + c.len_utf8();
    (rest.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// `code` with the items under `#[cfg(test)]` (a `mod`, `fn`, `impl`, `use`, …) blanked,
/// from the attribute to the item's closing brace or semicolon (byte positions kept).
fn drop_test_items(code: &[u8]) -> Vec<u8> {
    const ATTR: &[u8] = b"#[cfg(test)]";
    let mut out = code.to_vec();
    let mut i = 0;
    while let Some(at) = out[i..].windows(ATTR.len()).position(|w| w == ATTR) {
        let start = i + at;
        let mut j = start + ATTR.len();
        let (mut depth, mut brackets) = (0usize, 0usize);
        while j < out.len() {
            match out[j] {
                b'[' => brackets += 1,
                b']' => brackets = brackets.saturating_sub(1),
                b'{' if brackets == 0 => depth += 1,
                b'}' if brackets == 0 => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                b';' if depth == 0 && brackets == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = j.min(out.len());
        for b in &mut out[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        i = end;
    }
    out
}

/// The `mod name;` declarations of `code` (test items already blanked), with the
/// `#[path = "…"]` attribute read from `original` (literals are blanked in `code`).
fn declared_modules(code: &[u8], original: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].windows(4).position(|w| w == b"mod ") {
        let pos = i + at;
        i = pos + 4;
        if pos > 0 && is_ident(code[pos - 1]) {
            continue;
        }
        let mut j = i;
        while j < code.len() && code[j] == b' ' {
            j += 1;
        }
        let name_start = j;
        while j < code.len() && is_ident(code[j]) {
            j += 1;
        }
        let name = String::from_utf8_lossy(&code[name_start..j]).into_owned();
        while j < code.len() && code[j].is_ascii_whitespace() {
            j += 1;
        }
        if name.is_empty() || code.get(j) != Some(&b';') {
            continue;
        }
        // The attributes on the lines above the declaration and before it on its line.
        let line_start = original[..pos].rfind('\n').map_or(0, |n| n + 1);
        let mut attrs: Vec<&str> = vec![&original[line_start..pos]];
        attrs.extend(
            original[..line_start]
                .lines()
                .rev()
                .take_while(|l| l.trim_start().starts_with("#[")),
        );
        let path = attrs.iter().find_map(|l| {
            let (_, after) = l.split_once("#[path = \"")?;
            after.split_once("\"]").map(|(p, _)| p.to_owned())
        });
        found.push((name, path));
    }
    found
}

/// Every file of the crate's module tree, with its module path (`["cli", "args"]`).
fn module_files(src: &Path) -> Vec<(Vec<String>, PathBuf)> {
    let mut files = Vec::new();
    let mut stack = vec![(Vec::new(), src.join("lib.rs"))];
    while let Some((path, file)) = stack.pop() {
        let original =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = drop_test_items(&strip_comments_and_literals(&original));
        let dir = file.parent().expect("a source file has a directory");
        let is_root = path.is_empty()
            || file.file_name().is_some_and(|n| n == "mod.rs")
            || file.file_name().is_some_and(|n| n == "lib.rs");
        let child_dir = if is_root {
            dir.to_path_buf()
        } else {
            dir.join(file.file_stem().expect("a source file has a name"))
        };
        for (name, explicit) in declared_modules(&code, &original) {
            let child = match explicit {
                Some(p) => dir.join(p),
                None => {
                    let flat = child_dir.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        child_dir.join(&name).join("mod.rs")
                    }
                }
            };
            assert!(
                child.exists(),
                "module {name} of {} not found at {}",
                file.display(),
                child.display()
            );
            let mut child_path = path.clone();
            child_path.push(name);
            stack.push((child_path, child));
        }
        files.push((path, file));
    }
    files
}

/// The top-level modules `code` names through `crate::…` or a `super::` chain reaching the
/// crate root, from a file at module path `path`.
fn imported_top_modules(code: &[u8], path: &[String]) -> BTreeSet<String> {
    let text = String::from_utf8_lossy(code);
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let start = i;
        let mut rest = &text[start..];
        let at_root = if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
            true
        } else {
            let mut ups = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                ups += 1;
            }
            ups > 0 && ups >= path.len()
        };
        if at_root {
            collect_first_segments(rest, &mut found);
        }
        i = start + 1;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
    }
    found
}

/// `name…` → `name`; `{a, b::c, d::{…}}` → `a`, `b`, `d`.
fn collect_first_segments(rest: &str, found: &mut BTreeSet<String>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut item_start = true;
        let mut word = String::new();
        for c in group.chars() {
            let ident = c.is_ascii_alphanumeric() || c == '_';
            if depth == 0 && item_start && ident {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                found.insert(std::mem::take(&mut word));
                item_start = false;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ => {}
            }
        }
        if !word.is_empty() {
            found.insert(word);
        }
    } else {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
}

/// The import graph between the top-level modules of the crate in `src`.
fn module_graph(src: &Path) -> Graph {
    let files = module_files(src);
    let top_level: BTreeSet<String> = files
        .iter()
        .filter(|(p, _)| p.len() == 1)
        .map(|(p, _)| p[0].clone())
        .collect();
    let mut graph = Graph::new();
    for module in &top_level {
        graph.entry(module.clone()).or_default();
    }
    for (path, file) in &files {
        let Some(from) = path.first() else { continue };
        let original = std::fs::read_to_string(file).expect("read above");
        let code = drop_test_items(&strip_comments_and_literals(&original));
        for to in imported_top_modules(&code, path) {
            if &to != from && top_level.contains(&to) {
                let rel = file.strip_prefix(src).unwrap_or(file).display().to_string();
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(rel);
            }
        }
    }
    graph
}

/// The strongly connected groups of two or more modules (Tarjan).
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        groups: Vec<Vec<String>>,
    }
    fn visit<'g>(st: &mut State<'g>, v: &'g str) {
        let n = st.index.len();
        st.index.insert(v, n);
        st.low.insert(v, n);
        st.stack.push(v);
        st.on_stack.insert(v);
        let graph = st.graph;
        for w in graph.get(v).into_iter().flat_map(|m| m.keys()) {
            let w = w.as_str();
            if !st.index.contains_key(w) {
                visit(st, w);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if st.on_stack.contains(w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut group = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on_stack.remove(w);
                group.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                st.groups.push(group);
            }
        }
    }
    let mut st = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in graph.keys() {
        if !st.index.contains_key(v.as_str()) {
            visit(&mut st, v);
        }
    }
    st.groups
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates")
        .join(name)
        .join("src")
}

#[test]
fn the_top_level_modules_of_each_library_crate_form_layers() {
    let mut failures = Vec::new();
    for name in CRATES {
        let graph = module_graph(&crate_src(name));
        for group in cycles(&graph) {
            let edges: Vec<String> = group
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| group.contains(to))
                        .map(move |(to, file)| format!("  {from} → {to} ({file})"))
                })
                .collect();
            failures.push(format!(
                "{name}: the modules {group:?} import each other:\n{}",
                edges.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_import_reader_sees_code_only() {
    let src = r##"
//! [`crate::doc_link`] in a doc comment
use crate::{alpha, beta::{x, y}, gamma::z as w};
use crate::delta::Thing;
/* crate::in_block /* nested crate::deeper */ */
fn f() -> &'static str { let _c = '"'; "crate::in_string" }
fn g() { r#"crate::in_raw"#; super::epsilon::call(); }
#[cfg(test)]
mod tests { use crate::only_in_tests; }
#[cfg(test)]
use crate::test_import;
"##;
    let code = drop_test_items(&strip_comments_and_literals(src));
    let at_root = imported_top_modules(&code, &["here".to_owned()]);
    let want: BTreeSet<String> = ["alpha", "beta", "gamma", "delta", "epsilon"]
        .map(String::from)
        .into();
    assert_eq!(at_root, want);
    // Two levels down, `super::` stays inside the top-level module.
    let nested = imported_top_modules(&code, &["here".to_owned(), "deeper".to_owned()]);
    assert!(!nested.contains("epsilon"), "{nested:?}");
}

#[test]
fn a_cycle_is_found_and_a_layering_is_not() {
    let edge = |g: &mut Graph, a: &str, b: &str| {
        g.entry(a.into())
            .or_default()
            .insert(b.into(), format!("{a}.rs"));
        g.entry(b.into()).or_default();
    };
    let mut layered = Graph::new();
    edge(&mut layered, "app", "session");
    edge(&mut layered, "modes", "app");
    edge(&mut layered, "modes", "session");
    assert!(cycles(&layered).is_empty());
    let mut tangled = layered.clone();
    edge(&mut tangled, "session", "modes");
    edge(&mut tangled, "cli", "cli2");
    assert_eq!(
        cycles(&tangled),
        vec![vec![
            "app".to_owned(),
            "modes".to_owned(),
            "session".to_owned()
        ]]
    );
}
