//! Compaction policy and summary calls, checked against the TS pi's `compaction_auto` run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pi_agent_core::agent_loop::StreamFn;
use pi_ai::testkit::{ReplayServer, Reply};
use pi_ai::{Model, ModelCost, ModelThinkingLevel};
use pi_coding_agent::compaction::branch::{
    collect_entries_for_branch_summary, prepare_branch_entries,
};
use pi_coding_agent::compaction::{
    CompactionSettings, NothingToCompact, SummarizationRetryEvent, Summarizer, SummaryRetry,
    prepare_compaction,
};
use pi_coding_agent::storage::{EntryKind, SessionEntry, SessionStore};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(p)
}

/// The TS session of `compaction_auto`, up to (excluding) its compaction entry, and that entry.
fn golden_branch() -> (Vec<Arc<SessionEntry>>, Arc<SessionEntry>) {
    let store =
        SessionStore::open(&data("sessions/ts-pi-0.85.0-compaction_auto.jsonl"), "/w").unwrap();
    let mut entries = store.entries().unwrap();
    let compaction = entries.pop().unwrap();
    assert_eq!(compaction.kind.type_name(), "compaction");
    (entries, compaction)
}

fn replay_model(base_url: String) -> Model {
    Model {
        id: "replay-model".into(),
        name: "replay-model".into(),
        api: "anthropic-messages".into(),
        provider: "replay-anthropic".into(),
        base_url,
        reasoning: false,
        input: vec![pi_ai::InputKind::Text],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        context_window: 128000,
        max_tokens: 16384,
        ..Default::default()
    }
}

fn registry_stream() -> StreamFn {
    Arc::new(|m, c, o| pi_ai::providers::registry::stream(&m, &c, o))
}

#[test]
fn prepares_the_split_turn_the_reference_prepared() {
    let (branch, golden) = golden_branch();
    let settings = CompactionSettings {
        keep_recent_tokens: 10,
        ..Default::default()
    };
    let prep = prepare_compaction(&branch, settings).unwrap();
    let EntryKind::Compaction {
        first_kept_entry_id,
        tokens_before,
        ..
    } = &golden.kind
    else {
        unreachable!()
    };
    assert_eq!(&prep.first_kept_entry_id, first_kept_entry_id);
    assert_eq!(prep.tokens_before, *tokens_before);
    assert!(prep.is_split_turn);
    assert!(prep.messages_to_summarize.is_empty());
    let roles: Vec<&str> = prep.turn_prefix_messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
    assert_eq!(
        prep.file_ops.file_lists(),
        (vec!["hello.txt".to_owned()], vec![])
    );
}

#[test]
fn nothing_to_compact_texts() {
    let (mut branch, golden) = golden_branch();
    branch.push(golden);
    assert_eq!(
        prepare_compaction(&branch, CompactionSettings::default())
            .unwrap_err()
            .to_string(),
        "Already compacted"
    );
    let only_meta: Vec<_> = branch[..2].to_vec();
    assert_eq!(
        prepare_compaction(&only_meta, CompactionSettings::default()).unwrap_err(),
        NothingToCompact::TooSmall
    );
    assert_eq!(
        NothingToCompact::TooSmall.to_string(),
        "Nothing to compact (session too small)"
    );
}

#[test]
fn keeps_everything_recent_when_the_budget_is_large() {
    let (branch, _) = golden_branch();
    // 20000 tokens keep the whole (tiny) session: the cut is the first message, nothing to do.
    assert_eq!(
        prepare_compaction(&branch, CompactionSettings::default()).unwrap_err(),
        NothingToCompact::TooSmall
    );
}

#[tokio::test]
async fn summarizes_like_the_reference_and_sends_its_request() {
    let (branch, golden) = golden_branch();
    let prep = prepare_compaction(
        &branch,
        CompactionSettings {
            keep_recent_tokens: 10,
            ..Default::default()
        },
    )
    .unwrap();
    let sse = std::fs::read(data("compaction/03-summary.sse")).unwrap();
    let (_addr, server) = ReplayServer::start(vec![Reply::sse(sse)]).await.unwrap();
    let summarizer = Summarizer {
        model: replay_model(server.base_url()),
        stream: registry_stream(),
        api_key: Some("replay-test-key".into()),
        headers: Vec::new(),
        thinking_level: ModelThinkingLevel::Off,
        session_id: None,
        signal: CancellationToken::new(),
        retry: SummaryRetry::default(),
        on_retry: None,
    };
    let result = summarizer.compact(&prep, None).await.unwrap();
    let EntryKind::Compaction {
        summary,
        details,
        usage,
        ..
    } = &golden.kind
    else {
        unreachable!()
    };
    assert_eq!(&result.summary, summary);
    assert_eq!(Some(&result.details), details.as_ref());
    // Same numbers, same key order, same JavaScript spelling as the TS pi wrote.
    assert_eq!(
        pi_ai::json::to_string(&result.usage.unwrap()).unwrap(),
        pi_ai::json::to_string(usage.as_ref().unwrap()).unwrap()
    );
    // The request body equals the golden's after masking the instructions.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let golden_req: Value = serde_json::from_str(
        std::fs::read_to_string(data("compaction/compaction_auto.requests.jsonl"))
            .unwrap()
            .lines()
            .nth(2)
            .unwrap(),
    )
    .unwrap();
    let golden_body = &golden_req["body"];
    assert_eq!(body["max_tokens"], golden_body["max_tokens"]);
    assert_eq!(body["model"], golden_body["model"]);
    assert_eq!(body["stream"], golden_body["stream"]);
    assert!(body.get("tools").is_none() && golden_body.get("tools").is_none());
    assert!(body["system"].is_array() || body["system"].is_string());
    let text = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    let golden_text = golden_body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    let (conversation, _) = golden_text.split_once("<SUMMARY_INSTRUCTIONS>").unwrap();
    assert!(text.starts_with(conversation), "{text}");
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    // No cache markers for a one-off summary (cacheRetention none).
    assert!(!String::from_utf8_lossy(&reqs[0].body).contains("cache_control"));
}

#[tokio::test]
async fn transient_failures_are_retried_with_events() {
    let (branch, _) = golden_branch();
    let prep = prepare_compaction(
        &branch,
        CompactionSettings {
            keep_recent_tokens: 10,
            ..Default::default()
        },
    )
    .unwrap();
    let sse = std::fs::read(data("compaction/03-summary.sse")).unwrap();
    let overloaded = serde_json::json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}});
    let (_addr, server) = ReplayServer::start(vec![Reply::json(529, &overloaded), Reply::sse(sse)])
        .await
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let summarizer = Summarizer {
        model: replay_model(server.base_url()),
        stream: registry_stream(),
        api_key: Some("k".into()),
        headers: Vec::new(),
        thinking_level: ModelThinkingLevel::Off,
        session_id: None,
        signal: CancellationToken::new(),
        retry: SummaryRetry {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 10,
        },
        on_retry: Some(Arc::new(move |e| sink.lock().unwrap().push(e))),
    };
    let result = summarizer.compact(&prep, None).await.unwrap();
    assert!(result.summary.contains("## Goal"));
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(matches!(
        events[0],
        SummarizationRetryEvent::Scheduled {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 10,
            ..
        }
    ));
    assert_eq!(
        events[1],
        SummarizationRetryEvent::AttemptStart { attempt: 1 }
    );
    assert_eq!(
        events[2],
        SummarizationRetryEvent::Finished {
            success: true,
            attempts: 1
        }
    );
}

#[tokio::test]
async fn failures_carry_the_reference_texts() {
    let (branch, _) = golden_branch();
    let prep = prepare_compaction(
        &branch,
        CompactionSettings {
            keep_recent_tokens: 10,
            ..Default::default()
        },
    )
    .unwrap();
    let bad = serde_json::json!({"type":"error","error":{"type":"invalid_request_error","message":"bad request"}});
    let (_addr, server) = ReplayServer::start(vec![Reply::json(400, &bad)])
        .await
        .unwrap();
    let summarizer = Summarizer {
        model: replay_model(server.base_url()),
        stream: registry_stream(),
        api_key: Some("k".into()),
        headers: Vec::new(),
        thinking_level: ModelThinkingLevel::Off,
        session_id: None,
        signal: CancellationToken::new(),
        retry: SummaryRetry::default(),
        on_retry: None,
    };
    let err = summarizer
        .compact(&prep, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("Turn prefix summarization failed: "),
        "{err}"
    );
    assert!(err.contains("bad request"), "{err}");
}

#[test]
fn branch_summary_entries_stop_at_the_common_ancestor() {
    let mut s = SessionStore::in_memory("/w");
    let user = |t: &str| EntryKind::Message {
        message: pi_agent_core::AgentMessage::from(pi_ai::Message::User(pi_ai::UserMessage::text(
            t,
        ))),
    };
    let root = s.append(user("root")).unwrap();
    let a1 = s.append(user("a1")).unwrap();
    let a2 = s.append(user("a2")).unwrap();
    s.branch(&root).unwrap();
    let b1 = s.append(user("b1")).unwrap();
    let (entries, common) = collect_entries_for_branch_summary(&s, Some(&a2), &b1).unwrap();
    assert_eq!(common.as_deref(), Some(root.as_str()));
    let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, [a1.as_str(), a2.as_str()]);
    let (msgs, _, tokens) = prepare_branch_entries(&entries, 0);
    assert_eq!(msgs.len(), 2);
    assert_eq!(tokens, 2);
    // A budget of 1 token keeps only the newest message.
    let (msgs, _, _) = prepare_branch_entries(&entries, 1);
    assert_eq!(msgs.len(), 1);
    assert_eq!(
        collect_entries_for_branch_summary(&s, None, &b1)
            .unwrap()
            .0
            .len(),
        0
    );
}
