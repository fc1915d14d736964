//! Session features on the faux provider: thinking level, session name, entries, user bash,
//! model switching and cycling, statistics, `last_assistant_text`.

use crate::session_support;

use pi_agent_core::AgentMessage;
use pi_ai::{Message, StopReason};
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use serde_json::json;
use session_support::*;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn thinking_level_and_session_name_events() {
    let h = harness(vec![], |b| b);
    // The faux model does not reason: every level clamps to off (no change, no event).
    h.session
        .set_thinking_level(pi_ai::ModelThinkingLevel::High)
        .unwrap();
    assert!(h.kinds().is_empty());
    h.session.set_session_name("My\r\nsession ").unwrap();
    assert_eq!(
        serde_json::to_value(h.events().last().unwrap()).unwrap(),
        json!({"type":"session_info_changed","name":"My session"})
    );
    h.session
        .append_custom_entry("ext", Some(json!({"k": 1})))
        .unwrap();
    let last = serde_json::to_value(h.events().last().unwrap()).unwrap();
    assert_eq!(last["type"], "entry_appended");
    assert_eq!(last["entry"]["customType"], "ext");
    assert_eq!(last["entry"]["data"], json!({"k": 1}));
}

#[tokio::test]
async fn user_bash_streams_updates_and_records_its_result() {
    let h = harness(vec![text("ok")], |b| b);
    let mut chunks = String::new();
    let result = h
        .session
        .execute_bash(
            "printf 'one\\ntwo\\n'",
            pi_coding_agent::session::ExecuteBashOptions {
                exclude_from_context: None,
                id: Some("req-1".into()),
            },
            |d| chunks.push_str(d),
        )
        .await
        .unwrap();
    assert_eq!(result.output, "one\ntwo\n");
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(chunks, "one\ntwo\n");
    let updates: String = h
        .events()
        .iter()
        .map(|e| match e {
            AgentSessionEvent::BashExecutionUpdate { id, delta } => {
                assert_eq!(id.as_deref(), Some("req-1"));
                delta.clone()
            }
            other => panic!("unexpected {}", other.kind()),
        })
        .collect();
    assert_eq!(updates, "one\ntwo\n");
    // Idle: in the state and the file at once; never a run.
    let AgentMessage::Custom(m) = &h.session.messages()[0] else {
        panic!("bashExecution expected")
    };
    assert_eq!(m["role"], "bashExecution");
    assert_eq!(m["command"], "printf 'one\\ntwo\\n'");
    assert_eq!(m["exitCode"], 0);
    assert!(m.get("excludeFromContext").is_none());
    assert_eq!(h.entry_kinds().last().unwrap(), "message:bashExecution");
    assert_eq!(h.faux.call_count(), 0);
    // The next prompt sends it to the model as user text.
    h.session
        .prompt("next", PromptOptions::default())
        .await
        .unwrap();
    let llm = pi_coding_agent::messages::convert_to_llm(&h.session.messages());
    let Message::User(u) = &llm[0] else { panic!() };
    assert_eq!(
        pi_coding_agent::session::queues::content_text(&u.content),
        "Ran `printf 'one\\ntwo\\n'`\n```\none\ntwo\n\n```"
    );
}

#[tokio::test]
async fn user_bash_while_streaming_is_deferred_to_the_end_of_the_run() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let entered = Arc::new(tokio::sync::Notify::new());
    let gate = Arc::new(Gate(release.clone(), entered.clone()));
    let h = harness(vec![gate_call(), text("done")], |b| b.tools(vec![gate]));
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("go", PromptOptions::default()).await });
    entered.notified().await;
    h.session
        .execute_bash(
            "echo side",
            pi_coding_agent::session::ExecuteBashOptions {
                exclude_from_context: Some(true),
                id: None,
            },
            |_| {},
        )
        .await
        .unwrap();
    assert!(h.session.has_pending_bash_messages());
    release.add_permits(1);
    run.await.unwrap().unwrap();
    let roles: Vec<_> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "bashExecution"
        ]
    );
    assert_eq!(h.entry_kinds().last().unwrap(), "message:bashExecution");
    let AgentMessage::Custom(m) = h.session.messages().pop().unwrap() else {
        panic!()
    };
    assert_eq!(m["excludeFromContext"], true);
}

#[derive(Default)]
struct ModelHooks(Mutex<Vec<String>>);

impl pi_coding_agent::session::SessionHooks for ModelHooks {
    fn model_select(
        &self,
        model: pi_ai::Model,
        previous: Option<pi_ai::Model>,
        source: &str,
    ) -> futures::future::BoxFuture<'_, ()> {
        self.0.lock().unwrap().push(format!(
            "model_select:{}:{}:{source}",
            model.id,
            previous.map(|p| p.id).unwrap_or_default()
        ));
        Box::pin(async {})
    }
    fn thinking_level_select(
        &self,
        level: pi_ai::ModelThinkingLevel,
        previous: pi_ai::ModelThinkingLevel,
    ) {
        self.0.lock().unwrap().push(format!(
            "thinking_level_select:{}:{}",
            level.as_str(),
            previous.as_str()
        ));
    }
}

#[tokio::test]
async fn set_model_records_the_change_and_applies_the_level_for_the_switch() {
    let hooks = Arc::new(ModelHooks::default());
    let mut settings_map = serde_json::Map::new();
    settings_map.insert("defaultThinkingLevel".into(), json!("high"));
    let settings = Arc::new(Mutex::new(
        pi_coding_agent::config::settings::SettingsManager::in_memory(settings_map),
    ));
    let h = harness(vec![], |b| b.hooks(hooks.clone()).settings(settings));
    // The faux model does not reason: the default `high` clamps to off.
    assert_eq!(h.session.thinking_level(), pi_ai::ModelThinkingLevel::Off);
    let mut thinker = h.faux.model();
    thinker.id = "thinker".into();
    thinker.reasoning = true;
    h.session.set_model(thinker, false).await.unwrap();
    assert_eq!(h.session.model().unwrap().id, "thinker");
    assert_eq!(h.session.thinking_level(), pi_ai::ModelThinkingLevel::High);
    assert_eq!(
        serde_json::to_value(h.events().last().unwrap()).unwrap(),
        json!({"type":"thinking_level_changed","level":"high"})
    );
    assert_eq!(
        &h.entry_kinds()[2..],
        ["model_change", "thinking_level_change"]
    );
    assert_eq!(
        hooks.0.lock().unwrap().clone(),
        [
            "thinking_level_select:high:off",
            "model_select:thinker:faux-1:set"
        ]
    );

    let h = harness(vec![], |b| b.auth(Arc::new(NoKey)));
    let mut m = h.faux.model();
    m.provider = "elsewhere".into();
    m.id = "m1".into();
    let err = h.session.set_model(m, false).await.unwrap_err();
    assert_eq!(err.to_string(), "No API key for elsewhere/m1");
}

#[tokio::test]
async fn last_assistant_text_skips_empty_aborted_messages_and_trims() {
    let h = harness(vec![text("  first answer \n")], |b| b);
    assert_eq!(h.session.last_assistant_text(), None);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("first answer")
    );
    let mut messages = h.session.messages();
    let mut aborted = pi_ai::AssistantMessage::empty("a", "p", "m");
    aborted.stop_reason = StopReason::Aborted;
    messages.push(Message::Assistant(aborted).into());
    h.session.agent().set_messages(messages);
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("first answer")
    );
}

#[tokio::test]
async fn session_stats_count_entries_and_sum_usage() {
    let h = harness(vec![echo_call("c1", "x"), text("done")], |b| b);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let stats = h.session.session_stats().unwrap();
    assert_eq!(
        (
            stats.user_messages,
            stats.assistant_messages,
            stats.tool_calls,
            stats.tool_results,
            stats.total_messages
        ),
        (1, 2, 1, 1, 4)
    );
    let assistants = h.stored_assistants();
    let input: f64 = assistants.iter().map(|a| a.usage.input).sum();
    let output: f64 = assistants.iter().map(|a| a.usage.output).sum();
    let cache: f64 = assistants
        .iter()
        .map(|a| a.usage.cache_read + a.usage.cache_write)
        .sum();
    assert!(output > 0.0);
    assert_eq!(stats.tokens.input, input);
    assert_eq!(stats.tokens.output, output);
    assert_eq!(stats.tokens.total, input + output + cache);
    let usage = stats.context_usage.clone().unwrap();
    assert_eq!(usage.context_window, 128_000);
    let tokens = usage.tokens.unwrap();
    assert!(tokens > 0);
    assert_eq!(usage.percent, Some(tokens as f64 / 128_000.0 * 100.0));
    let v = serde_json::to_value(&stats).unwrap();
    assert!(v.get("sessionFile").is_none());
    assert_eq!(v["totalMessages"], 4);

    // After a compaction, the context size is unknown until the next real answer.
    let first_id = h.store.lock().unwrap().entries().unwrap()[2].id.clone();
    h.store
        .lock()
        .unwrap()
        .append(pi_coding_agent::storage::EntryKind::Compaction {
            summary: "s".into(),
            first_kept_entry_id: first_id,
            tokens_before: 10,
            details: None,
            usage: Some(
                json!({"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                "cost": {"total": 0.5}}),
            ),
            from_hook: Some(false),
        })
        .unwrap();
    let stats = h.session.session_stats().unwrap();
    assert_eq!(stats.tokens.input, input + 5.0);
    assert_eq!(stats.cost, 0.5);
    assert_eq!(
        serde_json::to_value(stats.context_usage.unwrap()).unwrap(),
        json!({"tokens": null, "contextWindow": 128000, "percent": null})
    );
}

#[tokio::test]
async fn cycling_models_and_thinking_levels() {
    let h = harness(vec![], |b| b);
    let a = h.faux.model();
    let mut b = a.clone();
    b.id = "b".into();
    b.reasoning = true;
    let mut c = a.clone();
    c.id = "c".into();
    let all = vec![a.clone(), b.clone(), c.clone()];
    assert_eq!(h.session.cycle_thinking_level().unwrap(), None);

    let r = h
        .session
        .cycle_model(true, &all, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((r.model.id.as_str(), r.is_scoped), ("b", false));
    // No per-model or default level in the settings: the current level (off) is kept.
    assert_eq!(r.thinking_level, pi_ai::ModelThinkingLevel::Off);
    let levels = h.session.available_thinking_levels();
    assert_eq!(levels, b.supported_thinking_levels());
    let next = h.session.cycle_thinking_level().unwrap().unwrap();
    assert_eq!(levels[0], pi_ai::ModelThinkingLevel::Off);
    assert_eq!(next, levels[1]);

    let r = h
        .session
        .cycle_model(false, &all, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.model.id, a.id);
    let r = h
        .session
        .cycle_model(false, &all, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.model.id, "c");
    assert_eq!(
        serde_json::to_value(&r).unwrap()["isScoped"],
        serde_json::Value::Bool(false)
    );
    // A scope: its own levels, only available members, wrap-around.
    h.session.set_scoped_models(vec![
        pi_coding_agent::session::ScopedModel {
            model: b.clone(),
            thinking_level: Some(pi_ai::ModelThinkingLevel::High),
        },
        pi_coding_agent::session::ScopedModel {
            model: a.clone(),
            thinking_level: None,
        },
    ]);
    let r = h
        .session
        .cycle_model(true, &all, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((r.model.id.as_str(), r.is_scoped), ("faux-1", true));
    let r = h
        .session
        .cycle_model(true, &all, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.model.id, "b");
    assert_eq!(r.thinking_level, pi_ai::ModelThinkingLevel::High);
    assert!(
        h.session
            .cycle_model(true, &all[..1], false)
            .await
            .unwrap()
            .is_none()
    );
    let changes = h
        .entry_kinds()
        .iter()
        .filter(|k| *k == "model_change")
        .count();
    assert_eq!(changes, 1 + 5);
}

#[tokio::test]
async fn queue_modes_and_toggles_reach_agent_and_settings() {
    use pi_coding_agent::config::settings::QueueMode;
    let h = harness(vec![text("1"), text("2"), text("3")], |b| b);
    assert_eq!(h.session.steering_mode(), QueueMode::OneAtATime);
    h.session.set_follow_up_mode(QueueMode::All);
    assert_eq!(h.session.follow_up_mode(), QueueMode::All);
    assert_eq!(
        h.session.settings().lock().unwrap().follow_up_mode(),
        QueueMode::All
    );
    // `all`: both queued follow-ups are delivered together, one extra LLM call.
    h.session.follow_up("a", vec![]).unwrap();
    h.session.follow_up("b", vec![]).unwrap();
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 2);
    assert_eq!(h.session.message_count(), 5);

    h.session.set_auto_compaction_enabled(false);
    assert!(!h.session.auto_compaction_enabled());
    h.session.set_auto_retry_enabled(false);
    assert!(!h.session.auto_retry_enabled());
    assert_eq!(h.session.session_name(), None);
    h.session.set_session_name("named").unwrap();
    assert_eq!(h.session.session_name().as_deref(), Some("named"));
}

#[tokio::test]
async fn a_weak_handle_does_not_keep_the_session_alive() {
    let h = harness(vec![text("x")], |b| b);
    let weak = h.session.downgrade();
    assert!(weak.upgrade().is_some());
    let Harness { session, .. } = h;
    drop(session);
    assert!(weak.upgrade().is_none());
}

#[tokio::test]
async fn skills_and_templates_expand_in_prompts_and_queued_messages() {
    use pi_coding_agent::config::skills::Skill;
    use pi_coding_agent::config::templates::PromptTemplate;
    let dir = tempfile::tempdir().unwrap();
    let skill_file = dir.path().join("SKILL.md");
    std::fs::write(
        &skill_file,
        "---\nname: greet\ndescription: d\n---\nSay hi.\n",
    )
    .unwrap();
    let skill = Skill {
        name: "greet".into(),
        description: "d".into(),
        file_path: skill_file.clone(),
        base_dir: dir.path().to_path_buf(),
        disable_model_invocation: false,
    };
    let template = PromptTemplate {
        name: "review".into(),
        description: String::new(),
        argument_hint: None,
        content: "Review $1 carefully".into(),
        file_path: dir.path().join("review.md"),
    };
    let h = harness(vec![text("a"), text("b")], |b| {
        b.skills(vec![skill]).prompt_templates(vec![template])
    });
    h.session
        .prompt("/skill:greet now", PromptOptions::default())
        .await
        .unwrap();
    h.session.follow_up("/review main.rs", vec![]).unwrap();
    assert_eq!(h.session.follow_up_messages(), ["Review main.rs carefully"]);
    h.faux.append_responses(vec![text("c")]);
    h.session
        .prompt("/review lib.rs", PromptOptions::default())
        .await
        .unwrap();
    let users: Vec<String> = h
        .session
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::User(u) => {
                Some(pi_coding_agent::session::queues::content_text(&u.content))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        [
            format!(
                "<skill name=\"greet\" location=\"{}\">\nReferences are relative to {}.\n\nSay hi.\n</skill>\n\nnow",
                skill_file.display(),
                dir.path().display()
            ),
            "Review lib.rs carefully".to_owned(),
            "Review main.rs carefully".to_owned(),
        ]
    );
}

/// pi 0.85.0 `setActiveToolsByName` rebuilds the base system prompt for the new tools; the
/// same tools again rebuild nothing, another implementation under the same name does; a
/// session without a prompt function keeps its prompt.
#[tokio::test]
async fn changing_the_active_tools_rebuilds_the_system_prompt() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = calls.clone();
    let h = harness(vec![], move |b| {
        b.tools(vec![
            Arc::new(session_support::Named("a")),
            Arc::new(session_support::Named("b")),
        ])
        .system_prompt("tools: a,b")
        .system_prompt_for_tools(Arc::new(
            move |tools: &[Arc<dyn pi_agent_core::AgentTool>]| {
                let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
                format!("tools: {} (build {n})", names.join(","))
            },
        ))
    });
    assert_eq!(h.session.system_prompt(), "tools: a,b");
    let only_b = vec![Arc::new(session_support::Named("b")) as Arc<dyn pi_agent_core::AgentTool>];
    h.session.set_active_tools(only_b.clone());
    assert_eq!(h.session.system_prompt(), "tools: b (build 0)");
    h.session.set_active_tools(only_b);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    h.session
        .set_active_tools(vec![Arc::new(session_support::Named("b"))]);
    assert_eq!(h.session.system_prompt(), "tools: b (build 1)");

    let plain = harness(vec![], |b| b.system_prompt("fixed"));
    plain
        .session
        .set_active_tools(vec![Arc::new(session_support::Named("c"))]);
    assert_eq!(plain.session.system_prompt(), "fixed");
    let names: Vec<String> = plain
        .session
        .agent()
        .with_state(|st| st.tools.iter().map(|t| t.name().to_owned()).collect());
    assert_eq!(names, ["c"]);
}
