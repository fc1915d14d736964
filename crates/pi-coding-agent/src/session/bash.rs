//! User bash (`!cmd`, `!!cmd`, RPC `bash`) run by the session.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.executeBash` / `recordBashResult` /
//! `abortBash`: the command runs with the settings' `shellPath` and
//! `shellCommandPrefix` in the session's cwd; every sanitized chunk is published as
//! `bash_execution_update {id?, delta}`; the result becomes a `bashExecution` message —
//! deferred while the session streams (so it never lands between a tool call and its result),
//! else pushed to the agent state and stored as a `message` entry. It never starts a run.

use std::path::PathBuf;

use pi_agent_core::{AgentMessage, ListenerError};
use pi_ai::now_ms;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::agent_session::{AgentSession, lock};
use super::events::AgentSessionEvent;
use super::prompt::SessionError;
use crate::storage::EntryKind;
use crate::tools::bash::user::{BashResult, UserBashOptions, execute_bash};

/// Options of [`AgentSession::execute_bash`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecuteBashOptions {
    /// `!!`: keep the output out of the model's context (`excludeFromContext`).
    pub exclude_from_context: Option<bool>,
    /// The RPC request id, echoed in `bash_execution_update`.
    pub id: Option<String>,
}

/// `{role:"bashExecution", command, output, exitCode?, cancelled, truncated,
/// fullOutputPath?, timestamp, excludeFromContext?}`.
pub fn bash_execution_message(
    command: &str,
    result: &BashResult,
    exclude_from_context: Option<bool>,
) -> AgentMessage {
    let mut m = Map::new();
    m.insert("role".into(), "bashExecution".into());
    m.insert("command".into(), command.into());
    m.insert("output".into(), result.output.clone().into());
    if let Some(code) = result.exit_code {
        m.insert("exitCode".into(), code.into());
    }
    m.insert("cancelled".into(), result.cancelled.into());
    m.insert("truncated".into(), result.truncated.into());
    if let Some(p) = &result.full_output_path {
        m.insert("fullOutputPath".into(), p.clone().into());
    }
    m.insert("timestamp".into(), now_ms().into());
    if let Some(x) = exclude_from_context {
        m.insert("excludeFromContext".into(), Value::Bool(x));
    }
    AgentMessage::custom(m)
}

impl AgentSession {
    /// Runs a user command (see the module docs) and records its result.
    ///
    /// # Errors
    /// The shell or working directory is missing, or spawning failed (not when cancelled);
    /// a listener failed on a chunk; the store could not be written.
    pub async fn execute_bash(
        &self,
        command: &str,
        options: ExecuteBashOptions,
        mut on_chunk: impl FnMut(&str),
    ) -> Result<BashResult, SessionError> {
        let token = CancellationToken::new();
        let bash_id = {
            let mut st = self.state();
            st.bash_next += 1;
            let id = st.bash_next;
            st.bash_cancel.push((id, token.clone()));
            id
        };
        let (cwd, bash_options) = {
            let s = lock(&self.inner.settings);
            let cwd = PathBuf::from(&lock(&self.inner.store).header().cwd);
            let o = UserBashOptions {
                shell_path: s.shell_path(),
                command_prefix: s.shell_command_prefix().map(str::to_owned),
                agent_dir: self.inner.agent_dir.clone(),
                temp_dir: None,
            };
            (cwd, o)
        };
        let mut listener_error: Option<ListenerError> = None;
        let result = execute_bash(command, &cwd, &bash_options, &token, |delta| {
            on_chunk(delta);
            let e = self.emit_event(&AgentSessionEvent::BashExecutionUpdate {
                id: options.id.clone(),
                delta: delta.to_owned(),
            });
            if let (Err(e), None) = (e, &listener_error) {
                listener_error = Some(e);
            }
        })
        .await;
        self.state().bash_cancel.retain(|(id, _)| *id != bash_id);
        let result = result.map_err(|e| SessionError::Refused(e.0))?;
        if let Some(e) = listener_error {
            return Err(SessionError::Listener(e));
        }
        self.record_bash_result(command, &result, options.exclude_from_context)?;
        Ok(result)
    }

    /// Records a user-bash result (also for extensions that ran the command themselves):
    /// deferred while streaming, else added to the state and stored.
    ///
    /// # Errors
    /// The store could not be written.
    pub fn record_bash_result(
        &self,
        command: &str,
        result: &BashResult,
        exclude_from_context: Option<bool>,
    ) -> Result<(), SessionError> {
        let message = bash_execution_message(command, result, exclude_from_context);
        {
            let mut st = self.state();
            if st.run_active {
                st.pending_bash.push(message);
                return Ok(());
            }
        }
        self.add_bash_message(message)
    }

    fn add_bash_message(&self, message: AgentMessage) -> Result<(), SessionError> {
        let mut messages = self.inner.agent.messages();
        messages.push(message.clone());
        self.inner.agent.set_messages(messages);
        lock(&self.inner.store).append(EntryKind::Message { message })?;
        Ok(())
    }

    /// Adds the bash results deferred during a run (before a prompt and when a run ends).
    pub(super) fn flush_pending_bash_messages(&self) -> Result<(), SessionError> {
        let pending = std::mem::take(&mut self.state().pending_bash);
        for m in pending {
            self.add_bash_message(m)?;
        }
        Ok(())
    }

    /// Cancels every running user command.
    pub fn abort_bash(&self) {
        for (_, t) in &self.state().bash_cancel {
            t.cancel();
        }
    }

    /// Whether a user command is running.
    pub fn is_bash_running(&self) -> bool {
        !self.state().bash_cancel.is_empty()
    }

    /// Whether bash results wait for the current run to end.
    pub fn has_pending_bash_messages(&self) -> bool {
        !self.state().pending_bash.is_empty()
    }
}
