//! The extension UI sub-protocol of RPC mode.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/rpc-mode.js` (`createExtensionUIContext`,
//! `createDialogPromise`): a dialog writes
//! `{"type":"extension_ui_request","id":<uuid>,"method":…}` and waits for the client's
//! `{"type":"extension_ui_response","id",…}`. `select`, `confirm` and `input` honour a
//! `timeout` (ms) and an abort signal (both resolve to the default: `None`, `confirm` →
//! `false`); `editor` has neither. A response with `cancelled: true` gives the default too;
//! otherwise `value` (select/input/editor) or `confirmed` (confirm). Responses for unknown ids
//! are ignored. `notify`, `setStatus`, `setWidget`, `setTitle` and `set_editor_text` are
//! fire-and-forget records (each with a fresh id).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::output::Output;
pub(crate) use crate::extensions::DialogOptions;
use crate::extensions::{NotifyLevel, Ui};

type Pending = HashMap<String, oneshot::Sender<Map<String, Value>>>;

/// The RPC user interface: writes requests to the output and routes responses back.
#[derive(Debug)]
pub(crate) struct RpcUi {
    out: Output,
    pending: Mutex<Pending>,
    closed: std::sync::atomic::AtomicBool,
}

fn request(id: &str, method: &str, fields: Vec<(&str, Option<Value>)>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "extension_ui_request".into());
    m.insert("id".into(), id.into());
    m.insert("method".into(), method.into());
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    }
    Value::Object(m)
}

fn cancelled(r: &Map<String, Value>) -> bool {
    r.get("cancelled").is_some_and(|c| c == &Value::Bool(true))
}

fn value_of(r: Option<Map<String, Value>>) -> Option<String> {
    let r = r?;
    if cancelled(&r) {
        return None;
    }
    match r.get("value")? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

impl RpcUi {
    /// A UI writing to `out`.
    pub(crate) fn new(out: Output) -> Self {
        RpcUi {
            out,
            pending: Mutex::new(HashMap::new()),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        crate::sync::lock(&self.pending)
    }

    /// Routes a client response to its dialog; `false` when no dialog waits for `id`.
    pub(crate) fn resolve(&self, id: &Value, response: Map<String, Value>) -> bool {
        let Some(id) = id.as_str() else {
            return false;
        };
        match self.pending().remove(id) {
            Some(tx) => tx.send(response).is_ok(),
            None => false,
        }
    }

    /// Number of dialogs waiting for a response.
    #[cfg(test)]
    pub(crate) fn pending_count(&self) -> usize {
        self.pending().len()
    }

    /// Shutdown: every waiting dialog resolves to its default, and so does every later one
    /// (without writing a request).
    pub(crate) fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.pending().clear();
    }

    /// Writes the request and waits for its response; `None` on timeout, abort or cancel.
    async fn dialog(
        &self,
        method: &str,
        fields: Vec<(&str, Option<Value>)>,
        options: DialogOptions,
    ) -> Option<Map<String, Value>> {
        if options.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
            return None;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending();
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                return None;
            }
            pending.insert(id.clone(), tx);
        }
        self.out.send_value(&request(&id, method, fields));
        let timeout = async {
            match options.timeout_ms.filter(|t| *t > 0) {
                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        let signal = async {
            match &options.signal {
                Some(s) => s.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            r = rx => r.ok(),
            () = timeout => None,
            () = signal => None,
        };
        self.pending().remove(&id);
        result
    }

    /// `select`: `{method:"select", title, options, timeout?}` → the chosen `value`.
    pub(crate) async fn select_with(
        &self,
        title: &str,
        options: &[String],
        opts: DialogOptions,
    ) -> Option<String> {
        let timeout = opts.timeout_ms.map(Value::from);
        let r = self
            .dialog(
                "select",
                vec![
                    ("title", Some(title.into())),
                    ("options", Some(options.into())),
                    ("timeout", timeout),
                ],
                opts,
            )
            .await;
        value_of(r)
    }

    /// `confirm`: `{method:"confirm", title, message, timeout?}` → `confirmed` (default
    /// `false`).
    pub(crate) async fn confirm_with(
        &self,
        title: &str,
        message: &str,
        opts: DialogOptions,
    ) -> bool {
        let timeout = opts.timeout_ms.map(Value::from);
        let r = self
            .dialog(
                "confirm",
                vec![
                    ("title", Some(title.into())),
                    ("message", Some(message.into())),
                    ("timeout", timeout),
                ],
                opts,
            )
            .await;
        match r {
            Some(r) if !cancelled(&r) => r.get("confirmed").and_then(Value::as_bool) == Some(true),
            _ => false,
        }
    }

    /// `input`: `{method:"input", title, placeholder?, timeout?}` → the typed `value`.
    pub(crate) async fn input_with(
        &self,
        title: &str,
        placeholder: Option<&str>,
        opts: DialogOptions,
    ) -> Option<String> {
        let timeout = opts.timeout_ms.map(Value::from);
        let r = self
            .dialog(
                "input",
                vec![
                    ("title", Some(title.into())),
                    ("placeholder", placeholder.map(Value::from)),
                    ("timeout", timeout),
                ],
                opts,
            )
            .await;
        value_of(r)
    }

    /// `editor`: `{method:"editor", title, prefill?}` (no timeout) → the edited `value`.
    pub(crate) async fn editor_text(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let r = self
            .dialog(
                "editor",
                vec![
                    ("title", Some(title.into())),
                    ("prefill", prefill.map(Value::from)),
                ],
                DialogOptions::default(),
            )
            .await;
        value_of(r)
    }

    fn fire(&self, method: &str, fields: Vec<(&str, Option<Value>)>) {
        let id = uuid::Uuid::new_v4().to_string();
        self.out.send_value(&request(&id, method, fields));
    }

    /// `notify {message, notifyType?}`.
    pub(crate) fn notify_with(&self, message: &str, notify_type: Option<NotifyLevel>) {
        let t = notify_type.map(|l| match l {
            NotifyLevel::Info => "info",
            NotifyLevel::Warning => "warning",
            NotifyLevel::Error => "error",
        });
        self.fire(
            "notify",
            vec![
                ("message", Some(message.into())),
                ("notifyType", t.map(Value::from)),
            ],
        );
    }

    /// `setStatus {statusKey, statusText?}` (`statusText` omitted clears it).
    pub(crate) fn status(&self, key: &str, text: Option<&str>) {
        self.fire(
            "setStatus",
            vec![
                ("statusKey", Some(key.into())),
                ("statusText", text.map(Value::from)),
            ],
        );
    }

    /// `setWidget {widgetKey, widgetLines?, widgetPlacement?}` (`aboveEditor`/`belowEditor`).
    pub(crate) fn widget(&self, key: &str, lines: Option<&[String]>, placement: Option<&str>) {
        self.fire(
            "setWidget",
            vec![
                ("widgetKey", Some(key.into())),
                ("widgetLines", lines.map(Value::from)),
                ("widgetPlacement", placement.map(Value::from)),
            ],
        );
    }

    /// `setTitle {title}`.
    pub(crate) fn set_title(&self, title: &str) {
        self.fire("setTitle", vec![("title", Some(title.into()))]);
    }

    /// `set_editor_text {text}` (also pi's `pasteToEditor`).
    pub(crate) fn set_editor_text(&self, text: &str) {
        self.fire("set_editor_text", vec![("text", Some(text.into()))]);
    }
}

/// The extension-facing [`Ui`].
impl Ui for RpcUi {
    fn notify(&self, message: &str, level: NotifyLevel) {
        self.notify_with(message, Some(level));
    }

    fn confirm<'a>(&'a self, title: &'a str, message: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(self.confirm_with(title, message, DialogOptions::default()))
    }

    fn select<'a>(
        &'a self,
        title: &'a str,
        options: &'a [String],
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.select_with(title, options, DialogOptions::default()))
    }

    fn input<'a>(
        &'a self,
        title: &'a str,
        placeholder: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.input_with(title, placeholder, DialogOptions::default()))
    }

    fn editor<'a>(
        &'a self,
        title: &'a str,
        prefill: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.editor_text(title, prefill))
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.status(key, text);
    }

    fn set_widget(
        &self,
        key: &str,
        lines: Option<&[String]>,
        placement: Option<crate::extensions::WidgetPlacement>,
    ) {
        self.widget(key, lines, placement.map(|p| p.as_str()));
    }

    fn select_with<'a>(
        &'a self,
        title: &'a str,
        options: &'a [String],
        opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(RpcUi::select_with(self, title, options, opts))
    }

    fn confirm_with<'a>(
        &'a self,
        title: &'a str,
        message: &'a str,
        opts: DialogOptions,
    ) -> BoxFuture<'a, bool> {
        Box::pin(RpcUi::confirm_with(self, title, message, opts))
    }

    fn input_with<'a>(
        &'a self,
        title: &'a str,
        placeholder: Option<&'a str>,
        opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(RpcUi::input_with(self, title, placeholder, opts))
    }

    fn set_title(&self, title: &str) {
        RpcUi::set_title(self, title);
    }

    fn set_editor_text(&self, text: &str) {
        RpcUi::set_editor_text(self, text);
    }
}

#[cfg(test)]
mod tests;
