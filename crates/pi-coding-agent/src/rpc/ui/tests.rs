//! `RpcUi` directly: dialog timeouts, aborts, and responses, read off the output stream.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::RpcUi;
use crate::extensions::DialogOptions;
use crate::rpc::framing::LineReader;
use crate::rpc::output::spawn_writer;

struct Ui {
    ui: Arc<RpcUi>,
    out: LineReader<tokio::io::DuplexStream>,
}

fn ui() -> Ui {
    let (w, r) = tokio::io::duplex(1 << 16);
    let (out, _task) = spawn_writer(w);
    Ui {
        ui: Arc::new(RpcUi::new(out)),
        out: LineReader::new(r),
    }
}

impl Ui {
    async fn next(&mut self) -> Value {
        serde_json::from_str(&self.out.next_line().await.unwrap().unwrap()).unwrap()
    }
}

fn response(fields: Value) -> Map<String, Value> {
    match fields {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

#[tokio::test(start_paused = true)]
async fn select_confirm_and_input_resolve_to_the_default_on_timeout() {
    let mut u = ui();
    let timeout = DialogOptions {
        timeout_ms: Some(5000),
        signal: None,
    };
    assert_eq!(
        u.ui.select_with("t", &["x".into()], timeout.clone()).await,
        None
    );
    let req = u.next().await;
    assert_eq!(req["method"], "select");
    assert_eq!(req["timeout"], 5000);
    assert!(!u.ui.confirm_with("t", "m", timeout.clone()).await);
    assert_eq!(u.next().await["timeout"], 5000);
    assert_eq!(u.ui.input_with("t", None, timeout).await, None);
    let input = u.next().await;
    assert!(input.get("placeholder").is_none());
    assert_eq!(u.ui.pending_count(), 0);
}

#[tokio::test]
async fn an_aborted_signal_resolves_without_a_request() {
    let mut u = ui();
    let signal = CancellationToken::new();
    signal.cancel();
    let opts = DialogOptions {
        timeout_ms: None,
        signal: Some(signal),
    };
    assert_eq!(u.ui.select_with("t", &[], opts.clone()).await, None);
    assert!(!u.ui.confirm_with("t", "m", opts).await);
    // The next record is the one written after: no request for the aborted dialogs.
    u.ui.set_title("T");
    assert_eq!(u.next().await["method"], "setTitle");
}

#[tokio::test]
async fn a_signal_aborting_a_waiting_dialog_gives_the_default() {
    let mut u = ui();
    let signal = CancellationToken::new();
    let (ui, s) = (u.ui.clone(), signal.clone());
    let task = tokio::spawn(async move {
        ui.input_with(
            "t",
            Some("p"),
            DialogOptions {
                timeout_ms: None,
                signal: Some(s),
            },
        )
        .await
    });
    assert_eq!(u.next().await["method"], "input");
    signal.cancel();
    assert_eq!(task.await.unwrap(), None);
    assert_eq!(u.ui.pending_count(), 0);
}

#[tokio::test]
async fn responses_resolve_confirm_and_editor() {
    let mut u = ui();
    let ui = u.ui.clone();
    let confirm =
        tokio::spawn(async move { ui.confirm_with("t", "m", DialogOptions::default()).await });
    let req = u.next().await;
    assert!(req.get("timeout").is_none());
    assert!(u.ui.resolve(&req["id"], response(json!({"confirmed": true}))));
    assert!(confirm.await.unwrap());

    let ui = u.ui.clone();
    let cancelled =
        tokio::spawn(async move { ui.confirm_with("t", "m", DialogOptions::default()).await });
    let req = u.next().await;
    assert!(u.ui.resolve(
        &req["id"],
        response(json!({"cancelled": true, "confirmed": true}))
    ));
    assert!(!cancelled.await.unwrap());
    assert!(
        !u.ui.resolve(&req["id"], response(json!({}))),
        "already answered"
    );

    let ui = u.ui.clone();
    let editor = tokio::spawn(async move { ui.editor_text("E", None).await });
    let req = u.next().await;
    assert_eq!(
        req,
        json!({"type":"extension_ui_request","id":req["id"],"method":"editor","title":"E"})
    );
    assert!(u.ui.resolve(&req["id"], response(json!({"value": "text"}))));
    assert_eq!(editor.await.unwrap(), Some("text".into()));

    u.ui.set_editor_text("abc");
    let r = u.next().await;
    assert_eq!(r["method"], "set_editor_text");
    assert_eq!(r["text"], "abc");
    u.ui.widget("w", None, Some("belowEditor"));
    let r = u.next().await;
    assert!(r.get("widgetLines").is_none());
    assert_eq!(r["widgetPlacement"], "belowEditor");
}
