//! The conformance scenarios of the Google wire API (vendored goldens of the TS pi 0.85.0).
//!
//! One test only: synthesized tool-call ids carry a process-wide counter, and the golden
//! `tool_edit` message expects the first id of the process (`edit_<NOW>_1`).

use crate::anthropic_google_support;

use anthropic_google_support::{
    CHUNKINGS, Chunking, check_conformance_messages, check_conformance_requests,
    conformance::golden_messages, conformance_message,
};
use pi_ai::providers::GoogleGenerativeAi;

#[test]
fn google_scenarios_match_the_goldens() {
    // First replay of the process: the synthesized id must be `edit_<NOW>_1` exactly.
    let first = conformance_message(&GoogleGenerativeAi, "tool_edit", 0, Chunking::Whole);
    let golden = &golden_messages("tool_edit")[1];
    assert_eq!(golden["role"], "assistant");
    assert_eq!(&first, golden);
    assert_eq!(first["content"][1]["id"], "edit_<NOW>_1");

    // Later replays count on: compare the rest with the counter part as replayed.
    for chunking in CHUNKINGS {
        let mut got = conformance_message(&GoogleGenerativeAi, "tool_edit", 0, chunking);
        let id = got["content"][1]["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("edit_<NOW>_"), "{id}");
        got["content"][1]["id"] = golden["content"][1]["id"].clone();
        assert_eq!(&got, golden, "tool_edit in {chunking:?}");
    }
    let answer = conformance_message(&GoogleGenerativeAi, "tool_edit", 1, Chunking::Bytes(7));
    assert_eq!(answer, golden_messages("tool_edit")[3]);

    check_conformance_messages(&GoogleGenerativeAi, "text_google");
    check_conformance_requests(&GoogleGenerativeAi, "text_google");
    check_conformance_requests(&GoogleGenerativeAi, "tool_edit");
}
