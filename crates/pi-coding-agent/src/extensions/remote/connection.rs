//! One extension process and its JSON-RPC 2.0 connection (see `docs/extension-protocol.md`).
//!
//! The process runs in its own process group with stdin closed and stdout sent to pi-rs's
//! stderr; the protocol runs on fds 3 (host → extension) and 4 (extension → host). Three
//! threads serve it, so the connection works whatever runtime (if any) the caller is on: a
//! writer (records queued by any task), a reader (answers resolve pending calls; the
//! extension's requests go to the installed [`RequestHandler`]), and a waiter that notices
//! the process's exit even when a grandchild keeps the pipes open. A dead connection fails
//! every pending call and every later one at once.

use std::collections::HashMap;
use std::io::BufReader;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use command_fds::{CommandFdExt, FdMapping};
use pi_agent_core::ToolUpdateFn;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::framing::{MAX_RECORD_BYTES, read_record, write_record};
use super::manifest::Manifest;
use crate::sync::lock;

/// How long the waiter lets the reader drain what the process wrote before it exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);

/// How a call to the extension failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The extension answered with an error (pi: its handler threw); the message.
    Remote(String),
    /// No answer within the deadline.
    Timeout(Duration),
    /// The call was cancelled and the grace period passed without an answer.
    Aborted,
    /// The process is gone (or was stopped); why.
    Dead(String),
    /// The request would be a record longer than [`MAX_RECORD_BYTES`] (its size in bytes); it
    /// was not sent, and the extension keeps running.
    TooLarge(usize),
}

type Reply = Result<Value, CallError>;

enum Waiter {
    Async(oneshot::Sender<Reply>),
    Blocking(std::sync::mpsc::Sender<Reply>),
}

impl Waiter {
    fn send(self, reply: Reply) {
        match self {
            Waiter::Async(tx) => {
                let _ = tx.send(reply);
            }
            Waiter::Blocking(tx) => {
                let _ = tx.send(reply);
            }
        }
    }
}

/// Serves one request of the extension: `(connection, id, method, params)`; it must answer
/// with [`Connection::respond`] and must not block (spawn the work).
pub type RequestHandler = Arc<dyn Fn(Arc<Connection>, Value, String, Value) + Send + Sync>;

/// Receives protocol problems (a garbage line, a dead process): `(event, text)`.
pub type ProblemSink = Arc<dyn Fn(&str, String) + Send + Sync>;

/// A running extension process.
pub struct Connection {
    manifest: Manifest,
    pid: i32,
    out: Mutex<Option<std::sync::mpsc::Sender<Vec<u8>>>>,
    pending: Mutex<HashMap<u64, Waiter>>,
    updates: Mutex<HashMap<u64, ToolUpdateFn>>,
    next_id: AtomicU64,
    dead: Mutex<Option<String>>,
    exited: AtomicBool,
    stopping: AtomicBool,
    garbage_reported: AtomicBool,
    handler: Mutex<Option<RequestHandler>>,
    problems: Mutex<Option<ProblemSink>>,
    runtime: Mutex<Option<tokio::runtime::Handle>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("path", &self.manifest.path)
            .field("pid", &self.pid)
            .field("dead", &*lock(&self.dead))
            .finish()
    }
}

impl Connection {
    /// Starts the manifest's process in `cwd`.
    ///
    /// # Errors
    /// The pipes or the process cannot be created (e.g. the command does not exist).
    pub fn spawn(manifest: Manifest, cwd: &Path) -> Result<Arc<Connection>, SpawnError> {
        let (to_child_read, to_child_write) = std::io::pipe().map_err(SpawnError::Setup)?;
        let (from_child_read, from_child_write) = std::io::pipe().map_err(SpawnError::Setup)?;
        let stdout_to_stderr: OwnedFd = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(SpawnError::Setup)?;
        let mut command = Command::new(&manifest.command);
        command
            .args(&manifest.args)
            .envs(manifest.env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout_to_stderr))
            .stderr(Stdio::inherit())
            .process_group(0);
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: OwnedFd::from(to_child_read),
                    child_fd: 3,
                },
                FdMapping {
                    parent_fd: OwnedFd::from(from_child_write),
                    child_fd: 4,
                },
            ])
            .map_err(SpawnError::Fds)?;
        let mut child = command.spawn().map_err(|source| SpawnError::Start {
            command: manifest.command.clone(),
            source,
        })?;
        // The child's ends live in `command` until it is dropped: the reader sees EOF only
        // once they are closed here.
        drop(command);
        let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        let (out_tx, out_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let conn = Arc::new(Connection {
            manifest,
            pid,
            out: Mutex::new(Some(out_tx)),
            pending: Mutex::new(HashMap::new()),
            updates: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            dead: Mutex::new(None),
            exited: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            garbage_reported: AtomicBool::new(false),
            handler: Mutex::new(None),
            problems: Mutex::new(None),
            runtime: Mutex::new(tokio::runtime::Handle::try_current().ok()),
        });
        let mut writer = to_child_write;
        spawn_thread("pi-ext-writer", move || {
            while let Ok(record) = out_rx.recv() {
                if write_record(&mut writer, &record).is_err() {
                    break;
                }
            }
        })?;
        let (drained_tx, drained_rx) = std::sync::mpsc::channel::<()>();
        let reader_conn = Arc::clone(&conn);
        spawn_thread("pi-ext-reader", move || {
            let mut reader = BufReader::new(from_child_read);
            loop {
                match read_record(&mut reader, MAX_RECORD_BYTES) {
                    Ok(Some(record)) => reader_conn.on_record(&record),
                    Ok(None) => break,
                    Err(e) => {
                        reader_conn.kill(&format!("protocol error: {e}"));
                        break;
                    }
                }
            }
            let _ = drained_tx.send(());
        })?;
        let waiter_conn = Arc::clone(&conn);
        spawn_thread("pi-ext-waiter", move || {
            let status = child.wait();
            waiter_conn.exited.store(true, Ordering::SeqCst);
            let _ = drained_rx.recv_timeout(DRAIN_AFTER_EXIT);
            let why = match status {
                Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                    (Some(code), _) => format!("exited with code {code}"),
                    (None, Some(sig)) => format!("killed by signal {sig}"),
                    (None, None) => "exited".to_owned(),
                },
                Err(e) => format!("lost: {e}"),
            };
            waiter_conn.mark_dead(why);
        })?;
        Ok(conn)
    }

    /// The manifest the process was started from.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The extension's path in error records (the manifest file).
    pub fn path(&self) -> String {
        self.manifest.path.display().to_string()
    }

    /// Why the connection is dead, if it is.
    pub fn dead_reason(&self) -> Option<String> {
        lock(&self.dead).clone()
    }

    /// Installs the server of the extension's requests.
    pub fn set_request_handler(&self, handler: RequestHandler) {
        *lock(&self.handler) = Some(handler);
    }

    /// Installs the receiver of protocol problems (default: stderr).
    pub fn set_problem_sink(&self, sink: ProblemSink) {
        *lock(&self.problems) = Some(sink);
    }

    /// The runtime the extension's requests are served on: the one the connection was
    /// started on, else the last one a call came from (a process started before the run's
    /// runtime existed gets it with its first event).
    pub fn runtime(&self) -> Option<tokio::runtime::Handle> {
        lock(&self.runtime).clone()
    }

    /// Remembers the current runtime (if any) for serving the extension's requests.
    pub fn remember_runtime(&self) {
        let mut slot = lock(&self.runtime);
        if slot.is_none() {
            *slot = tokio::runtime::Handle::try_current().ok();
        }
    }

    fn problem(&self, event: &str, text: String) {
        let sink = lock(&self.problems).clone();
        match sink {
            Some(sink) => sink(event, text),
            None => eprintln!("Extension error ({}): {text}", self.path()),
        }
    }

    fn send_value(&self, value: &Value) -> Sent {
        let Ok(bytes) = serde_json::to_vec(value) else {
            return Sent::Dead;
        };
        // The extension may refuse (and the protocol lets it drop the connection for) a
        // longer record: it is not sent at all.
        if bytes.len() > MAX_RECORD_BYTES {
            return Sent::TooLarge(bytes.len());
        }
        match &*lock(&self.out) {
            Some(tx) if tx.send(bytes).is_ok() => Sent::Yes,
            _ => Sent::Dead,
        }
    }

    /// Sends a notification (dropped on a dead connection; one longer than
    /// [`MAX_RECORD_BYTES`] is dropped and reported as a protocol problem).
    pub fn notify(&self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        if let Sent::TooLarge(len) = self.send_value(&msg) {
            self.problem("protocol", too_large_text(method, len));
        }
    }

    /// Answers the extension's request `id`: a result, or an error `(code, message)`. An
    /// answer longer than [`MAX_RECORD_BYTES`] becomes the error `-32603` saying so, so the
    /// extension is not left waiting.
    pub fn respond(&self, id: Value, answer: Result<Value, (i64, String)>) {
        let error = |code: i64, message: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error(code, message),
        };
        if let Sent::TooLarge(len) = self.send_value(&msg) {
            pi_ai::json_depth::drop_value(msg);
            self.send_value(&error(-32603, too_large_text("the response", len)));
        }
    }

    /// A fresh request id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn register(&self, id: u64, waiter: Waiter) -> Result<(), CallError> {
        let dead = lock(&self.dead);
        if let Some(why) = &*dead {
            return Err(CallError::Dead(why.clone()));
        }
        lock(&self.pending).insert(id, waiter);
        Ok(())
    }

    fn send_request(&self, id: u64, method: &str, params: Value) -> Result<(), CallError> {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let sent = self.send_value(&msg);
        pi_ai::json_depth::drop_value(msg);
        match sent {
            Sent::Yes => Ok(()),
            Sent::TooLarge(len) => {
                lock(&self.pending).remove(&id);
                Err(CallError::TooLarge(len))
            }
            Sent::Dead => {
                lock(&self.pending).remove(&id);
                Err(CallError::Dead(
                    self.dead_reason().unwrap_or_else(|| "stopped".to_owned()),
                ))
            }
        }
    }

    /// Calls `method` and waits for the answer, at most `deadline`.
    ///
    /// # Errors
    /// [`CallError`]: the extension's error, the deadline, a dead process.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        deadline: Option<Duration>,
    ) -> Result<Value, CallError> {
        let id = self.next_id();
        self.call_with_id(id, method, params, deadline, None, Duration::ZERO)
            .await
    }

    /// [`Connection::call`] with a chosen `id` (see [`Connection::next_id`]) and, when
    /// `cancel` fires, `$/cancelRequest {id}` and at most `grace` more for the answer.
    ///
    /// # Errors
    /// As [`Connection::call`]; [`CallError::Aborted`] after an unanswered cancellation.
    pub async fn call_with_id(
        &self,
        id: u64,
        method: &str,
        params: Value,
        deadline: Option<Duration>,
        cancel: Option<CancellationToken>,
        grace: Duration,
    ) -> Result<Value, CallError> {
        self.remember_runtime();
        let (tx, mut rx) = oneshot::channel();
        self.register(id, Waiter::Async(tx))?;
        // Whatever ends this future (an answer, the deadline, the caller dropping it), the
        // pending entry goes: a late answer is then dropped by the reader.
        let _guard = PendingGuard { conn: self, id };
        self.send_request(id, method, params)?;
        let closed = || CallError::Dead("connection closed".to_owned());
        let answer = async {
            match &cancel {
                Some(token) => {
                    tokio::select! {
                        r = &mut rx => r.unwrap_or_else(|_| Err(closed())),
                        () = token.cancelled() => {
                            self.notify("$/cancelRequest", json!({"id": id}));
                            match tokio::time::timeout(grace, &mut rx).await {
                                Ok(r) => r.unwrap_or_else(|_| Err(closed())),
                                Err(_) => Err(CallError::Aborted),
                            }
                        }
                    }
                }
                None => (&mut rx).await.unwrap_or_else(|_| Err(closed())),
            }
        };
        match deadline {
            Some(d) => tokio::time::timeout(d, answer)
                .await
                .unwrap_or(Err(CallError::Timeout(d))),
            None => answer.await,
        }
    }

    /// A call from synchronous code (the handshake), at most `deadline`.
    ///
    /// # Errors
    /// As [`Connection::call`].
    pub fn call_blocking(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
    ) -> Result<Value, CallError> {
        let id = self.next_id();
        let (tx, rx) = std::sync::mpsc::channel();
        self.register(id, Waiter::Blocking(tx))?;
        let _guard = PendingGuard { conn: self, id };
        self.send_request(id, method, params)?;
        match rx.recv_timeout(deadline) {
            Ok(r) => r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(CallError::Timeout(deadline)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err(CallError::Dead("connection closed".to_owned()))
            }
        }
    }

    /// Routes `tool/update` notifications of request `id` to `f` until
    /// [`Connection::clear_updates`].
    pub fn set_updates(&self, id: u64, f: ToolUpdateFn) {
        lock(&self.updates).insert(id, f);
    }

    /// Stops routing updates of request `id`.
    pub fn clear_updates(&self, id: u64) {
        lock(&self.updates).remove(&id);
    }

    fn on_record(self: &Arc<Self>, record: &[u8]) {
        let text = String::from_utf8_lossy(record);
        if text.trim().is_empty() {
            return;
        }
        // Records as deep as the documents pi-rs reads elsewhere (tool arguments and results
        // 1,000 levels deep); deeper ones break the protocol (an answer could not be matched
        // to its call), so the extension is stopped.
        let value: Option<Value> =
            match pi_ai::json_depth::from_str(&text, pi_ai::json_depth::MAX_DOCUMENT_DEPTH) {
                Ok(v) => Some(v),
                Err(e @ pi_ai::json_depth::DeepJsonError::TooDeep { .. }) => {
                    self.kill(&format!("protocol error: {e}"));
                    return;
                }
                Err(_) => None,
            };
        let Some(obj) = value.as_ref().and_then(Value::as_object) else {
            self.garbage(&text);
            return;
        };
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            let params = obj.get("params").cloned().unwrap_or(Value::Null);
            match obj.get("id").filter(|id| !id.is_null()) {
                Some(id) => {
                    let handler = lock(&self.handler).clone();
                    match handler {
                        Some(h) => h(Arc::clone(self), id.clone(), method.to_owned(), params),
                        None => self.respond(
                            id.clone(),
                            Err((-32601, format!("Method not found: {method}"))),
                        ),
                    }
                }
                None => self.on_notification(method, &params),
            }
            return;
        }
        let Some(id) = obj.get("id").and_then(Value::as_u64) else {
            self.garbage(&text);
            return;
        };
        let reply = match obj.get("error") {
            Some(err) => Err(CallError::Remote(
                err.get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| err.to_string(), str::to_owned),
            )),
            None => Ok(obj.get("result").cloned().unwrap_or(Value::Null)),
        };
        let waiter = lock(&self.pending).remove(&id);
        if let Some(w) = waiter {
            w.send(reply);
        }
    }

    fn on_notification(&self, method: &str, params: &Value) {
        if method != "tool/update" {
            return;
        }
        let Some(id) = params.get("id").and_then(Value::as_u64) else {
            return;
        };
        let f = lock(&self.updates).get(&id).cloned();
        if let Some(f) = f {
            f(super::tool::result_from_wire(params));
        }
    }

    fn garbage(&self, text: &str) {
        if self.garbage_reported.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut shown: String = text.chars().take(80).collect();
        if shown.len() < text.len() {
            shown.push('…');
        }
        self.problem(
            "protocol",
            format!("not a JSON-RPC message (further ones are skipped silently): {shown}"),
        );
    }

    /// Marks the connection dead: every pending call fails with `why`, updates stop, the
    /// writer ends (closing fd 3). The first reason wins.
    fn mark_dead(&self, why: String) {
        let pending = {
            let mut dead = lock(&self.dead);
            if dead.is_some() {
                return;
            }
            *dead = Some(why.clone());
            std::mem::take(&mut *lock(&self.pending))
        };
        lock(&self.updates).clear();
        *lock(&self.out) = None;
        for (_, w) in pending {
            w.send(Err(CallError::Dead(why.clone())));
        }
        if !self.stopping.load(Ordering::SeqCst) {
            self.problem("process", format!("extension process {why}"));
        }
    }

    /// Stops the process group at once (a protocol violation, an unresponsive process).
    pub fn kill(&self, why: &str) {
        if !self.exited.load(Ordering::SeqCst) && self.pid > 1 {
            // SAFETY: kill(2) with a negative pid signals the process group the child leads
            // (its own, created at spawn); it touches no memory.
            unsafe {
                libc::kill(-self.pid, libc::SIGKILL);
            }
        }
        self.mark_dead(why.to_owned());
    }

    /// The end of the run: the `shutdown` notification, fd 3 closed, up to `wait` for the
    /// process to exit, then its process group is killed.
    pub fn shutdown(&self, wait: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        if lock(&self.dead).is_none() {
            self.notify("shutdown", json!({}));
            *lock(&self.out) = None;
        }
        let step = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        while !self.exited.load(Ordering::SeqCst) && waited < wait {
            std::thread::sleep(step);
            waited = waited.saturating_add(step);
        }
        if !self.exited.load(Ordering::SeqCst) {
            self.kill("stopped at the end of the run");
        }
    }
}

/// Removes a pending call when its future ends.
struct PendingGuard<'a> {
    conn: &'a Connection,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.conn.pending).remove(&self.id);
    }
}

/// What [`Connection::send_value`] did.
enum Sent {
    /// Queued for the writer.
    Yes,
    /// Not sent: the connection is dead (or the value does not serialize).
    Dead,
    /// Not sent: the record would hold this many bytes, more than [`MAX_RECORD_BYTES`].
    TooLarge(usize),
}

/// `<what> not sent: <len> bytes, more than the 67108864-byte limit of a protocol record`.
fn too_large_text(what: &str, len: usize) -> String {
    format!(
        "{what} not sent: {len} bytes, more than the {MAX_RECORD_BYTES}-byte limit of a protocol record"
    )
}

/// Stack of the connection's threads: the reader parses and clones records up to
/// `MAX_DOCUMENT_DEPTH` levels deep, which `serde_json::Value`'s recursive clone and drop
/// need about 1.5 MiB for in a debug build.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), SpawnError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(THREAD_STACK_BYTES)
        .spawn(f)
        .map(|_| ())
        .map_err(SpawnError::Setup)
}

/// Why [`Connection::spawn`] has no process; the text is the `error` of the extension's
/// load error.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A pipe, descriptor or thread of the connection cannot be created.
    #[error("{0}")]
    Setup(std::io::Error),
    /// The child's descriptors 3 and 4 collide.
    #[error("{0}")]
    Fds(command_fds::FdMappingCollision),
    /// The command does not start (e.g. it does not exist).
    #[error("cannot start {}: {source}", .command.display())]
    Start {
        /// The manifest's command.
        command: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str, timeout_ms: u64) -> Arc<Connection> {
        let dir = std::env::temp_dir();
        let manifest = Manifest {
            path: dir.join("shell-extension.json"),
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Vec::new(),
            event_timeout: Duration::from_millis(timeout_ms),
            cancel_grace: Duration::from_millis(timeout_ms),
        };
        Connection::spawn(manifest, &dir).unwrap()
    }

    #[test]
    fn an_answer_on_fd_4_resolves_the_call_sent_on_fd_3() {
        let conn = shell(
            r#"read line <&3; case "$line" in *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n' >&4;; esac; sleep 2"#,
            5000,
        );
        let answer = conn
            .call_blocking("initialize", json!({}), Duration::from_secs(5))
            .unwrap();
        assert_eq!(answer, json!({"ok": true}));
        conn.shutdown(Duration::from_millis(100));
        assert!(conn.dead_reason().is_some());
    }

    #[test]
    fn an_exit_fails_the_pending_call_and_every_later_one() {
        let conn = shell("read line <&3; exit 3", 5000);
        let e = conn
            .call_blocking("initialize", json!({}), Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(e, CallError::Dead("exited with code 3".to_owned()));
        let again = conn
            .call_blocking("initialize", json!({}), Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(again, CallError::Dead("exited with code 3".to_owned()));
    }

    #[test]
    fn silence_is_a_timeout_and_an_error_answer_is_the_remote_message() {
        let quiet = shell("sleep 5", 5000);
        let e = quiet
            .call_blocking("x", json!({}), Duration::from_millis(200))
            .unwrap_err();
        assert_eq!(e, CallError::Timeout(Duration::from_millis(200)));
        quiet.kill("test over");
        let failing = shell(
            r#"read line <&3; printf '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}\n' >&4; sleep 2"#,
            5000,
        );
        let e = failing
            .call_blocking("x", json!({}), Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(e, CallError::Remote("boom".to_owned()));
        failing.kill("test over");
    }

    #[test]
    fn a_record_at_the_size_limit_is_read_and_one_past_it_stops_only_the_extension() {
        let prefix = r#"{"jsonrpc":"2.0","id":1,"result":""#;
        let fill = MAX_RECORD_BYTES - prefix.len() - 2;
        let answer = |n: usize| {
            format!(
                r#"read line <&3; {{ printf '%s' '{prefix}'; head -c {n} /dev/zero | tr '\0' x; printf '"}}\n'; }} >&4; sleep 60"#
            )
        };
        let at = shell(&answer(fill), 20_000);
        let got = at
            .call_blocking("x", json!({}), Duration::from_secs(20))
            .unwrap();
        assert_eq!(got.as_str().map(str::len), Some(fill));
        assert!(got.as_str().unwrap().bytes().all(|b| b == b'x'));
        assert!(at.dead_reason().is_none());
        at.kill("test over");

        let past = shell(&answer(fill + 1), 20_000);
        let e = past
            .call_blocking("x", json!({}), Duration::from_secs(20))
            .unwrap_err();
        assert_eq!(
            e,
            CallError::Dead("protocol error: record exceeds 67108864 bytes".to_owned())
        );
        // Every later call fails at once; this process (the host) goes on.
        let again = past
            .call_blocking("x", json!({}), Duration::from_secs(5))
            .unwrap_err();
        assert!(matches!(again, CallError::Dead(_)), "{again:?}");
        past.kill("test over");
    }

    #[test]
    fn a_record_at_the_depth_limit_is_read_and_one_past_it_stops_the_extension() {
        // The envelope object is level 1; `levels` arrays nest inside its result.
        let answer = |levels: usize| {
            format!(
                r#"read line <&3; o=''; c=''; i=0; while [ $i -lt {levels} ]; do o="$o["; c="$c]"; i=$((i+1)); done; printf '{{"jsonrpc":"2.0","id":1,"result":%s%s}}\n' "$o" "$c" >&4; sleep 60"#
            )
        };
        let limit = pi_ai::json_depth::MAX_DOCUMENT_DEPTH;
        let at = shell(&answer(limit - 1), 20_000);
        let got = at
            .call_blocking("x", json!({}), Duration::from_secs(20))
            .unwrap();
        assert_eq!(pi_ai::json_depth::value_depth(&got), limit - 1);
        pi_ai::json_depth::drop_value(got);
        at.kill("test over");

        let past = shell(&answer(limit), 20_000);
        let e = past
            .call_blocking("x", json!({}), Duration::from_secs(20))
            .unwrap_err();
        assert_eq!(
            e,
            CallError::Dead("protocol error: JSON nested deeper than 1064 levels".to_owned())
        );
        past.kill("test over");
    }

    #[test]
    fn a_request_past_the_size_limit_is_not_sent_and_the_extension_goes_on() {
        let conn = shell(
            r#"read line <&3; case "$line" in *'"id":2'*) printf '{"jsonrpc":"2.0","id":2,"result":"ok"}\n' >&4;; esac; sleep 5"#,
            5000,
        );
        let big = "y".repeat(MAX_RECORD_BYTES);
        let e = conn
            .call_blocking("x", json!({ "text": big }), Duration::from_secs(5))
            .unwrap_err();
        let CallError::TooLarge(len) = e else {
            panic!("{e:?}");
        };
        assert!(len > MAX_RECORD_BYTES);
        let ok = conn
            .call_blocking("x", json!({}), Duration::from_secs(5))
            .unwrap();
        assert_eq!(ok, json!("ok"));
        assert!(conn.dead_reason().is_none());
        conn.kill("test over");
    }

    #[test]
    fn a_grandchild_holding_the_pipes_does_not_hide_the_exit() {
        // The background sleep inherits fds 3/4 and outlives the shell.
        let conn = shell("sleep 3 & exit 0", 5000);
        let e = conn
            .call_blocking("x", json!({}), Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(e, CallError::Dead("exited with code 0".to_owned()));
        conn.kill("test over");
    }
}
