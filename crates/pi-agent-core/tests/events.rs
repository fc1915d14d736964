//! The canonical event sequences, the lone-`error`
//! path, pi's JSON for each event, and state updated before delivery.

use crate::support;

use std::sync::{Arc, Mutex};

use pi_agent_core::agent_loop::NO_TERMINAL_EVENT;
use pi_agent_core::{AgentEvent, AgentMessage, ListenerError, StreamingMessage};
use pi_ai::{Message, StopReason, UserMessage};
use serde_json::{Value, json};
use support::*;

fn labels(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn text_prompt_emits_the_canonical_sequence() {
    let script = Scripted::new(vec![text_reply("Hello")]);
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::attach(&agent);
    agent.prompt("Hi").await.unwrap();
    assert_eq!(
        rec.labels(),
        labels(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_update",
            "message_update",
            "message_update",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    // agent_end carries the produced messages [user, assistant].
    let events = rec.events();
    let AgentEvent::AgentEnd { messages } = &*events[10] else {
        panic!()
    };
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(agent.messages().len(), 2);
    assert!(!agent.is_streaming());
}

#[tokio::test]
async fn tool_call_emits_the_canonical_tool_sequence() {
    let script = Scripted::new(vec![
        tool_reply(&[("c1", "echo", json!({"value": "x"}))]),
        text_reply("done"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("echo").updates(&["50%"]).arc()]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        rec.labels(),
        labels(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_update",
            "message_update",
            "message_end:assistant",
            "tool_execution_start:c1",
            "tool_execution_update:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "turn_start",
            "message_start:assistant",
            "message_update",
            "message_update",
            "message_update",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let events = rec.events();
    let AgentEvent::ToolExecutionEnd {
        result, is_error, ..
    } = &*events[10]
    else {
        panic!()
    };
    assert!(!is_error);
    assert_eq!(result_text(result), "echo done");
    let AgentEvent::TurnEnd { tool_results, .. } = &*events[13] else {
        panic!()
    };
    assert_eq!(tool_results.len(), 1);
    assert_eq!(tool_results[0].tool_call_id, "c1");
    // The second request saw the tool result.
    let reqs = script.requests.lock().unwrap();
    let roles: Vec<&str> = reqs[1].context.messages.iter().map(Message::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
}

#[tokio::test]
async fn provider_error_ends_the_run_after_turn_end() {
    let script = Scripted::new(vec![Reply::Error("boom".into())]);
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::attach(&agent);
    agent.prompt("Hi").await.unwrap();
    let l = rec.labels();
    assert_eq!(
        &l[l.len() - 3..],
        &labels(&["message_end:assistant", "turn_end", "agent_end"])
    );
    assert_eq!(agent.error_message().as_deref(), Some("boom"));
    assert_eq!(script.request_count(), 1);
}

#[tokio::test]
async fn lone_error_still_gets_message_start_then_message_end() {
    let script = Scripted::new(vec![Reply::LoneError("No API key".into())]);
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::attach(&agent);
    agent.prompt("Hi").await.unwrap();
    assert_eq!(
        rec.labels(),
        labels(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let events = rec.events();
    let AgentEvent::MessageEnd { message } = &*events[5] else {
        panic!()
    };
    let Some(a) = message.as_assistant() else {
        panic!()
    };
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("No API key"));
}

#[tokio::test]
async fn stream_without_terminal_event_finalizes_as_error() {
    let script = Scripted::new(vec![Reply::Unterminated("half".into())]);
    let agent = agent_with(&script, vec![]);
    agent.prompt("Hi").await.unwrap();
    let last = agent.messages().pop().unwrap();
    let Some(a) = last.as_assistant() else {
        panic!()
    };
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some(NO_TERMINAL_EVENT));
    assert_eq!(a.text(), "half");
}

#[tokio::test]
async fn continue_emits_no_prompt_message_events() {
    let script = Scripted::new(vec![text_reply("again")]);
    let agent = agent_with(&script, vec![]);
    agent.set_messages(vec![Message::User(UserMessage::text("earlier")).into()]);
    let rec = Recorder::attach(&agent);
    agent.continue_run().await.unwrap();
    let l = rec.labels();
    assert_eq!(
        &l[..3],
        &labels(&["agent_start", "turn_start", "message_start:assistant"])
    );
    let events = rec.events();
    let AgentEvent::AgentEnd { messages } = &**events.last().unwrap() else {
        panic!()
    };
    assert_eq!(messages.len(), 1, "agent_end excludes pre-existing context");
}

#[tokio::test]
async fn event_json_matches_pi() {
    let script = Scripted::new(vec![
        tool_reply(&[(
            "toolu_bad_01",
            "read",
            json!({"file": "hello.txt", "limit": "ten"}),
        )]),
        text_reply("My tool call was invalid; I need a path."),
    ]);
    let read_schema = json!({"type":"object","properties":{
        "path":{"type":"string","description":"Path to the file to read (relative or absolute)"},
        "offset":{"type":"number"},"limit":{"type":"number"}},"required":["path"]});
    let agent = agent_with(
        &script,
        vec![TestTool::new("read").schema(read_schema).arc()],
    );
    let rec = Recorder::attach(&agent);
    agent.prompt("Read the file").await.unwrap();
    let json: Vec<String> = rec
        .events()
        .iter()
        .map(|e| pi_ai::json::to_string(&**e).unwrap())
        .collect();
    assert_eq!(json[0], r#"{"type":"agent_start"}"#);
    assert_eq!(json[1], r#"{"type":"turn_start"}"#);
    assert_eq!(
        json[8],
        r#"{"type":"tool_execution_start","toolCallId":"toolu_bad_01","toolName":"read","args":{"file":"hello.txt","limit":"ten"}}"#
    );
    // The golden of the TS reference (conformance scenario tool_invalid_args).
    let text = "Validation failed for tool \"read\":\n  - path: must have required properties path\n  - limit: must be number\n\nReceived arguments:\n{\n  \"file\": \"hello.txt\",\n  \"limit\": \"ten\"\n}";
    let end = format!(
        r#"{{"type":"tool_execution_end","toolCallId":"toolu_bad_01","toolName":"read","result":{{"content":[{{"type":"text","text":{}}}],"details":{{}}}},"isError":true}}"#,
        serde_json::to_string(text).unwrap()
    );
    assert_eq!(json[9], end);
    let tr: Value = serde_json::from_str(&json[10]).unwrap();
    assert_eq!(tr["type"], "message_start");
    assert_eq!(tr["message"]["role"], "toolResult");
    assert_eq!(tr["message"]["content"][0]["text"], text);
    assert_eq!(tr["message"]["details"], json!({}));
    assert_eq!(tr["message"]["isError"], true);
    // message_update: assistantMessageEvent before message; message has the role.
    assert!(json[5].starts_with(r#"{"type":"message_update","assistantMessageEvent":{"type":"toolcall_start","contentIndex":0,"#));
    let upd: Value = serde_json::from_str(&json[5]).unwrap();
    assert_eq!(upd["message"]["role"], "assistant");
    // turn_end: message with role, then toolResults with roles.
    assert!(json[12].starts_with(r#"{"type":"turn_end","message":{"role":"assistant","#));
    let te: Value = serde_json::from_str(&json[12]).unwrap();
    assert_eq!(te["toolResults"][0]["role"], "toolResult");
    assert_eq!(te["toolResults"][0]["toolCallId"], "toolu_bad_01");
    let ae: Value = serde_json::from_str(json.last().unwrap()).unwrap();
    assert_eq!(ae["type"], "agent_end");
    assert_eq!(ae["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn tool_execution_update_json_has_partial_result() {
    let e = AgentEvent::ToolExecutionUpdate {
        tool_call_id: "c".into(),
        tool_name: "t".into(),
        args: json!({"a": 1}),
        partial_result: pi_agent_core::AgentToolResult::text("p", None),
    };
    assert_eq!(
        pi_ai::json::to_string(&e).unwrap(),
        r#"{"type":"tool_execution_update","toolCallId":"c","toolName":"t","args":{"a":1},"partialResult":{"content":[{"type":"text","text":"p"}]}}"#
    );
}

#[tokio::test]
async fn state_is_updated_before_each_delivery() {
    let script = Scripted::new(vec![
        tool_reply(&[("c1", "echo", json!({}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("echo").arc()]);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let (a, s) = (agent.clone(), Arc::clone(&seen));
    agent.subscribe(move |e, _| {
        let note = a.with_state(|st| match &*e {
            AgentEvent::MessageEnd { message } => {
                let last = st.messages.last().unwrap();
                format!("end:{}:in_transcript={}", message.role(), last == message)
            }
            AgentEvent::MessageStart { message } => format!(
                "start:{}:streaming={}",
                message.role(),
                matches!(&st.streaming_message, Some(StreamingMessage::Message(m)) if m == message)
            ),
            AgentEvent::MessageUpdate { message, .. } => format!(
                "update:shared={}",
                matches!(&st.streaming_message, Some(StreamingMessage::Partial(p)) if p.ptr_eq(message))
            ),
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                format!("tstart:pending={}", st.pending_tool_calls.contains(tool_call_id))
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                format!("tend:pending={}", st.pending_tool_calls.contains(tool_call_id))
            }
            AgentEvent::AgentEnd { .. } => format!(
                "agent_end:streaming={}:msg={}",
                st.is_streaming,
                st.streaming_message.is_some()
            ),
            other => other.kind().to_owned(),
        });
        s.lock().unwrap().push(note);
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("go").await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains(&"end:user:in_transcript=true".to_owned()));
    assert!(seen.contains(&"end:assistant:in_transcript=true".to_owned()));
    assert!(seen.contains(&"end:toolResult:in_transcript=true".to_owned()));
    assert!(seen.contains(&"start:user:streaming=true".to_owned()));
    assert!(seen.contains(&"start:assistant:streaming=true".to_owned()));
    assert!(
        seen.iter()
            .filter(|s| s.starts_with("update:"))
            .all(|s| s == "update:shared=true")
    );
    assert!(seen.contains(&"tstart:pending=true".to_owned()));
    assert!(seen.contains(&"tend:pending=false".to_owned()));
    assert_eq!(seen.last().unwrap(), "agent_end:streaming=true:msg=false");
    assert!(!agent.is_streaming());
    assert!(agent.pending_tool_calls().is_empty());
}

#[tokio::test]
async fn before_tool_call_sees_the_requesting_assistant_message_in_state() {
    let script = Scripted::new(vec![
        tool_reply(&[("c1", "echo", json!({}))]),
        text_reply("ok"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("echo").arc()]);
    let found = Arc::new(Mutex::new(None));
    let (a, f) = (agent.clone(), Arc::clone(&found));
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(move |ctx, _| {
            let last = a.with_state(|s| s.messages.last().cloned());
            let expected: AgentMessage = Message::Assistant(ctx.assistant_message.clone()).into();
            *f.lock().unwrap() = Some(last == Some(expected));
            Box::pin(async { Ok(None) })
        }));
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(*found.lock().unwrap(), Some(true));
}

#[tokio::test]
async fn message_update_shares_one_accumulator_for_the_whole_message() {
    let script = Scripted::new(vec![text_reply("abc")]);
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::attach(&agent);
    agent.prompt("x").await.unwrap();
    let updates: Vec<_> = rec
        .events()
        .into_iter()
        .filter_map(|e| match &*e {
            AgentEvent::MessageUpdate { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 3);
    assert!(updates.windows(2).all(|w| w[0].ptr_eq(&w[1])));
}

/// The finished assistant message and the tool results are one allocation each, shared by
/// `message_end`, the transcript, `turn_end` and `agent_end` (a long answer is not copied
/// per holder).
#[tokio::test]
async fn finished_messages_are_shared_not_copied() {
    let script = Scripted::new(vec![
        tool_reply(&[("c1", "echo", json!({"value": "x"}))]),
        text_reply("done"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("echo").arc()]);
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let events = rec.events();
    let ends: Vec<AgentMessage> = events
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::MessageEnd { message } if message.role() != "user" => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends.iter().map(AgentMessage::role).collect::<Vec<_>>(),
        ["assistant", "toolResult", "assistant"]
    );
    let transcript = agent.messages();
    assert_eq!(transcript.len(), 4);
    for (end, kept) in ends.iter().zip(&transcript[1..]) {
        assert!(
            end.ptr_eq(kept),
            "{} copied into the transcript",
            end.role()
        );
    }
    let Some(AgentEvent::AgentEnd { messages }) = events
        .iter()
        .map(|e| &**e)
        .find(|e| matches!(e, AgentEvent::AgentEnd { .. }))
    else {
        panic!("no agent_end")
    };
    assert!(messages.iter().zip(&transcript).all(|(a, b)| a.ptr_eq(b)));
    let turn_ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => Some((message.clone(), tool_results.clone())),
            _ => None,
        })
        .collect();
    let (AgentMessage::Assistant(first), AgentMessage::ToolResult(result)) =
        (&transcript[1], &transcript[2])
    else {
        panic!("unexpected transcript roles")
    };
    assert!(Arc::ptr_eq(&turn_ends[0].0, first));
    assert!(Arc::ptr_eq(&turn_ends[0].1[0], result));
}

/// A message is written with its `role` first and its fields in pi's order, the same bytes as
/// the pi-ai `Message` it wraps.
#[test]
fn shared_messages_serialize_as_pi_ai_messages() {
    let mut a = pi_ai::AssistantMessage::empty("anthropic-messages", "p", "m");
    a.content.push(pi_ai::AssistantContent::text("hi"));
    a.error_message = Some("boom".into());
    let as_message = Message::Assistant(a.clone());
    let shared = AgentMessage::from(a);
    assert_eq!(
        pi_ai::json::to_string(&shared).unwrap(),
        pi_ai::json::to_string(&as_message).unwrap()
    );
    let back: AgentMessage =
        serde_json::from_str(&pi_ai::json::to_string(&shared).unwrap()).unwrap();
    assert_eq!(back, shared);
    let user = AgentMessage::from(UserMessage::text("q"));
    assert!(
        pi_ai::json::to_string(&user)
            .unwrap()
            .starts_with(r#"{"role":"user","#)
    );
}

/// Changing a shared message copies it first: the other holders keep what they saw.
#[test]
fn changing_a_shared_message_copies_it_first() {
    let a = AgentMessage::from(pi_ai::AssistantMessage::empty("x", "p", "m"));
    let mut b = a.clone();
    assert!(a.ptr_eq(&b));
    if let Some(m) = b.assistant_mut() {
        m.model = "other".into();
    }
    assert!(!a.ptr_eq(&b));
    assert_eq!(a.as_assistant().map(|m| m.model.as_str()), Some("m"));
    assert_eq!(b.as_assistant().map(|m| m.model.as_str()), Some("other"));
    assert!(b.as_user().is_none() && b.as_custom().is_none());
}
