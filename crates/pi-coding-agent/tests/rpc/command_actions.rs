//! RPC mode on a [`RuntimeHost`], in process: an extension command sent as a `prompt`
//! replaces the session through its `ctx` (pi's `commandContextActions` in
//! `modes/rpc/rpc-mode.ts`), and RPC `bash` asks the `user_bash` handlers first.

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

/// Each build loads `gen<N>.ts` with `/fresh` (`ctx.new_session`, logging its outcome) and a
/// `user_bash` handler answering the command `fake`.
fn factory(faux: &FauxProvider, log: &Arc<Mutex<Vec<Value>>>) -> SessionFactory {
    let (faux, log) = (faux.clone(), log.clone());
    let builds = Arc::new(Mutex::new(0));
    Arc::new(move |target: SessionTarget| {
        let n = {
            let mut b = builds.lock().unwrap();
            *b += 1;
            *b
        };
        let log = log.clone();
        let runner = ExtensionRunner::builder(target.cwd.clone())
            .mode(Mode::Rpc)
            .extension(FnExtension::new(format!("gen{n}.ts"), move |pi| {
                let l = log.clone();
                pi.register_command("fresh", None, move |_, ctx| {
                    let l = l.clone();
                    Box::pin(async move {
                        let outcome = ctx.new_session(NewSessionOptions::default()).await?;
                        l.lock()
                            .unwrap()
                            .push(json!({"gen": n, "cancelled": outcome.cancelled}));
                        Ok(())
                    })
                });
                pi.on::<UserBashEvent, _>(move |e, _| {
                    let handled = e.command == "fake";
                    Box::pin(async move {
                        Ok(handled.then(|| UserBashResult {
                            result: pi_coding_agent::tools::bash::user::BashResult {
                                output: format!("faked by gen{n}"),
                                exit_code: Some(0),
                                ..Default::default()
                            },
                        }))
                    })
                });
                Ok(())
            }))
            .build();
        rpc_support::session_with_extensions(runner, &faux, target.store)
    })
}

#[tokio::test]
async fn a_command_replaces_the_rpc_session_and_bash_asks_user_bash_first() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let log = Arc::new(Mutex::new(Vec::new()));
    let host = RuntimeHost::start(
        factory(&faux, &log),
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

    faux.set_responses(vec![text("first answer")]);
    c.send(r#"{"id":"p","type":"prompt","message":"hello"}"#)
        .await;
    c.until(|v| v["type"] == "agent_settled").await;
    let before = c.data("s1", "get_state", json!({})).await;
    assert_eq!(before["messageCount"], 2);

    // The command runs and awaits the replacement before the prompt is answered.
    let response = c.call("p2", "prompt", json!({"message": "/fresh"})).await;
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(
        *log.lock().unwrap(),
        [json!({"gen": 1, "cancelled": false})]
    );
    let after = c.data("s2", "get_state", json!({})).await;
    assert_ne!(after["sessionId"], before["sessionId"]);
    assert_eq!(after["messageCount"], 0);
    assert_eq!(after["sessionId"], host.session().session_id());

    // `bash`: the new session's extension answers `fake`; other commands run.
    let fake = c.data("b1", "bash", json!({"command": "fake"})).await;
    assert_eq!(
        (&fake["output"], &fake["exitCode"]),
        (&json!("faked by gen2"), &json!(0))
    );
    let real = c
        .data("b2", "bash", json!({"command": "printf real"}))
        .await;
    assert_eq!(real["output"], "real");
    let messages = c.data("m", "get_messages", json!({})).await;
    let commands: Vec<&Value> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["command"])
        .collect();
    assert_eq!(commands, [&json!("fake"), &json!("printf real")]);
    assert_eq!(c.finish().await, 0);
}
