//! Compaction inside a session on the faux provider: overflow recovery (once, then
//! exhausted), manual compaction, and the extension-facing hooks.

use crate::session_support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::auto_compaction::{AutoCompactor, OVERFLOW_EXHAUSTED};
use pi_coding_agent::session::{AgentSessionEvent, CompactionReason, PromptOptions, SessionHooks};
use pi_coding_agent::storage::SessionEntry;
use serde_json::json;
use session_support::*;

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl SessionHooks for Recorder {
    fn session_compact(
        &self,
        entry: SessionEntry,
        reason: CompactionReason,
        will_retry: bool,
    ) -> BoxFuture<'_, ()> {
        self.0.lock().unwrap().push(format!(
            "compact:{}:{reason:?}:{will_retry}",
            entry.kind.type_name()
        ));
        Box::pin(async {})
    }
    fn session_compact_failed(
        &self,
        reason: CompactionReason,
        error_message: Option<String>,
        aborted: bool,
        from_extension: bool,
    ) -> BoxFuture<'_, ()> {
        self.0.lock().unwrap().push(format!(
            "failed:{reason:?}:{aborted}:{}{}",
            error_message.unwrap_or_default(),
            if from_extension { ":ext" } else { "" }
        ));
        Box::pin(async {})
    }
}

fn compaction_settings() -> Arc<Mutex<SettingsManager>> {
    let v = json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 1}});
    let serde_json::Value::Object(m) = v else {
        unreachable!()
    };
    Arc::new(Mutex::new(SettingsManager::in_memory(m)))
}

/// A session with automatic compaction (`keepRecentTokens: 1`, retries off) and `hooks`,
/// after the prompts `first` and `second`.
async fn after_two_prompts(
    steps: Vec<pi_ai::providers::faux::FauxStep>,
    hooks: Arc<dyn SessionHooks>,
) -> Harness {
    let h = harness(steps, |b| {
        b.settings(compaction_settings())
            .compactor(Arc::new(AutoCompactor::new()))
            .hooks(hooks)
    });
    for prompt in ["first", "second"] {
        h.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    h
}

fn compaction_events(h: &Harness) -> Vec<String> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            AgentSessionEvent::CompactionStart { reason } => Some(format!("start:{reason:?}")),
            AgentSessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => Some(format!(
                "end:{reason:?}:{}:{aborted}:{will_retry}:{}",
                result.is_some(),
                error_message.clone().unwrap_or_default()
            )),
            AgentSessionEvent::AgentEnd { will_retry, .. } => {
                Some(format!("agent_end:{will_retry}"))
            }
            AgentSessionEvent::AgentSettled => Some("settled".into()),
            _ => None,
        })
        .collect()
}

/// An overflow error stamped when it is requested (fixed faux messages carry the time the
/// script was written, which is older than any compaction of the run).
fn overflow_now() -> pi_ai::providers::faux::FauxStep {
    use pi_ai::providers::faux::{FauxMessageOptions, FauxStep, faux_assistant_message};
    FauxStep::factory(|_, _, _, _| {
        let mut m = faux_assistant_message(
            vec![],
            FauxMessageOptions {
                stop_reason: Some(pi_ai::StopReason::Error),
                error_message: Some(OVERFLOW.into()),
                ..Default::default()
            },
        );
        // A real response arrives at least a millisecond after the compaction it follows.
        std::thread::sleep(std::time::Duration::from_millis(2));
        m.timestamp = pi_ai::now_ms();
        Ok(m)
    })
}

const OVERFLOW: &str = "prompt is too long: 213462 tokens > 200000 maximum";

#[tokio::test]
async fn overflow_compacts_and_retries_once() {
    let rec = Arc::new(Recorder::default());
    let hooks = rec.clone();
    let h = after_two_prompts(
        vec![
            text("one"),
            error(OVERFLOW),
            text("SUMMARY"),
            text("recovered"),
        ],
        hooks,
    )
    .await;
    assert_eq!(
        h.faux.call_count(),
        4,
        "answer, overflow, summary, retried answer"
    );
    assert_eq!(
        compaction_events(&h),
        [
            "agent_end:false",
            "settled",
            "agent_end:false",
            "start:Overflow",
            "end:Overflow:true:false:true:",
            "agent_end:false",
            "settled"
        ]
    );
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("recovered")
    );
    // The context was rebuilt from the summary: the failed assistant is not resent.
    let roles: Vec<String> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    assert_eq!(*rec.0.lock().unwrap(), ["compact:compaction:Overflow:true"]);
    // The failed assistant stays in the file.
    assert!(
        h.entry_kinds()
            .iter()
            .filter(|k| k.contains("assistant"))
            .count()
            >= 3
    );
}

#[tokio::test]
async fn a_second_overflow_fails_with_the_exhausted_text() {
    let rec = Arc::new(Recorder::default());
    let hooks = rec.clone();
    let h = after_two_prompts(
        vec![
            text("one"),
            error(OVERFLOW),
            text("SUMMARY"),
            overflow_now(),
        ],
        hooks,
    )
    .await;
    let events = compaction_events(&h);
    assert_eq!(
        events[events.len() - 3..],
        [
            "agent_end:false".to_owned(),
            format!("end:Overflow:false:false:false:{OVERFLOW_EXHAUSTED}"),
            "settled".to_owned()
        ]
    );
    assert_eq!(
        *rec.0.lock().unwrap(),
        [
            "compact:compaction:Overflow:true".to_owned(),
            format!("failed:Overflow:false:{OVERFLOW_EXHAUSTED}")
        ]
    );
}

#[tokio::test]
async fn manual_compaction_on_a_tiny_session_fails_with_the_reference_texts() {
    let rec = Arc::new(Recorder::default());
    let hooks = rec.clone();
    let h = harness(vec![text("one")], |b| {
        b.compactor(Arc::new(AutoCompactor::new())).hooks(hooks)
    });
    h.session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    let err = h.session.compact(None).await.unwrap_err().to_string();
    assert_eq!(err, "Nothing to compact (session too small)");
    let events = compaction_events(&h);
    assert_eq!(
        events[events.len() - 2..],
        [
            "start:Manual".to_owned(),
            "end:Manual:false:false:false:Compaction failed: Nothing to compact (session too small)"
                .to_owned()
        ]
    );
    assert_eq!(
        *rec.0.lock().unwrap(),
        ["failed:Manual:false:Compaction failed: Nothing to compact (session too small)"]
    );
}

#[tokio::test]
async fn manual_compaction_summarizes_and_rebuilds_the_context() {
    let h = harness(
        vec![text("one"), text("two"), text("SUMMARY"), text("PREFIX")],
        |b| {
            b.settings(compaction_settings())
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    h.session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    h.session
        .prompt("second", PromptOptions::default())
        .await
        .unwrap();
    let result = h
        .session
        .compact(Some("focus on tests".into()))
        .await
        .unwrap();
    assert!(result.summary.starts_with("SUMMARY"), "{}", result.summary);
    assert!(
        result
            .summary
            .ends_with("**Turn Context (split turn):**\n\nPREFIX"),
        "{}",
        result.summary
    );
    let roles: Vec<String> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles[0], "compactionSummary");
    assert!(h.entry_kinds().iter().any(|k| k.starts_with("compaction")));
}

/// `session_before_compact`: cancels, or supplies its own summary.
struct BeforeCompact {
    cancel: bool,
}

impl SessionHooks for BeforeCompact {
    fn session_before_compact(
        &self,
        preparation: pi_coding_agent::compaction::CompactionPreparation,
        _branch_entries: Vec<SessionEntry>,
        _custom_instructions: Option<String>,
        _reason: CompactionReason,
        _will_retry: bool,
        _signal: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Option<pi_coding_agent::session::hooks::BeforeCompactDecision>> {
        let decision = pi_coding_agent::session::hooks::BeforeCompactDecision {
            cancel: self.cancel,
            compaction: (!self.cancel).then(|| pi_coding_agent::compaction::CompactionResult {
                summary: "from the extension".into(),
                first_kept_entry_id: preparation.first_kept_entry_id.clone(),
                tokens_before: preparation.tokens_before,
                usage: None,
                details: json!({"custom": true}),
            }),
        };
        Box::pin(async move { Some(decision) })
    }
}

#[tokio::test]
async fn an_extension_can_cancel_a_compaction() {
    let h = after_two_prompts(
        vec![text("one"), text("two")],
        Arc::new(BeforeCompact { cancel: true }),
    )
    .await;
    assert_eq!(
        h.session.compact(None).await.unwrap_err().to_string(),
        "Compaction cancelled"
    );
    let events = compaction_events(&h);
    assert_eq!(events.last().unwrap(), "end:Manual:false:true:false:");
    assert_eq!(h.faux.call_count(), 2, "no summary request");
    assert!(!h.entry_kinds().iter().any(|k| k.starts_with("compaction")));
}

#[tokio::test]
async fn an_extension_can_supply_the_summary() {
    let h = after_two_prompts(
        vec![text("one"), text("two")],
        Arc::new(BeforeCompact { cancel: false }),
    )
    .await;
    let result = h.session.compact(None).await.unwrap();
    assert_eq!(result.summary, "from the extension");
    assert_eq!(h.faux.call_count(), 2, "no summary request");
    let store = h.store.lock().unwrap();
    let entries = store.entries().unwrap();
    let c = entries
        .iter()
        .find(|e| e.kind.type_name() == "compaction")
        .unwrap();
    let line = c.to_line();
    assert!(line.contains(r#""summary":"from the extension""#), "{line}");
    assert!(line.contains(r#""fromHook":true"#), "{line}");
}

/// Logs `<start|end>:<reason>:<is_compacting()>` from a session listener as each
/// compaction event is delivered.
fn watch_compacting(h: &Harness) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let session = h.session.clone();
    h.session.subscribe(move |e| {
        let line = match e {
            AgentSessionEvent::CompactionStart { reason } => format!("start:{reason:?}"),
            AgentSessionEvent::CompactionEnd { reason, .. } => format!("end:{reason:?}"),
            _ => return Ok(()),
        };
        sink.lock()
            .unwrap()
            .push(format!("{line}:{}", session.is_compacting()));
        Ok(())
    });
    seen
}

#[tokio::test]
async fn manual_compaction_is_idle_again_when_compaction_end_is_delivered() {
    // pi 0.85.0 `compact()`: "compaction_end listeners may submit queued prompts, so expose
    // idle state before notifying them", on success and on failure.
    let h = harness(
        vec![text("one"), text("two"), text("SUMMARY"), text("PREFIX")],
        |b| {
            b.settings(compaction_settings())
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for prompt in ["first", "second"] {
        h.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    let seen = watch_compacting(&h);
    h.session.compact(None).await.unwrap();
    assert_eq!(
        h.session.compact(None).await.unwrap_err().to_string(),
        "Already compacted"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "start:Manual:true",
            "end:Manual:false",
            "start:Manual:true",
            "end:Manual:false"
        ]
    );
    assert!(!h.session.is_compacting());
}

#[tokio::test]
async fn automatic_compaction_is_still_compacting_when_compaction_end_is_delivered() {
    // pi 0.85.0 `_runAutoCompaction` clears its abort controller only in `finally`, after
    // `compaction_end`: on success
    // (overflow recovered) and on failure (the recovery summary fails).
    let h = harness(
        vec![
            text("one"),
            text("two"),
            error(OVERFLOW),
            text("SUMMARY"),
            text("recovered"),
            overflow_now(),
            error("boom"),
        ],
        |b| {
            b.settings(compaction_settings())
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for prompt in ["first", "second"] {
        h.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    let seen = watch_compacting(&h);
    h.session
        .prompt("third", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("recovered")
    );
    assert!(!h.session.is_compacting());
    h.session
        .prompt("fourth", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "start:Overflow:true",
            "end:Overflow:true",
            "start:Overflow:true",
            "end:Overflow:true"
        ]
    );
    let events = compaction_events(&h);
    assert!(
        events
            .iter()
            .any(|e| e
                .starts_with("end:Overflow:false:false:false:Context overflow recovery failed: ")),
        "{events:?}"
    );
    assert!(!h.session.is_compacting());
}

/// A summary reply that records the API key of its request.
fn keyed_reply(
    seen: &Arc<Mutex<Vec<Option<String>>>>,
    reply: &'static str,
) -> pi_ai::providers::faux::FauxStep {
    let seen = seen.clone();
    pi_ai::providers::faux::FauxStep::factory(move |_, options, _, _| {
        seen.lock().unwrap().push(options.api_key.clone());
        Ok(pi_ai::providers::faux::faux_assistant_message(
            vec![pi_ai::providers::faux::faux_text(reply)],
            Default::default(),
        ))
    })
}

/// The summary request carries the key the session's auth resolved (pi passes the
/// `_getSummarizationRequestAuth` key to `compact`).
#[tokio::test]
async fn the_summary_request_carries_the_resolved_key() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let h = harness(
        vec![
            text("one"),
            text("two"),
            keyed_reply(&seen, "SUMMARY"),
            keyed_reply(&seen, "PREFIX"),
        ],
        |b| {
            b.settings(compaction_settings())
                .compactor(Arc::new(AutoCompactor::new()))
                .auth(Arc::new(CommandKey::default()))
        },
    );
    for prompt in ["first", "second"] {
        h.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    h.session.compact(None).await.unwrap();
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|k| k.as_deref() == Some("resolved-key")),
        "{seen:?}"
    );
}

/// A manual compaction whose key cannot be resolved fails after `compaction_start` with the
/// resolver's text (pi: `Compaction failed: <message>`), and sends no summary request.
#[tokio::test]
async fn a_manual_compaction_with_a_failing_key_command_fails_with_its_text() {
    let rec = Arc::new(Recorder::default());
    let hooks = rec.clone();
    let auth = Arc::new(CommandKey::default());
    let session_auth = auth.clone();
    let h = harness(vec![text("one"), text("two")], |b| {
        b.settings(compaction_settings())
            .compactor(Arc::new(AutoCompactor::new()))
            .hooks(hooks)
            .auth(session_auth)
    });
    for prompt in ["first", "second"] {
        h.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    auth.fails.store(true, std::sync::atomic::Ordering::SeqCst);
    let calls = h.faux.call_count();
    let err = h.session.compact(None).await.unwrap_err().to_string();
    let text = "API key auth failed for provider faux: Command failed: exit 3";
    assert_eq!(err, text);
    assert_eq!(h.faux.call_count(), calls, "no summary request");
    let events = compaction_events(&h);
    assert_eq!(
        events[events.len() - 2..],
        [
            "start:Manual".to_owned(),
            format!("end:Manual:false:false:false:Compaction failed: {text}")
        ]
    );
    assert_eq!(
        *rec.0.lock().unwrap(),
        [format!("failed:Manual:false:Compaction failed: {text}")]
    );
}

/// An automatic compaction resolves the key before `compaction_start`; when that fails it is
/// silent (pi's `_runAutoCompaction` returns before `started`).
#[tokio::test]
async fn an_overflow_with_a_failing_key_command_does_not_start_a_compaction() {
    let auth = Arc::new(CommandKey::default());
    let flip = auth.clone();
    let overflow_then_fail = pi_ai::providers::faux::FauxStep::factory(move |_, _, _, _| {
        flip.fails.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(pi_ai::providers::faux::faux_assistant_message(
            vec![],
            pi_ai::providers::faux::FauxMessageOptions {
                stop_reason: Some(pi_ai::StopReason::Error),
                error_message: Some(OVERFLOW.into()),
                ..Default::default()
            },
        ))
    });
    let session_auth = auth.clone();
    let h = harness(vec![text("one"), overflow_then_fail], |b| {
        b.settings(compaction_settings())
            .compactor(Arc::new(AutoCompactor::new()))
            .auth(session_auth)
    });
    h.session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    let _ = h.session.prompt("second", PromptOptions::default()).await;
    assert_eq!(h.faux.call_count(), 2, "no summary request");
    let events = compaction_events(&h);
    assert!(
        !events
            .iter()
            .any(|e| e.starts_with("start:") || e.starts_with("end:")),
        "{events:?}"
    );
    // As without a compactor: the overflow error was taken out of the context (pi's
    // `_checkCompaction` removes it before compacting) and stays in the file.
    let stored = h.stored_assistants();
    assert_eq!(
        stored.last().unwrap().error_message.as_deref(),
        Some(OVERFLOW)
    );
}
