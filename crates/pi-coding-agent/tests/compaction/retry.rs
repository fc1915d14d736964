//! Summarization retry in every kind of compaction on the faux provider:
//! manual, threshold and overflow compactions retry a transient summary failure with the
//! session's `retry.*` settings and emit `summarization_retry_scheduled`, `…_attempt_start`
//! (with the compaction's reason) and `…_finished` between `compaction_start` and
//! `compaction_end`; an abort during the back-off cancels the compaction; an exhausted
//! budget fails it with the last error.

use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use serde_json::{Value, json};
use session_support::*;

fn settings(v: Value) -> Arc<Mutex<SettingsManager>> {
    let Value::Object(m) = v else { unreachable!() };
    Arc::new(Mutex::new(SettingsManager::in_memory(m)))
}

/// Retries on (`maxRetries: 2`, `baseDelayMs: 5`), `keepRecentTokens: 1`, plus `extra`
/// compaction settings.
fn retrying(extra: Value) -> Arc<Mutex<SettingsManager>> {
    let mut compaction = json!({"keepRecentTokens": 1});
    for (k, v) in extra.as_object().into_iter().flatten() {
        compaction[k] = v.clone();
    }
    settings(json!({
        "retry": {"enabled": true, "maxRetries": 2, "baseDelayMs": 5},
        "compaction": compaction
    }))
}

/// The compaction, summarization-retry and run-boundary events as JSON, in order.
fn timeline(h: &Harness) -> Vec<Value> {
    h.events()
        .iter()
        .filter(|e| {
            matches!(
                e.kind(),
                "compaction_start"
                    | "compaction_end"
                    | "summarization_retry_scheduled"
                    | "summarization_retry_attempt_start"
                    | "summarization_retry_finished"
                    | "agent_settled"
            )
        })
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            if let Some(r) = v.get_mut("result") {
                *r = json!(r["summary"]);
            }
            v
        })
        .collect()
}

const OVERLOADED: &str = "overloaded_error: Overloaded";

fn scheduled(attempt: u32, delay: u64) -> Value {
    json!({"type": "summarization_retry_scheduled", "attempt": attempt, "maxAttempts": 2,
           "delayMs": delay, "errorMessage": OVERLOADED})
}

fn attempt_start(reason: &str) -> Value {
    json!({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": reason})
}

#[tokio::test(start_paused = true)]
async fn manual_compaction_retries_its_summary_call() {
    let h = harness(
        vec![
            text("one"),
            text("two"),
            text("SUMMARY"),
            error(OVERLOADED),
            text("PREFIX"),
        ],
        |b| {
            b.settings(retrying(json!({})))
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for p in ["first", "second"] {
        h.session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    let result = h.session.compact(None).await.unwrap();
    assert!(result.summary.ends_with("PREFIX"), "{}", result.summary);
    let t = timeline(&h);
    let from = t
        .iter()
        .position(|e| e["type"] == "compaction_start")
        .unwrap();
    assert_eq!(
        t[from..],
        [
            json!({"type": "compaction_start", "reason": "manual"}),
            scheduled(1, 5),
            attempt_start("manual"),
            json!({"type": "summarization_retry_finished"}),
            json!({"type": "compaction_end", "reason": "manual", "result": result.summary,
                   "aborted": false, "willRetry": false}),
        ]
    );
    assert_eq!(h.faux.call_count(), 5);
}

#[tokio::test(start_paused = true)]
async fn threshold_compaction_retries_its_summary_call() {
    // A 10-token threshold (window 128 000 − reserve 127 990): the first answer crosses it.
    let h = harness(vec![text("one"), error(OVERLOADED), text("PREFIX")], |b| {
        b.settings(retrying(json!({"reserveTokens": 127_990})))
            .compactor(Arc::new(AutoCompactor::new()))
    });
    h.session
        .prompt(&"first ".repeat(20), PromptOptions::default())
        .await
        .unwrap();
    let summary = "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX";
    assert_eq!(
        timeline(&h),
        [
            json!({"type": "compaction_start", "reason": "threshold"}),
            scheduled(1, 5),
            attempt_start("threshold"),
            json!({"type": "summarization_retry_finished"}),
            json!({"type": "compaction_end", "reason": "threshold", "result": summary,
                   "aborted": false, "willRetry": false}),
            json!({"type": "agent_settled"}),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn overflow_compaction_retries_its_summary_call_then_the_prompt() {
    let overflow = "prompt is too long: 213462 tokens > 200000 maximum";
    let h = harness(
        vec![
            text("one"),
            error(overflow),
            error(OVERLOADED),
            text("SUMMARY"),
            text("recovered"),
        ],
        |b| {
            b.settings(retrying(json!({})))
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for p in ["first", "second"] {
        h.session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("recovered")
    );
    let t = timeline(&h);
    let from = t
        .iter()
        .position(|e| e["type"] == "compaction_start")
        .unwrap();
    let types: Vec<&str> = t[from..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "compaction_start",
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_finished",
            "compaction_end",
            "agent_settled"
        ]
    );
    assert_eq!(t[from + 1], scheduled(1, 5));
    assert_eq!(t[from + 2], attempt_start("overflow"));
    assert_eq!(t[from + 4]["willRetry"], true);
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_budget_fails_the_compaction_with_the_last_error() {
    let h = harness(
        vec![
            text("one"),
            text("two"),
            text("SUMMARY"),
            error(OVERLOADED),
            error(OVERLOADED),
            error(OVERLOADED),
        ],
        |b| {
            b.settings(retrying(json!({})))
                .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for p in ["first", "second"] {
        h.session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    let err = h.session.compact(None).await.unwrap_err().to_string();
    assert_eq!(
        err,
        format!("Turn prefix summarization failed: {OVERLOADED}")
    );
    let t = timeline(&h);
    let from = t
        .iter()
        .position(|e| e["type"] == "compaction_start")
        .unwrap();
    assert_eq!(
        t[from + 1..],
        [
            scheduled(1, 5),
            attempt_start("manual"),
            scheduled(2, 10),
            attempt_start("manual"),
            json!({"type": "summarization_retry_finished"}),
            json!({"type": "compaction_end", "reason": "manual", "aborted": false,
                   "willRetry": false,
                   "errorMessage": format!("Compaction failed: {err}")}),
        ]
    );
    assert_eq!(
        h.faux.call_count(),
        6,
        "two answers, one summary, three prefix tries"
    );
}

#[tokio::test(start_paused = true)]
async fn an_abort_during_the_back_off_cancels_the_compaction() {
    let h = harness(
        vec![text("one"), text("two"), text("SUMMARY"), error(OVERLOADED)],
        |b| {
            b.settings(settings(json!({
                "retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 60_000},
                "compaction": {"keepRecentTokens": 1}
            })))
            .compactor(Arc::new(AutoCompactor::new()))
        },
    );
    for p in ["first", "second"] {
        h.session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    let backing_off = Arc::new(tokio::sync::Notify::new());
    let signal = backing_off.clone();
    h.session.subscribe(move |e| {
        if matches!(e, AgentSessionEvent::SummarizationRetryScheduled { .. }) {
            signal.notify_one();
        }
        Ok(())
    });
    let session = h.session.clone();
    let compaction = tokio::spawn(async move { session.compact(None).await });
    backing_off.notified().await;
    h.session.abort().await;
    let err = compaction.await.unwrap().unwrap_err().to_string();
    assert_eq!(err, "Compaction cancelled");
    let t = timeline(&h);
    let from = t
        .iter()
        .rposition(|e| e["type"] == "compaction_start")
        .unwrap();
    assert_eq!(
        t[from..],
        [
            json!({"type": "compaction_start", "reason": "manual"}),
            json!({"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3,
                   "delayMs": 60_000, "errorMessage": OVERLOADED}),
            json!({"type": "summarization_retry_finished"}),
            json!({"type": "compaction_end", "reason": "manual", "aborted": true,
                   "willRetry": false}),
        ]
    );
    assert!(!h.entry_kinds().iter().any(|k| k == "compaction"));
}
