//! Session replacement through the runtime host: hook sequences, cancellation, target files,
//! listeners and error texts. Ports the offline cases of pi's `agent-session-branching.test.ts`
//! and `agent-session-runtime.test.ts` onto the faux provider.

use crate::session_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentMessage, AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::StopReason;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_tool_call,
};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::runtime::{
    BuiltSession, ForkOutcome, RuntimeHost, SessionFactory, SessionTarget,
};
use pi_coding_agent::session::{AgentSession, PromptOptions};
use pi_coding_agent::storage::{ForkPosition, SessionStore};
use serde::Serialize;
use serde_json::{Value, json};
use session_support::{Echo, text};
use tokio_util::sync::CancellationToken;

type Log = Arc<Mutex<Vec<Value>>>;

/// A tool that signals its start and runs until cancelled.
struct Wait(Arc<tokio::sync::Notify>);

impl AgentTool for Wait {
    fn name(&self) -> &str {
        "wait"
    }
    fn label(&self) -> &str {
        "Wait"
    }
    fn description(&self) -> &str {
        "Waits until aborted"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object","properties":{}}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.0.notify_one();
            cancel.cancelled().await;
            Ok(AgentToolResult::text("tool aborted", None))
        })
    }
}

fn wait_call() -> FauxStep {
    faux_assistant_message(
        vec![faux_tool_call(
            "wait",
            serde_json::Map::new(),
            Some("call_wait"),
        )],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

/// Which event the recording extension cancels next (once).
type Cancel = Arc<Mutex<Option<&'static str>>>;

fn record<E>(pi: &mut ExtensionApi<'_>, log: &Log, cancel: &Cancel, result: fn(bool) -> E::Output)
where
    E: ExtensionEvent + Serialize,
{
    let (log, cancel) = (log.clone(), cancel.clone());
    pi.on::<E, _>(move |event, _ctx| {
        let mut v = serde_json::to_value(&*event).unwrap();
        v.as_object_mut()
            .unwrap()
            .insert("type".into(), E::NAME.into());
        log.lock().unwrap().push(v);
        let hit = {
            let mut c = cancel.lock().unwrap();
            let hit = *c == Some(E::NAME);
            if hit {
                *c = None;
            }
            hit
        };
        Box::pin(async move { Ok(Some(result(hit))) })
    });
}

struct Fixture {
    faux: FauxProvider,
    host: RuntimeHost,
    log: Log,
    cancel: Cancel,
    dir: tempfile::TempDir,
    builds: Arc<Mutex<usize>>,
    /// Notified when the `wait` tool starts.
    started: Arc<tokio::sync::Notify>,
}

/// A factory that builds every session on the faux provider with a fresh runner holding the
/// recording extension (pi reloads the extensions for each new session).
fn factory(
    faux: &FauxProvider,
    log: &Log,
    cancel: &Cancel,
    builds: &Arc<Mutex<usize>>,
    started: &Arc<tokio::sync::Notify>,
) -> SessionFactory {
    let (faux, log, cancel, builds) = (faux.clone(), log.clone(), cancel.clone(), builds.clone());
    let started = started.clone();
    Arc::new(move |target: SessionTarget| {
        *builds.lock().unwrap() += 1;
        let (l, c) = (log.clone(), cancel.clone());
        let runner = ExtensionRunner::builder(target.cwd.clone())
            .extension(FnExtension::new("rec.ts", move |pi| {
                record::<SessionBeforeSwitchEvent>(pi, &l, &c, |cancel| CancelResult { cancel });
                record::<SessionBeforeForkEvent>(pi, &l, &c, |cancel| ForkResult {
                    cancel,
                    skip_conversation_restore: None,
                });
                record::<SessionShutdownEvent>(pi, &l, &c, |_| ());
                record::<SessionStartEvent>(pi, &l, &c, |_| ());
                Ok(())
            }))
            .build();
        let hooks = ExtensionHooks::new(runner.clone());
        let f = faux.clone();
        let session = AgentSession::builder()
            .model(faux.model())
            .store(Arc::new(Mutex::new(target.store)))
            .tools(vec![Arc::new(Echo), Arc::new(Wait(started.clone()))])
            .stream_fn(runner.wrap_stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o))))
            .hooks(hooks.clone())
            .build()
            .map_err(|e| pi_coding_agent::runtime::BuildError::new(e.to_string()))?;
        Ok(BuiltSession {
            session,
            extensions: Some(hooks),
        })
    })
}

async fn fixture(in_memory: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let (log, cancel, builds) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(None)),
        Arc::new(Mutex::new(0)),
    );
    let started = Arc::new(tokio::sync::Notify::new());
    let cwd = dir.path().display().to_string();
    let store = if in_memory {
        SessionStore::in_memory(&cwd)
    } else {
        SessionStore::create(&dir.path().join("sessions"), &cwd, None).unwrap()
    };
    let host = RuntimeHost::start(
        factory(&faux, &log, &cancel, &builds, &started),
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
        host,
        log,
        cancel,
        dir,
        builds,
        started,
    }
}

impl Fixture {
    async fn prompt(&self, text_in: &str, answer: &str) {
        self.faux.set_responses(vec![text(answer)]);
        self.host
            .session()
            .prompt(text_in, PromptOptions::default())
            .await
            .unwrap();
    }

    fn take_log(&self) -> Vec<Value> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn file(&self) -> Option<String> {
        self.host
            .session()
            .session_file()
            .map(|p| p.display().to_string())
    }

    /// `{entryId, text}` of the user messages on file (RPC `get_fork_messages`).
    fn user_entries(&self) -> Vec<(String, String)> {
        let s = self.host.session();
        let store = s.store().lock().unwrap();
        store
            .entries()
            .unwrap()
            .iter()
            .filter_map(|e| match e.message()? {
                AgentMessage::User(u) => Some((
                    e.id.clone(),
                    pi_coding_agent::session::queues::content_text(&u.content),
                )),
                _ => None,
            })
            .collect()
    }
}

fn roles_and_texts(session: &AgentSession) -> Vec<String> {
    session
        .messages()
        .iter()
        .map(|m| match m {
            AgentMessage::User(u) => format!(
                "user:{}",
                pi_coding_agent::session::queues::content_text(&u.content)
            ),
            other => other.role().to_owned(),
        })
        .collect()
}

fn header(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[tokio::test]
async fn new_and_resume_emit_before_switch_shutdown_and_start_in_order() {
    let f = fixture(false).await;
    assert_eq!(
        f.take_log(),
        vec![json!({"type":"session_start","reason":"startup"})]
    );
    f.prompt("hello", "hi there").await;
    let original = f.file().unwrap();
    let original_session = f.host.session();

    assert!(!f.host.new_session(None).await.unwrap());
    let second = f.file().unwrap();
    assert_ne!(second, original);
    assert!(f.host.session().messages().is_empty());
    assert_eq!(
        f.take_log(),
        vec![
            json!({"type":"session_before_switch","reason":"new"}),
            json!({"type":"session_shutdown","reason":"new","targetSessionFile": second}),
            json!({"type":"session_start","reason":"new","previousSessionFile": original}),
        ]
    );
    // The old session is disposed: it no longer streams anything.
    assert!(original_session.is_idle());

    assert!(!f.host.switch_session(Path::new(&original)).await.unwrap());
    assert_eq!(f.file().unwrap(), original);
    assert_eq!(
        f.take_log(),
        vec![
            json!({"type":"session_before_switch","reason":"resume","targetSessionFile": original}),
            json!({"type":"session_shutdown","reason":"resume","targetSessionFile": original}),
            json!({"type":"session_start","reason":"resume","previousSessionFile": second}),
        ]
    );
    assert_eq!(
        roles_and_texts(&f.host.session()),
        vec!["user:hello", "assistant"]
    );
}

#[tokio::test]
async fn a_cancelled_switch_keeps_the_session_and_builds_nothing() {
    let f = fixture(false).await;
    f.prompt("hello", "hi").await;
    let original = f.file();
    let builds = *f.builds.lock().unwrap();
    f.take_log();

    *f.cancel.lock().unwrap() = Some("session_before_switch");
    assert!(f.host.new_session(None).await.unwrap());
    assert_eq!(f.file(), original);
    assert_eq!(
        f.take_log(),
        vec![json!({"type":"session_before_switch","reason":"new"})]
    );

    let other = f.dir.path().join("other.jsonl");
    *f.cancel.lock().unwrap() = Some("session_before_switch");
    assert!(f.host.switch_session(&other).await.unwrap());
    assert_eq!(f.file(), original);
    assert_eq!(*f.builds.lock().unwrap(), builds);
    // The session still works after the cancellations.
    f.prompt("again", "ok").await;
    assert_eq!(f.host.session().messages().len(), 4);
}

#[tokio::test]
async fn new_session_with_a_parent_writes_it_in_the_header_beside_the_old_file() {
    let f = fixture(false).await;
    f.prompt("hello", "hi").await;
    let original = PathBuf::from(f.file().unwrap());
    f.host
        .new_session(Some("/parent/session.jsonl".into()))
        .await
        .unwrap();
    let next = PathBuf::from(f.file().unwrap());
    assert_eq!(next.parent(), original.parent());
    // Written at the first assistant message, with the parent in the header.
    assert!(!next.exists());
    f.prompt("in the new one", "answer").await;
    let h = header(&next);
    assert_eq!(h["parentSession"], "/parent/session.jsonl");
    assert_eq!(h["id"], f.host.session().session_id());
    let lines = std::fs::read_to_string(&next).unwrap();
    assert!(lines.contains("in the new one"));
    assert!(!lines.contains("\"hello\""));
}

#[tokio::test]
async fn fork_before_a_user_message_copies_the_branch_into_a_new_file() {
    let f = fixture(false).await;
    f.prompt("Say one", "one").await;
    f.prompt("Say two", "two").await;
    f.prompt("Say three", "three").await;
    let users = f.user_entries();
    assert_eq!(users.len(), 3);
    let previous = f.file().unwrap();
    f.take_log();

    let outcome = f
        .host
        .fork(&users[1].0, ForkPosition::Before)
        .await
        .unwrap();
    assert_eq!(
        outcome,
        ForkOutcome {
            cancelled: false,
            selected_text: Some("Say two".into())
        }
    );
    let forked = f.file().unwrap();
    assert_ne!(forked, previous);
    assert_eq!(
        f.take_log(),
        vec![
            json!({"type":"session_before_fork","entryId": users[1].0,"position":"before"}),
            json!({"type":"session_shutdown","reason":"fork","targetSessionFile": forked}),
            json!({"type":"session_start","reason":"fork","previousSessionFile": previous}),
        ]
    );
    let session = f.host.session();
    assert_eq!(roles_and_texts(&session), vec!["user:Say one", "assistant"]);
    // The file name ends with the new session id; the header names the parent.
    assert!(forked.ends_with(&format!("_{}.jsonl", session.session_id())));
    assert_eq!(
        header(Path::new(&forked))["parentSession"],
        previous.as_str()
    );
}

#[tokio::test]
async fn fork_from_the_only_message_starts_an_unsaved_session() {
    let f = fixture(false).await;
    f.prompt("Say hello", "hello").await;
    let users = f.user_entries();
    assert_eq!(users, vec![(users[0].0.clone(), "Say hello".to_owned())]);
    let outcome = f
        .host
        .fork(&users[0].0, ForkPosition::Before)
        .await
        .unwrap();
    assert_eq!(outcome.selected_text.as_deref(), Some("Say hello"));
    let session = f.host.session();
    assert!(session.messages().is_empty());
    let file = session.session_file().unwrap();
    assert!(!file.exists());
}

#[tokio::test]
async fn fork_and_clone_in_memory_stay_in_memory() {
    let f = fixture(true).await;
    assert_eq!(f.file(), None);
    f.prompt("Say hi", "hi").await;
    let users = f.user_entries();
    let outcome = f
        .host
        .fork(&users[0].0, ForkPosition::Before)
        .await
        .unwrap();
    assert_eq!(outcome.selected_text.as_deref(), Some("Say hi"));
    assert!(f.host.session().messages().is_empty());
    assert_eq!(f.file(), None);

    f.prompt("hello", "one").await;
    f.prompt("again", "two").await;
    let before = roles_and_texts(&f.host.session());
    assert!(!f.host.clone_session().await.unwrap());
    assert_eq!(f.file(), None);
    assert_eq!(roles_and_texts(&f.host.session()), before);
}

#[tokio::test]
async fn clone_duplicates_the_active_branch_into_a_new_file() {
    let f = fixture(false).await;
    f.prompt("hello", "one").await;
    f.prompt("again", "two").await;
    let before = roles_and_texts(&f.host.session());
    let previous = f.file().unwrap();
    let leaf = f.host.session().leaf_id().unwrap();
    f.take_log();
    assert!(!f.host.clone_session().await.unwrap());
    let cloned = f.file().unwrap();
    assert_ne!(cloned, previous);
    assert_eq!(roles_and_texts(&f.host.session()), before);
    assert_eq!(
        f.take_log()[0],
        json!({"type":"session_before_fork","entryId": leaf,"position":"at"})
    );
    // Written at once (the branch holds assistant messages), with the parent header field
    // and the copied entries.
    let text = std::fs::read_to_string(&cloned).unwrap();
    assert_eq!(
        header(Path::new(&cloned))["parentSession"],
        previous.as_str()
    );
    assert!(text.contains("\"again\"") && text.contains("\"hello\""));
}

#[tokio::test]
async fn fork_cancellation_runs_before_the_entry_is_checked() {
    let f = fixture(false).await;
    f.prompt("hello", "hi").await;
    let user = f.user_entries()[0].0.clone();
    let file = f.file();
    f.take_log();

    *f.cancel.lock().unwrap() = Some("session_before_fork");
    let outcome = f.host.fork(&user, ForkPosition::Before).await.unwrap();
    assert_eq!(
        outcome,
        ForkOutcome {
            cancelled: true,
            selected_text: None
        }
    );
    *f.cancel.lock().unwrap() = Some("session_before_fork");
    let outcome = f
        .host
        .fork("missing-entry", ForkPosition::At)
        .await
        .unwrap();
    assert!(outcome.cancelled);
    assert_eq!(
        f.take_log(),
        vec![
            json!({"type":"session_before_fork","entryId": user,"position":"before"}),
            json!({"type":"session_before_fork","entryId":"missing-entry","position":"at"}),
        ]
    );
    assert_eq!(f.file(), file);
}

#[tokio::test]
async fn fork_errors_carry_pi_texts() {
    let f = fixture(false).await;
    // Nothing written yet: cloning the leaf is refused.
    let leaf = f.host.session().leaf_id().unwrap();
    assert_eq!(
        f.host
            .fork(&leaf, ForkPosition::At)
            .await
            .unwrap_err()
            .to_string(),
        "This session has not been saved yet. Wait for the first assistant response before cloning or forking it."
    );
    assert_eq!(
        f.host
            .fork("missing-entry", ForkPosition::Before)
            .await
            .unwrap_err()
            .to_string(),
        "Invalid entry ID for forking"
    );
    f.prompt("hello", "hi").await;
    // `before` needs a user message.
    let leaf = f.host.session().leaf_id().unwrap();
    assert_eq!(
        f.host
            .fork(&leaf, ForkPosition::Before)
            .await
            .unwrap_err()
            .to_string(),
        "Invalid entry ID for forking"
    );
}

#[tokio::test]
async fn switching_to_a_session_whose_cwd_is_gone_is_refused() {
    let f = fixture(false).await;
    let gone = f.dir.path().join("gone");
    let file = f.dir.path().join("gone.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n",
            json!({"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd": gone.display().to_string()})
        ),
    )
    .unwrap();
    let before = f.file();
    let err = f.host.switch_session(&file).await.unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}",
            gone.display(),
            file.display(),
            f.dir.path().display()
        )
    );
    assert_eq!(f.file(), before);
}

#[tokio::test]
async fn switching_runs_the_next_session_in_its_stored_cwd() {
    let f = fixture(false).await;
    let other = tempfile::tempdir().unwrap();
    let file = f.dir.path().join("other.jsonl");
    let lines = [
        json!({"type":"session","version":3,"id":"o","timestamp":"2026-01-01T00:00:00.000Z","cwd": other.path().display().to_string()}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
            "message":{"role":"user","content":"other","timestamp":1}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    assert!(!f.host.switch_session(&file).await.unwrap());
    assert_eq!(f.host.cwd(), other.path());
    assert_eq!(f.host.session().session_id(), "o");
    assert_eq!(roles_and_texts(&f.host.session()), vec!["user:other"]);
}

#[tokio::test]
async fn host_listeners_move_to_each_new_session() {
    let f = fixture(false).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let sub = f.host.subscribe(move |e| {
        sink.lock().unwrap().push(e.kind());
        Ok(())
    });
    f.prompt("hello", "hi").await;
    let first = seen.lock().unwrap().len();
    assert!(seen.lock().unwrap().contains(&"agent_settled"));

    f.host.new_session(None).await.unwrap();
    f.prompt("next", "there").await;
    let after_new = seen.lock().unwrap().len();
    assert!(after_new > first, "the listener follows the new session");

    let user = f.user_entries()[0].0.clone();
    f.host.fork(&user, ForkPosition::At).await.unwrap();
    f.prompt("forked", "yes").await;
    assert!(seen.lock().unwrap().len() > after_new);

    assert!(sub.unsubscribe());
    f.host.new_session(None).await.unwrap();
    let n = seen.lock().unwrap().len();
    f.prompt("unheard", "quiet").await;
    assert_eq!(seen.lock().unwrap().len(), n);
}

#[tokio::test]
async fn a_prompt_after_each_replacement_lands_in_the_new_file() {
    let f = fixture(false).await;
    f.prompt("first", "a").await;
    f.host.new_session(None).await.unwrap();
    f.prompt("second", "b").await;
    let second = f.file().unwrap();
    assert!(
        std::fs::read_to_string(&second)
            .unwrap()
            .contains("\"second\"")
    );
    f.host.clone_session().await.unwrap();
    f.prompt("third", "c").await;
    let third = f.file().unwrap();
    assert_ne!(third, second);
    let text = std::fs::read_to_string(&third).unwrap();
    assert!(text.contains("\"second\"") && text.contains("\"third\""));
    assert!(
        !std::fs::read_to_string(&second)
            .unwrap()
            .contains("\"third\"")
    );
}

#[tokio::test]
async fn dispose_emits_session_shutdown_quit() {
    let f = fixture(false).await;
    f.take_log();
    f.host.dispose().await;
    assert_eq!(
        f.take_log(),
        vec![json!({"type":"session_shutdown","reason":"quit"})]
    );
}

#[tokio::test]
async fn the_outgoing_run_settles_before_the_replacement() {
    let f = fixture(false).await;
    f.prompt("hello", "hi").await;
    let first = f.file().unwrap();
    f.host.new_session(None).await.unwrap();
    let outgoing = f.host.session();
    f.faux.set_responses(vec![wait_call()]);
    let run = {
        let s = outgoing.clone();
        tokio::spawn(async move { s.prompt("start the tool", PromptOptions::default()).await })
    };
    f.started.notified().await;
    assert!(!f.host.switch_session(Path::new(&first)).await.unwrap());
    run.await.unwrap().unwrap();
    assert_eq!(f.file().unwrap(), first);
    // The interrupted tool call has its result on file instead of dangling.
    let file = outgoing.session_file().unwrap();
    let store = SessionStore::open(&file, "/").unwrap();
    let roles: Vec<String> = store
        .entries()
        .unwrap()
        .iter()
        .filter_map(|e| e.message().map(|m| m.role().to_owned()))
        .collect();
    // (The interrupted run then ends with one more, failed assistant turn, as pi does.)
    assert_eq!(roles[..3], ["user", "assistant", "toolResult"]);
    let entries = store.entries().unwrap();
    let messages: Vec<_> = entries.iter().filter_map(|e| e.message()).collect();
    let result = serde_json::to_value(messages[2]).unwrap();
    assert_eq!(result["content"][0]["text"], "tool aborted");
}

#[tokio::test]
async fn reload_rebuilds_on_the_same_store_and_keeps_the_scope() {
    for in_memory in [false, true] {
        let f = fixture(in_memory).await;
        f.prompt("hello", "hi there").await;
        f.take_log();
        let file = f.file();
        let before = *f.builds.lock().unwrap();
        let old = f.host.session();
        let model = old.model().unwrap();
        old.set_scoped_models(vec![pi_coding_agent::config::model_resolver::ScopedModel {
            model,
            thinking_level: None,
        }]);
        f.host.reload().await.unwrap();
        assert_eq!(*f.builds.lock().unwrap(), before + 1, "built again");
        assert_eq!(
            f.take_log(),
            vec![
                json!({"type":"session_shutdown","reason":"reload"}),
                json!({"type":"session_start","reason":"reload"}),
            ]
        );
        let new = f.host.session();
        assert!(old.is_idle());
        assert_eq!(f.file(), file, "the same file (in memory: none)");
        assert_eq!(roles_and_texts(&new), vec!["user:hello", "assistant"]);
        assert_eq!(new.scoped_models().len(), 1);
        // The next prompt lands in the same session.
        f.prompt("again", "still here").await;
        assert_eq!(
            roles_and_texts(&f.host.session()),
            vec!["user:hello", "assistant", "user:again", "assistant"]
        );
    }
}
