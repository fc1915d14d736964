//! A command's `ctx` session actions end to end: `ctx.new_session`, `ctx.fork`,
//! `ctx.switch_session`, `ctx.navigate_tree`, `ctx.wait_for_idle`, each awaited and answering
//! `{cancelled}`, routed to the runtime host (session replacement) or, without one, to the
//! session itself. Mirrors pi-coding-agent 0.85.0 `createCommandContext` and the modes'
//! `commandContextActions`.

use crate::session_support;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::runtime::{BuiltSession, RuntimeHost, SessionFactory, SessionTarget};
use pi_coding_agent::session::SessionStartReason;
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::{AgentSession, NavigateTreeOptions, PromptOptions};
use pi_coding_agent::storage::{ForkPosition, SessionStore};
use serde_json::{Value, json};
use session_support::{Echo, Gate, text};

type Log = Arc<Mutex<Vec<Value>>>;

fn push(log: &Log, v: Value) {
    log.lock().unwrap().push(v);
}

fn outcome(r: Result<ActionOutcome, HandlerError>) -> Value {
    match r {
        Ok(o) => json!({"cancelled": o.cancelled}),
        Err(e) => json!({"error": e.message()}),
    }
}

/// Registers `/new`, `/fork <id> [at]`, `/switch <path>`, `/nav <id>`, `/idle`, each logging
/// its outcome; `/new` also logs a second use of its (now stale) `ctx`. `session_before_switch`
/// is cancelled while `cancel` is set, and `session_start` is logged with its reason.
fn commands_extension(log: &Log, cancel: &Arc<Mutex<bool>>) -> impl Extension + use<> {
    let (log, cancel) = (log.clone(), cancel.clone());
    FnExtension::new("cmds.ts", move |pi| {
        let l = log.clone();
        pi.register_command("new", None, move |_args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                let r = ctx
                    .new_session(NewSessionOptions {
                        parent_session: Some("/parent.jsonl".into()),
                    })
                    .await;
                push(&l, json!({"new": outcome(r)}));
                let again = ctx.new_session(NewSessionOptions::default()).await;
                push(&l, json!({"again": outcome(again)}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.register_command("fork", None, move |args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                let mut parts = args.split_whitespace();
                let id = parts.next().unwrap_or_default().to_owned();
                let position = match parts.next() {
                    Some("at") => ForkPosition::At,
                    _ => ForkPosition::Before,
                };
                push(&l, json!({"fork": outcome(ctx.fork(id, position).await)}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.register_command("switch", None, move |args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                let r = ctx.switch_session(PathBuf::from(args.trim())).await;
                push(&l, json!({"switch": outcome(r)}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.register_command("nav", None, move |args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                let r = ctx
                    .navigate_tree(args.trim(), NavigateTreeOptions::default())
                    .await;
                push(&l, json!({"nav": outcome(r)}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.register_command("idle", None, move |_args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                let r = ctx.wait_for_idle().await.map_err(|e| e.to_string());
                push(&l, json!({"idle": r.is_ok(), "isIdle": ctx.is_idle()}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.register_command("compact", None, move |args, ctx| {
            let l = l.clone();
            Box::pin(async move {
                ctx.compact(Some(args));
                push(&l, json!({"compact": "queued"}));
                Ok(())
            })
        });
        let l = log.clone();
        pi.on::<SessionCompactFailedEvent, _>(move |e, _ctx| {
            push(&l, json!({"compactFailed": e.error_message}));
            Box::pin(async { Ok(None) })
        });
        let c = cancel.clone();
        pi.on::<SessionBeforeSwitchEvent, _>(move |_e, _ctx| {
            let cancel = *c.lock().unwrap();
            Box::pin(async move { Ok(Some(CancelResult { cancel })) })
        });
        let l = log.clone();
        pi.on::<SessionStartEvent, _>(move |e, ctx| {
            let v = json!({"start": serde_json::to_value(&*e).unwrap()["reason"]});
            push(&l, v);
            let l = l.clone();
            let ctx = ctx.clone();
            Box::pin(async move {
                // Event contexts have no session actions.
                if let Err(e) = ctx.new_session(NewSessionOptions::default()).await {
                    push(&l, json!({"eventCtx": e.message()}));
                }
                Ok(None)
            })
        });
        Ok(())
    })
}

/// The `gate` tool's permits and its start signal.
type GateParts = (Arc<tokio::sync::Semaphore>, Arc<tokio::sync::Notify>);

fn factory(faux: &FauxProvider, log: &Log, cancel: &Arc<Mutex<bool>>) -> SessionFactory {
    factory_with_gate(faux, log, cancel, &new_gate())
}

fn new_gate() -> GateParts {
    (
        Arc::new(tokio::sync::Semaphore::new(0)),
        Arc::new(tokio::sync::Notify::new()),
    )
}

fn factory_with_gate(
    faux: &FauxProvider,
    log: &Log,
    cancel: &Arc<Mutex<bool>>,
    gate: &GateParts,
) -> SessionFactory {
    let (faux, log, cancel, gate) = (faux.clone(), log.clone(), cancel.clone(), gate.clone());
    Arc::new(move |target: SessionTarget| {
        let runner = ExtensionRunner::builder(target.cwd.clone())
            .extension(commands_extension(&log, &cancel))
            .build();
        let hooks = ExtensionHooks::new(runner.clone());
        let f = faux.clone();
        let session = AgentSession::builder()
            .model(faux.model())
            .store(Arc::new(Mutex::new(target.store)))
            .tools(vec![
                Arc::new(Echo),
                Arc::new(Gate(gate.0.clone(), gate.1.clone())),
            ])
            .stream_fn(runner.wrap_stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o))))
            .hooks(hooks.clone())
            .compactor(Arc::new(AutoCompactor::new()))
            .build()
            .map_err(|e| pi_coding_agent::runtime::BuildError::new(e.to_string()))?;
        Ok(BuiltSession {
            session,
            extensions: Some(hooks),
        })
    })
}

struct Fixture {
    faux: FauxProvider,
    gate: GateParts,
    host: RuntimeHost,
    log: Log,
    cancel: Arc<Mutex<bool>>,
    dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let cancel = Arc::new(Mutex::new(false));
    let cwd = dir.path().display().to_string();
    let store = SessionStore::create(&dir.path().join("sessions"), &cwd, None).unwrap();
    let gate = new_gate();
    let host = RuntimeHost::start(
        factory_with_gate(&faux, &log, &cancel, &gate),
        SessionTarget {
            store,
            cwd: dir.path().to_path_buf(),
            reload: false,
        },
    )
    .await
    .unwrap();
    Fixture {
        faux,
        gate,
        host,
        log,
        cancel,
        dir,
    }
}

impl Fixture {
    async fn prompt(&self, input: &str) {
        self.host
            .session()
            .prompt(input, PromptOptions::default())
            .await
            .unwrap();
    }

    async fn turn(&self, input: &str, answer: &str) {
        self.faux.set_responses(vec![text(answer)]);
        self.prompt(input).await;
    }

    fn take_log(&self) -> Vec<Value> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn file(&self) -> PathBuf {
        self.host.session().session_file().unwrap()
    }

    fn header(&self) -> Value {
        let s = self.host.session();
        let store = s.store().lock().unwrap();
        serde_json::to_value(store.header()).unwrap()
    }

    /// The current leaf entry's id.
    fn leaf(&self) -> Option<String> {
        self.host.session().leaf_id()
    }
}

const EVENT_CTX: &str = "ctx.newSession() is only available in command handlers";

#[tokio::test]
async fn new_session_from_a_command_replaces_the_session_and_leaves_the_ctx_stale() {
    let f = fixture().await;
    assert_eq!(
        f.take_log(),
        vec![json!({"start":"startup"}), json!({"eventCtx": EVENT_CTX})]
    );
    f.turn("hello", "hi").await;
    let old = f.host.session();
    f.prompt("/new").await;
    assert_eq!(
        f.take_log(),
        vec![
            json!({"start":"new"}),
            json!({"eventCtx": EVENT_CTX}),
            json!({"new": {"cancelled": false}}),
            json!({"again": {"error": STALE_MESSAGE}}),
        ]
    );
    let new = f.host.session();
    assert_ne!(old.session_id(), new.session_id());
    assert!(new.messages().is_empty());
    assert_eq!(f.header()["parentSession"], "/parent.jsonl");
}

#[tokio::test]
async fn a_cancelled_new_session_answers_cancelled_and_keeps_the_session() {
    let f = fixture().await;
    f.turn("hello", "hi").await;
    f.take_log();
    *f.cancel.lock().unwrap() = true;
    let before = f.host.session().session_id();
    f.prompt("/new").await;
    assert_eq!(
        f.take_log(),
        vec![
            json!({"new": {"cancelled": true}}),
            json!({"again": {"cancelled": true}}),
        ]
    );
    assert_eq!(f.host.session().session_id(), before);
}

#[tokio::test]
async fn fork_and_switch_from_commands_go_through_the_host() {
    let f = fixture().await;
    f.turn("first", "one").await;
    f.turn("second", "two").await;
    let original = f.file();
    let user_ids: Vec<String> = {
        let s = f.host.session();
        let store = s.store().lock().unwrap();
        store
            .entries()
            .unwrap()
            .iter()
            .filter(|e| matches!(e.message(), Some(pi_agent_core::AgentMessage::User(_))))
            .map(|e| e.id.clone())
            .collect()
    };
    f.take_log();

    // Before the second user message: the fork keeps only the first exchange.
    f.prompt(&format!("/fork {}", user_ids[1])).await;
    assert_eq!(
        f.take_log(),
        vec![
            json!({"start":"fork"}),
            json!({"eventCtx": EVENT_CTX}),
            json!({"fork": {"cancelled": false}}),
        ]
    );
    assert_ne!(f.file(), original);
    assert_eq!(f.host.session().messages().len(), 2);
    assert_eq!(f.header()["parentSession"], original.display().to_string());

    f.prompt("/fork nope").await;
    assert_eq!(
        f.take_log(),
        vec![json!({"fork": {"error": "Invalid entry ID for forking"}})]
    );

    f.prompt(&format!("/switch {}", original.display())).await;
    assert_eq!(
        f.take_log(),
        vec![
            json!({"start":"resume"}),
            json!({"eventCtx": EVENT_CTX}),
            json!({"switch": {"cancelled": false}}),
        ]
    );
    assert_eq!(f.file(), original);
    assert_eq!(f.host.session().messages().len(), 4);
}

#[tokio::test]
async fn navigate_tree_and_wait_for_idle_act_on_the_current_session() {
    let f = fixture().await;
    f.turn("first", "one").await;
    let first_answer = f.leaf().unwrap();
    f.turn("second", "two").await;
    f.take_log();
    f.prompt(&format!("/nav {first_answer}")).await;
    assert_eq!(f.take_log(), vec![json!({"nav": {"cancelled": false}})]);
    assert_eq!(f.leaf().as_deref(), Some(first_answer.as_str()));
    assert_eq!(f.host.session().messages().len(), 2);

    f.prompt("/nav missing").await;
    assert_eq!(
        f.take_log(),
        vec![json!({"nav": {"error": "Entry missing not found"}})]
    );

    f.prompt("/idle").await;
    assert_eq!(f.take_log(), vec![json!({"idle": true, "isIdle": true})]);
    let _ = &f.dir;
}

#[tokio::test]
async fn without_a_host_only_the_tree_and_idle_actions_act() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let cancel = Arc::new(Mutex::new(false));
    let cwd = dir.path().display().to_string();
    let built = factory(&faux, &log, &cancel)(SessionTarget {
        store: SessionStore::in_memory(&cwd),
        cwd: dir.path().to_path_buf(),
        reload: false,
    })
    .unwrap();
    let session = built.session;
    built
        .extensions
        .unwrap()
        .bind(&session, SessionStartReason::Startup, None)
        .await;
    faux.set_responses(vec![text("one"), text("two")]);
    session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    let first_answer = session.leaf_id().unwrap();
    session
        .prompt("second", PromptOptions::default())
        .await
        .unwrap();
    log.lock().unwrap().clear();

    let id = session.session_id();
    session
        .prompt("/new", PromptOptions::default())
        .await
        .unwrap();
    session
        .prompt(&format!("/nav {first_answer}"), PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        vec![
            json!({"new": {"cancelled": false}}),
            json!({"again": {"cancelled": false}}),
            json!({"nav": {"cancelled": false}}),
        ]
    );
    assert_eq!(session.session_id(), id);
    assert_eq!(session.leaf_id().as_deref(), Some(first_answer.as_str()));
}

#[tokio::test]
async fn ctx_compact_runs_the_sessions_manual_compaction() {
    let f = fixture().await;
    f.turn("hello", "hi").await;
    f.take_log();
    f.prompt("/compact focus").await;
    f.host.extensions().unwrap().flush_requests().await;
    assert_eq!(
        f.take_log(),
        vec![
            json!({"compact": "queued"}),
            json!({"compactFailed": "Compaction failed: Nothing to compact (session too small)"}),
        ]
    );
}

#[tokio::test]
async fn wait_for_idle_in_a_command_waits_for_the_running_turn() {
    let f = fixture().await;
    f.take_log();
    let gate_call = pi_ai::providers::faux::faux_assistant_message(
        vec![pi_ai::providers::faux::faux_tool_call(
            "gate",
            serde_json::Map::new(),
            Some("g1"),
        )],
        pi_ai::providers::faux::FauxMessageOptions {
            stop_reason: Some(pi_ai::StopReason::ToolUse),
            ..Default::default()
        },
    );
    f.faux.set_responses(vec![gate_call.into(), text("done")]);
    let session = f.host.session();
    let run = tokio::spawn({
        let s = session.clone();
        async move { s.prompt("go", PromptOptions::default()).await }
    });
    f.gate.1.notified().await;
    // Commands run at once, even while a run streams: this one waits for it.
    let idle = tokio::spawn({
        let s = session.clone();
        async move { s.prompt("/idle", PromptOptions::default()).await }
    });
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    assert!(!idle.is_finished(), "waitForIdle resolved while a tool ran");
    assert!(f.take_log().is_empty());
    f.gate.0.add_permits(1);
    run.await.unwrap().unwrap();
    idle.await.unwrap().unwrap();
    assert_eq!(f.take_log(), vec![json!({"idle": true, "isIdle": true})]);
    assert_eq!(session.last_assistant_text().as_deref(), Some("done"));
}
