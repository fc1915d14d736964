//! Tree navigation with branch summaries (`AgentSession::navigate_tree`),
//! offline on the faux provider.
//!
//! Ports the behaviours of pi's `agent-session-tree-navigation.test.ts` (there: live model
//! calls; here: scripted answers whose requests are recorded) and the `branchWithSummary` part
//! of `session-manager/tree-traversal.test.ts`, plus the `session_before_tree` /
//! `session_tree` hooks through a registered extension.

use crate::extensions_rig;
use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxStep, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::{AssistantMessageEvent, Message, StopReason};
use pi_coding_agent::compaction::prompts::{BRANCH_SUMMARY_PROMPT, SUMMARIZATION_SYSTEM_PROMPT};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::session::tree::NAVIGATE_WHILE_STREAMING;
use pi_coding_agent::session::{
    AgentSession, AgentSessionEvent, NavigateTreeOptions, NavigateTreeResult, PromptOptions,
    SummarizationSource,
};
use pi_coding_agent::storage::tree::{append_label_change, branch_with_summary};
use pi_coding_agent::storage::{EntryKind, SessionEntry, SessionStore, build_session_context};
use serde_json::{Value, json};

use extensions_rig::{ext, message_text, rig};
use session_support::{Gate, Harness, gate_call, harness, text};

const PREAMBLE: &str = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// What one summary request carried.
#[derive(Clone, Debug)]
struct Seen {
    system: Option<String>,
    prompt: String,
    max_tokens: Option<u64>,
    reasoning: bool,
    messages: usize,
}

type SeenLog = Arc<Mutex<Vec<Seen>>>;

/// A faux answer `reply` that records the request.
fn summary_reply(seen: &SeenLog, reply: &'static str) -> FauxStep {
    let seen = seen.clone();
    FauxStep::factory(move |ctx, opts, _, _| {
        seen.lock().unwrap().push(Seen {
            system: ctx.system_prompt.clone(),
            prompt: ctx.messages.first().map(message_text).unwrap_or_default(),
            max_tokens: opts.max_tokens,
            reasoning: opts.reasoning.is_some(),
            messages: ctx.messages.len(),
        });
        Ok(faux_assistant_message(
            vec![faux_text(reply)],
            FauxMessageOptions::default(),
        ))
    })
}

fn failed(msg: &str) -> FauxStep {
    faux_assistant_message(
        vec![],
        FauxMessageOptions {
            stop_reason: Some(StopReason::Error),
            error_message: Some(msg.into()),
            ..Default::default()
        },
    )
    .into()
}

async fn prompt(session: &AgentSession, text: &str) {
    session
        .prompt(text, PromptOptions::default())
        .await
        .unwrap();
}

/// `u1 → a1 → u2 → a2` on a harness whose faux provider answers `a1`, `a2`, then `extra`.
async fn two_turns(extra: Vec<FauxStep>) -> (Harness, Ids) {
    let mut steps = vec![text("4"), text("6")];
    steps.extend(extra);
    let h = harness(steps, |b| b);
    prompt(&h.session, "What is 2+2?").await;
    prompt(&h.session, "What is 3+3?").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    (h, ids)
}

fn user(t: &str) -> EntryKind {
    EntryKind::Message {
        message: Message::User(pi_ai::UserMessage::text(t)).into(),
    }
}

/// The same conversation, but `u1` is the file's first entry (a root): it was loaded from a
/// store that already held `u1 → a1 → thinking_level_change`.
async fn rooted_two_turns(extra: Vec<FauxStep>) -> (Harness, Ids) {
    let mut store = SessionStore::in_memory("/tmp");
    store.append(user("What is 2+2?")).unwrap();
    let a1 = faux_assistant_message(vec![faux_text("4")], FauxMessageOptions::default());
    store
        .append(EntryKind::Message {
            message: Message::Assistant(a1).into(),
        })
        .unwrap();
    store
        .append(EntryKind::ThinkingLevelChange {
            thinking_level: "off".into(),
        })
        .unwrap();
    let store = Arc::new(Mutex::new(store));
    let mut steps = vec![text("6")];
    steps.extend(extra);
    let h = harness(steps, |b| b.store(store.clone()));
    let h = Harness { store, ..h };
    prompt(&h.session, "What is 3+3?").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    (h, ids)
}

/// The message entries' ids, in file order.
struct Ids {
    users: Vec<String>,
    assistants: Vec<String>,
}

impl Ids {
    fn of(store: &SessionStore) -> Ids {
        let mut users = Vec::new();
        let mut assistants = Vec::new();
        for e in store.entries().unwrap() {
            match e.message().map(|m| m.role()) {
                Some("user") => users.push(e.id.clone()),
                Some("assistant") => assistants.push(e.id.clone()),
                _ => {}
            }
        }
        Ids { users, assistants }
    }
}

fn summarize() -> NavigateTreeOptions {
    NavigateTreeOptions {
        summarize: true,
        ..Default::default()
    }
}

fn roles(session: &AgentSession) -> Vec<String> {
    session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect()
}

fn entry_count(h: &Harness) -> usize {
    h.store.lock().unwrap().len()
}

/// The entry as written, without its random id and time.
fn entry_json(e: &SessionEntry) -> Value {
    let mut v = serde_json::to_value(e).unwrap();
    let m = v.as_object_mut().unwrap();
    assert!(m.remove("id").unwrap().is_string());
    assert!(m.remove("timestamp").unwrap().is_string());
    v
}

// ----- errors and no-ops ----------------------------------------------------------------------

#[tokio::test]
async fn navigating_while_a_run_streams_is_refused() {
    let sem = Arc::new(tokio::sync::Semaphore::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let h = harness(vec![gate_call(), text("done")], |b| {
        b.tools(vec![Arc::new(Gate(sem.clone(), started.clone()))])
    });
    let s = h.session.clone();
    let run = tokio::spawn(async move { prompt(&s, "go").await });
    started.notified().await;
    let leaf = h.session.leaf_id().unwrap();
    let err = h
        .session
        .navigate_tree(&leaf, NavigateTreeOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), NAVIGATE_WHILE_STREAMING);
    assert_eq!(
        err.to_string(),
        "Wait for the current response to finish before navigating the session tree."
    );
    sem.add_permits(1);
    run.await.unwrap();
}

#[tokio::test]
async fn an_unknown_target_is_refused_and_the_current_leaf_is_a_no_op() {
    let (h, _) = two_turns(vec![]).await;
    let err = h
        .session
        .navigate_tree("nope", summarize())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Entry nope not found");

    let leaf = h.session.leaf_id();
    let before = entry_count(&h);
    let r = h
        .session
        .navigate_tree(leaf.as_deref().unwrap(), summarize())
        .await
        .unwrap();
    assert_eq!(r, NavigateTreeResult::default());
    assert_eq!(h.session.leaf_id(), leaf);
    assert_eq!(entry_count(&h), before);
    assert_eq!(h.faux.call_count(), 2, "no summary request");
}

#[tokio::test]
async fn summarizing_without_a_model_is_refused() {
    let mut store = SessionStore::in_memory("/tmp");
    let u1 = store.append(user("one")).unwrap();
    store.append(user("two")).unwrap();
    let store = Arc::new(Mutex::new(store));
    let session = AgentSession::builder().store(store).build().unwrap();
    let err = session.navigate_tree(&u1, summarize()).await.unwrap_err();
    assert_eq!(err.to_string(), "No model available for summarization");
    // The leaf check comes first; without a summary no model is needed.
    let leaf = session.leaf_id().unwrap();
    assert_eq!(
        session.navigate_tree(&leaf, summarize()).await.unwrap(),
        NavigateTreeResult::default()
    );
    let r = session
        .navigate_tree(&u1, NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(r.editor_text.as_deref(), Some("one"));
    assert_eq!(session.leaf_id(), None);
}

#[tokio::test]
async fn summarizing_without_an_api_key_is_refused_with_the_login_help() {
    let (session, faux, u1) = two_users_with(Arc::new(session_support::NoKey));
    let err = session.navigate_tree(&u1, summarize()).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("No API key found for faux.\n\nSet the provider's API key"),
        "{err}"
    );
    assert_eq!(faux.call_count(), 0);
    assert!(!session.is_compacting());
}

/// A configured key that cannot be resolved (pi 0.85.0 `_getSummarizationRequestAuth` →
/// `getAuth` throws): the summary is refused with the resolver's text, and nothing is sent.
#[tokio::test]
async fn summarizing_with_a_failing_key_command_is_refused_with_its_text() {
    let (session, faux, u1) = two_users_with(Arc::new(session_support::CommandKey::failing()));
    let leaf = session.leaf_id();
    let err = session.navigate_tree(&u1, summarize()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "API key auth failed for provider faux: Command failed: exit 3"
    );
    assert_eq!(faux.call_count(), 0);
    assert_eq!(session.leaf_id(), leaf, "the leaf did not move");
}

/// A session on the faux model with `auth` over two user entries; returns the first's id.
fn two_users_with(
    auth: Arc<dyn pi_coding_agent::session::AuthSource>,
) -> (AgentSession, pi_ai::providers::faux::FauxProvider, String) {
    let mut store = SessionStore::in_memory("/tmp");
    let u1 = store.append(user("one")).unwrap();
    store.append(user("two")).unwrap();
    let faux = pi_ai::providers::faux::FauxProvider::default();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(Arc::new(Mutex::new(store)))
        .auth(auth)
        .docs_dir("/pkg/docs")
        .build()
        .unwrap();
    (session, faux, u1)
}

// ----- navigation without a summary -----------------------------------------------------------

#[tokio::test]
async fn a_root_user_target_goes_back_to_the_editor_with_an_empty_context() {
    let (h, ids) = rooted_two_turns(vec![]).await;
    let before = entry_count(&h);
    let r = h
        .session
        .navigate_tree(&ids.users[0], NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r,
        NavigateTreeResult {
            editor_text: Some("What is 2+2?".into()),
            ..Default::default()
        }
    );
    assert_eq!(h.session.leaf_id(), None);
    assert!(h.session.messages().is_empty());
    assert_eq!(entry_count(&h), before, "no entry without a summary");

    // The next prompt starts a new root.
    h.faux.append_responses(vec![text("5")]);
    prompt(&h.session, "What is 2+3?").await;
    let store = h.store.lock().unwrap();
    let entries = store.entries().unwrap();
    let new_user = &entries[entries.len() - 2];
    assert_eq!(new_user.parent_id, None);
}

#[tokio::test]
async fn an_assistant_target_becomes_the_leaf_and_a_nested_user_target_leaves_its_parent() {
    let (h, ids) = two_turns(vec![]).await;
    let r = h
        .session
        .navigate_tree(&ids.assistants[0], NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(r.editor_text, None);
    assert!(!r.cancelled);
    assert_eq!(
        h.session.leaf_id().as_deref(),
        Some(ids.assistants[0].as_str())
    );
    assert_eq!(roles(&h.session), ["user", "assistant"]);

    // Back to the tip (an assistant) and then to u2: the leaf is a1, u2's text is returned.
    h.session
        .navigate_tree(&ids.assistants[1], NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(
        roles(&h.session),
        ["user", "assistant", "user", "assistant"]
    );
    let r = h
        .session
        .navigate_tree(&ids.users[1], NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(r.editor_text.as_deref(), Some("What is 3+3?"));
    assert_eq!(
        h.session.leaf_id().as_deref(),
        Some(ids.assistants[0].as_str())
    );
    assert_eq!(roles(&h.session), ["user", "assistant"]);
}

#[tokio::test]
async fn a_custom_message_target_is_re_edited_from_its_parent() {
    let (h, ids) = two_turns(vec![]).await;
    let custom = h
        .store
        .lock()
        .unwrap()
        .append(EntryKind::CustomMessage {
            custom_type: "note".into(),
            content: json!([{"type":"text","text":"remember "},{"type":"text","text":"this"}]),
            display: true,
            details: None,
        })
        .unwrap();
    h.store.lock().unwrap().append(user("after")).unwrap();
    let r = h
        .session
        .navigate_tree(&custom, NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(r.editor_text.as_deref(), Some("remember this"));
    assert_eq!(
        h.session.leaf_id().as_deref(),
        Some(ids.assistants[1].as_str())
    );
}

#[tokio::test]
async fn a_label_without_a_summary_goes_on_the_target() {
    let (h, ids) = two_turns(vec![]).await;
    let r = h
        .session
        .navigate_tree(
            &ids.assistants[0],
            NavigateTreeOptions {
                label: Some("checkpoint".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.summary_entry, None);
    let store = h.store.lock().unwrap();
    let labels = pi_coding_agent::storage::labels(&store).unwrap();
    assert_eq!(
        labels.get(&ids.assistants[0]).map(String::as_str),
        Some("checkpoint")
    );
    // The label entry is appended at the new position and becomes the leaf.
    let leaf = store.get(store.leaf_id().unwrap()).unwrap();
    assert_eq!(leaf.kind.type_name(), "label");
    assert_eq!(leaf.parent_id.as_deref(), Some(ids.assistants[0].as_str()));
    drop(store);
    assert_eq!(roles(&h.session), ["user", "assistant"]);
}

// ----- navigation with a summary --------------------------------------------------------------

#[tokio::test]
async fn summarizing_writes_a_branch_summary_at_the_new_leaf() {
    let seen: SeenLog = Arc::default();
    let (h, ids) = rooted_two_turns(vec![summary_reply(&seen, "Explored 3+3.")]).await;
    let r = h
        .session
        .navigate_tree(&ids.users[0], summarize())
        .await
        .unwrap();
    assert!(!r.cancelled);
    assert_eq!(r.editor_text.as_deref(), Some("What is 2+2?"));

    // The request: the abandoned branch (after the common ancestor u1) as text + the prompt.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].system.as_deref(), Some(SUMMARIZATION_SYSTEM_PROMPT));
    assert_eq!(seen[0].messages, 1);
    assert_eq!(
        seen[0].prompt,
        format!(
            "<conversation>\n[Assistant]: 4\n\n[User]: What is 3+3?\n\n[Assistant]: 6\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}"
        )
    );
    assert_eq!(seen[0].max_tokens, Some(4096), "min(4096, model max)");
    assert!(!seen[0].reasoning);

    // The entry: a root (the target was the root user message), fromId "root".
    let entry = r.summary_entry.clone().unwrap();
    let mut v = entry_json(&entry);
    let usage = v.as_object_mut().unwrap().remove("usage").unwrap();
    assert!(usage["output"].is_u64(), "{usage}");
    assert_eq!(
        v,
        json!({
            "type": "branch_summary",
            "parentId": null,
            "fromId": "root",
            "summary": format!("{PREAMBLE}Explored 3+3."),
            "details": {"readFiles": [], "modifiedFiles": []},
            "fromHook": false,
        })
    );
    assert_eq!(h.session.leaf_id(), Some(entry.id.clone()));
    assert_eq!(roles(&h.session), ["branchSummary"]);
    // What the model sees next.
    let llm = pi_coding_agent::messages::convert_to_llm(&h.session.messages());
    assert_eq!(
        message_text(&llm[0]),
        format!(
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{PREAMBLE}Explored 3+3.</summary>"
        )
    );
}

#[tokio::test]
async fn an_assistant_target_gets_the_summary_as_its_child_with_its_id_as_from_id() {
    let seen: SeenLog = Arc::default();
    let (h, ids) = two_turns(vec![summary_reply(&seen, "Left u2.")]).await;
    let r = h
        .session
        .navigate_tree(&ids.assistants[0], summarize())
        .await
        .unwrap();
    assert_eq!(r.editor_text, None);
    let entry = r.summary_entry.unwrap();
    assert_eq!(entry.parent_id.as_deref(), Some(ids.assistants[0].as_str()));
    match &entry.kind {
        EntryKind::BranchSummary { from_id, .. } => assert_eq!(from_id, &ids.assistants[0]),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        seen.lock().unwrap()[0].prompt,
        format!(
            "<conversation>\n[User]: What is 3+3?\n\n[Assistant]: 6\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}"
        )
    );
    assert_eq!(h.session.leaf_id(), Some(entry.id));
    assert_eq!(roles(&h.session), ["user", "assistant", "branchSummary"]);
}

#[tokio::test]
async fn a_nested_user_target_gets_the_summary_beside_it_and_a_label_on_the_summary() {
    let seen: SeenLog = Arc::default();
    let (h, ids) = two_turns(vec![summary_reply(&seen, "S")]).await;
    let r = h
        .session
        .navigate_tree(
            &ids.users[1],
            NavigateTreeOptions {
                summarize: true,
                label: Some("retry".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.editor_text.as_deref(), Some("What is 3+3?"));
    let entry = r.summary_entry.unwrap();
    // a1 now has two children: u2 and the summary.
    assert_eq!(entry.parent_id.as_deref(), Some(ids.assistants[0].as_str()));
    let store = h.store.lock().unwrap();
    let children: Vec<String> = store
        .index()
        .filter(|(_, p, _)| *p == Some(ids.assistants[0].as_str()))
        .map(|(_, _, kind)| kind.to_owned())
        .collect();
    assert_eq!(children, ["message", "branch_summary"]);
    let labels = pi_coding_agent::storage::labels(&store).unwrap();
    assert_eq!(labels.get(&entry.id).map(String::as_str), Some("retry"));
    assert_eq!(labels.get(&ids.users[1]), None);
    // The label entry follows the summary and is the leaf.
    let leaf = store.get(store.leaf_id().unwrap()).unwrap();
    assert_eq!(leaf.parent_id.as_deref(), Some(entry.id.as_str()));
    drop(store);
    assert_eq!(roles(&h.session), ["user", "assistant", "branchSummary"]);
}

#[tokio::test]
async fn custom_instructions_are_appended_or_replace_the_prompt() {
    let seen: SeenLog = Arc::default();
    let (h, ids) = two_turns(vec![summary_reply(&seen, "A"), summary_reply(&seen, "B")]).await;
    let tip = ids.assistants[1].clone();
    h.session
        .navigate_tree(
            &ids.assistants[0],
            NavigateTreeOptions {
                summarize: true,
                custom_instructions: Some("Mention the numbers.".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    h.session
        .navigate_tree(
            &tip,
            NavigateTreeOptions {
                summarize: true,
                custom_instructions: Some("Only list files.".into()),
                replace_instructions: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen[0].prompt.ends_with(&format!(
            "</conversation>\n\n{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: Mention the numbers."
        )),
        "{}",
        seen[0].prompt
    );
    // From the tip back to a1: only the previous summary entry was abandoned.
    assert_eq!(
        seen[1].prompt,
        format!(
            "<conversation>\n[User]: The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{PREAMBLE}A</summary>\n</conversation>\n\nOnly list files."
        )
    );
}

#[tokio::test]
async fn file_operations_of_the_branch_are_listed_in_the_summary_and_details() {
    let seen: SeenLog = Arc::default();
    let mut args = serde_json::Map::new();
    args.insert("path".into(), "src/lib.rs".into());
    let read_call = faux_assistant_message(
        vec![faux_tool_call("read", args, Some("r1"))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    );
    let h = harness(
        vec![
            text("hi"),
            read_call.into(),
            text("read it"),
            summary_reply(&seen, "Read lib.rs."),
        ],
        |b| b,
    );
    prompt(&h.session, "hello").await;
    prompt(&h.session, "read lib.rs").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    let r = h
        .session
        .navigate_tree(&ids.assistants[0], summarize())
        .await
        .unwrap();
    let entry = r.summary_entry.unwrap();
    match &entry.kind {
        EntryKind::BranchSummary {
            summary, details, ..
        } => {
            assert_eq!(
                summary,
                &format!("{PREAMBLE}Read lib.rs.\n\n<read-files>\nsrc/lib.rs\n</read-files>")
            );
            assert_eq!(
                details.as_ref().unwrap(),
                &json!({"readFiles": ["src/lib.rs"], "modifiedFiles": []})
            );
        }
        other => panic!("{other:?}"),
    }
    // Tool results are left out of the conversation; the call is shown.
    let prompt_text = seen.lock().unwrap()[0].prompt.clone();
    assert!(prompt_text.contains("[Assistant tool calls]: read(path=\"src/lib.rs\")"));
    assert!(!prompt_text.contains("[Tool result]"), "{prompt_text}");

    // Leaving a branch that holds that summary carries its file lists over (pi-written
    // summaries only).
    h.faux
        .append_responses(vec![text("ok"), summary_reply(&seen, "Again.")]);
    prompt(&h.session, "anything else?").await;
    let r = h
        .session
        .navigate_tree(&ids.assistants[0], summarize())
        .await
        .unwrap();
    match &r.summary_entry.unwrap().kind {
        EntryKind::BranchSummary {
            summary, details, ..
        } => {
            assert_eq!(
                summary,
                &format!("{PREAMBLE}Again.\n\n<read-files>\nsrc/lib.rs\n</read-files>")
            );
            assert_eq!(
                details.as_ref().unwrap(),
                &json!({"readFiles": ["src/lib.rs"], "modifiedFiles": []})
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn only_the_newest_messages_within_the_reserve_budget_are_summarized() {
    let seen: SeenLog = Arc::default();
    let mut settings = serde_json::Map::new();
    // Faux models have a 128 000-token window: 2 tokens are left for the branch.
    settings.insert("branchSummary".into(), json!({"reserveTokens": 127_998}));
    let settings = Arc::new(Mutex::new(
        pi_coding_agent::config::settings::SettingsManager::in_memory(settings),
    ));
    let h = harness(vec![text("4"), text("6"), summary_reply(&seen, "S")], |b| {
        b.settings(settings)
    });
    prompt(&h.session, "What is 2+2?").await;
    prompt(&h.session, "What is 3+3?").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    h.session
        .navigate_tree(&ids.assistants[0], summarize())
        .await
        .unwrap();
    // `6` (1 token) fits, `What is 3+3?` (3 more) does not.
    assert_eq!(
        seen.lock().unwrap()[0].prompt,
        format!("<conversation>\n[Assistant]: 6\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}")
    );
}

#[test]
fn older_summaries_still_fit_while_the_total_is_under_90_percent_of_the_budget() {
    use pi_coding_agent::compaction::branch::prepare_branch_entries;
    let branch = |user_text: &str| {
        let mut s = SessionStore::in_memory("/tmp");
        branch_with_summary(&mut s, None, "x".repeat(40), None, None, None).unwrap();
        s.append(user(user_text)).unwrap();
        s.entries().unwrap()
    };
    // Budget 10: the user message (1 token) fits; the summary (10) would exceed it, but 1 is
    // under 90 % of 10, so it is kept anyway.
    let (messages, _, tokens) = prepare_branch_entries(&branch("abcd"), 10);
    assert_eq!(messages.len(), 2);
    assert_eq!(tokens, 11);
    // With 9 tokens already taken (not under 9.0) the summary is dropped.
    let (messages, _, tokens) = prepare_branch_entries(&branch(&"y".repeat(36)), 10);
    assert_eq!(messages.len(), 1);
    assert_eq!(tokens, 9);
}

#[tokio::test]
async fn a_summary_that_calls_a_tool_is_an_error() {
    let mut args = serde_json::Map::new();
    args.insert("path".into(), "x".into());
    let call = faux_assistant_message(
        vec![faux_tool_call("read", args, Some("c1"))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    );
    let (h, ids) = two_turns(vec![call.into()]).await;
    let err = h
        .session
        .navigate_tree(&ids.assistants[0], summarize())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Branch summarization attempted to call a tool"
    );
}

#[tokio::test]
async fn nothing_is_summarized_when_no_entry_is_abandoned() {
    let (h, ids) = two_turns(vec![]).await;
    h.session
        .navigate_tree(&ids.assistants[0], NavigateTreeOptions::default())
        .await
        .unwrap();
    // From a1 forward to a2: a1 is on the target's path, nothing is left behind.
    let before = entry_count(&h);
    let r = h
        .session
        .navigate_tree(&ids.assistants[1], summarize())
        .await
        .unwrap();
    assert_eq!(r, NavigateTreeResult::default());
    assert_eq!(h.faux.call_count(), 2, "no summary request");
    assert_eq!(entry_count(&h), before);
    assert_eq!(
        h.session.leaf_id().as_deref(),
        Some(ids.assistants[1].as_str())
    );
}

#[tokio::test]
async fn a_failed_summary_is_an_error_and_changes_nothing() {
    let (h, _) = two_turns(vec![failed("bad request")]).await;
    let leaf = h.session.leaf_id();
    let before = entry_count(&h);
    let ids = Ids::of(&h.store.lock().unwrap());
    let err = h
        .session
        .navigate_tree(&ids.users[0], summarize())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Branch summarization failed: bad request");
    assert_eq!(h.session.leaf_id(), leaf);
    assert_eq!(entry_count(&h), before);
    assert!(!h.session.is_compacting());
}

#[tokio::test]
async fn a_transient_summary_failure_is_retried_with_branch_summary_events() {
    let seen: SeenLog = Arc::default();
    let h = harness(
        vec![
            text("4"),
            text("6"),
            failed("503 Service Unavailable"),
            summary_reply(&seen, "ok"),
        ],
        |b| {
            b.settings(session_support::settings(
                json!({"enabled": true, "maxRetries": 2, "baseDelayMs": 1}),
            ))
        },
    );
    prompt(&h.session, "What is 2+2?").await;
    prompt(&h.session, "What is 3+3?").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    h.events.lock().unwrap().clear();
    let r = h
        .session
        .navigate_tree(&ids.users[0], summarize())
        .await
        .unwrap();
    assert!(r.summary_entry.is_some());
    let events = h.events();
    assert_eq!(
        events,
        [
            AgentSessionEvent::SummarizationRetryScheduled {
                attempt: 1,
                max_attempts: 2,
                delay_ms: 1,
                error_message: "503 Service Unavailable".into(),
            },
            AgentSessionEvent::SummarizationRetryAttemptStart {
                source: SummarizationSource::BranchSummary,
            },
            AgentSessionEvent::SummarizationRetryFinished,
        ]
    );
    assert_eq!(
        events[1].to_json_mode(),
        json!({"type":"summarization_retry_attempt_start","source":"branchSummary"})
    );
}

/// A stream function that answers `a1`, `a2` from the faux provider, then blocks the third
/// request until its signal is cancelled (announcing that it started).
fn blocking_third_request(
    faux: pi_ai::providers::faux::FauxProvider,
    started: Arc<tokio::sync::Notify>,
) -> pi_agent_core::agent_loop::StreamFn {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |m, c, o| {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 {
            return faux.stream(&m, &c, o);
        }
        let (mut sink, stream) = pi_ai::event_channel(None);
        let signal = o.signal.clone().unwrap_or_default();
        let started = started.clone();
        tokio::spawn(async move {
            started.notify_one();
            signal.cancelled().await;
            let mut msg = pi_ai::AssistantMessage::empty("faux", "faux", &m.id);
            msg.stop_reason = StopReason::Aborted;
            msg.error_message = Some("Request was aborted".into());
            sink.push(AssistantMessageEvent::Error {
                reason: StopReason::Aborted,
                error: Box::new(msg),
            })
            .await;
        });
        stream
    })
}

#[tokio::test]
async fn aborting_the_summary_cancels_the_navigation() {
    let started = Arc::new(tokio::sync::Notify::new());
    let faux = pi_ai::providers::faux::FauxProvider::default();
    faux.set_responses(vec![text("4"), text("6")]);
    let h = harness(vec![], |b| {
        b.model(faux.model())
            .stream_fn(blocking_third_request(faux.clone(), started.clone()))
    });
    prompt(&h.session, "Tell me about something").await;
    prompt(&h.session, "Continue").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    let leaf = h.session.leaf_id();
    let before = entry_count(&h);
    let s = h.session.clone();
    let root = ids.users[0].clone();
    let nav = tokio::spawn(async move { s.navigate_tree(&root, summarize()).await });
    started.notified().await;
    assert!(h.session.is_compacting(), "navigation counts as compacting");
    assert!(!h.session.is_idle());
    h.session.abort_branch_summary();
    let r = nav.await.unwrap().unwrap();
    assert_eq!(
        r,
        NavigateTreeResult {
            cancelled: true,
            aborted: true,
            ..Default::default()
        }
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"cancelled": true, "aborted": true})
    );
    assert_eq!(h.session.leaf_id(), leaf);
    assert_eq!(entry_count(&h), before);
    assert!(!h.session.is_compacting());
    assert_eq!(roles(&h.session).len(), 4);
}

#[tokio::test]
async fn session_abort_also_cancels_a_running_summary() {
    let started = Arc::new(tokio::sync::Notify::new());
    let faux = pi_ai::providers::faux::FauxProvider::default();
    faux.set_responses(vec![text("4"), text("6")]);
    let h = harness(vec![], |b| {
        b.model(faux.model())
            .stream_fn(blocking_third_request(faux.clone(), started.clone()))
    });
    prompt(&h.session, "a").await;
    prompt(&h.session, "b").await;
    let ids = Ids::of(&h.store.lock().unwrap());
    let s = h.session.clone();
    let target = ids.assistants[0].clone();
    let nav = tokio::spawn(async move { s.navigate_tree(&target, summarize()).await });
    started.notified().await;
    h.session.abort().await;
    assert!(h.session.is_idle());
    let r = nav.await.unwrap().unwrap();
    assert!(r.cancelled && r.aborted);
}

// ----- persistence ----------------------------------------------------------------------------

#[tokio::test]
async fn the_session_file_after_navigation_reloads_to_the_same_context() {
    let dir = tempfile::tempdir().unwrap();
    let seen: SeenLog = Arc::default();
    let store = Arc::new(Mutex::new(
        SessionStore::create(dir.path(), "/tmp", None).unwrap(),
    ));
    let faux = pi_ai::providers::faux::FauxProvider::default();
    faux.set_responses(vec![text("4"), text("6"), summary_reply(&seen, "Gone.")]);
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .build()
        .unwrap();
    prompt(&session, "What is 2+2?").await;
    prompt(&session, "What is 3+3?").await;
    let ids = Ids::of(&store.lock().unwrap());
    let r = session
        .navigate_tree(
            &ids.users[1],
            NavigateTreeOptions {
                summarize: true,
                label: Some("here".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let summary_id = r.summary_entry.unwrap().id;
    let path = session.session_file().unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message",
            "message",
            "branch_summary",
            "label"
        ]
    );
    assert_eq!(lines[7]["id"], summary_id.as_str());
    assert_eq!(lines[7]["parentId"], ids.assistants[0].as_str());
    assert_eq!(lines[7]["fromId"], ids.assistants[0].as_str());
    assert_eq!(lines[7]["summary"], format!("{PREAMBLE}Gone."));
    assert_eq!(lines[8]["targetId"], summary_id.as_str());
    assert_eq!(lines[8]["label"], "here");

    let reopened = SessionStore::open(&path, "/tmp").unwrap();
    assert_eq!(reopened.leaf_id().map(str::to_owned), session.leaf_id());
    let context = build_session_context(&reopened).unwrap();
    assert_eq!(context.messages, session.messages());
    let roles: Vec<&str> = context.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "branchSummary"]);
}

// ----- the store primitives (session-manager/tree-traversal.test.ts) --------------------------

#[test]
fn branch_with_summary_inserts_the_entry_and_advances_the_leaf() {
    let mut s = SessionStore::in_memory("/tmp");
    let id1 = s.append(user("1")).unwrap();
    s.append(user("2")).unwrap();
    s.append(user("3")).unwrap();
    let summary_id = branch_with_summary(
        &mut s,
        Some(&id1),
        "Summary of abandoned work".into(),
        None,
        None,
        None,
    )
    .unwrap();
    assert_eq!(s.leaf_id(), Some(summary_id.as_str()));
    let e = s.get(&summary_id).unwrap();
    assert_eq!(e.parent_id.as_deref(), Some(id1.as_str()));
    assert_eq!(
        entry_json(&e),
        json!({"type":"branch_summary","parentId":id1,"fromId":id1,"summary":"Summary of abandoned work"})
    );

    let err =
        branch_with_summary(&mut s, Some("nonexistent"), "x".into(), None, None, None).unwrap_err();
    assert_eq!(err.to_string(), "Entry nonexistent not found");
    assert_eq!(s.leaf_id(), Some(summary_id.as_str()), "leaf unchanged");

    let root = branch_with_summary(&mut s, None, "r".into(), None, Some(true), None).unwrap();
    let e = s.get(&root).unwrap();
    assert_eq!(
        entry_json(&e),
        json!({"type":"branch_summary","parentId":null,"fromId":"root","summary":"r","fromHook":true})
    );

    let err = append_label_change(&mut s, "nonexistent", Some("l".into())).unwrap_err();
    assert_eq!(err.to_string(), "Entry nonexistent not found");
}

// ----- the hooks, end to end through an extension ---------------------------------------------

type Log = Arc<Mutex<Vec<String>>>;

/// Records every `session_tree` as `new|old|summary id|fromExtension`.
fn record_session_tree(pi: &mut pi_coding_agent::extensions::ExtensionApi<'_>, log: Log) {
    pi.on::<SessionTreeEvent, _>(move |e, _| {
        let line = format!(
            "{}|{}|{}|{:?}",
            e.new_leaf_id.as_deref().unwrap_or("null"),
            e.old_leaf_id.as_deref().unwrap_or("null"),
            e.summary_entry.as_ref().map_or("none", |s| s.id.as_str()),
            e.from_extension
        );
        let log = log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(line);
            Ok(None)
        })
    });
}

#[tokio::test]
async fn session_before_tree_can_cancel_the_navigation() {
    let trees: Log = Arc::default();
    let t = trees.clone();
    let r = rig(
        vec![text("4"), text("6")],
        vec![ext("veto.ts", move |pi| {
            pi.on::<SessionBeforeTreeEvent, _>(|_, _| {
                Box::pin(async {
                    Ok(Some(TreeResult {
                        cancel: true,
                        ..Default::default()
                    }))
                })
            });
            record_session_tree(pi, t.clone());
            Ok(())
        })],
    );
    prompt(&r.session, "What is 2+2?").await;
    prompt(&r.session, "What is 3+3?").await;
    let ids = Ids::of(&r.store.lock().unwrap());
    let leaf = r.session.leaf_id();
    let result = r
        .session
        .navigate_tree(&ids.users[0], summarize())
        .await
        .unwrap();
    assert_eq!(
        result,
        NavigateTreeResult {
            cancelled: true,
            ..Default::default()
        }
    );
    assert_eq!(r.session.leaf_id(), leaf);
    assert_eq!(r.faux.call_count(), 2, "no summary request");
    assert!(trees.lock().unwrap().is_empty(), "no session_tree");
    assert!(!r.session.is_compacting());
}

#[tokio::test]
async fn session_before_tree_sees_the_preparation_and_can_supply_the_summary() {
    let prepared: Log = Arc::default();
    let trees: Log = Arc::default();
    let (p, t) = (prepared.clone(), trees.clone());
    let r = rig(
        vec![text("4"), text("6")],
        vec![ext("summarizer.ts", move |pi| {
            let p = p.clone();
            pi.on::<SessionBeforeTreeEvent, _>(move |e, _| {
                let prep = &e.preparation;
                let line = format!(
                    "target={} old={:?} common={:?} entries={} wants={} instr={:?} replace={:?} label={:?}",
                    prep.target_id,
                    prep.old_leaf_id,
                    prep.common_ancestor_id,
                    prep.entries_to_summarize
                        .iter()
                        .map(|e| e.id.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                    prep.user_wants_summary,
                    prep.custom_instructions,
                    prep.replace_instructions,
                    prep.label,
                );
                let p = p.clone();
                Box::pin(async move {
                    p.lock().unwrap().push(line);
                    Ok(Some(TreeResult {
                        summary: Some(TreeSummary {
                            summary: "Custom branch summary".into(),
                            details: Some(json!({"source": "extension"})),
                            usage: None,
                        }),
                        ..Default::default()
                    }))
                })
            });
            record_session_tree(pi, t.clone());
            Ok(())
        })],
    );
    prompt(&r.session, "What is 2+2?").await;
    prompt(&r.session, "What is 3+3?").await;
    let ids = Ids::of(&r.store.lock().unwrap());
    let old_leaf = r.session.leaf_id().unwrap();
    let u1_parent = r
        .store
        .lock()
        .unwrap()
        .get(&ids.users[0])
        .unwrap()
        .parent_id
        .clone()
        .unwrap();

    // Without `summarize` the supplied summary is ignored.
    let plain = r
        .session
        .navigate_tree(&ids.assistants[0], NavigateTreeOptions::default())
        .await
        .unwrap();
    assert_eq!(plain.summary_entry, None);
    r.session
        .navigate_tree(&old_leaf, NavigateTreeOptions::default())
        .await
        .unwrap();

    let result = r
        .session
        .navigate_tree(
            &ids.users[0],
            NavigateTreeOptions {
                summarize: true,
                custom_instructions: Some("focus".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let entry = result.summary_entry.unwrap();
    assert_eq!(
        entry_json(&entry),
        json!({
            "type": "branch_summary",
            "parentId": u1_parent,
            "fromId": u1_parent,
            "summary": "Custom branch summary",
            "details": {"source": "extension"},
            "fromHook": true,
        })
    );
    assert_eq!(r.faux.call_count(), 2, "no summary request");

    let prepared = prepared.lock().unwrap().clone();
    assert_eq!(
        prepared[2],
        format!(
            "target={} old=Some({:?}) common=Some({:?}) entries={},{},{} wants=true instr=Some(\"focus\") replace=None label=None",
            ids.users[0],
            old_leaf,
            ids.users[0],
            ids.assistants[0],
            ids.users[1],
            ids.assistants[1],
        )
    );
    assert_eq!(
        prepared[0],
        format!(
            "target={} old=Some({:?}) common=Some({:?}) entries={},{} wants=false instr=None replace=None label=None",
            ids.assistants[0], old_leaf, ids.assistants[0], ids.users[1], ids.assistants[1],
        )
    );
    let trees = trees.lock().unwrap().clone();
    assert_eq!(
        trees,
        [
            format!("{}|{}|none|None", ids.assistants[0], old_leaf),
            format!("{}|{}|none|None", old_leaf, ids.assistants[0]),
            format!("{}|{}|{}|Some(true)", entry.id, old_leaf, entry.id),
        ]
    );
}

#[tokio::test]
async fn session_before_tree_can_override_the_instructions_and_the_label() {
    let seen: SeenLog = Arc::default();
    let trees: Log = Arc::default();
    let t = trees.clone();
    let r = rig(
        vec![text("4"), text("6"), summary_reply(&seen, "Short.")],
        vec![ext("focus.ts", move |pi| {
            pi.on::<SessionBeforeTreeEvent, _>(|_, _| {
                Box::pin(async {
                    Ok(Some(TreeResult {
                        custom_instructions: Some("Use one sentence.".into()),
                        replace_instructions: Some(true),
                        label: Some("from-ext".into()),
                        ..Default::default()
                    }))
                })
            });
            record_session_tree(pi, t.clone());
            Ok(())
        })],
    );
    prompt(&r.session, "What is 2+2?").await;
    prompt(&r.session, "What is 3+3?").await;
    let ids = Ids::of(&r.store.lock().unwrap());
    let old_leaf = r.session.leaf_id().unwrap();
    let result = r
        .session
        .navigate_tree(
            &ids.assistants[0],
            NavigateTreeOptions {
                summarize: true,
                custom_instructions: Some("ignored".into()),
                label: Some("ignored".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let prompt_text = seen.lock().unwrap()[0].prompt.clone();
    assert!(
        prompt_text.ends_with("</conversation>\n\nUse one sentence."),
        "{prompt_text}"
    );
    let entry = result.summary_entry.unwrap();
    match &entry.kind {
        EntryKind::BranchSummary {
            summary, from_hook, ..
        } => {
            assert_eq!(summary, &format!("{PREAMBLE}Short."));
            assert_eq!(*from_hook, Some(false));
        }
        other => panic!("{other:?}"),
    }
    let store = r.store.lock().unwrap();
    let labels = pi_coding_agent::storage::labels(&store).unwrap();
    assert_eq!(labels.get(&entry.id).map(String::as_str), Some("from-ext"));
    let leaf = store.leaf_id().unwrap().to_owned();
    drop(store);
    // `newLeafId` is the leaf after the label entry was appended.
    assert_eq!(
        trees.lock().unwrap().clone(),
        [format!("{leaf}|{old_leaf}|{}|Some(false)", entry.id)]
    );
}

// ----- the builder's store context ---------------------------------------------------------

/// `store_with_context` takes the caller's context as the session's starting state (the
/// resume path builds it once, in `app/setup.rs`); `store` alone builds it from the store.
#[tokio::test]
async fn a_given_store_context_is_used_as_is_and_store_alone_builds_it() {
    let mut store = SessionStore::in_memory("/tmp");
    store.append(user("stored")).unwrap();
    let store = Arc::new(Mutex::new(store));
    let built = build_session_context(&store.lock().unwrap()).unwrap();
    let texts = |s: &AgentSession| -> Vec<String> {
        s.messages()
            .iter()
            .map(|m| match m.to_llm() {
                Some(m) => message_text(&m),
                None => m.role().to_owned(),
            })
            .collect()
    };
    let from_store = AgentSession::builder()
        .store(store.clone())
        .build()
        .unwrap();
    assert_eq!(texts(&from_store), ["stored"]);

    let mut given = built.clone();
    given
        .messages
        .push(AgentMessage::from(Message::User(pi_ai::UserMessage::text(
            "given",
        ))));
    let from_context = AgentSession::builder()
        .store_with_context(store.clone(), given)
        .build()
        .unwrap();
    assert_eq!(texts(&from_context), ["stored", "given"]);

    // A later `store` call drops a context given before it.
    let replaced = AgentSession::builder()
        .store_with_context(store.clone(), built)
        .store(Arc::new(Mutex::new(SessionStore::in_memory("/tmp"))))
        .build()
        .unwrap();
    assert!(texts(&replaced).is_empty());
}

/// An OAuth login that is due for a refresh until [`AuthSource::prepare_request`] ran it: the
/// key is `stale` before and `fresh` after; `revoked` makes the refresh fail.
struct ExpiringLogin {
    refreshed: Arc<std::sync::atomic::AtomicBool>,
    revoked: bool,
}

impl pi_coding_agent::session::AuthSource for ExpiringLogin {
    fn has_auth(&self, _provider: &str) -> bool {
        true
    }
    fn is_oauth(&self, _provider: &str) -> bool {
        true
    }
    fn resolve_api_key(
        &self,
        _provider: &str,
    ) -> Result<Option<String>, pi_coding_agent::config::registry::RequestAuthError> {
        let fresh = self.refreshed.load(std::sync::atomic::Ordering::SeqCst);
        Ok(Some(if fresh { "fresh" } else { "stale" }.into()))
    }
    fn prepare_request(
        &self,
        _model: &pi_ai::Model,
    ) -> Option<
        futures::future::BoxFuture<
            'static,
            Result<(), pi_coding_agent::config::registry::RequestAuthError>,
        >,
    > {
        if self.refreshed.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let (refreshed, revoked) = (self.refreshed.clone(), self.revoked);
        Some(Box::pin(async move {
            if revoked {
                return Err(
                    pi_coding_agent::config::registry::RequestAuthError::Refresh(
                        pi_coding_agent::config::oauth::OAuthRefreshError::Refresh {
                            provider: "faux".into(),
                            cause: "invalid_grant".into(),
                        },
                    ),
                );
            }
            refreshed.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }))
    }
}

/// [`two_users_with`], its requests streamed by the faux provider itself.
fn streaming_two_users(
    auth: Arc<dyn pi_coding_agent::session::AuthSource>,
) -> (AgentSession, pi_ai::providers::faux::FauxProvider, String) {
    let mut store = SessionStore::in_memory("/tmp");
    let u1 = store.append(user("one")).unwrap();
    store.append(user("two")).unwrap();
    let faux = pi_ai::providers::faux::FauxProvider::default();
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(Arc::new(Mutex::new(store)))
        .auth(auth)
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .docs_dir("/pkg/docs")
        .build()
        .unwrap();
    (session, faux, u1)
}

#[tokio::test]
async fn a_branch_summary_refreshes_an_expiring_login_before_its_request() {
    let login = ExpiringLogin {
        refreshed: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        revoked: false,
    };
    let (session, faux, u1) = streaming_two_users(Arc::new(login));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    faux.set_responses(vec![FauxStep::factory(move |_, opts, _, _| {
        seen.lock().unwrap().push(opts.api_key.clone());
        Ok(faux_assistant_message(
            vec![faux_text("THE SUMMARY")],
            FauxMessageOptions::default(),
        ))
    })]);
    session.navigate_tree(&u1, summarize()).await.unwrap();
    assert_eq!(keys.lock().unwrap().clone(), vec![Some("fresh".to_owned())]);

    // A refresh that fails refuses the summary with its text, and nothing is sent.
    let login = ExpiringLogin {
        refreshed: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        revoked: true,
    };
    let (session, faux, u1) = streaming_two_users(Arc::new(login));
    let leaf = session.leaf_id();
    let err = session.navigate_tree(&u1, summarize()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "OAuth refresh failed for faux: invalid_grant"
    );
    assert_eq!(faux.call_count(), 0);
    assert_eq!(session.leaf_id(), leaf, "the leaf did not move");
}
