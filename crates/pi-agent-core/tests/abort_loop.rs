//! Abort at random points: a seeded loop over streaming, parallel and sequential tool
//! scenarios.
//!
//! Each iteration builds a random script on the faux provider (paced in paused time: text,
//! thinking and tool-call blocks over several turns), tools that run for a while and stream
//! progress, a `before_tool_call` hook that sometimes waits, and aborts the run either after
//! a random (virtual) delay or inside the listener of a random event. Checked per iteration:
//!
//! - every `agent_start`/`turn_start`/`message_start`/`tool_execution_start` has its end, in
//!   order, nothing outside the run, updates only inside their message or tool call;
//! - no tool executes after the abort; the only `tool_execution_start` after it is the first
//!   call of a batch whose assistant message still completed (pi's sweep emits that start
//!   before it checks the signal), and that call ends at once with `Operation aborted`;
//! - a run aborted before its last assistant message started ends with an aborted assistant
//!   message, and `prompt` succeeds;
//! - no task spawned during the run (provider streams, update deliveries) outlives it
//!   (`RuntimeMetrics::num_alive_tasks` after the run settled);
//! - the agent is usable: a next prompt runs to a normal end with the same checks.
//!
//! 50 iterations by default; `PI_ABORT_LOOP_ITERATIONS=<n>` runs more and
//! `PI_ABORT_LOOP_SEED=<n>` changes the first seed. A failure names its seed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, ExecutionMode, ListenerError,
    ToolError, ToolUpdateFn,
};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
    faux_thinking, faux_tool_call,
};
use pi_ai::{AssistantContent, Message, StopReason};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// splitmix64: a small deterministic generator for the scenarios.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Shared observations of one iteration.
#[derive(Default)]
struct Observed {
    /// Set just before `abort()` is called.
    aborted: AtomicBool,
    /// `(label, delivered after the abort)` of every event, in delivery order.
    events: Mutex<Vec<(String, bool)>>,
    /// Executions that began after the abort (tool call ids).
    late_executions: Mutex<Vec<String>>,
    /// Executions that began.
    executions: AtomicUsize,
    /// `(tool call id, result text)` of every `tool_execution_end`.
    end_texts: Mutex<Vec<(String, String)>>,
}

impl Observed {
    fn abort(&self, agent: &Agent) {
        self.aborted.store(true, Ordering::SeqCst);
        agent.abort();
    }
}

/// A tool that works for `ms` (virtual) milliseconds in 5 ms steps, sending a progress update
/// per step, and stops with an error when cancelled.
struct Worker {
    name: &'static str,
    mode: ExecutionMode,
    observed: Arc<Observed>,
}

fn worker_schema() -> &'static Value {
    static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    S.get_or_init(|| json!({"type": "object", "properties": {"ms": {"type": "integer"}}}))
}

impl AgentTool for Worker {
    fn name(&self) -> &str {
        self.name
    }
    fn label(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "works for a while"
    }
    fn parameters(&self) -> &Value {
        worker_schema()
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute<'a>(
        &'a self,
        tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.observed.executions.fetch_add(1, Ordering::SeqCst);
            if self.observed.aborted.load(Ordering::SeqCst) || cancel.is_cancelled() {
                self.observed
                    .late_executions
                    .lock()
                    .unwrap()
                    .push(tool_call_id.to_owned());
            }
            let ms = args["ms"].as_u64().unwrap_or(0);
            let mut done = 0;
            while done < ms {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(5)) => {}
                    _ = cancel.cancelled() => return Err(ToolError::new("cancelled")),
                }
                done += 5;
                if let Some(u) = &on_update {
                    u(AgentToolResult::text(format!("{done}/{ms}"), None));
                }
            }
            Ok(AgentToolResult::text(
                format!("{tool_call_id} worked {ms}"),
                None,
            ))
        })
    }
}

/// `kind`, `kind:role` or `kind:toolCallId`.
fn label(e: &AgentEvent) -> String {
    match e {
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            format!("{}:{}", e.kind(), message.role())
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. }
        | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
        | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
            format!("{}:{}", e.kind(), tool_call_id)
        }
        _ => e.kind().to_owned(),
    }
}

/// Checks the pairing and nesting of one run's events (labels from [`label`]).
fn check_pairs(labels: &[String]) -> Result<(), String> {
    let (first, last) = (labels.first(), labels.last());
    if first.map(String::as_str) != Some("agent_start")
        || last.map(String::as_str) != Some("agent_end")
    {
        return Err(format!(
            "run not framed by agent_start/agent_end: {labels:?}"
        ));
    }
    let mut in_turn = false;
    let mut open_message: Option<&str> = None;
    let mut open_tools: Vec<&str> = Vec::new();
    let mut ended_tools: Vec<&str> = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        let (kind, arg) = l.split_once(':').unwrap_or((l, ""));
        let inner = i > 0 && i + 1 < labels.len();
        let ok = match kind {
            "agent_start" | "agent_end" => !inner,
            "turn_start" => inner && !std::mem::replace(&mut in_turn, true),
            "turn_end" => {
                inner
                    && std::mem::replace(&mut in_turn, false)
                    && open_message.is_none()
                    && open_tools.is_empty()
            }
            "message_start" => inner && open_message.replace(arg).is_none(),
            "message_update" => open_message == Some("assistant"),
            "message_end" => open_message.take() == Some(arg),
            "tool_execution_start" => {
                let fresh = !open_tools.contains(&arg) && !ended_tools.contains(&arg);
                open_tools.push(arg);
                in_turn && fresh
            }
            "tool_execution_update" => open_tools.contains(&arg),
            "tool_execution_end" => {
                let was_open = open_tools.contains(&arg);
                open_tools.retain(|t| *t != arg);
                ended_tools.push(arg);
                was_open
            }
            _ => false,
        };
        if !ok {
            return Err(format!("event {i} ({l}) out of place in {labels:?}"));
        }
    }
    if in_turn || open_message.is_some() || !open_tools.is_empty() {
        return Err(format!("left open at agent_end: {labels:?}"));
    }
    Ok(())
}

/// One random assistant reply: optional thinking and text, then tool calls (or none).
fn random_reply(rng: &mut Rng, turn: usize, with_tools: bool) -> FauxStep {
    let mut content: Vec<AssistantContent> = Vec::new();
    if rng.chance(40) {
        content.push(faux_thinking("thinking ".repeat(rng.range(1, 20) as usize)));
    }
    if !with_tools || rng.chance(50) {
        content.push(faux_text("word ".repeat(rng.range(1, 40) as usize)));
    }
    if with_tools {
        for c in 0..rng.range(1, 4) {
            let name = if rng.chance(75) { "par" } else { "seq" };
            let mut args = Map::new();
            args.insert("ms".into(), json!(rng.range(0, 12) * 5));
            let id = format!("t{turn}c{c}");
            content.push(faux_tool_call(name, args, Some(&id)));
        }
    }
    let stop_reason = Some(if with_tools {
        StopReason::ToolUse
    } else {
        StopReason::Stop
    });
    faux_assistant_message(
        content,
        FauxMessageOptions {
            stop_reason,
            ..Default::default()
        },
    )
    .into()
}

fn faux() -> FauxProvider {
    FauxProvider::new(FauxOptions {
        // Paced in (paused) time: 4 tokens of 4 characters per chunk, 400 tokens/s = 10 ms.
        tokens_per_second: Some(400.0),
        token_size: Some((4, 4)),
        ..Default::default()
    })
}

/// Collects the labels of one run and clears them.
fn take_labels(observed: &Observed) -> (Vec<String>, Vec<String>) {
    let events = std::mem::take(&mut *observed.events.lock().unwrap());
    let late_starts = events
        .iter()
        .filter(|(l, late)| *late && l.starts_with("tool_execution_start"))
        .map(|(l, _)| l.clone())
        .collect();
    (events.into_iter().map(|(l, _)| l).collect(), late_starts)
}

/// Waits (virtual time) for stragglers, then counts the tasks still alive.
async fn alive_tasks_after_settling() -> usize {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// One iteration; `Ok(true)` when the abort landed inside the run.
async fn iteration(seed: u64) -> Result<bool, String> {
    let mut rng = Rng(seed);
    let observed = Arc::new(Observed::default());
    let faux = faux();
    let tool_turns = rng.range(0, 3) as usize;
    let mut steps: Vec<FauxStep> = (0..tool_turns)
        .map(|t| random_reply(&mut rng, t, true))
        .collect();
    steps.push(random_reply(&mut rng, tool_turns, false));
    faux.set_responses(steps);

    let f = faux.clone();
    let agent = Agent::new(AgentOptions::new(Arc::new(move |m, c, o| {
        f.stream(&m, &c, o)
    })));
    agent.set_model(faux.model());
    let tool = |name, mode| -> Arc<dyn AgentTool> {
        Arc::new(Worker {
            name,
            mode,
            observed: Arc::clone(&observed),
        })
    };
    agent.set_tools(vec![
        tool("par", ExecutionMode::Parallel),
        tool("seq", ExecutionMode::Sequential),
    ]);
    if rng.chance(50) {
        agent.update_options(|o| o.tool_execution = ExecutionMode::Sequential);
    }
    let hook_delay = rng.range(0, 3) * 5;
    if hook_delay > 0 {
        agent.update_options(|o| {
            o.before_tool_call = Some(Arc::new(move |_, _| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(hook_delay)).await;
                    Ok(None)
                })
            }))
        });
    }

    // The recorder comes first, so an abort from a later listener is seen after its event.
    let obs = Arc::clone(&observed);
    agent.subscribe(move |e, _| {
        let late = obs.aborted.load(Ordering::SeqCst);
        obs.events.lock().unwrap().push((label(&e), late));
        if let AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            ..
        } = &*e
        {
            let text = result
                .content
                .first()
                .and_then(|c| c.as_text())
                .unwrap_or("");
            obs.end_texts
                .lock()
                .unwrap()
                .push((tool_call_id.clone(), text.to_owned()));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    // Abort point: inside the listener of the n-th event, or after a virtual delay.
    let by_event = rng.chance(50);
    let at_event = rng.range(0, 60) as usize;
    let at_ms = rng.range(0, 400);
    let (obs, a) = (Arc::clone(&observed), agent.clone());
    let counter = AtomicUsize::new(0);
    let aborter = agent.subscribe(move |_, _| {
        if by_event && counter.fetch_add(1, Ordering::SeqCst) == at_event {
            obs.abort(&a);
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let timer = (!by_event).then(|| {
        let (obs, a) = (Arc::clone(&observed), agent.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(at_ms)).await;
            if a.is_streaming() {
                obs.abort(&a);
            }
        })
    });
    let scenario = format!(
        "{tool_turns} tool turns, abort {}",
        if by_event {
            format!("at event {at_event}")
        } else {
            format!("after {at_ms} ms")
        }
    );

    agent
        .prompt("go")
        .await
        .map_err(|e| format!("{scenario}: prompt failed: {e}"))?;
    if let Some(t) = timer {
        t.abort();
        let _ = t.await;
    }
    let aborted = observed.aborted.load(Ordering::SeqCst);
    let events_of_run = observed.events.lock().unwrap().clone();
    let (labels, late_starts) = take_labels(&observed);
    check_pairs(&labels).map_err(|e| format!("{scenario}: {e}"))?;
    if late_starts.len() > 1 {
        return Err(format!(
            "{scenario}: tool starts after the abort: {late_starts:?}"
        ));
    }
    for start in &late_starts {
        let id = start.trim_start_matches("tool_execution_start:");
        let ends = observed.end_texts.lock().unwrap();
        if !ends
            .iter()
            .any(|(i, t)| i == id && t == "Operation aborted")
        {
            return Err(format!(
                "{scenario}: {id} started after the abort and was not aborted"
            ));
        }
    }
    observed.end_texts.lock().unwrap().clear();
    let late = observed.late_executions.lock().unwrap().clone();
    if !late.is_empty() {
        return Err(format!(
            "{scenario}: tools executed after the abort: {late:?}"
        ));
    }
    let messages = agent.messages();
    let Some(last) = messages.last().and_then(|m| m.as_assistant()) else {
        return Err(format!(
            "{scenario}: the transcript does not end with an assistant message"
        ));
    };
    // An abort issued before the last assistant message began (while streaming an earlier
    // one, during tools, in a hook) leaves one more turn whose stream is aborted at once.
    let before_last = last_assistant_start_was_late(&events_of_run);
    if before_last && last.stop_reason != StopReason::Aborted {
        return Err(format!(
            "{scenario}: aborted run ended with {:?} ({:?})",
            last.stop_reason, last.error_message
        ));
    }
    if !aborted && last.stop_reason != StopReason::Stop {
        return Err(format!(
            "{scenario}: run without abort ended {:?}",
            last.stop_reason
        ));
    }
    let alive = alive_tasks_after_settling().await;
    if alive != 0 {
        return Err(format!("{scenario}: {alive} tasks outlived the run"));
    }

    // The agent resumes: a next prompt runs to a normal end.
    aborter.unsubscribe();
    faux.set_responses(vec![random_reply(&mut rng, 99, false)]);
    agent
        .prompt("again")
        .await
        .map_err(|e| format!("{scenario}: second prompt failed: {e}"))?;
    let (labels, _) = take_labels(&observed);
    check_pairs(&labels).map_err(|e| format!("{scenario}: second run: {e}"))?;
    match agent.messages().last().and_then(|m| m.to_llm()) {
        Some(Message::Assistant(a)) if a.stop_reason == StopReason::Stop => {}
        other => return Err(format!("{scenario}: second run ended with {other:?}")),
    }
    let alive = alive_tasks_after_settling().await;
    if alive != 0 {
        return Err(format!("{scenario}: {alive} tasks outlived the second run"));
    }
    Ok(aborted)
}

/// Whether the last assistant `message_start` of a run was delivered after the abort.
fn last_assistant_start_was_late(events: &[(String, bool)]) -> bool {
    events
        .iter()
        .rev()
        .find(|(l, _)| l == "message_start:assistant")
        .is_some_and(|(_, late)| *late)
}

#[test]
fn abort_at_random_points_keeps_the_event_contract() {
    let iterations = env_u64("PI_ABORT_LOOP_ITERATIONS", 50);
    let first = env_u64("PI_ABORT_LOOP_SEED", 1);
    let mut aborted_runs = 0;
    for seed in first..first + iterations {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        match rt.block_on(iteration(seed)) {
            Ok(aborted) => aborted_runs += u64::from(aborted),
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    // The abort points are drawn so that most of them land inside the run.
    assert!(
        aborted_runs * 2 >= iterations,
        "only {aborted_runs} of {iterations} runs were aborted"
    );
}
