//! The edit tool's display diff and unified patch against pi 0.85.0's own output.
//!
//! `tests/data/tools/edit_diff_cases.json` holds 60 generated line edits (insertions, deletions,
//! changes, with and without final newlines) and what pi's `generateDiffString` and
//! `generateUnifiedPatch` (jsdiff 8) return for them.

use pi_coding_agent::tools::edit::diff::{display_diff, unified_patch};
use serde_json::Value;

#[test]
fn display_diff_and_patch_match_pi_on_generated_edits() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("data/tools/edit_diff_cases.json")).unwrap();
    assert_eq!(cases.len(), 60);
    let mut mismatches = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let old = case["old"].as_str().unwrap();
        let new = case["new"].as_str().unwrap();
        let d = display_diff(old, new, 4);
        let first = case["firstChangedLine"].as_u64().map(|n| n as usize);
        if d.diff != case["diff"].as_str().unwrap() || d.first_changed_line != first {
            mismatches.push(format!(
                "case {i} diff:\n{}\n--- expected:\n{}",
                d.diff, case["diff"]
            ));
        }
        let patch = unified_patch("f.txt", old, new, 4);
        if patch != case["patch"].as_str().unwrap() {
            mismatches.push(format!(
                "case {i} patch:\n{patch}\n--- expected:\n{}",
                case["patch"]
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
