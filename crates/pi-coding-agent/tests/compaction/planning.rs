//! The reference's offline compaction tests (pi-mono `packages/coding-agent/test/`:
//! `compaction.test.ts`, `compaction-serialization.test.ts`,
//! `compaction-summary-reasoning.test.ts`, `agent-session-auto-compaction-queue.test.ts`),
//! ported behaviour by behaviour onto pi-rs's API with the 0.85 deltas. The large
//! session fixture is replaced by a generated session of the same shape (hundreds of
//! entries, tool round trips), so no one's real transcript is vendored.

use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxModelDefinition, FauxOptions, FauxProvider, FauxStep,
    faux_assistant_message, faux_text,
};
use pi_ai::{
    AssistantContent, AssistantMessage, Message, ModelThinkingLevel, StopReason, ThinkingLevel,
    ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
use pi_coding_agent::compaction::prepare::find_cut_point;
use pi_coding_agent::compaction::serialize::serialize_conversation;
use pi_coding_agent::compaction::tokens::context_tokens;
use pi_coding_agent::compaction::{
    CompactionSettings, Summarizer, SummaryRetry, estimate_context_tokens, prepare_compaction,
    should_compact,
};
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::hooks::{CheckPhase, Compactor};
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use pi_coding_agent::storage::{EntryKind, SessionEntry, SessionStore, build_session_context};
use serde_json::json;
use session_support::*;
use tokio_util::sync::CancellationToken;

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage {
        input: input as f64,
        output: output as f64,
        cache_read: cache_read as f64,
        cache_write: cache_write as f64,
        total_tokens: (input + output + cache_read + cache_write) as f64,
        ..Default::default()
    }
}

fn user(t: &str) -> AgentMessage {
    AgentMessage::from(Message::User(UserMessage::text(t)))
}

fn assistant_with(t: &str, u: Usage) -> AssistantMessage {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "claude-sonnet-4-5");
    a.content.push(AssistantContent::text(t));
    a.usage = u;
    a.stop_reason = StopReason::Stop;
    a
}

fn assistant(t: &str, u: Usage) -> AgentMessage {
    AgentMessage::from(Message::Assistant(assistant_with(t, u)))
}

fn message(m: AgentMessage) -> EntryKind {
    EntryKind::Message { message: m }
}

fn compaction(summary: &str, first_kept: &str) -> EntryKind {
    EntryKind::Compaction {
        summary: summary.into(),
        first_kept_entry_id: first_kept.into(),
        tokens_before: 10000,
        details: None,
        usage: None,
        from_hook: None,
    }
}

/// Appends `kinds` to a fresh in-memory store; returns it and the new ids.
fn store_with(kinds: Vec<EntryKind>) -> (SessionStore, Vec<String>) {
    let mut s = SessionStore::in_memory("/w");
    let ids = kinds.into_iter().map(|k| s.append(k).unwrap()).collect();
    (s, ids)
}

fn entries(s: &SessionStore) -> Vec<Arc<SessionEntry>> {
    s.entries().unwrap()
}

fn role_at(branch: &[Arc<SessionEntry>], i: usize) -> String {
    branch[i].message().map(|m| m.role().to_owned()).unwrap()
}

// ----- compaction.test.ts: token calculation -------------------------------------------

#[test]
fn context_tokens_from_usage() {
    assert_eq!(context_tokens(&usage(1000, 500, 200, 100)), 1800);
    assert_eq!(context_tokens(&usage(0, 0, 0, 0)), 0);
    // totalTokens 0 falls back to the components.
    let mut u = usage(1000, 500, 200, 100);
    u.total_tokens = 0.0;
    assert_eq!(context_tokens(&u), 1800);
}

#[test]
fn the_last_usage_skips_aborted_assistants() {
    // getLastAssistantUsage: the newest usable assistant anchors the estimate.
    let msgs = vec![
        user("Hello"),
        assistant("Hi", usage(100, 50, 0, 0)),
        user("How are you?"),
        assistant("Good", usage(200, 100, 0, 0)),
    ];
    let e = estimate_context_tokens(&msgs);
    assert_eq!(e.last_usage_index, Some(3));
    assert_eq!(e.tokens, 300);

    let mut aborted = assistant_with("Aborted", usage(300, 150, 0, 0));
    aborted.stop_reason = StopReason::Aborted;
    let msgs = vec![
        user("Hello"),
        assistant("Hi", usage(100, 50, 0, 0)),
        user("How are you?"),
        AgentMessage::from(aborted),
    ];
    let e = estimate_context_tokens(&msgs);
    assert_eq!(e.last_usage_index, Some(1));
    // 150 from usage, then "How are you?" (12 chars → 3) and "Aborted" (7 chars → 2).
    assert_eq!(e.tokens, 150 + 3 + 2);

    let e = estimate_context_tokens(&[user("Hello")]);
    assert_eq!(e.last_usage_index, None);
    assert_eq!(e.tokens, 2);
}

#[test]
fn should_compact_over_the_threshold_only_when_enabled() {
    let on = CompactionSettings {
        enabled: true,
        reserve_tokens: 10000,
        keep_recent_tokens: 20000,
    };
    assert!(should_compact(95000, 100000, &on));
    assert!(!should_compact(89000, 100000, &on));
    let off = CompactionSettings {
        enabled: false,
        ..on
    };
    assert!(!should_compact(95000, 100000, &off));
}

// ----- compaction.test.ts: findCutPoint ------------------------------------------------

#[test]
fn the_cut_lands_on_a_user_or_assistant_message() {
    let mut kinds = Vec::new();
    for i in 0..10u64 {
        kinds.push(message(user(&format!("User {i}"))));
        kinds.push(message(assistant(
            &format!("Assistant {i}"),
            usage(0, 100, (i + 1) * 1000, 0),
        )));
    }
    let (s, _) = store_with(kinds);
    let branch = entries(&s);
    let (cut, _) = find_cut_point(&branch, 0, branch.len(), 2500);
    assert!(["user", "assistant"].contains(&role_at(&branch, cut).as_str()));
    // Estimates are characters / 4 (about 2–3 tokens per entry): 2500 keeps everything.
    assert_eq!(cut, 0);
    // A budget of 5 tokens keeps the last two entries ("User 9" 2 + "Assistant 9" 3).
    let (cut, split) = find_cut_point(&branch, 0, branch.len(), 5);
    assert_eq!((cut, split), (18, None));
}

#[test]
fn without_a_valid_cut_point_the_cut_is_the_start() {
    let (s, _) = store_with(vec![message(assistant("a", usage(100, 50, 0, 0)))]);
    let branch = entries(&s);
    assert_eq!(find_cut_point(&branch, 0, branch.len(), 1000).0, 0);
}

#[test]
fn everything_is_kept_when_it_fits_the_budget() {
    let (s, _) = store_with(vec![
        message(user("1")),
        message(assistant("a", usage(0, 50, 500, 0))),
        message(user("2")),
        message(assistant("b", usage(0, 50, 1000, 0))),
    ]);
    let branch = entries(&s);
    assert_eq!(find_cut_point(&branch, 0, branch.len(), 50000), (0, None));
}

#[test]
fn a_cut_at_an_assistant_splits_its_turn() {
    let (s, _) = store_with(vec![
        message(user("Turn 1")),
        message(assistant("A1", usage(0, 100, 1000, 0))),
        message(user("Turn 2")),
        message(assistant("A2-1", usage(0, 100, 5000, 0))),
        message(assistant("A2-2", usage(0, 100, 8000, 0))),
        message(assistant("A2-3", usage(0, 100, 10000, 0))),
    ]);
    let branch = entries(&s);
    // One token is reached by the newest assistant: the cut is there, inside Turn 2.
    let (cut, turn_start) = find_cut_point(&branch, 0, branch.len(), 1);
    assert_eq!(role_at(&branch, cut), "assistant");
    assert_eq!((cut, turn_start), (5, Some(2)));
}

// ----- compaction.test.ts: buildSessionContext -----------------------------------------

fn context_roles_and_first_summary(s: &SessionStore) -> (usize, Option<String>) {
    let ctx = build_session_context(s).unwrap();
    let summary = match ctx.messages.first() {
        Some(AgentMessage::Custom(m)) if m["role"] == "compactionSummary" => {
            m["summary"].as_str().map(str::to_owned)
        }
        _ => None,
    };
    (ctx.messages.len(), summary)
}

#[test]
fn the_context_without_compaction_has_every_message() {
    let (s, _) = store_with(vec![
        message(user("1")),
        message(assistant("a", usage(100, 50, 0, 0))),
        message(user("2")),
        message(assistant("b", usage(100, 50, 0, 0))),
    ]);
    let ctx = build_session_context(&s).unwrap();
    assert_eq!(ctx.messages.len(), 4);
    assert_eq!(ctx.thinking_level, "off");
    assert_eq!(
        ctx.model,
        Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
    );
}

#[test]
fn one_compaction_replaces_what_precedes_the_kept_entry() {
    let mut s = SessionStore::in_memory("/w");
    s.append(message(user("1"))).unwrap();
    s.append(message(assistant("a", usage(100, 50, 0, 0))))
        .unwrap();
    let u2 = s.append(message(user("2"))).unwrap();
    s.append(message(assistant("b", usage(100, 50, 0, 0))))
        .unwrap();
    s.append(compaction("Summary of 1,a,2,b", &u2)).unwrap();
    s.append(message(user("3"))).unwrap();
    s.append(message(assistant("c", usage(100, 50, 0, 0))))
        .unwrap();
    let (len, summary) = context_roles_and_first_summary(&s);
    assert_eq!(len, 5, "summary + u2, a2 + u3, a3");
    assert!(summary.unwrap().contains("Summary of 1,a,2,b"));
}

#[test]
fn only_the_latest_of_several_compactions_matters() {
    let mut s = SessionStore::in_memory("/w");
    let u1 = s.append(message(user("1"))).unwrap();
    s.append(message(assistant("a", usage(100, 50, 0, 0))))
        .unwrap();
    s.append(compaction("First summary", &u1)).unwrap();
    s.append(message(user("2"))).unwrap();
    s.append(message(assistant("b", usage(100, 50, 0, 0))))
        .unwrap();
    let u3 = s.append(message(user("3"))).unwrap();
    s.append(message(assistant("c", usage(100, 50, 0, 0))))
        .unwrap();
    s.append(compaction("Second summary", &u3)).unwrap();
    s.append(message(user("4"))).unwrap();
    s.append(message(assistant("d", usage(100, 50, 0, 0))))
        .unwrap();
    let (len, summary) = context_roles_and_first_summary(&s);
    assert_eq!(len, 5, "summary + u3, c + u4, d");
    assert!(summary.unwrap().contains("Second summary"));
}

#[test]
fn a_compaction_keeping_the_first_entry_keeps_everything() {
    let mut s = SessionStore::in_memory("/w");
    let u1 = s.append(message(user("1"))).unwrap();
    s.append(message(assistant("a", usage(100, 50, 0, 0))))
        .unwrap();
    s.append(compaction("First summary", &u1)).unwrap();
    s.append(message(user("2"))).unwrap();
    s.append(message(assistant("b", usage(100, 50, 0, 0))))
        .unwrap();
    assert_eq!(context_roles_and_first_summary(&s).0, 5);
}

#[test]
fn model_and_thinking_level_changes_are_tracked() {
    let (s, _) = store_with(vec![
        message(user("1")),
        EntryKind::ModelChange {
            provider: "openai".into(),
            model_id: "gpt-4".into(),
        },
        message(assistant("a", usage(100, 50, 0, 0))),
        EntryKind::ThinkingLevelChange {
            thinking_level: "high".into(),
        },
    ]);
    let ctx = build_session_context(&s).unwrap();
    // The assistant's model overrides the earlier model change.
    assert_eq!(
        ctx.model,
        Some(("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()))
    );
    assert_eq!(ctx.thinking_level, "high");
}

// ----- compaction.test.ts: the large session ------------------------------------------

/// 60 turns of user → assistant tool call → tool result → assistant answer, with a model
/// change and a thinking level change along the way: 242 entries, about 60 000 tokens.
fn large_session() -> SessionStore {
    let mut s = SessionStore::in_memory("/w");
    s.append(EntryKind::ModelChange {
        provider: "anthropic".into(),
        model_id: "claude-sonnet-4-5".into(),
    })
    .unwrap();
    s.append(EntryKind::ThinkingLevelChange {
        thinking_level: "medium".into(),
    })
    .unwrap();
    for i in 0..60 {
        s.append(message(user(&format!("Task {i}: ").repeat(40))))
            .unwrap();
        let mut call = assistant_with("Reading.", usage(1000 * i, 50, 0, 0));
        let mut args = serde_json::Map::new();
        args.insert("path".into(), format!("src/file{i}.rs").into());
        call.content.push(AssistantContent::ToolCall(ToolCall {
            id: format!("t{i}"),
            name: "read".into(),
            arguments: args,
            ..Default::default()
        }));
        call.stop_reason = StopReason::ToolUse;
        s.append(message(AgentMessage::from(call))).unwrap();
        s.append(message(AgentMessage::from(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: format!("t{i}"),
                tool_name: "read".into(),
                content: vec![UserContent::text(format!("line {i}\n").repeat(120))],
                ..Default::default()
            },
        ))))
        .unwrap();
        s.append(message(assistant(
            &format!("Done with task {i}."),
            usage(1000 * i + 900, 20, 0, 0),
        )))
        .unwrap();
    }
    s
}

#[test]
fn the_large_session_loads_and_its_cut_is_a_message() {
    let s = large_session();
    let branch = entries(&s);
    assert!(branch.len() > 100);
    assert!(branch.iter().filter(|e| e.message().is_some()).count() > 100);
    let (cut, _) = find_cut_point(
        &branch,
        0,
        branch.len(),
        CompactionSettings::default().keep_recent_tokens,
    );
    assert!(["user", "assistant"].contains(&role_at(&branch, cut).as_str()));
    let ctx = build_session_context(&s).unwrap();
    assert!(ctx.messages.len() > 100);
    assert!(ctx.model.is_some());
}

#[tokio::test]
async fn the_large_session_after_compaction_starts_with_the_summary() {
    let mut s = large_session();
    let before = build_session_context(&s).unwrap().messages.len();
    let prep = prepare_compaction(&entries(&s), CompactionSettings::default()).unwrap();
    assert!(prep.tokens_before > 0);
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![text("## Goal\nFinish the tasks."), text("PREFIX")]);
    let result = summarizer(&faux, ModelThinkingLevel::Off)
        .compact(&prep, None)
        .await
        .unwrap();
    assert!(!result.first_kept_entry_id.is_empty());
    s.append(EntryKind::Compaction {
        summary: result.summary.clone(),
        first_kept_entry_id: result.first_kept_entry_id.clone(),
        tokens_before: result.tokens_before,
        details: Some(result.details.clone()),
        usage: None,
        from_hook: Some(false),
    })
    .unwrap();
    let (after, summary) = context_roles_and_first_summary(&s);
    assert!(after < before, "{after} < {before}");
    assert!(summary.unwrap().contains(&result.summary));
    // Every read file of the summarized part is listed.
    assert!(result.summary.contains("<read-files>\nsrc/file0.rs\n"));
}

// ----- compaction-serialization.test.ts ------------------------------------------------

fn tool_result(text: String) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: "tc1".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(text)],
        ..Default::default()
    })
}

#[test]
fn long_tool_results_are_truncated_at_2000_characters() {
    let s = serialize_conversation(&[tool_result("x".repeat(5000))]);
    assert!(s.contains("[Tool result]:"));
    assert!(s.contains("[... 3000 more characters truncated]"));
    assert!(!s.contains(&"x".repeat(3000)));
    assert!(s.contains(&"x".repeat(2000)));
}

#[test]
fn short_tool_results_are_kept_whole() {
    let short = "x".repeat(1500);
    let s = serialize_conversation(&[tool_result(short.clone())]);
    assert_eq!(s, format!("[Tool result]: {short}"));
}

#[test]
fn user_and_assistant_texts_are_never_truncated() {
    let long = "y".repeat(5000);
    let mut a = AssistantMessage::empty("anthropic", "anthropic", "test");
    a.content.push(AssistantContent::text(long.clone()));
    let s = serialize_conversation(&[
        Message::User(UserMessage::text(long.clone())),
        Message::Assistant(a),
    ]);
    assert!(!s.contains("truncated"));
    assert_eq!(s, format!("[User]: {long}\n\n[Assistant]: {long}"));
}

// ----- compaction-summary-reasoning.test.ts (Δ 0.85: the session's level) -------------

fn summarizer(faux: &FauxProvider, level: ModelThinkingLevel) -> Summarizer {
    let f = faux.clone();
    Summarizer {
        model: faux.model(),
        stream: Arc::new(move |m, c, o| f.stream(&m, &c, o)),
        api_key: Some("test-key".into()),
        headers: Vec::new(),
        thinking_level: level,
        session_id: None,
        signal: CancellationToken::new(),
        retry: SummaryRetry::default(),
        on_retry: None,
    }
}

/// The options of the one summary request `generate_summary` sends.
async fn summary_options(reasoning: bool, level: ModelThinkingLevel) -> pi_ai::StreamOptions {
    let faux = FauxProvider::new(FauxOptions {
        models: vec![FauxModelDefinition {
            id: "m".into(),
            reasoning,
            context_window: Some(200_000),
            max_tokens: Some(8192),
            ..Default::default()
        }],
        ..Default::default()
    });
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    faux.set_responses(vec![FauxStep::factory(move |_, options, _, _| {
        *sink.lock().unwrap() = Some(options.clone());
        Ok(faux_assistant_message(
            vec![faux_text("## Goal\nTest summary")],
            FauxMessageOptions::default(),
        ))
    })]);
    let out = summarizer(&faux, level)
        .generate_summary(&[user("Summarize this.")], 2000, None, None)
        .await
        .unwrap();
    assert_eq!(out.text, "## Goal\nTest summary");
    seen.lock().unwrap().clone().unwrap()
}

#[tokio::test]
async fn reasoning_models_get_the_session_thinking_level() {
    let o = summary_options(true, ModelThinkingLevel::High).await;
    assert_eq!(o.reasoning, Some(ThinkingLevel::High));
    assert_eq!(o.api_key.as_deref(), Some("test-key"));
    assert_eq!(o.max_tokens, Some(1600), "floor(0.8 × 2000)");
    assert_eq!(o.cache_retention, Some(pi_ai::CacheRetention::None));
    assert!(o.session_id.is_some());
}

#[tokio::test]
async fn non_reasoning_models_and_level_off_get_no_reasoning() {
    let o = summary_options(false, ModelThinkingLevel::High).await;
    assert_eq!(o.reasoning, None);
    assert_eq!(o.api_key.as_deref(), Some("test-key"));
    assert_eq!(
        summary_options(true, ModelThinkingLevel::Off)
            .await
            .reasoning,
        None
    );
}

// ----- agent-session-auto-compaction-queue.test.ts --------------------------------------

fn compaction_starts(h: &Harness) -> Vec<String> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            AgentSessionEvent::CompactionStart { reason } => Some(format!("{reason:?}")),
            _ => None,
        })
        .collect()
}

fn session_settings(
    v: serde_json::Value,
) -> Arc<Mutex<pi_coding_agent::config::settings::SettingsManager>> {
    let serde_json::Value::Object(m) = v else {
        unreachable!()
    };
    Arc::new(Mutex::new(
        pi_coding_agent::config::settings::SettingsManager::in_memory(m),
    ))
}

#[tokio::test]
async fn a_threshold_compaction_resumes_when_only_agent_level_messages_are_queued() {
    // A 10-token threshold (window 128 000 − reserve 127 990): the first answer crosses it.
    // A custom message queued on the agent by an `agent_end` listener (not a session queue
    // entry) makes the session continue after the compaction.
    let h = harness(
        vec![
            text("one"),
            text("PREFIX"),
            text("after the queued message"),
        ],
        |b| {
            b.settings(session_settings(json!({
                "retry": {"enabled": false},
                "compaction": {"keepRecentTokens": 1, "reserveTokens": 127_990}
            })))
            .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    // One compaction is the point; the continued run's answer must not start another.
    let session = h.session.clone();
    h.session.subscribe(move |e| {
        if matches!(e, AgentSessionEvent::CompactionEnd { .. }) {
            session.set_auto_compaction_enabled(false);
        }
        Ok(())
    });
    let agent = h.session.agent().clone();
    let queued = Arc::new(Mutex::new(false));
    h.session.subscribe(move |e| {
        if matches!(e, AgentSessionEvent::AgentEnd { .. }) && !*queued.lock().unwrap() {
            *queued.lock().unwrap() = true;
            agent.follow_up(pi_coding_agent::messages::custom_message(
                "test",
                json!([{"type": "text", "text": "Queued custom"}]),
                false,
                None,
                pi_ai::now_ms(),
            ));
        }
        Ok(())
    });
    h.session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.session.pending_message_count(), 0);
    assert_eq!(compaction_starts(&h), ["Threshold"]);
    assert_eq!(h.faux.call_count(), 3, "answer, summary, continued run");
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("after the queued message")
    );
}

#[tokio::test]
async fn stale_pre_compaction_usage_is_ignored_before_a_prompt() {
    let h = harness(vec![], |b| {
        b.settings(session_settings(
            json!({"compaction": {"keepRecentTokens": 1}}),
        ))
        .compactor(Arc::new(AutoCompactor::new()))
    });
    let model = h.session.model().unwrap();
    let now = pi_ai::now_ms();
    let mut stale = assistant_with(
        "large response before compaction",
        usage(600_000, 10_000, 0, 0),
    );
    stale.provider = model.provider.clone();
    stale.model = model.id.clone();
    stale.timestamp = now - 10_000;
    {
        let mut s = h.store.lock().unwrap();
        let first = s.append(message(user("before compaction"))).unwrap();
        s.append(message(AgentMessage::from(Message::Assistant(
            stale.clone(),
        ))))
        .unwrap();
        s.append(compaction("summary", &first)).unwrap();
        s.append(message(user("session recovery payload"))).unwrap();
    }
    let compactor = AutoCompactor::new();
    let continued = compactor
        .check(h.session.clone(), Arc::new(stale), CheckPhase::BeforePrompt)
        .await;
    assert!(!continued);
    assert!(compaction_starts(&h).is_empty());
    assert_eq!(h.faux.call_count(), 0);
}

#[tokio::test]
async fn an_error_message_is_measured_by_the_last_successful_usage() {
    let h = harness(vec![text("SUMMARY"), text("PREFIX")], |b| {
        b.settings(session_settings(
            json!({"compaction": {"keepRecentTokens": 1}}),
        ))
        .compactor(Arc::new(AutoCompactor::new()))
    });
    let model = h.session.model().unwrap();
    let now = pi_ai::now_ms();
    let stamp = |mut a: AssistantMessage, t: i64| {
        a.provider = model.provider.clone();
        a.model = model.id.clone();
        a.timestamp = t;
        a
    };
    let ok = stamp(
        assistant_with("large successful response", usage(180_000, 10_000, 0, 0)),
        now,
    );
    let mut failed = stamp(assistant_with("", usage(0, 0, 0, 0)), now + 1000);
    failed.stop_reason = StopReason::Error;
    failed.error_message = Some("529 overloaded".into());
    let messages = vec![
        user("hello"),
        AgentMessage::from(ok),
        user("another prompt"),
        AgentMessage::from(Message::Assistant(failed.clone())),
    ];
    {
        let mut s = h.store.lock().unwrap();
        for m in &messages {
            s.append(message(m.clone())).unwrap();
        }
    }
    h.session.agent().set_messages(messages);
    let compactor = AutoCompactor::new();
    compactor
        .check(h.session.clone(), Arc::new(failed), CheckPhase::AfterRun)
        .await;
    assert_eq!(compaction_starts(&h), ["Threshold"]);
}

// ----- agent-session-compaction.test.ts (network there; the faux provider here) ---------

#[tokio::test]
async fn a_manual_compaction_persists_and_the_session_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Mutex::new(
        SessionStore::create(dir.path(), "/w", None).unwrap(),
    ));
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        text("4"),
        text("6"),
        text("SUMMARY"),
        text("PREFIX"),
        text("Rome"),
    ]);
    let f = faux.clone();
    let session = pi_coding_agent::session::AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .system_prompt("base prompt")
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .settings(session_settings(json!({
            "retry": {"enabled": false}, "compaction": {"keepRecentTokens": 1}
        })))
        .compactor(Arc::new(AutoCompactor::new()))
        .build()
        .unwrap();
    for p in ["What is 2+2?", "What is 3+3?"] {
        session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    let result = session.compact(None).await.unwrap();
    assert!(result.tokens_before > 0);
    assert_eq!(session.messages()[0].role(), "compactionSummary");
    // Still usable.
    session
        .prompt("What is the capital of Italy?", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(session.last_assistant_text().as_deref(), Some("Rome"));
    // One compaction entry on disk, with a summary, a kept entry and the tokens before.
    let path = store.lock().unwrap().path().unwrap().to_owned();
    let reopened = SessionStore::open(&path, "/w").unwrap();
    let compactions: Vec<_> = entries(&reopened)
        .into_iter()
        .filter(|e| e.kind.type_name() == "compaction")
        .collect();
    assert_eq!(compactions.len(), 1);
    let EntryKind::Compaction {
        summary,
        first_kept_entry_id,
        tokens_before,
        ..
    } = &compactions[0].kind
    else {
        unreachable!()
    };
    assert_eq!(summary, &result.summary);
    assert!(reopened.contains(first_kept_entry_id));
    assert_eq!(*tokens_before, result.tokens_before);
    let (_, first_summary) = context_roles_and_first_summary(&reopened);
    assert_eq!(first_summary.as_deref(), Some(result.summary.as_str()));
}
