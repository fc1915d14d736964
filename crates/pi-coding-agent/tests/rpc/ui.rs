//! The extension UI sub-protocol and `extension_error` records of RPC mode, in
//! process: an extension on the session asks through `ctx.ui`, the test answers as the RPC
//! client (`RpcUi`'s timeouts and cancellation: its unit tests).

use crate::rpc_support;
use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider};
use pi_coding_agent::extensions::events::{SessionShutdownEvent, ShutdownReason};
use pi_coding_agent::extensions::*;
use pi_coding_agent::rpc::{LineReader, RpcRuntime, run_rpc};
use pi_coding_agent::session::AgentSession;
use rpc_support::start;
use serde_json::{Value, json};
use session_support::Echo;

type Log = Arc<Mutex<Vec<String>>>;

/// A session with one extension: `/ask` walks through every dialog and fire-and-forget call,
/// `/boom` fails; `session_shutdown` is logged.
fn runtime(log: Log) -> RpcRuntime {
    let faux = FauxProvider::new(FauxOptions::default());
    let l = log.clone();
    let extension = FnExtension::new("ui.ts", move |pi: &mut ExtensionApi<'_>| {
        let l1 = l.clone();
        pi.register_command("ask", Some("asks things".into()), move |_args, ctx| {
            let l = l1.clone();
            Box::pin(async move {
                let ui = ctx.ui();
                let picked = ui.select("Pick", &["a".into(), "b".into()]).await;
                let sure = ui.confirm("Sure?", "Really").await;
                let typed = ui.input("Name", Some("your name")).await;
                let edited = ui.editor("Edit", Some("draft")).await;
                ui.notify("done", NotifyLevel::Warning);
                ui.set_status("k", Some("busy"));
                ui.set_status("k", None);
                ui.set_widget(
                    "w",
                    Some(&["line".to_owned()]),
                    Some(WidgetPlacement::BelowEditor),
                );
                ui.set_widget("w", None, None);
                l.lock().unwrap().push(format!(
                    "{picked:?} {sure} {typed:?} {edited:?} hasUI={}",
                    ctx.has_ui()
                ));
                Ok(())
            })
        });
        let l3 = l.clone();
        pi.register_command("quick", None, move |_args, ctx| {
            let l = l3.clone();
            Box::pin(async move {
                let ui = ctx.ui();
                let opts = DialogOptions {
                    timeout_ms: Some(1),
                    signal: None,
                };
                let answer = ui.input_with("Quick", None, opts).await;
                ui.set_title("pi-rs");
                ui.set_editor_text("draft text");
                l.lock().unwrap().push(format!("quick {answer:?}"));
                Ok(())
            })
        });
        pi.register_command("quit", None, |_args, ctx| {
            Box::pin(async move {
                ctx.shutdown();
                Ok(())
            })
        });
        pi.register_command("boom", None, |_args, _ctx| {
            Box::pin(async { Err(HandlerError::new("kaput")) })
        });
        let l2 = l.clone();
        pi.on::<SessionShutdownEvent, _>(move |e, _ctx| {
            let l = l2.clone();
            let quit = e.reason == ShutdownReason::Quit;
            Box::pin(async move {
                l.lock().unwrap().push(format!("shutdown quit={quit}"));
                Ok(None)
            })
        });
        Ok(())
    });
    let runner = ExtensionRunner::builder("/tmp")
        .mode(Mode::Rpc)
        .extension(extension)
        .build();
    let hooks = ExtensionHooks::new(runner.clone());
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .tools(vec![Arc::new(Echo)])
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    hooks.attach(&session);
    let mut rt = RpcRuntime::new(session);
    rt.extensions = Some(hooks);
    rt
}

fn is_request(v: &Value, method: &str) -> bool {
    v["type"] == "extension_ui_request" && v["method"] == method
}

#[tokio::test]
async fn dialogs_round_trip_and_fire_and_forget_calls_are_written() {
    let log: Log = Arc::default();
    let mut c = start(runtime(log.clone()));
    c.send(r#"{"id":"p","type":"prompt","message":"/ask"}"#)
        .await;

    let select = c.until(|v| is_request(v, "select")).await;
    assert_eq!(select["title"], "Pick");
    assert_eq!(select["options"], json!(["a", "b"]));
    assert!(select.get("timeout").is_none());
    let id = select["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID");
    // A response for an unknown id is ignored.
    c.send(r#"{"type":"extension_ui_response","id":"nobody","value":"x"}"#)
        .await;
    c.send(&json!({"type":"extension_ui_response","id":id,"value":"b"}).to_string())
        .await;

    let confirm = c.until(|v| is_request(v, "confirm")).await;
    assert_eq!(confirm["message"], "Really");
    c.send(
        &json!({"type":"extension_ui_response","id":confirm["id"],"confirmed":true}).to_string(),
    )
    .await;

    let input = c.until(|v| is_request(v, "input")).await;
    assert_eq!(input["placeholder"], "your name");
    c.send(&json!({"type":"extension_ui_response","id":input["id"],"cancelled":true}).to_string())
        .await;

    let editor = c.until(|v| is_request(v, "editor")).await;
    assert_eq!(
        editor,
        json!({"type":"extension_ui_request","id":editor["id"],"method":"editor","title":"Edit","prefill":"draft"})
    );
    c.send(&json!({"type":"extension_ui_response","id":editor["id"],"value":"final"}).to_string())
        .await;

    let notify = c.until(|v| is_request(v, "notify")).await;
    assert_eq!(notify["message"], "done");
    assert_eq!(notify["notifyType"], "warning");
    let status = c.until(|v| is_request(v, "setStatus")).await;
    assert_eq!(
        (status["statusKey"].clone(), status["statusText"].clone()),
        (json!("k"), json!("busy"))
    );
    let cleared = c.until(|v| is_request(v, "setStatus")).await;
    assert!(cleared.get("statusText").is_none());
    let widget = c.until(|v| is_request(v, "setWidget")).await;
    assert_eq!(widget["widgetKey"], "w");
    assert_eq!(widget["widgetLines"], json!(["line"]));
    assert_eq!(widget["widgetPlacement"], "belowEditor");
    let cleared = c.until(|v| is_request(v, "setWidget")).await;
    assert!(cleared.get("widgetLines").is_none(), "{cleared}");
    assert!(cleared.get("widgetPlacement").is_none(), "{cleared}");

    let r = c.response("p").await;
    assert_eq!(r["success"], true);
    assert_eq!(
        log.lock().unwrap()[0],
        "Some(\"b\") true None Some(\"final\") hasUI=true"
    );
    // No response records for UI responses.
    assert!(
        !c.seen
            .iter()
            .any(|v| v["type"] == "response" && v["id"] != "p")
    );

    let commands = c.data("g", "get_commands", json!({})).await;
    assert_eq!(
        commands["commands"][0],
        json!({"name":"ask","description":"asks things","source":"extension","sourceInfo":{"path":"ui.ts"}})
    );
    assert_eq!(commands["commands"][1]["name"], "quick");
    assert_eq!(commands["commands"][2]["name"], "quit");
    assert_eq!(commands["commands"][3]["name"], "boom");
    assert!(commands["commands"][3].get("description").is_none());
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn an_extension_dialog_timeout_reaches_the_client_and_resolves_to_the_default() {
    let log: Log = Arc::default();
    let mut c = start(runtime(log.clone()));
    c.send(r#"{"id":"p","type":"prompt","message":"/quick"}"#)
        .await;
    let input = c.until(|v| is_request(v, "input")).await;
    assert_eq!(input["timeout"], 1);
    assert_eq!(input["title"], "Quick");
    let title = c.until(|v| is_request(v, "setTitle")).await;
    assert_eq!(title["title"], "pi-rs");
    let text = c.until(|v| is_request(v, "set_editor_text")).await;
    assert_eq!(text["text"], "draft text");
    assert_eq!(c.response("p").await["success"], true);
    assert_eq!(log.lock().unwrap()[0], "quick None");
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn ctx_shutdown_ends_the_server_with_the_input_still_open() {
    let log: Log = Arc::default();
    let mut c = start(runtime(log.clone()));
    c.send(r#"{"id":"p","type":"prompt","message":"/quit"}"#)
        .await;
    assert_eq!(c.ended().await, 0);
    assert_eq!(c.seen[0]["id"], "p");
    assert_eq!(log.lock().unwrap().clone(), ["shutdown quit=true"]);
}

#[tokio::test]
async fn a_failing_command_becomes_an_extension_error_record() {
    let log: Log = Arc::default();
    let mut c = start(runtime(log.clone()));
    c.send(r#"{"id":"p","type":"prompt","message":"/boom"}"#)
        .await;
    let err = c.until(|v| v["type"] == "extension_error").await;
    assert_eq!(
        err,
        json!({"type":"extension_error","extensionPath":"command:boom","event":"command","error":"kaput"})
    );
    assert_eq!(c.response("p").await["success"], true);
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn end_of_input_emits_session_shutdown_quit_and_releases_open_dialogs() {
    let log: Log = Arc::default();
    let mut c = start(runtime(log.clone()));
    c.send(r#"{"id":"p","type":"prompt","message":"/ask"}"#)
        .await;
    c.until(|v| is_request(v, "select")).await;
    assert_eq!(c.finish().await, 0);
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&"shutdown quit=true".to_owned()), "{log:?}");
}

#[tokio::test]
async fn run_rpc_accepts_a_bare_session() {
    let faux = FauxProvider::new(FauxOptions::default());
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .build()
        .unwrap();
    let (mut client_in, server_in) = tokio::io::duplex(1024);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    use tokio::io::AsyncWriteExt;
    client_in
        .write_all(b"{\"id\":1,\"type\":\"abort\"}\n")
        .await
        .unwrap();
    drop(client_in);
    assert_eq!(run_rpc(session, server_in, server_out).await, 0);
    let mut r = LineReader::new(client_out);
    let line: Value = serde_json::from_str(&r.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(line["command"], "abort");
}
