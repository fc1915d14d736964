//! read and ls against pi 0.85.0's own results.
//!
//! `tests/data/tools/read_ls_cases.json` was produced by running pi's `createReadTool` and
//! `createLsTool` on the files built by [`fixture`] (offsets, limits, empty files, CRLF,
//! invalid UTF-8, line/byte/first-line truncation, fractional and zero limits, errors). Texts
//! longer than 1000 characters are stored as `{chars, head, tail}`; `<DIR>` stands for the
//! temp dir.

use std::path::Path;

use pi_agent_core::{AgentTool, AgentToolResult};
use pi_coding_agent::tools::{LsTool, ReadTool, ReadToolOptions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn numbered(n: usize, f: impl Fn(usize) -> String) -> String {
    (1..=n).map(f).collect::<Vec<_>>().join("\n")
}

/// The files pi read (same generators as the recording script).
fn fixture(dir: &Path) {
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("small.txt", b"a\nb\nc\n".to_vec()),
        (
            "lines.txt",
            numbered(2100, |i| format!("row {i}")).into_bytes(),
        ),
        (
            "bytes.txt",
            numbered(300, |i| format!("{i}:{}", "\u{e9}".repeat(150))).into_bytes(),
        ),
        (
            "wide.txt",
            format!("{}\nshort\n", "x".repeat(60_000)).into_bytes(),
        ),
        ("empty.txt", Vec::new()),
        ("crlf.txt", b"a\r\nb\r\n".to_vec()),
        ("bad.txt", vec![0x61, 0xff, 0xfe, 0x0a, 0x62]),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let ls_dir = dir.join("lsdir");
    std::fs::create_dir(&ls_dir).unwrap();
    for i in 0..300 {
        std::fs::write(ls_dir.join(format!("f{i:03}{}", "z".repeat(200))), "").unwrap();
    }
    std::fs::create_dir(ls_dir.join("Sub")).unwrap();
}

/// Whether `actual` is the text `expected` describes (verbatim, or `{chars, head, tail}`).
fn text_matches(actual: &str, expected: &Value) -> bool {
    match expected {
        Value::String(s) => actual == s,
        Value::Object(o) => {
            let chars = actual.chars().count() as u64;
            let head: String = actual.chars().take(300).collect();
            let tail: String = {
                let v: Vec<char> = actual.chars().collect();
                v[v.len().saturating_sub(300)..].iter().collect()
            };
            Some(chars) == o["chars"].as_u64()
                && Some(head.as_str()) == o["head"].as_str()
                && Some(tail.as_str()) == o["tail"].as_str()
        }
        _ => false,
    }
}

fn check(case: &Value, outcome: Result<AgentToolResult, pi_agent_core::ToolError>, dir: &str) {
    match outcome {
        Err(e) => {
            let expected = case["error"]
                .as_str()
                .expect("pi succeeded")
                .replace("<DIR>", dir);
            assert_eq!(e.0, expected, "{}", case["args"]);
        }
        Ok(r) => {
            assert!(case["error"].is_null(), "pi failed: {}", case["error"]);
            let expected_blocks = case["content"].as_array().unwrap();
            assert_eq!(r.content.len(), expected_blocks.len());
            let text = r.content[0].as_text().unwrap();
            assert!(
                text_matches(text, &expected_blocks[0]["text"]),
                "{}: {text:?}",
                case["args"]
            );
            let mut details = r.details.clone().unwrap_or(Value::Null);
            let mut expected = case["details"].clone();
            if let Some(t) = details.get_mut("truncation") {
                let content = t["content"].take();
                let expected_content = expected["truncation"]["content"].take();
                assert!(text_matches(content.as_str().unwrap(), &expected_content));
            }
            assert_eq!(details, expected, "{}", case["args"]);
        }
    }
}

#[tokio::test]
async fn read_and_ls_match_pi() {
    let cases: Value =
        serde_json::from_str(include_str!("../data/tools/read_ls_cases.json")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    fixture(tmp.path());
    let dir = tmp.path().to_string_lossy().into_owned();
    let read = ReadTool::new(tmp.path().to_path_buf(), ReadToolOptions::default());
    let ls = LsTool::new(tmp.path().to_path_buf());

    let reads = cases["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 23);
    for case in reads {
        let outcome = read
            .execute("id", case["args"].clone(), CancellationToken::new(), None)
            .await;
        check(case, outcome, &dir);
    }
    let listings = cases["ls"].as_array().unwrap();
    assert_eq!(listings.len(), 8);
    for case in listings {
        let outcome = ls
            .execute("id", case["args"].clone(), CancellationToken::new(), None)
            .await;
        check(case, outcome, &dir);
    }
}
