//! `prompt()`, the product run and its `postRun` continuations, queues and injected messages.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.prompt`, `_runAgentPrompt`,
//! `_handlePostAgentRun`, `steer`, `followUp`, `clearQueue`, `sendCustomMessage` and
//! `sendUserMessage`.

use std::sync::Arc;

use pi_agent_core::{AgentMessage, ListenerError, PromptInput};
use pi_ai::{AssistantMessage, now_ms};
use pi_ai::{ImageContent, Message, StopReason, UserContent, UserMessage, UserMessageContent};
use serde_json::Value;

use super::agent_session::{AgentSession, lock};
use super::events::AgentSessionEvent;
use super::hooks::{
    BeforeAgentStartEvent, CheckPhase, CustomMessageSpec, ExtensionErrorInfo, InputAction,
    InputEvent, InputSource, StreamingBehavior,
};
use super::prompt::{
    ALREADY_PROCESSING, COMPACTION_IN_PROGRESS, PromptOptions, SessionError,
    command_cannot_be_queued, no_api_key, oauth_failed,
};
use crate::config::skills::expand_skill_command;
use crate::config::templates::expand_prompt_template;
use crate::messages::custom_message;

/// How [`AgentSession::send_custom_message`] delivers a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliverAs {
    /// Steer the running agent (default while streaming).
    Steer,
    /// Follow up when the agent would stop.
    FollowUp,
    /// Hold it for the next prompt.
    NextTurn,
}

/// Options of [`AgentSession::send_custom_message`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CustomMessageOptions {
    /// `triggerTurn`: start a run with it when idle; `Some(false)` while streaming defers it
    /// to the current `turn_end` without triggering a turn.
    pub trigger_turn: Option<bool>,
    /// Delivery mode.
    pub deliver_as: Option<DeliverAs>,
}

/// Options of [`AgentSession::send_user_message`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMessageOptions {
    /// Queue mode while streaming.
    pub deliver_as: Option<StreamingBehavior>,
    /// Run commands and expand skills/templates (default `false`).
    pub expand_prompt_templates: Option<bool>,
}

/// `(name, args)` of `/name args`.
fn split_command(text: &str) -> (&str, &str) {
    let rest = text.strip_prefix('/').unwrap_or(text);
    match rest.find(' ') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    }
}

fn user_message(text: String, images: Vec<ImageContent>) -> AgentMessage {
    let mut blocks = vec![UserContent::text(text)];
    blocks.extend(images.into_iter().map(UserContent::Image));
    Message::User(UserMessage {
        content: UserMessageContent::Blocks(blocks),
        timestamp: now_ms(),
    })
    .into()
}

fn spec_message(spec: CustomMessageSpec) -> AgentMessage {
    let content = match spec.content {
        Value::Null => Value::Array(Vec::new()),
        c => c,
    };
    custom_message(
        &spec.custom_type,
        content,
        spec.display,
        spec.details,
        now_ms(),
    )
}

impl AgentSession {
    /// Sends a prompt and runs it to `agent_settled`: extension command →
    /// compaction guard → `input` hooks → skill/template expansion → queue while streaming →
    /// flush deferred messages → model and auth checks → pre-prompt compaction check →
    /// `[user, held nextTurn messages, before_agent_start messages]` → the run.
    ///
    /// # Errors
    /// [`SessionError::Refused`] with pi's texts (`Agent is already processing. Specify
    /// streamingBehavior …`, `No API key found for <p>. …`, …); listener or store failures
    /// outside a run; agent failures.
    pub async fn prompt(
        &self,
        text: impl Into<String>,
        mut options: PromptOptions,
    ) -> Result<(), SessionError> {
        let preflight = options.preflight_result.take();
        match self.preflight(text.into(), options).await {
            Ok(Some(messages)) => {
                if let Some(p) = preflight {
                    p(true);
                }
                self.run_agent_prompt(messages).await
            }
            Ok(None) => {
                if let Some(p) = preflight {
                    p(true);
                }
                Ok(())
            }
            Err(e) => {
                if let Some(p) = preflight {
                    p(false);
                }
                Err(e)
            }
        }
    }

    /// Steps 1–9; `None` when the prompt was handled, queued or consumed.
    async fn preflight(
        &self,
        text: String,
        options: PromptOptions,
    ) -> Result<Option<Vec<AgentMessage>>, SessionError> {
        let expand = options.expand_prompt_templates.unwrap_or(true);
        let hooks = std::sync::Arc::clone(&self.inner.hooks);
        // 1. Extension commands run at once, even while streaming.
        if expand && text.starts_with('/') {
            let (name, args) = split_command(&text);
            if hooks.has_command(name) {
                if let Err(error) = hooks.run_command(name, args).await {
                    hooks.report_error(ExtensionErrorInfo {
                        extension_path: format!("command:{name}"),
                        event: "command".into(),
                        error: error.to_string(),
                    });
                }
                return Ok(None);
            }
        }
        // 2. Manual compaction.
        if self.inner.compactor.is_manual_compacting() {
            return Err(SessionError::Refused(COMPACTION_IN_PROGRESS.into()));
        }
        // 3. Input hooks.
        let streaming = self.is_streaming();
        let (mut text, mut images) = (text, options.images);
        match hooks
            .input(InputEvent {
                text: text.clone(),
                images: images.clone(),
                source: options.source,
                streaming_behavior: options.streaming_behavior.filter(|_| streaming),
            })
            .await
        {
            InputAction::Handled => return Ok(None),
            InputAction::Transform { text: t, images: i } => {
                text = t;
                if let Some(i) = i {
                    images = i;
                }
            }
            InputAction::Continue => {}
        }
        // 4. Skills, then templates.
        if expand {
            text = self.expand(&text);
        }
        // 5. Queue while streaming.
        if self.is_streaming() {
            return match options.streaming_behavior {
                None => Err(SessionError::Refused(ALREADY_PROCESSING.into())),
                Some(StreamingBehavior::FollowUp) => {
                    self.queue_follow_up(text, images)?;
                    Ok(None)
                }
                Some(StreamingBehavior::Steer) => {
                    self.queue_steer(text, images)?;
                    Ok(None)
                }
            };
        }
        // 6. Deferred messages first.
        self.flush_pending_bash_messages()?;
        self.flush_pending_custom_messages()
            .map_err(SessionError::Listener)?;
        // 7. Model and auth.
        // Without a resolved model the agent holds pi's placeholder (provider `unknown`), so
        // the no-key text names `the selected model`, as pi's does.
        let provider = self.inner.agent.with_state(|s| s.model.provider.clone());
        // pi reads its credential store first: a broken `auth.json` fails the lookup.
        if let Some(e) = self.inner.auth.credential_error(&provider) {
            return Err(SessionError::Refused(e));
        }
        if !self.inner.auth.has_auth(&provider) {
            return Err(SessionError::Refused(
                if self.inner.auth.is_oauth(&provider) {
                    oauth_failed(&provider)
                } else {
                    no_api_key(&provider, &self.inner.docs_dir)
                },
            ));
        }
        // 8. Compaction check on the last assistant (aborted included; never continues).
        if let Some(last) = self.last_assistant_in_state() {
            self.inner
                .compactor
                .check(self.clone(), last, CheckPhase::BeforePrompt)
                .await;
        }
        // 9. Messages and the system prompt.
        let mut messages = vec![user_message(text.clone(), images.clone())];
        messages.append(&mut self.state().pending_next_turn);
        let base = self.state().base_system_prompt.clone();
        let result = hooks
            .before_agent_start(BeforeAgentStartEvent {
                prompt: text,
                images,
                system_prompt: base.clone(),
            })
            .await
            .unwrap_or_default();
        messages.extend(result.messages.into_iter().map(spec_message));
        let prompt = result.system_prompt.clone().unwrap_or(base);
        self.state().system_prompt_override = result.system_prompt;
        self.inner.agent.set_system_prompt(prompt);
        Ok(Some(messages))
    }

    /// Skill command, then prompt template; a skill file that cannot be read is reported
    /// (`event: "skill_expansion"`) and the text kept.
    fn expand(&self, text: &str) -> String {
        let expanded = match expand_skill_command(text, &self.inner.skills) {
            Ok(t) => t,
            Err(error) => {
                let name = split_command(text).0.trim_start_matches("skill:");
                let path = self
                    .inner
                    .skills
                    .iter()
                    .find(|s| s.name == name)
                    .map(|s| s.file_path.display().to_string())
                    .unwrap_or_default();
                self.inner.hooks.report_error(ExtensionErrorInfo {
                    extension_path: path,
                    event: "skill_expansion".into(),
                    // The extension error report carries text.
                    error: error.to_string(),
                });
                text.to_owned()
            }
        };
        expand_prompt_template(&expanded, &self.inner.templates)
    }

    fn last_assistant_in_state(&self) -> Option<Arc<AssistantMessage>> {
        self.inner.agent.with_state(|s| {
            s.messages.iter().rev().find_map(|m| match m {
                AgentMessage::Assistant(a) => Some(a.clone()),
                _ => None,
            })
        })
    }

    /// `_runAgentPrompt`: prompt the agent, continue while `postRun` says so, then clear the
    /// override, flush deferred messages, end the run, await the `agent_settled` hook, emit
    /// `agent_settled` and wake idle waiters.
    pub(super) async fn run_agent_prompt(
        &self,
        messages: Vec<AgentMessage>,
    ) -> Result<(), SessionError> {
        {
            // Check and mark in one step: of two prompts racing past preflight, the second
            // is refused instead of ending the first one's run (pi would let the agent refuse
            // it and then settle the session while the first run still streams).
            let mut st = self.state();
            if st.run_active {
                return Err(SessionError::Refused(ALREADY_PROCESSING.into()));
            }
            st.run_active = true;
        }
        let result = async {
            self.inner
                .agent
                .prompt(PromptInput::Messages(messages))
                .await?;
            while self.post_run().await.map_err(SessionError::Listener)? {
                self.inner.agent.continue_run().await?;
            }
            Ok::<(), SessionError>(())
        }
        .await;
        self.state().system_prompt_override = None;
        let bash_flushed = self.flush_pending_bash_messages();
        let flushed = self.flush_pending_custom_messages();
        self.state().run_active = false;
        self.inner.hooks.agent_settled().await;
        let settled = self.emit_event(&AgentSessionEvent::AgentSettled);
        self.notify_idle_changed();
        result?;
        bash_flushed?;
        flushed.map_err(SessionError::Listener)?;
        settled.map_err(SessionError::Listener)
    }

    /// `_handlePostAgentRun`: whether to `continue()` the agent (retry, compaction
    /// continuation, or messages queued by `agent_end` handlers).
    async fn post_run(&self) -> Result<bool, ListenerError> {
        let Some(msg) = self.state().last_assistant.take() else {
            return Ok(false);
        };
        if self.is_retryable(&msg) && self.prepare_retry(&msg).await? {
            return Ok(true);
        }
        let attempt = self.state().retry_attempt;
        if msg.stop_reason == StopReason::Error && attempt > 0 {
            self.state().retry_attempt = 0;
            self.emit_event(&AgentSessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: msg.error_message.clone(),
            })?;
        }
        if self
            .inner
            .compactor
            .check(self.clone(), msg, CheckPhase::AfterRun)
            .await
        {
            return Ok(true);
        }
        Ok(self.inner.agent.has_queued_messages())
    }

    // ----- queues --------------------------------------------------------------------------

    /// Queues a steering message (delivered after the current turn's tools; while idle, at
    /// the start of the next run). Skills and templates are expanded.
    ///
    /// # Errors
    /// `Extension command "/<n>" cannot be queued. …`; listener failures.
    pub fn steer(&self, text: &str, images: Vec<ImageContent>) -> Result<(), SessionError> {
        let text = self.expand_queued(text)?;
        self.queue_steer(text, images)
    }

    /// Queues a follow-up message (delivered when the agent would stop).
    ///
    /// # Errors
    /// As [`AgentSession::steer`].
    pub fn follow_up(&self, text: &str, images: Vec<ImageContent>) -> Result<(), SessionError> {
        let text = self.expand_queued(text)?;
        self.queue_follow_up(text, images)
    }

    fn expand_queued(&self, text: &str) -> Result<String, SessionError> {
        if text.starts_with('/') {
            let name = split_command(text).0;
            if self.inner.hooks.has_command(name) {
                return Err(SessionError::Refused(command_cannot_be_queued(name)));
            }
        }
        Ok(self.expand(text))
    }

    fn queue_steer(&self, text: String, images: Vec<ImageContent>) -> Result<(), SessionError> {
        self.state().queues.push_steering(text.clone());
        self.emit_queue_update().map_err(SessionError::Listener)?;
        self.inner.agent.steer(user_message(text, images));
        Ok(())
    }

    fn queue_follow_up(&self, text: String, images: Vec<ImageContent>) -> Result<(), SessionError> {
        self.state().queues.push_follow_up(text.clone());
        self.emit_queue_update().map_err(SessionError::Listener)?;
        self.inner.agent.follow_up(user_message(text, images));
        Ok(())
    }

    /// Empties both queues (display and agent) and returns the texts `(steering, follow_up)`.
    ///
    /// # Errors
    /// A failing listener (the queues are cleared anyway).
    pub fn clear_queue(&self) -> Result<(Vec<String>, Vec<String>), SessionError> {
        let cleared = self.state().queues.clear();
        self.inner.agent.clear_all_queues();
        self.emit_queue_update().map_err(SessionError::Listener)?;
        Ok(cleared)
    }

    // ----- injected messages ---------------------------------------------------------------

    /// `sendCustomMessage`: `nextTurn` → held for the next prompt; streaming (and
    /// `trigger_turn != Some(false)`) → steer or follow-up; idle with `trigger_turn` → a run
    /// with it as the prompt; streaming with `Some(false)` → appended at the current
    /// `turn_end`; otherwise appended now (state, `custom_message` entry, `message_start` +
    /// `message_end` to the listeners only).
    ///
    /// # Errors
    /// Listener, store or agent failures.
    pub async fn send_custom_message(
        &self,
        spec: CustomMessageSpec,
        options: CustomMessageOptions,
    ) -> Result<(), SessionError> {
        let message = spec_message(spec);
        let streaming = self.is_streaming();
        if options.deliver_as == Some(DeliverAs::NextTurn) {
            self.state().pending_next_turn.push(message);
        } else if streaming && options.trigger_turn != Some(false) {
            if options.deliver_as == Some(DeliverAs::FollowUp) {
                self.inner.agent.follow_up(message);
            } else {
                self.inner.agent.steer(message);
            }
        } else if options.trigger_turn == Some(true) {
            self.run_agent_prompt(vec![message]).await?;
        } else if streaming {
            self.state().pending_custom.push(message);
        } else {
            self.append_custom_message(message)
                .map_err(SessionError::Listener)?;
        }
        Ok(())
    }

    /// `sendUserMessage`: text blocks joined with `\n`, images collected, then
    /// [`AgentSession::prompt`] with source `extension` (no expansion unless asked).
    ///
    /// # Errors
    /// As [`AgentSession::prompt`].
    pub async fn send_user_message(
        &self,
        content: Vec<UserContent>,
        options: UserMessageOptions,
    ) -> Result<(), SessionError> {
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for c in content {
            match c {
                UserContent::Text(t) => texts.push(t.text),
                UserContent::Image(i) => images.push(i),
            }
        }
        self.prompt(
            texts.join("\n"),
            PromptOptions {
                expand_prompt_templates: Some(options.expand_prompt_templates.unwrap_or(false)),
                images,
                streaming_behavior: options.deliver_as,
                source: InputSource::Extension,
                preflight_result: None,
            },
        )
        .await
    }

    /// The store's branch id (used by tests and the CLI after a run).
    pub fn leaf_id(&self) -> Option<String> {
        lock(&self.inner.store).leaf_id().map(str::to_owned)
    }
}
