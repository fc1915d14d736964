//! An in-process RPC client over `tokio::io::duplex`, driving `run_rpc`.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_ai::providers::faux::FauxProvider;
use pi_coding_agent::extensions::{ExtensionHooks, ExtensionRunner};
use pi_coding_agent::rpc::LineReader;
use pi_coding_agent::rpc::{RpcRuntime, run_rpc};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;

use pi_coding_agent::runtime::BuiltSession;
use pi_coding_agent::session::AgentSession;
use pi_coding_agent::storage::SessionStore;

use crate::session_support::Echo;

/// A session factory's session: `store` on `faux` with the `Echo` tool and `runner`'s
/// extensions (requests through the runner's provider hooks).
pub(crate) fn session_with_extensions(
    runner: ExtensionRunner,
    faux: &FauxProvider,
    store: SessionStore,
) -> Result<BuiltSession, pi_coding_agent::runtime::BuildError> {
    let hooks = ExtensionHooks::new(runner.clone());
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(Arc::new(Mutex::new(store)))
        .tools(vec![Arc::new(Echo)])
        .stream_fn(runner.wrap_stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o))))
        .hooks(hooks.clone())
        .build()
        .map_err(|e| pi_coding_agent::runtime::BuildError::new(e.to_string()))?;
    Ok(BuiltSession {
        session,
        extensions: Some(hooks),
    })
}

/// The client end: writes commands, reads records.
pub(crate) struct Client {
    input: Option<DuplexStream>,
    output: LineReader<DuplexStream>,
    /// Every record read so far, in order.
    pub seen: Vec<Value>,
    cursor: usize,
    server: Option<JoinHandle<i32>>,
}

/// Starts `run_rpc(runtime)` and returns its client.
pub(crate) fn start(runtime: impl Into<RpcRuntime>) -> Client {
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let runtime = runtime.into();
    let server = tokio::spawn(async move { run_rpc(runtime, server_in, server_out).await });
    Client {
        input: Some(client_in),
        output: LineReader::new(client_out),
        seen: Vec::new(),
        cursor: 0,
        server: Some(server),
    }
}

impl Client {
    /// Writes raw bytes.
    pub(crate) async fn raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input open");
        input.write_all(bytes).await.unwrap();
        input.flush().await.unwrap();
    }

    /// Writes one line (LF added).
    pub(crate) async fn send(&mut self, line: &str) {
        self.raw(format!("{line}\n").as_bytes()).await;
    }

    /// Reads one more record (a guard of 20 s against hangs, not a timing assertion).
    async fn read_one(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(20), self.output.next_line())
            .await
            .expect("no output for 20 s")
            .unwrap()?;
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        self.seen.push(v.clone());
        Some(v)
    }

    /// The first record (read or already seen, not yet taken) matching `pred`; records before
    /// it stay in `seen`.
    pub(crate) async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            while self.cursor < self.seen.len() {
                let v = &self.seen[self.cursor];
                self.cursor += 1;
                if pred(v) {
                    return v.clone();
                }
            }
            self.read_one().await.expect("output ended");
        }
    }

    /// The response with this `id` (searching everything seen, then reading on).
    pub(crate) async fn response(&mut self, id: &str) -> Value {
        if let Some(v) = self
            .seen
            .iter()
            .find(|v| v["type"] == "response" && v["id"] == id)
        {
            return v.clone();
        }
        loop {
            let v = self.read_one().await.expect("output ended");
            if v["type"] == "response" && v["id"] == id {
                return v;
            }
        }
    }

    /// Sends `{"id":id,"type":kind,…fields}` and returns its response.
    pub(crate) async fn call(&mut self, id: &str, kind: &str, fields: Value) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), id.into());
        m.insert("type".into(), kind.into());
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.send(&Value::Object(m).to_string()).await;
        self.response(id).await
    }

    /// The data of a successful response.
    pub(crate) async fn data(&mut self, id: &str, kind: &str, fields: Value) -> Value {
        let r = self.call(id, kind, fields).await;
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(r["command"], kind, "{r}");
        r.get("data").cloned().unwrap_or(Value::Null)
    }

    /// Index in `seen` of the first record matching `pred`.
    pub(crate) fn position(&self, pred: impl Fn(&Value) -> bool) -> Option<usize> {
        self.seen.iter().position(pred)
    }

    /// Reads the output to its end with the input still open (the server ended by itself),
    /// and returns the exit status.
    pub(crate) async fn ended(&mut self) -> i32 {
        while self.read_one().await.is_some() {}
        self.server.take().unwrap().await.unwrap()
    }

    /// Closes the input (EOF), reads the rest of the output, and returns the exit status.
    pub(crate) async fn finish(&mut self) -> i32 {
        self.input = None;
        while self.read_one().await.is_some() {}
        self.server.take().unwrap().await.unwrap()
    }
}
