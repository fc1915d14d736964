//! The conformance normalizer (rules 1–11 of `conformance/README.md`) checked against the
//! goldens themselves: a raw run of the TypeScript pi 0.85.0 per scenario (`raw.json`, the
//! unnormalized source of the goldens) must normalize to exactly `expected/`.

use crate::support;

use serde_json::{Value, json};
use support::conformance::normalize::{
    Normalizer, find_pkg_dir, mask_prose, normalize_request, scrub_live,
};
use support::conformance::run::{match_route, models_json, parse_qs};
use support::conformance::{diff, normalize, read_expected, read_raw, scenario_names};

#[test]
fn all_fifteen_scenarios_are_vendored_with_goldens() {
    let names = scenario_names();
    assert_eq!(names.len(), 15, "{names:?}");
    for name in &names {
        let expected = read_expected(name);
        let have: Vec<&str> = expected.iter().map(|(a, _)| *a).collect();
        for a in ["exit_code", "stderr.txt", "requests.jsonl", "files.json"] {
            assert!(have.contains(&a), "{name} lacks {a}");
        }
    }
}

#[test]
fn reference_runs_normalize_to_the_goldens() {
    let mut failures = String::new();
    for name in scenario_names() {
        let got = normalize(&read_raw(&name));
        let d = diff::diff_artifacts(&read_expected(&name), &got, "expected", "normalized");
        if !d.is_empty() {
            failures.push_str(&format!("FAIL {name}\n{d}"));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn a_changed_run_gives_a_readable_per_record_diff() {
    let mut raw = read_raw("tool_read");
    raw.stdout = raw
        .stdout
        .replacen("\"toolName\":\"read\"", "\"toolName\":\"reed\"", 1);
    raw.exit_code = "1".into();
    let d = diff::diff_artifacts(
        &read_expected("tool_read"),
        &normalize(&raw),
        "expected",
        "actual",
    );
    assert!(
        d.contains("--- expected/exit_code\n+++ actual/exit_code\n"),
        "{d}"
    );
    assert!(d.contains("-0\n+1\n"), "{d}");
    assert!(
        d.contains("--- expected/stdout.jsonl\n+++ actual/stdout.jsonl\n"),
        "{d}"
    );
    // The hunk names the record of its first change; records are pretty-printed.
    assert!(d.contains("@@ -89,9 +89,9 @@  #9 message_update\n"), "{d}");
    assert!(
        d.contains("-    \"toolName\": \"read\",\n+    \"toolName\": \"reed\",\n"),
        "{d}"
    );
}

#[test]
fn rule_2_to_5_paths_port_uuids_times() {
    let n = Normalizer::new("/tmp/R", 4242, Some("/pkg/pi"));
    assert_eq!(
        n.text("/tmp/R/work/a /tmp/R/agent /tmp/R/home /tmp/R/sessions /tmp/R/tmp /tmp/R/x /pkg/pi/README.md 127.0.0.1:4242"),
        "<CWD>/a <AGENT_DIR> <HOME> <SESSION_DIR> <TMPDIR> <ROOT>/x <PI_PACKAGE_DIR>/README.md 127.0.0.1:<PORT>"
    );
    assert_eq!(
        n.text("019a0b1c-2d3e-7f40-8a5b-6c7d8e9f0a1b_2026-01-02T03-04-05-678Z.jsonl at 2026-01-02T03:04:05.678Z"),
        "<UUID>_<ISO_TIME>.jsonl at <ISO_TIME>"
    );
}

#[test]
fn rule_6_7_timestamps_and_entry_ids() {
    let mut n = Normalizer::new("/r", 1, None);
    let v = n.value(
        &json!({"id": "a1b2c3d4", "parentId": null, "timestamp": 17, "x": {"timestamp": 1.5, "leafId": "a1b2c3d4",
                "fromId": "ffffffff", "targetId": "not-hex!", "other": "a1b2c3d4"}, "t": {"timestamp": "2026-01-01T00:00:00Z"}}),
        None,
    );
    assert_eq!(
        v,
        json!({"id": "<ID1>", "parentId": null, "timestamp": "<TIMESTAMP_MS>", "x": {"timestamp": "<TIMESTAMP_MS>",
               "leafId": "<ID1>", "fromId": "<ID2>", "targetId": "not-hex!", "other": "a1b2c3d4"},
               "t": {"timestamp": "<ISO_TIME>"}})
    );
    n.reset_entry_ids();
    assert_eq!(
        n.value(&json!({"id": "ffffffff"}), None),
        json!({"id": "<ID1>"})
    );
}

#[test]
fn rule_8_google_call_ids() {
    let n = Normalizer::new("/r", 1, None);
    assert_eq!(
        n.text("edit_1764460000123_0 and read_1764460000999_12"),
        "edit_<NOW>_0 and read_<NOW>_12"
    );
    assert_eq!(n.text("x_2764460000123_0"), "x_2764460000123_0");
}

#[test]
fn rule_9_live_snapshots() {
    let mut start = json!({"type": "message_start", "message": {"role": "assistant", "content": [1], "usage": {},
        "stopReason": "pending", "responseId": "r", "errorMessage": "e", "model": "m"}});
    scrub_live(&mut start);
    assert_eq!(
        start,
        json!({"type": "message_start", "message": {"role": "assistant", "content": "<LIVE>", "usage": "<LIVE>",
               "stopReason": "<LIVE>", "model": "m"}})
    );
    let mut user = json!({"type": "message_start", "message": {"role": "user", "content": "hi"}});
    scrub_live(&mut user);
    assert_eq!(user["message"]["content"], "hi");
    let mut update =
        json!({"type": "message_update", "usage": {"input": 1}, "assistantMessageEvent": {}});
    scrub_live(&mut update);
    assert_eq!(update["usage"], "<LIVE>");
    let mut end =
        json!({"type": "message_end", "message": {"role": "assistant", "usage": {"input": 1}}});
    scrub_live(&mut end);
    assert_eq!(end["message"]["usage"]["input"], 1);
}

#[test]
fn rule_10_headers_and_rule_11_prose() {
    let mut n = Normalizer::new("/r", 1, None);
    let r = json!({"seq": 0, "method": "POST", "path": "/v1/chat/completions", "query": {}, "route": "openai-completions",
        "headers": {"x-stainless-os": "Linux", "user-agent": "pi (linux 6.1.0; x64) x (y)", "content-type": "application/json"},
        "body": {"messages": [{"role": "developer", "content": "sys"}, {"role": "system"}, {"role": "user", "content": "hi"}],
                 "tools": [{"function": {"description": "d", "parameters": {"properties": {"p": {"description": "pd", "type": "string"}}}}}]}});
    assert_eq!(
        normalize_request(&r, &mut n),
        json!({"seq": 0, "method": "POST", "path": "/v1/chat/completions", "query": {}, "route": "openai-completions",
               "headers": {"content-type": "application/json", "user-agent": "pi (<PLATFORM>) x (<PLATFORM>)"},
               "body": {"messages": [{"role": "developer", "content": "<SYSTEM_PROMPT>"}, {"role": "system", "content": "<SYSTEM_PROMPT>"},
                                     {"role": "user", "content": "hi"}],
                        "tools": [{"function": {"description": "<DESCRIPTION>", "parameters": {"properties": {"p": {"description": "<DESCRIPTION>", "type": "string"}}}}}]}})
    );
    let summary = mask_prose(
        &json!({"system": [1], "instructions": "i", "systemInstruction": {},
        "messages": [{"content": [{"type": "text", "text": "<conversation>x</conversation>\n\nDo it."}]}], "other": "a</conversation>b"}),
    );
    assert_eq!(
        summary,
        json!({"system": "<SYSTEM_PROMPT>", "instructions": "<SYSTEM_PROMPT>", "systemInstruction": "<SYSTEM_PROMPT>",
               "messages": [{"content": [{"type": "text", "text": "<conversation>x</conversation><SUMMARY_INSTRUCTIONS>"}]}],
               "other": "a</conversation><SUMMARY_INSTRUCTIONS>"})
    );
    assert_eq!(mask_prose(&json!("plain")), json!("plain"));
}

#[test]
fn rule_3_package_dir_from_the_system_prompt() {
    let requests = vec![
        json!({"body": {"system": [{"text": "Docs:\n- Main documentation: /opt/pi pkg/README.md\n- x"}]}}),
        json!({"body": {"system": "Main documentation: /opt/pi/README.md\n"}}),
    ];
    assert_eq!(find_pkg_dir(&requests).as_deref(), Some("/opt/pi"));
    assert_eq!(find_pkg_dir(&[]), None);
}

#[test]
fn request_log_records_like_the_python_server() {
    assert_eq!(
        match_route("/v1/messages"),
        (Some("anthropic-messages"), None)
    );
    assert_eq!(
        match_route("/v1/chat/completions"),
        (Some("openai-completions"), None)
    );
    assert_eq!(
        match_route("/v1/responses"),
        (Some("openai-responses"), None)
    );
    assert_eq!(
        match_route("/v1beta/models/replay-model:streamGenerateContent"),
        (
            Some("google-generative-ai"),
            Some("replay-model".to_owned())
        )
    );
    assert_eq!(match_route("/v1/models"), (None, None));
    assert_eq!(
        parse_qs("beta=true&alt=sse&x=&y&a=1&a=%2F+b"),
        json!({"beta": ["true"], "alt": ["sse"], "a": ["1", "/ b"]})
    );
    let m: Value = models_json("http://127.0.0.1:9");
    assert_eq!(
        m["providers"]["replay-google"]["baseUrl"],
        "http://127.0.0.1:9/v1beta"
    );
    assert_eq!(
        m["providers"]["replay-openai"]["models"][1]["reasoning"],
        true
    );
}
