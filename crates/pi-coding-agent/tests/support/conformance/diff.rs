//! Readable differences between artifact sets (`compare.py`'s `diff_artifacts`): `.jsonl`
//! artifacts are expanded record by record, each pretty-printed with sorted keys under a
//! `#<n> <type>` header, and each hunk header names the record of its first change.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::normalize::ARTIFACTS;
use super::pyjson::Dumps;

/// An artifact rendered as lines for diffing.
pub(crate) fn expand(name: &str, text: &str) -> Vec<String> {
    if !name.ends_with(".jsonl") {
        return text.split_inclusive('\n').map(str::to_owned).collect();
    }
    let pretty = Dumps {
        sort_keys: true,
        indent: Some(2),
        ..Dumps::default()
    };
    let mut lines = Vec::new();
    for (i, record) in super::pyjson::splitlines(text).into_iter().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(record) else {
            lines.push(format!("#{i} <invalid json> {record}\n"));
            continue;
        };
        let kind = v
            .get("type")
            .or_else(|| v.get("route"))
            .and_then(Value::as_str)
            .unwrap_or("");
        lines.push(format!("#{i} {kind}\n"));
        lines.extend(pretty.to_string(&v).split('\n').map(|l| format!("{l}\n")));
    }
    lines
}

/// A unified diff of two artifact sets (`""` when they are equal). `a`/`b` map artifact
/// names to texts; a missing artifact is reported and diffed as empty.
pub(crate) fn diff_artifacts(
    a: &[(&str, String)],
    b: &[(&str, String)],
    label_a: &str,
    label_b: &str,
) -> String {
    let get = |set: &[(&str, String)], name: &str| {
        set.iter().find(|(n, _)| *n == name).map(|(_, t)| t.clone())
    };
    let mut out = String::new();
    for name in ARTIFACTS {
        let (x, y) = (get(a, name), get(b, name));
        if x == y {
            continue;
        }
        if x.is_none() || y.is_none() {
            let missing = if x.is_none() { label_a } else { label_b };
            out.push_str(&format!("--- {name}: artifact missing in {missing}\n"));
        }
        let a_lines = expand(name, x.as_deref().unwrap_or(""));
        let b_lines = expand(name, y.as_deref().unwrap_or(""));
        out.push_str(&unified(
            &a_lines,
            &b_lines,
            &format!("{label_a}/{name}"),
            &format!("{label_b}/{name}"),
        ));
    }
    out
}

fn unified(a: &[String], b: &[String], label_a: &str, label_b: &str) -> String {
    let a_refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let b_refs: Vec<&str> = b.iter().map(String::as_str).collect();
    let diff = TextDiff::from_slices(&a_refs, &b_refs);
    // The record header in effect at each line of `a`.
    let mut header = Vec::with_capacity(a.len());
    let mut current = "";
    for line in a {
        if line.starts_with('#') {
            current = line.trim();
        }
        header.push(current);
    }
    let mut out = format!("--- {label_a}\n+++ {label_b}\n");
    let mut udiff = diff.unified_diff();
    udiff.context_radius(4);
    for hunk in udiff.iter_hunks() {
        let first_change = hunk
            .iter_changes()
            .find(|c| c.tag() != ChangeTag::Equal)
            .map(|c| {
                c.old_index().unwrap_or_else(|| {
                    // An insertion: the old line it precedes.
                    hunk.iter_changes()
                        .take_while(|x| x.tag() == ChangeTag::Equal)
                        .last()
                        .and_then(|x| x.old_index())
                        .map_or(0, |i| i + 1)
                })
            });
        let record = first_change
            .and_then(|i| header.get(i.min(header.len().saturating_sub(1))).copied())
            .unwrap_or("");
        let mut hunk_header = hunk.header().to_string();
        if !record.is_empty() {
            hunk_header.push_str("  ");
            hunk_header.push_str(record);
        }
        out.push_str(&hunk_header);
        out.push('\n');
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            out.push(sign);
            out.push_str(change.value());
            if !change.value().ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}
