//! Tool calls: preflight, validation, execution and finalization; update gating
//! and joining; sequential vs parallel ordering (the seed's example); `terminate`; the
//! `length` stop.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::agent_loop::{TOOL_BLOCKED, truncated_call_text};
use pi_agent_core::{
    AfterToolCallResult, AgentEvent, AgentTool, AgentToolResult, BeforeToolCallResult,
    ExecutionMode, HookError, ListenerError, ToolError, ToolUpdateFn,
};
use pi_ai::{Message, StopReason, UserContent};
use serde_json::{Value, json};
use support::*;
use tokio_util::sync::CancellationToken;

type Log = Arc<Mutex<Vec<String>>>;

fn end_results(rec: &Recorder) -> Vec<(String, String, bool)> {
    rec.events()
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => Some((tool_call_id.clone(), result_text(result), *is_error)),
            _ => None,
        })
        .collect()
}

fn tool_labels(rec: &Recorder) -> Vec<String> {
    rec.labels()
        .into_iter()
        .filter(|l| l.starts_with("tool_") || l.contains("toolResult") || l == "turn_end")
        .collect()
}

#[tokio::test(start_paused = true)]
async fn seed_parallel_example_orders_starts_ends_and_results() {
    // A fails preflight (validation); C's execute returns after B's, but B's after_tool_call
    // finishes later, so end C precedes end B; result messages follow in source order.
    let script = Scripted::new(vec![
        tool_reply(&[
            ("A", "strict", json!({})),
            ("B", "slow", json!({})),
            ("C", "fast", json!({})),
        ]),
        text_reply("done"),
    ]);
    let strict = TestTool::new("strict").schema(json!({"type":"object","required":["path"]}));
    let b = TestTool::new("slow").delay_ms(10);
    let c = TestTool::new("fast").delay_ms(20).updates(&["c progress"]);
    let agent = agent_with(&script, vec![strict.arc(), b.arc(), c.arc()]);
    agent.update_options(|o| {
        o.after_tool_call = Some(Arc::new(|ctx, _| {
            Box::pin(async move {
                if ctx.tool_call.id == "B" {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
                Ok(None)
            })
        }));
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let turn: Vec<String> = tool_labels(&rec).into_iter().take(12).collect();
    assert_eq!(
        turn,
        [
            "tool_execution_start:A",
            "tool_execution_end:A",
            "tool_execution_start:B",
            "tool_execution_start:C",
            "tool_execution_update:C",
            "tool_execution_end:C",
            "tool_execution_end:B",
            "message_start:toolResult",
            "message_end:toolResult",
            "message_start:toolResult",
            "message_end:toolResult",
            "message_start:toolResult",
        ]
    );
    let events = rec.events();
    let ids: Vec<String> = events
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::MessageEnd { message } => match message.to_llm() {
                Some(Message::ToolResult(r)) => Some(r.tool_call_id.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["A", "B", "C"]);
    let turn_end: Vec<pi_ai::ToolResultMessage> = events
        .iter()
        .find_map(|e| match &**e {
            AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
                Some(tool_results.iter().map(|r| (**r).clone()).collect())
            }
            _ => None,
        })
        .unwrap();
    let order: Vec<&str> = turn_end.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(order, ["A", "B", "C"]);
    assert!(turn_end[0].is_error && !turn_end[1].is_error && !turn_end[2].is_error);
}

#[tokio::test(start_paused = true)]
async fn parallel_calls_overlap() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        tool_reply(&[("1", "a", json!({})), ("2", "b", json!({}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(
        &script,
        vec![
            TestTool::new("a").delay_ms(10).log(&log).arc(),
            TestTool::new("b").delay_ms(10).log(&log).arc(),
        ],
    );
    agent.prompt("go").await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(&log[..2], ["exec 1 {}", "exec 2 {}"], "{log:?}");
}

#[tokio::test(start_paused = true)]
async fn sequential_mode_runs_one_call_at_a_time_with_its_result_message() {
    for per_tool in [false, true] {
        let log: Log = Arc::default();
        let script = Scripted::new(vec![
            tool_reply(&[("1", "a", json!({})), ("2", "b", json!({}))]),
            text_reply("ok"),
        ]);
        let mut b = TestTool::new("b").delay_ms(5).log(&log);
        if per_tool {
            // One sequential tool makes the whole batch sequential.
            b = b.sequential();
        }
        let agent = agent_with(
            &script,
            vec![TestTool::new("a").delay_ms(10).log(&log).arc(), b.arc()],
        );
        if !per_tool {
            agent.update_options(|o| o.tool_execution = ExecutionMode::Sequential);
        }
        let rec = Recorder::attach(&agent);
        agent.prompt("go").await.unwrap();
        assert_eq!(
            tool_labels(&rec)[..8],
            [
                "tool_execution_start:1",
                "tool_execution_end:1",
                "message_start:toolResult",
                "message_end:toolResult",
                "tool_execution_start:2",
                "tool_execution_end:2",
                "message_start:toolResult",
                "message_end:toolResult",
            ]
        );
        assert_eq!(
            *log.lock().unwrap(),
            ["exec 1 {}", "done 1", "exec 2 {}", "done 2"]
        );
    }
}

#[tokio::test]
async fn preflight_errors_become_error_results() {
    let script = Scripted::new(vec![
        tool_reply(&[
            ("1", "missing", json!({})),
            ("2", "blocked", json!({})),
            ("3", "reasoned", json!({})),
            ("4", "hookfail", json!({})),
        ]),
        text_reply("ok"),
    ]);
    let agent = agent_with(
        &script,
        vec![
            TestTool::new("blocked").arc(),
            TestTool::new("reasoned").arc(),
            TestTool::new("hookfail").arc(),
        ],
    );
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(|ctx, _| {
            Box::pin(async move {
                match ctx.tool_call.name.as_str() {
                    "blocked" => Ok(Some(BeforeToolCallResult {
                        block: true,
                        ..Default::default()
                    })),
                    "reasoned" => Ok(Some(BeforeToolCallResult {
                        block: true,
                        reason: Some("Recursive deletion is disabled".into()),
                        ..Default::default()
                    })),
                    _ => Err(HookError::new("hook threw")),
                }
            })
        }));
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        end_results(&rec),
        [
            ("1".into(), "Tool missing not found".into(), true),
            ("2".into(), TOOL_BLOCKED.into(), true),
            ("3".into(), "Recursive deletion is disabled".into(), true),
            ("4".into(), "hook threw".into(), true),
        ]
    );
    // Error results carry details {}.
    let events = rec.events();
    let details = events.iter().find_map(|e| match &**e {
        AgentEvent::ToolExecutionEnd { result, .. } => result.details.clone(),
        _ => None,
    });
    assert_eq!(details, Some(json!({})));
}

/// A call whose streamed arguments the wire mapper refused (not exactly one JSON object) is
/// answered with an error result naming the reason; the tool never runs, the turn goes on.
#[tokio::test]
async fn calls_with_refused_arguments_are_not_executed() {
    let script = Scripted::new(vec![
        tool_reply(&[
            ("1", "echo", json!({"$refused": true, "a": "x"})),
            ("2", "echo", json!({"a": "y"})),
        ]),
        text_reply("ok"),
    ]);
    let mut tool = TestTool::new("echo");
    tool.result = "ran {args}".into();
    let agent = agent_with(&script, vec![tool.arc()]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        end_results(&rec),
        [
            (
                "1".into(),
                "Tool call \"echo\" was not executed: its arguments are not exactly one valid JSON object. Re-issue the tool call with its arguments as one complete JSON object.".into(),
                true
            ),
            ("2".into(), "ran {\"a\":\"y\"}".into(), false),
        ]
    );
    assert_eq!(script.request_count(), 2);
}

#[tokio::test]
async fn validated_args_are_coerced_and_hooks_may_replace_them() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        tool_reply(&[("1", "num", json!({"n": "42", "flag": "true"}))]),
        tool_reply(&[("2", "num", json!({"n": "1"}))]),
        text_reply("ok"),
    ]);
    let tool = TestTool::new("num")
        .schema(
            json!({"type":"object","properties":{"n":{"type":"number"},"flag":{"type":"boolean"}}}),
        )
        .log(&log);
    let agent = agent_with(&script, vec![tool.arc()]);
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(|ctx, _| {
            Box::pin(async move {
                if ctx.tool_call.id == "2" {
                    // pi: in-place mutation of args; runs unvalidated.
                    return Ok(Some(BeforeToolCallResult {
                        args: Some(json!({"n": "not validated"})),
                        ..Default::default()
                    }));
                }
                assert_eq!(ctx.args, json!({"n": 42, "flag": true}));
                Ok(None)
            })
        }));
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log[0], r#"exec 1 {"n":42,"flag":true}"#);
    assert_eq!(log[2], r#"exec 2 {"n":"not validated"}"#);
    // Events keep the raw arguments.
    let starts: Vec<Value> = rec
        .events()
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::ToolExecutionStart { args, .. } => Some(args.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(starts[0], json!({"n": "42", "flag": "true"}));
}

/// A tool whose `prepare_arguments` maps a legacy `file` argument to `path`.
struct Legacy;

impl AgentTool for Legacy {
    fn name(&self) -> &str {
        "legacy"
    }
    fn label(&self) -> &str {
        "Legacy"
    }
    fn description(&self) -> &str {
        "legacy"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(
            || json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        )
    }
    fn prepare_arguments(&self, raw: Value) -> Value {
        match raw.get("file") {
            Some(f) => json!({ "path": f }),
            None => raw,
        }
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _c: CancellationToken,
        _u: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move { Ok(AgentToolResult::text(args["path"].to_string(), None)) })
    }
}

#[tokio::test]
async fn prepare_arguments_output_is_validated_and_executed_events_keep_the_original() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "legacy", json!({"file": "a.txt"}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(&script, vec![Arc::new(Legacy)]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(end_results(&rec), [("1".into(), "\"a.txt\"".into(), false)]);
    let events = rec.events();
    let start_args = events.iter().find_map(|e| match &**e {
        AgentEvent::ToolExecutionStart { args, .. } => Some(args.clone()),
        _ => None,
    });
    assert_eq!(start_args, Some(json!({"file": "a.txt"})));
}

#[tokio::test]
async fn tool_errors_and_panics_become_error_results() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "bad", json!({})), ("2", "boom", json!({}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(
        &script,
        vec![
            TestTool::new("bad").fail("disk on fire").arc(),
            TestTool::new("boom").panics().arc(),
        ],
    );
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        end_results(&rec),
        [
            ("1".into(), "disk on fire".into(), true),
            ("2".into(), "tool exploded".into(), true),
        ]
    );
    assert_eq!(
        script.request_count(),
        2,
        "the run continued after the failures"
    );
}

#[tokio::test]
async fn after_tool_call_overrides_fields_and_its_failure_is_an_error_result() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({})), ("2", "t", json!({}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(&script, vec![Arc::new(AddsTools)]);
    agent.update_options(|o| {
        o.after_tool_call = Some(Arc::new(|ctx, _| {
            Box::pin(async move {
                if ctx.tool_call.id == "2" {
                    return Err(HookError::new("after failed"));
                }
                assert!(!ctx.is_error);
                Ok(Some(AfterToolCallResult {
                    content: Some(vec![UserContent::text("rewritten")]),
                    is_error: Some(true),
                    ..Default::default()
                }))
            })
        }));
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        end_results(&rec),
        [
            ("1".into(), "rewritten".into(), true),
            ("2".into(), "after failed".into(), true),
        ]
    );
    let events = rec.events();
    let results: Vec<pi_ai::ToolResultMessage> = events
        .iter()
        .find_map(|e| match &**e {
            AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
                Some(tool_results.iter().map(|r| (**r).clone()).collect())
            }
            _ => None,
        })
        .unwrap();
    // Other fields are kept: details and addedToolNames survive the override.
    assert_eq!(results[0].details, Some(json!({"kept": true})));
    assert_eq!(results[0].added_tool_names, Some(vec!["extra".to_owned()]));
    // The failing hook replaced the whole result.
    assert_eq!(results[1].added_tool_names, None);
    let json = pi_ai::json::to_string(&Message::ToolResult(results[0].clone())).unwrap();
    assert!(json.contains(r#""addedToolNames":["extra"]"#) && !json.contains("terminate"));
}

struct AddsTools;

impl AgentTool for AddsTools {
    fn name(&self) -> &str {
        "t"
    }
    fn label(&self) -> &str {
        "t"
    }
    fn description(&self) -> &str {
        "t"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        _c: CancellationToken,
        _u: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            Ok(AgentToolResult {
                content: vec![UserContent::text("orig")],
                details: Some(json!({"kept": true})),
                added_tool_names: Some(vec!["extra".into()]),
                terminate: Some(false),
                ..Default::default()
            })
        })
    }
}

#[tokio::test]
async fn empty_added_tool_names_are_not_stored() {
    let f = AgentToolResult {
        added_tool_names: Some(vec![]),
        ..Default::default()
    };
    let script = Scripted::new(vec![tool_reply(&[("1", "e", json!({}))]), text_reply("ok")]);
    struct Empty(AgentToolResult);
    impl AgentTool for Empty {
        fn name(&self) -> &str {
            "e"
        }
        fn label(&self) -> &str {
            "e"
        }
        fn description(&self) -> &str {
            "e"
        }
        fn parameters(&self) -> &Value {
            static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
            S.get_or_init(|| json!({"type":"object"}))
        }
        fn execute<'a>(
            &'a self,
            _id: &'a str,
            _a: Value,
            _c: CancellationToken,
            _u: Option<ToolUpdateFn>,
        ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
            let r = self.0.clone();
            Box::pin(async move { Ok(r) })
        }
    }
    let agent = agent_with(&script, vec![Arc::new(Empty(f))]);
    agent.prompt("go").await.unwrap();
    let tr = agent
        .messages()
        .into_iter()
        .find_map(|m| match m.to_llm() {
            Some(Message::ToolResult(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(tr.added_tool_names, None);
    assert!(tr.content.is_empty());
}

#[tokio::test(start_paused = true)]
async fn updates_overlap_are_joined_before_after_tool_call_and_late_ones_dropped() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![tool_reply(&[("1", "u", json!({}))]), text_reply("ok")]);
    let tool = TestTool::new("u").updates(&["first", "second"]);
    let kept = Arc::clone(&tool.kept_update);
    let agent = agent_with(&script, vec![tool.arc()]);
    let (l, k) = (Arc::clone(&log), Arc::clone(&kept));
    agent.update_options(|o| {
        o.after_tool_call = Some(Arc::new(move |_, _| {
            push(&l, "after_tool_call");
            // A late update (execute already returned): dropped.
            if let Some(u) = k.lock().unwrap().as_ref() {
                u(AgentToolResult::text("late", None));
            }
            Box::pin(async { Ok(None) })
        }));
    });
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        let l = Arc::clone(&l);
        async move {
            if let AgentEvent::ToolExecutionUpdate { partial_result, .. } = &*e {
                let t = result_text(partial_result);
                push(&l, format!("update {t} begin"));
                // The first delivery is slower than the second: they overlap.
                let ms = if t == "first" { 20 } else { 5 };
                tokio::time::sleep(Duration::from_millis(ms)).await;
                push(&l, format!("update {t} end"));
            }
            if let AgentEvent::ToolExecutionEnd { .. } = &*e {
                push(&l, "end");
            }
            Ok(())
        }
    });
    agent.prompt("go").await.unwrap();
    // After the run, the kept callback is still dropped.
    if let Some(u) = kept.lock().unwrap().as_ref() {
        u(AgentToolResult::text("after run", None));
    }
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "update first begin",
            "update second begin",
            "update second end",
            "update first end",
            "after_tool_call",
            "end",
        ]
    );
}

/// Sends `count` updates and records, after each, whether a listener already saw it.
struct Reporter {
    count: usize,
    log: Log,
}

impl AgentTool for Reporter {
    fn name(&self) -> &str {
        "r"
    }
    fn label(&self) -> &str {
        "r"
    }
    fn description(&self) -> &str {
        "reports"
    }
    fn parameters(&self) -> &serde_json::Value {
        static S: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type": "object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: serde_json::Value,
        _cancel: tokio_util::sync::CancellationToken,
        on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> futures::future::BoxFuture<'a, Result<AgentToolResult, pi_agent_core::ToolError>> {
        Box::pin(async move {
            let update = on_update.expect("updates are wired");
            for i in 0..self.count {
                update(AgentToolResult::text(format!("u{i}"), None));
                let seen = self.log.lock().unwrap().last() == Some(&format!("u{i}"));
                push(&self.log, format!("seen {seen}"));
            }
            Ok(AgentToolResult::text("done", None))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_see_each_update_before_on_update_returns_in_order() {
    // pi's emit runs each listener up to its first await at once: a listener recording an
    // update synchronously has done so when `onUpdate` returns, so updates stay in order.
    let log: Log = Arc::default();
    let script = Scripted::new(vec![tool_reply(&[("1", "r", json!({}))]), text_reply("ok")]);
    let tool = Reporter {
        count: 20,
        log: Arc::clone(&log),
    };
    let agent = agent_with(&script, vec![Arc::new(tool)]);
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        if let AgentEvent::ToolExecutionUpdate { partial_result, .. } = &*e {
            push(&l, result_text(partial_result));
        }
        async { Ok(()) }
    });
    agent.prompt("go").await.unwrap();
    let want: Vec<String> = (0..20)
        .flat_map(|i| [format!("u{i}"), "seen true".to_owned()])
        .collect();
    assert_eq!(*log.lock().unwrap(), want);
}

fn push(log: &Log, s: impl Into<String>) {
    log.lock().unwrap().push(s.into());
}

#[tokio::test]
async fn a_failed_update_delivery_fails_the_run() {
    let script = Scripted::new(vec![tool_reply(&[("1", "u", json!({}))]), text_reply("ok")]);
    let agent = agent_with(&script, vec![TestTool::new("u").updates(&["x"]).arc()]);
    agent.subscribe(|e, _| {
        let fail = matches!(&*e, AgentEvent::ToolExecutionUpdate { .. });
        futures::future::ready(if fail {
            Err(HookError::new("ui gone"))
        } else {
            Ok::<(), ListenerError>(())
        })
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(agent.error_message().as_deref(), Some("ui gone"));
    assert_eq!(script.request_count(), 1);
    let l = rec.labels();
    assert!(!l.iter().any(|s| s.starts_with("tool_execution_end")));
    assert_eq!(
        &l[l.len() - 4..],
        [
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ]
    );
}

#[tokio::test]
async fn batch_terminates_only_when_every_result_terminates() {
    // All terminate: no further LLM call.
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({})), ("2", "t", json!({}))]),
        text_reply("unused"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").terminate(true).arc()]);
    agent.prompt("go").await.unwrap();
    assert_eq!(script.request_count(), 1);
    assert_eq!(agent.messages().last().unwrap().role(), "toolResult");

    // Mixed: the loop continues.
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({})), ("2", "u", json!({}))]),
        text_reply("next"),
    ]);
    let agent = agent_with(
        &script,
        vec![
            TestTool::new("t").terminate(true).arc(),
            TestTool::new("u").arc(),
        ],
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(script.request_count(), 2);

    // A blocked call with terminate: true counts as terminating.
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("x")]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(|_, _| {
            Box::pin(async {
                Ok(Some(BeforeToolCallResult {
                    block: true,
                    terminate: Some(true),
                    ..Default::default()
                }))
            })
        }));
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(script.request_count(), 1);
}

#[tokio::test]
async fn length_stop_executes_nothing_and_fails_each_call() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        Reply::Tools(
            vec![
                ("1".into(), "t".into(), json!({"value": "trunc"})),
                ("2".into(), "t".into(), json!({})),
            ],
            StopReason::Length,
        ),
        text_reply("retrying"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").log(&log).arc()]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert!(log.lock().unwrap().is_empty());
    assert_eq!(
        end_results(&rec),
        [
            ("1".into(), truncated_call_text("t"), true),
            ("2".into(), truncated_call_text("t"), true),
        ]
    );
    assert_eq!(
        truncated_call_text("t"),
        "Tool call \"t\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    );
    assert_eq!(
        tool_labels(&rec)[..8],
        [
            "tool_execution_start:1",
            "tool_execution_end:1",
            "message_start:toolResult",
            "message_end:toolResult",
            "tool_execution_start:2",
            "tool_execution_end:2",
            "message_start:toolResult",
            "message_end:toolResult",
        ]
    );
    assert_eq!(
        script.request_count(),
        2,
        "terminate is false: another LLM call follows"
    );
}

#[tokio::test]
async fn tool_calls_in_a_stop_message_still_execute() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        Reply::Tools(vec![("1".into(), "t".into(), json!({}))], StopReason::Stop),
        text_reply("ok"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").log(&log).arc()]);
    agent.prompt("go").await.unwrap();
    assert_eq!(log.lock().unwrap()[0], "exec 1 {}");
}

/// Sends an update, yields long enough for its delivery to finish, then sends another.
struct SpacedUpdates;

impl AgentTool for SpacedUpdates {
    fn name(&self) -> &str {
        "spaced"
    }
    fn label(&self) -> &str {
        "spaced"
    }
    fn description(&self) -> &str {
        "spaced"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _a: Value,
        _c: CancellationToken,
        u: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let u = u.unwrap();
            u(AgentToolResult::text("one", None));
            tokio::time::sleep(Duration::from_millis(10)).await;
            u(AgentToolResult::text("two", None));
            Ok(AgentToolResult::text("done", None))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_delivery_failure_reaped_before_execute_returns_still_fails_the_run() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "spaced", json!({}))]),
        text_reply("x"),
    ]);
    let agent = agent_with(&script, vec![Arc::new(SpacedUpdates)]);
    let seen: Log = Arc::default();
    let s = Arc::clone(&seen);
    agent.subscribe(move |e, _| {
        let r = match &*e {
            AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
                let t = result_text(partial_result);
                push(&s, t.clone());
                if t == "one" {
                    Err(HookError::new("first update failed"))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        };
        futures::future::ready(r)
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["one", "two"]);
    assert_eq!(
        agent.error_message().as_deref(),
        Some("first update failed")
    );
    assert_eq!(script.request_count(), 1);
}

#[tokio::test(start_paused = true)]
async fn emission_points_are_barriers_for_preflight_and_results() {
    // message_end(assistant) and tool_execution_start are fully delivered before preflight;
    // tool_execution_end is fully delivered before the result message starts.
    let log: Log = Arc::default();
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("ok")]);
    let agent = agent_with(&script, vec![TestTool::new("t").log(&log).arc()]);
    let l = Arc::clone(&log);
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(move |_, _| {
            push(&l, "before_tool_call");
            Box::pin(async { Ok(None) })
        }));
    });
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        let l = Arc::clone(&l);
        async move {
            let name = match &*e {
                AgentEvent::MessageEnd { message } if message.role() == "assistant" => {
                    "assistant end"
                }
                AgentEvent::ToolExecutionStart { .. } => "tool start",
                AgentEvent::ToolExecutionEnd { .. } => "tool end",
                AgentEvent::MessageStart { message } if message.role() == "toolResult" => {
                    "result start"
                }
                _ => return Ok(()),
            };
            tokio::time::sleep(Duration::from_millis(100)).await;
            push(&l, format!("{name} delivered"));
            Ok(())
        }
    });
    agent.prompt("go").await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log[..6],
        [
            "assistant end delivered",
            "tool start delivered",
            "before_tool_call",
            "exec 1 {}",
            "done 1",
            "tool end delivered",
        ]
    );
    assert_eq!(log[6], "result start delivered");
}
