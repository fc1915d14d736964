//! The edit tool's display diff and unified patch against pi 0.85.0's own output.
//!
//! `tests/data/tools/edit_diff_cases.json` holds 60 generated line edits (insertions, deletions,
//! changes, with and without final newlines) and what pi's `generateDiffString` and
//! `generateUnifiedPatch` (jsdiff 8) return for them; `edit_cases.json` whole edit-tool runs.

use pi_coding_agent::tools::edit::diff::{display_diff, unified_patch};
use serde_json::Value;

#[test]
fn display_diff_and_patch_match_pi_on_generated_edits() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../data/tools/edit_diff_cases.json")).unwrap();
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

/// `tests/data/tools/edit_cases.json`: the edit tool of pi 0.85.0 run on 15 files (CRLF, BOM,
/// fuzzy matches, several edits, errors): result text or error, details, and the file after.
#[tokio::test]
async fn edit_tool_matches_pi_end_to_end() {
    use pi_agent_core::AgentTool;
    use pi_coding_agent::tools::EditTool;
    use tokio_util::sync::CancellationToken;

    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../data/tools/edit_cases.json")).unwrap();
    assert_eq!(cases.len(), 15);
    let dir = tempfile::tempdir().unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let file = dir.path().join("f.txt");
    for case in &cases {
        std::fs::write(&file, case["content"].as_str().unwrap()).unwrap();
        let args = serde_json::json!({"path": "f.txt", "edits": case["edits"]});
        let outcome = tool
            .execute("id", args, CancellationToken::new(), None)
            .await;
        match outcome {
            Ok(result) => {
                assert_eq!(result.content[0].as_text(), case["text"].as_str(), "{case}");
                assert_eq!(result.details.as_ref(), Some(&case["details"]), "{case}");
            }
            Err(err) => assert_eq!(Some(err.0.as_str()), case["error"].as_str(), "{case}"),
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            case["after"].as_str().unwrap(),
            "{case}"
        );
    }
}
