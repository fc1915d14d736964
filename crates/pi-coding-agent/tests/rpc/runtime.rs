//! RPC mode on a [`RuntimeHost`] with extensions, in process: every replacement session's
//! (freshly loaded) extensions get the RPC UI, the `extension_error` output and their commands
//! before `session_start` runs (pi's `rebindSession`), and cancellations answer
//! `{cancelled:true}`.

use crate::rpc_support;
use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::rpc::RpcRuntime;
use pi_coding_agent::runtime::{RuntimeHost, SessionFactory, SessionTarget};
use pi_coding_agent::storage::SessionStore;
use rpc_support::start;
use serde_json::{Value, json};
use session_support::text;

/// Each build loads `gen<N>.ts`: `session_start` notifies through the UI and fails (an
/// extension error), `session_before_switch` / `_fork` cancel while `cancel` is set, and the
/// command `/hello` is registered.
fn factory(faux: &FauxProvider, cancel: &Arc<Mutex<bool>>) -> SessionFactory {
    let (faux, cancel) = (faux.clone(), cancel.clone());
    let builds = Arc::new(Mutex::new(0));
    Arc::new(move |target: SessionTarget| {
        let n = {
            let mut b = builds.lock().unwrap();
            *b += 1;
            *b
        };
        let (c1, c2) = (cancel.clone(), cancel.clone());
        let runner = ExtensionRunner::builder(target.cwd.clone())
            .mode(Mode::Rpc)
            .extension(FnExtension::new(format!("gen{n}.ts"), move |pi| {
                pi.on::<SessionStartEvent, _>(move |e, ctx| {
                    let reason = serde_json::to_value(e.reason).unwrap();
                    ctx.ui().notify(
                        &format!("start {} gen{n}", reason.as_str().unwrap()),
                        NotifyLevel::Info,
                    );
                    Box::pin(async move { Err(HandlerError::from(format!("start failed gen{n}"))) })
                });
                let c = c1.clone();
                pi.on::<SessionBeforeSwitchEvent, _>(move |_, _| {
                    let cancel = *c.lock().unwrap();
                    Box::pin(async move { Ok(Some(CancelResult { cancel })) })
                });
                let c = c2.clone();
                pi.on::<SessionBeforeForkEvent, _>(move |_, _| {
                    let cancel = *c.lock().unwrap();
                    Box::pin(async move {
                        Ok(Some(ForkResult {
                            cancel,
                            skip_conversation_restore: None,
                        }))
                    })
                });
                pi.register_command("hello", Some("says hello".into()), |_, _| {
                    Box::pin(async { Ok(()) })
                });
                Ok(())
            }))
            .build();
        rpc_support::session_with_extensions(runner, &faux, target.store)
    })
}

fn is_notify(v: &Value, message: &str) -> bool {
    v["type"] == "extension_ui_request" && v["method"] == "notify" && v["message"] == message
}

#[tokio::test]
async fn replacement_sessions_get_the_rpc_ui_errors_and_commands_before_session_start() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let cancel = Arc::new(Mutex::new(false));
    let host = RuntimeHost::start(
        factory(&faux, &cancel),
        SessionTarget {
            store: SessionStore::in_memory(&dir.path().display().to_string()),
            cwd: dir.path().to_path_buf(),
            reload: false,
        },
    )
    .await
    .unwrap();
    let mut runtime = RpcRuntime::new(host.session());
    runtime.extensions = host.extensions();
    runtime.host = Some(Arc::new(host.clone()));
    let mut c = start(runtime);

    let commands = c.data("c1", "get_commands", json!({})).await;
    assert_eq!(commands["commands"][0]["sourceInfo"]["path"], "gen1.ts");

    faux.set_responses(vec![text("first answer")]);
    c.send(r#"{"id":"p","type":"prompt","message":"hello"}"#)
        .await;
    c.until(|v| v["type"] == "agent_settled").await;

    assert_eq!(
        c.data("n", "new_session", json!({})).await,
        json!({"cancelled": false})
    );
    // The new runner's session_start already had the RPC UI and error output.
    c.until(|v| is_notify(v, "start new gen2")).await;
    let error = c.until(|v| v["type"] == "extension_error").await;
    assert_eq!(
        error,
        json!({"type":"extension_error","extensionPath":"gen2.ts","event":"session_start","error":"start failed gen2"})
    );
    let commands = c.data("c2", "get_commands", json!({})).await;
    assert_eq!(
        commands["commands"],
        json!([{"name":"hello","description":"says hello","source":"extension","sourceInfo":{"path":"gen2.ts"}}])
    );
    // Events of the new session are written.
    faux.set_responses(vec![text("second answer")]);
    c.send(r#"{"id":"p2","type":"prompt","message":"again"}"#)
        .await;
    let end = c
        .until(|v| v["type"] == "message_end" && v["message"]["role"] == "assistant")
        .await;
    assert_eq!(end["message"]["content"][0]["text"], "second answer");
    c.until(|v| v["type"] == "agent_settled").await;

    // Cancellations: nothing is replaced; a cancelled fork has no `text`.
    *cancel.lock().unwrap() = true;
    assert_eq!(
        c.data("n2", "new_session", json!({})).await,
        json!({"cancelled": true})
    );
    let fork = c.data("fm", "get_fork_messages", json!({})).await;
    let entry = fork["messages"][0]["entryId"].clone();
    assert_eq!(
        c.data("f", "fork", json!({"entryId": entry})).await,
        json!({"cancelled": true})
    );
    assert_eq!(
        c.data("cl", "clone", json!({})).await,
        json!({"cancelled": true})
    );
    assert_eq!(
        c.data("c3", "get_commands", json!({})).await["commands"][0]["sourceInfo"]["path"],
        "gen2.ts"
    );

    *cancel.lock().unwrap() = false;
    assert_eq!(
        c.data("f2", "fork", json!({"entryId": entry})).await,
        json!({"text": "again", "cancelled": false})
    );
    c.until(|v| is_notify(v, "start fork gen3")).await;
    assert_eq!(c.finish().await, 0);
}
