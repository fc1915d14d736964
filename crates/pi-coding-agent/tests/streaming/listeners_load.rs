//! Listener, extension and custom-tool failures under load: session events,
//! extension error isolation and pi-agent-core's awaited, in-order listener delivery.
//!
//! A session run of more than 10,000 events (long streamed texts and thinking over three
//! turns, tool calls), compared with a clean run of the same script:
//!
//! - a session listener failing (`Err` or panic) at a seeded random event of the run stops
//!   that delivery there and fails the run into the synthesized failure sequence, which is
//!   persisted; the session settles and runs a next prompt;
//! - an extension handler panicking at a seeded random event is isolated: one error record
//!   names the extension, the event and the panic text, every other handler still gets every
//!   event, and the transcript is the clean run's;
//! - a custom tool registered by an extension panicking at a seeded random call gives that
//!   call an error result with the panic text; the run goes on as the clean one.
//!
//! 8 seeds per test by default; `PI_LISTENER_LOAD_SEEDS=<n>` runs more.

use crate::extensions_rig;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{
    AgentEvent, AgentMessage, AgentTool, AgentToolResult, HookError, ToolError, ToolUpdateFn,
};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxStep, faux_assistant_message, faux_text, faux_thinking,
    faux_tool_call,
};
use pi_ai::{AssistantContent, Message, StopReason};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use extensions_rig::*;

/// The events a run must at least have.
const LOAD: usize = 10_000;

fn seeds() -> u64 {
    std::env::var("PI_LISTENER_LOAD_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// splitmix64 of `seed`.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn reply(content: Vec<AssistantContent>, stop: StopReason) -> FauxStep {
    faux_assistant_message(
        content,
        FauxMessageOptions {
            stop_reason: Some(stop),
            ..Default::default()
        },
    )
    .into()
}

/// Three turns of 4-character chunks; the first two end with `calls` calls of `tool`.
fn script(tool: &str, calls: usize) -> Vec<FauxStep> {
    let calls = |turn: usize| -> Vec<AssistantContent> {
        (0..calls)
            .map(|c| {
                let mut args = Map::new();
                args.insert("text".into(), json!(format!("{turn}.{c}")));
                faux_tool_call(tool, args, Some(&format!("t{turn}c{c}")))
            })
            .collect()
    };
    let mut first = vec![faux_text("abcd".repeat(3_000))];
    first.extend(calls(1));
    let mut second = vec![
        faux_thinking("hmm ".repeat(2_000)),
        faux_text("efgh".repeat(1_000)),
    ];
    second.extend(calls(2));
    vec![
        reply(first, StopReason::ToolUse),
        reply(second, StopReason::ToolUse),
        reply(vec![faux_text("done".repeat(4_000))], StopReason::Stop),
    ]
}

fn load_options() -> FauxOptions {
    FauxOptions {
        token_size: Some((1, 1)),
        ..Default::default()
    }
}

/// `kind`, with the role or tool call id of core events.
fn label(e: &AgentSessionEvent) -> String {
    match e.core() {
        Some(ev @ (AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message })) => {
            format!("{}:{}", ev.kind(), message.role())
        }
        Some(
            ev @ (AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. }),
        ) => format!("{}:{}", ev.kind(), tool_call_id),
        _ => e.kind().to_owned(),
    }
}

fn labels(r: &Rig) -> Vec<String> {
    r.events.lock().unwrap().iter().map(label).collect()
}

/// The clean run with 5 calls per tool turn: its labels and stored transcript.
async fn clean_run(tool: &str, extensions: Vec<Box<dyn Extension>>) -> (Vec<String>, Vec<String>) {
    clean_run_with(tool, 5, extensions).await
}

const FAILURE: [&str; 5] = [
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
    "agent_settled",
];

fn last_assistant(messages: &[AgentMessage]) -> Option<pi_ai::AssistantMessage> {
    match messages.last()?.to_llm()? {
        Message::Assistant(a) => Some(a.clone()),
        _ => None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_session_listener_failing_at_a_random_event_of_a_long_run_fails_the_run_there() {
    let (clean, _) = clean_run("echo", vec![]).await;
    assert!(clean.len() > LOAD, "only {} events", clean.len());
    assert_eq!(
        clean[clean.len() - 2..],
        ["agent_end".to_owned(), "agent_settled".to_owned()]
    );
    for seed in 1..=seeds() {
        let z = mix(seed);
        // Any event of the run, `agent_end` included (`agent_settled` comes after it).
        let at = (z >> 1) as usize % (clean.len() - 1);
        let panics = z & 1 == 1;
        let text = format!("session listener failed at event {at}");
        let ctx = format!(
            "seed {seed}: {} at {at} ({})",
            if panics { "panic" } else { "Err" },
            clean[at]
        );

        // The rig's recorder is subscribed first; then the failing listener, then another.
        let r = rig_with(load_options(), script("echo", 5), vec![]);
        let seen = AtomicUsize::new(0);
        let t = text.clone();
        r.session.subscribe(move |_| {
            if seen.fetch_add(1, Ordering::SeqCst) != at {
                return Ok(());
            }
            if panics {
                panic!("{t}");
            }
            Err(HookError::new(t.clone()))
        });
        let after = Arc::new(Mutex::new(Vec::new()));
        let a = after.clone();
        r.session.subscribe(move |e| {
            a.lock().unwrap().push(label(e));
            Ok(())
        });
        r.session
            .prompt("go", PromptOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{ctx}: prompt failed: {e}"));

        let expect_after: Vec<String> = clean[..at]
            .iter()
            .cloned()
            .chain(FAILURE.map(String::from))
            .collect();
        let expect_before: Vec<String> = clean[..=at]
            .iter()
            .cloned()
            .chain(FAILURE.map(String::from))
            .collect();
        assert!(
            *after.lock().unwrap() == expect_after,
            "{ctx}: the later listener"
        );
        assert!(labels(&r) == expect_before, "{ctx}: the earlier listener");
        let failure = last_assistant(&r.session.messages()).unwrap();
        assert_eq!(failure.stop_reason, StopReason::Error, "{ctx}");
        assert_eq!(
            failure.error_message.as_deref(),
            Some(text.as_str()),
            "{ctx}"
        );
        assert_eq!(failure.content, vec![AssistantContent::text("")], "{ctx}");
        let stored = session_support_stored_assistants(&r);
        assert_eq!(
            stored
                .last()
                .and_then(|a| a.error_message.clone())
                .as_deref(),
            Some(text.as_str()),
            "{ctx}: the failure is persisted"
        );
        assert!(r.session.is_idle(), "{ctx}");

        // The session runs a next prompt normally.
        r.faux
            .set_responses(vec![reply(vec![faux_text("again")], StopReason::Stop)]);
        r.session
            .prompt("again", PromptOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{ctx}: next prompt: {e}"));
        let next = last_assistant(&r.session.messages()).unwrap();
        assert_eq!(next.stop_reason, StopReason::Stop, "{ctx}");
    }
}

fn session_support_stored_assistants(r: &Rig) -> Vec<pi_ai::AssistantMessage> {
    let s = r.store.lock().unwrap();
    s.entries()
        .unwrap()
        .iter()
        .filter_map(|e| match e.message() {
            Some(AgentMessage::Assistant(a)) => Some((**a).clone()),
            _ => None,
        })
        .collect()
}

/// Registers `hit(name)` as the handler of every observer event of a run (it may panic).
fn observe_all(pi: &mut ExtensionApi<'_>, hit: Arc<dyn Fn(&'static str, bool) + Send + Sync>) {
    macro_rules! on {
        ($ty:ty, $name:expr) => {{
            let hit = hit.clone();
            pi.on::<$ty, _>(move |_, _| {
                // Some handlers fail before building their future, others inside it.
                hit($name, true);
                let hit = hit.clone();
                Box::pin(async move {
                    hit($name, false);
                    Ok(None)
                })
            });
        }};
    }
    on!(AgentStartEvent, "agent_start");
    on!(TurnStartEvent, "turn_start");
    on!(MessageStartEvent, "message_start");
    on!(MessageUpdateEvent, "message_update");
    on!(MessageEndEvent, "message_end");
    on!(ToolExecutionStartEvent, "tool_execution_start");
    on!(ToolExecutionEndEvent, "tool_execution_end");
    on!(TurnEndEvent, "turn_end");
    on!(AgentEndEvent, "agent_end");
}

/// Two extensions: `panics.ts` panics in its `at`-th handler call (eagerly or inside the
/// future); `observer.ts` records every event it gets.
fn panicking_and_observing(at: usize, eager: bool, seen: Log) -> Vec<Box<dyn Extension>> {
    let calls = Arc::new(AtomicUsize::new(0));
    let fired = Arc::new(AtomicBool::new(false));
    vec![
        ext("panics.ts", move |pi| {
            let (calls, fired) = (calls.clone(), fired.clone());
            observe_all(
                pi,
                Arc::new(move |name, before_future| {
                    if before_future {
                        // Counted once per event, before the future.
                        if calls.fetch_add(1, Ordering::SeqCst) == at && eager {
                            fired.store(true, Ordering::SeqCst);
                            panic!("handler exploded at {name} {at}");
                        }
                    } else if calls.load(Ordering::SeqCst) == at + 1
                        && !eager
                        && !fired.swap(true, Ordering::SeqCst)
                    {
                        panic!("handler exploded at {name} {at}");
                    }
                }),
            );
            Ok(())
        }),
        ext("observer.ts", move |pi| {
            let seen = seen.clone();
            observe_all(
                pi,
                Arc::new(move |name, before_future| {
                    if !before_future {
                        seen.lock().unwrap().push(name.to_owned());
                    }
                }),
            );
            Ok(())
        }),
    ]
}

#[tokio::test(start_paused = true)]
async fn an_extension_handler_panicking_at_a_random_event_is_isolated() {
    let clean_seen = log();
    let (clean, clean_stored) = clean_run(
        "echo",
        panicking_and_observing(usize::MAX, true, clean_seen.clone()),
    )
    .await;
    let clean_seen = entries(&clean_seen);
    assert!(
        clean_seen.len() > LOAD,
        "only {} handler calls",
        clean_seen.len()
    );
    for seed in 1..=seeds() {
        let z = mix(seed);
        let at = (z >> 1) as usize % clean_seen.len();
        let eager = z & 1 == 1;
        let ctx = format!(
            "seed {seed}: panic at handler call {at} ({}), eager {eager}",
            clean_seen[at]
        );
        let seen = log();
        let r = rig_with(
            load_options(),
            script("echo", 5),
            panicking_and_observing(at, eager, seen.clone()),
        );
        let errors = log();
        let e = errors.clone();
        r.hooks
            .runner()
            .on_error(Arc::new(move |rec: &ExtensionErrorRecord| {
                e.lock().unwrap().push(format!(
                    "{}|{}|{}",
                    rec.extension_path, rec.event, rec.error
                ));
            }));
        r.session
            .prompt("go", PromptOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{ctx}: prompt failed: {e}"));
        let name = &clean_seen[at];
        assert_eq!(
            entries(&errors),
            [format!("panics.ts|{name}|handler exploded at {name} {at}")],
            "{ctx}"
        );
        assert!(
            entries(&seen) == clean_seen,
            "{ctx}: the other extension missed events"
        );
        assert!(labels(&r) == clean, "{ctx}: the session events changed");
        assert_eq!(stored(&r), clean_stored, "{ctx}: the transcript changed");
    }
}

/// A custom tool that panics at its `at`-th call (counted across the run).
struct Flaky {
    at: usize,
    calls: AtomicUsize,
}

impl AgentTool for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn label(&self) -> &str {
        "Flaky"
    }
    fn description(&self) -> &str {
        "Echoes its text, or panics"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object","properties":{"text":{"type":"string"}}}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let text = args["text"].as_str().unwrap_or("").to_owned();
            if n == self.at {
                panic!("flaky tool exploded on {text}");
            }
            Ok(AgentToolResult::text(format!("flaky:{text}"), None))
        })
    }
}

fn flaky_extension(at: usize) -> Vec<Box<dyn Extension>> {
    let tool: Arc<dyn AgentTool> = Arc::new(Flaky {
        at,
        calls: AtomicUsize::new(0),
    });
    vec![ext("tools.ts", move |pi| {
        pi.register_tool(tool.clone());
        Ok(())
    })]
}

/// A rig whose extension registers [`Flaky`] at load: attaching the hooks activates it next
/// to the session's own tool, as pi's initial build activates every extension tool.
fn flaky_rig(calls: usize, at: usize) -> Rig {
    let r = rig_with(load_options(), script("flaky", calls), flaky_extension(at));
    let active: Vec<String> = r
        .session
        .agent()
        .with_state(|st| st.tools.iter().map(|t| t.name().to_owned()).collect());
    assert_eq!(active, ["echo", "flaky"]);
    r
}

#[tokio::test(start_paused = true)]
async fn a_custom_tool_panicking_at_a_random_call_gives_that_call_an_error_result() {
    let calls = 20;
    let r = flaky_rig(calls, usize::MAX);
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let (clean, clean_stored) = (labels(&r), stored(&r));
    assert!(clean.len() > LOAD, "only {} events", clean.len());
    for seed in 1..=seeds() {
        let at = mix(seed) as usize % (2 * calls);
        let (turn, call) = (1 + at / calls, at % calls);
        let ctx = format!("seed {seed}: panic at call {at}");
        let r = flaky_rig(calls, at);
        r.session
            .prompt("go", PromptOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{ctx}: prompt failed: {e}"));
        assert!(labels(&r) == clean, "{ctx}: the session events changed");
        let id = format!("t{turn}c{call}");
        let ends: Vec<(String, String, bool)> = r
            .events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e.core() {
                Some(AgentEvent::ToolExecutionEnd {
                    tool_call_id,
                    result,
                    is_error,
                    ..
                }) => Some((
                    tool_call_id.clone(),
                    result.content[0].as_text().unwrap_or("").to_owned(),
                    *is_error,
                )),
                _ => None,
            })
            .collect();
        for (tool_call_id, text, is_error) in ends {
            if tool_call_id == id {
                assert_eq!(
                    (text.as_str(), is_error),
                    (
                        format!("flaky tool exploded on {turn}.{call}").as_str(),
                        true
                    ),
                    "{ctx}"
                );
            } else {
                assert!(
                    !is_error && text.starts_with("flaky:"),
                    "{ctx}: {tool_call_id} {text}"
                );
            }
        }
        let stored = stored(&r);
        let differing: Vec<(&String, &String)> = stored
            .iter()
            .zip(&clean_stored)
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(stored.len(), clean_stored.len(), "{ctx}");
        assert_eq!(
            differing,
            [(
                &format!("toolResult:flaky tool exploded on {turn}.{call}"),
                &format!("toolResult:flaky:{turn}.{call}")
            )],
            "{ctx}"
        );
    }
}

/// The clean run with `calls` calls per tool turn: its labels and stored transcript.
async fn clean_run_with(
    tool: &str,
    calls: usize,
    extensions: Vec<Box<dyn Extension>>,
) -> (Vec<String>, Vec<String>) {
    let r = rig_with(load_options(), script(tool, calls), extensions);
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    (labels(&r), stored(&r))
}
