//! The events whose results are chained or combined.
//!
//! Mirrors the `emit*` methods of pi-coding-agent 0.85.0 `core/extensions/runner.ts`, the
//! tool hooks of `core/agent-session.ts` (`_installAgentToolHooks`) and
//! `emitProjectTrustEvent`.

use pi_agent_core::AgentMessage;
use serde_json::Value;
use std::sync::Arc;

use super::errors::{ExtensionErrorRecord, HandlerError};
use super::events::{
    BeforeAgentStartEvent, BeforeAgentStartOutcome, BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent, ContextEvent, InputEvent, InputResult, MessageEndEvent,
    ProjectTrustEvent, ProjectTrustResult, ResourcesDiscoverEvent, ToolCallEvent, ToolCallResult,
    ToolResultEvent, ToolResultPatch, TrustDecision, UserBashEvent, UserBashResult,
};
use super::runner::{ExtensionRunner, Outcome, invoke};

/// The role-mismatch error of `message_end` (verbatim).
pub const MESSAGE_END_ROLE_ERROR: &str =
    "message_end handlers must return a message with the same role";

/// A path an extension contributed through `resources_discover`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveredPath {
    /// The path as returned.
    pub path: String,
    /// The extension that returned it.
    pub extension_path: String,
}

/// Every path returned by `resources_discover` handlers, in dispatch order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiscoveredResources {
    /// Skill files or directories.
    pub skill_paths: Vec<DiscoveredPath>,
    /// Prompt-template files or directories.
    pub prompt_paths: Vec<DiscoveredPath>,
    /// Theme files or directories.
    pub theme_paths: Vec<DiscoveredPath>,
}

impl DiscoveredResources {
    /// The skill paths as plain strings (for [`crate::config::skills::SkillSources`]).
    pub fn skill_path_strings(&self) -> Vec<String> {
        self.skill_paths.iter().map(|p| p.path.clone()).collect()
    }

    /// The prompt paths as plain strings (for
    /// [`crate::config::templates::load_prompt_templates`]).
    pub fn prompt_path_strings(&self) -> Vec<String> {
        self.prompt_paths.iter().map(|p| p.path.clone()).collect()
    }
}

/// What `tool_call` handlers decided: the first `block` (or the last result) and the input
/// after every handler's in-place change.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallOutcome {
    /// The first blocking result, else the last result returned.
    pub result: Option<ToolCallResult>,
    /// The (possibly changed) arguments the tool runs with, unvalidated.
    pub input: Value,
}

/// `Extension failed, blocking execution: <x>`: pi's text for a thrown non-`Error`, used
/// here for a panicking `tool_call` handler.
pub fn blocking_failure_text(detail: &str) -> String {
    format!("Extension failed, blocking execution: {detail}")
}

impl ExtensionRunner {
    /// `input`: transforms chain (text, and images when given); the first `handled` stops
    /// dispatch. Returns `Continue` unless the text or images changed.
    pub async fn emit_input(&self, event: InputEvent) -> InputResult {
        let ctx = self.context();
        let original_text = event.text.clone();
        let mut current = event;
        let mut images_replaced = false;
        for (path, h) in self.handlers::<InputEvent>() {
            let mut ev = current.clone();
            match invoke(&h, &mut ev, &ctx).await.into_result() {
                Ok(Some(InputResult::Handled)) => return InputResult::Handled,
                Ok(Some(InputResult::Transform { text, images })) => {
                    current.text = text;
                    if let Some(images) = images {
                        current.images = Some(images);
                        images_replaced = true;
                    }
                }
                Ok(Some(InputResult::Continue)) | Ok(None) => {}
                Err(e) => self.report(path, "input", e),
            }
        }
        if current.text != original_text || images_replaced {
            InputResult::Transform {
                text: current.text,
                images: current.images,
            }
        } else {
            InputResult::Continue
        }
    }

    /// `before_agent_start`: messages accumulate in handler order; `systemPrompt` chains
    /// (each handler, and its `ctx.system_prompt()`, sees the value so far). `None` when no
    /// handler returned a message or a prompt.
    pub async fn emit_before_agent_start(
        &self,
        event: BeforeAgentStartEvent,
    ) -> Option<BeforeAgentStartOutcome> {
        let mut ctx = self.context();
        let mut current = event;
        let mut messages = Vec::new();
        let mut modified = false;
        for (path, h) in self.handlers::<BeforeAgentStartEvent>() {
            ctx.system_prompt = Some(Arc::from(current.system_prompt.as_str()));
            let mut ev = current.clone();
            match invoke(&h, &mut ev, &ctx).await.into_result() {
                Ok(Some(r)) => {
                    if let Some(m) = r.message {
                        messages.push(m);
                    }
                    if let Some(p) = r.system_prompt {
                        current.system_prompt = p;
                        modified = true;
                    }
                }
                Ok(None) => {}
                Err(e) => self.report(path, "before_agent_start", e),
            }
        }
        (modified || !messages.is_empty()).then(|| BeforeAgentStartOutcome {
            messages,
            system_prompt: modified.then_some(current.system_prompt),
        })
    }

    /// `context`: a deep copy of `messages` goes through the handlers; each returned list
    /// replaces it. The caller's history is never touched.
    pub async fn emit_context(&self, messages: &[AgentMessage]) -> Vec<AgentMessage> {
        let ctx = self.context();
        let mut event = ContextEvent {
            messages: Self::deep_copy(messages),
        };
        for (path, h) in self.handlers::<ContextEvent>() {
            match invoke(&h, &mut event, &ctx).await.into_result() {
                Ok(Some(r)) => event.messages = r.messages,
                Ok(None) => {}
                Err(e) => self.report(path, "context", e),
            }
        }
        event.messages
    }

    /// `message_end`: a returned message of the same role replaces the current one
    /// (chained); another role is reported as [`MESSAGE_END_ROLE_ERROR`] and ignored.
    /// `None` when nothing was replaced.
    pub async fn emit_message_end(&self, message: AgentMessage) -> Option<AgentMessage> {
        let ctx = self.context();
        let mut current = message;
        let mut modified = false;
        for (path, h) in self.handlers::<MessageEndEvent>() {
            let mut ev = MessageEndEvent {
                message: current.clone(),
            };
            match invoke(&h, &mut ev, &ctx).await.into_result() {
                Ok(Some(r)) => {
                    if r.message.role() != current.role() {
                        self.report(path, "message_end", MESSAGE_END_ROLE_ERROR.to_owned());
                        continue;
                    }
                    current = r.message;
                    modified = true;
                }
                Ok(None) => {}
                Err(e) => self.report(path, "message_end", e),
            }
        }
        modified.then_some(current)
    }

    /// `tool_call`: handlers see (and may change) `input` in place; the first `block`
    /// returns at once. **Not caught**: a failing handler stops dispatch and its text
    /// becomes `Err` — the caller blocks the tool with it as the error result, and no
    /// extension error is reported. A panic gives
    /// `Extension failed, blocking execution: <panic message>`.
    pub async fn emit_tool_call(
        &self,
        event: ToolCallEvent,
    ) -> Result<ToolCallOutcome, HandlerError> {
        let ctx = self.context();
        let mut event = event;
        let mut result = None;
        for (_, h) in self.handlers::<ToolCallEvent>() {
            match invoke(&h, &mut event, &ctx).await {
                Outcome::Done(Some(r)) => {
                    let block = r.block;
                    result = Some(r);
                    if block {
                        break;
                    }
                }
                Outcome::Done(None) => {}
                Outcome::Failed(e) => return Err(HandlerError::new(e)),
                Outcome::Panicked(p) => return Err(HandlerError::new(blocking_failure_text(&p))),
            }
        }
        Ok(ToolCallOutcome {
            result,
            input: event.input,
        })
    }

    /// `tool_result`: each patch field replaces the current value (chained; later handlers
    /// see it). `None` when no handler patched anything; else the full resulting fields.
    pub async fn emit_tool_result(&self, event: ToolResultEvent) -> Option<ToolResultPatch> {
        let ctx = self.context();
        let mut current = event;
        let mut modified = false;
        for (path, h) in self.handlers::<ToolResultEvent>() {
            let mut ev = current.clone();
            match invoke(&h, &mut ev, &ctx).await.into_result() {
                Ok(Some(patch)) => {
                    if let Some(c) = patch.content {
                        current.content = c;
                        modified = true;
                    }
                    if let Some(d) = patch.details {
                        current.details = Some(d);
                        modified = true;
                    }
                    if let Some(e) = patch.is_error {
                        current.is_error = e;
                        modified = true;
                    }
                    if let Some(u) = patch.usage {
                        current.usage = Some(u);
                        modified = true;
                    }
                }
                Ok(None) => {}
                Err(e) => self.report(path, "tool_result", e),
            }
        }
        modified.then_some(ToolResultPatch {
            content: Some(current.content),
            details: current.details,
            is_error: Some(current.is_error),
            usage: current.usage,
        })
    }

    /// `user_bash`: the first result returned wins.
    pub async fn emit_user_bash(&self, event: UserBashEvent) -> Option<UserBashResult> {
        let ctx = self.context();
        let mut event = event;
        for (path, h) in self.handlers::<UserBashEvent>() {
            match invoke(&h, &mut event, &ctx).await.into_result() {
                Ok(Some(r)) => return Some(r),
                Ok(None) => {}
                Err(e) => self.report(path, "user_bash", e),
            }
        }
        None
    }

    /// `before_provider_headers`: handlers mutate the list in place (return values are
    /// ignored); returns it after every handler.
    pub async fn emit_before_provider_headers(
        &self,
        headers: Vec<(String, Option<String>)>,
    ) -> Vec<(String, Option<String>)> {
        let ctx = self.context();
        let mut event = BeforeProviderHeadersEvent { headers };
        for (path, h) in self.handlers::<BeforeProviderHeadersEvent>() {
            if let Err(e) = invoke(&h, &mut event, &ctx).await.into_result() {
                self.report(path, "before_provider_headers", e);
            }
        }
        event.headers
    }

    /// `before_provider_request`: any returned value replaces the payload (chained).
    pub async fn emit_before_provider_request(&self, payload: Value) -> Value {
        let ctx = self.context();
        let mut current = payload;
        for (path, h) in self.handlers::<BeforeProviderRequestEvent>() {
            let mut ev = BeforeProviderRequestEvent {
                payload: current.clone(),
            };
            match invoke(&h, &mut ev, &ctx).await.into_result() {
                Ok(Some(p)) => current = p,
                Ok(None) => {}
                Err(e) => self.report(path, "before_provider_request", e),
            }
        }
        current
    }

    /// `resources_discover`: every returned path is collected with its extension.
    pub async fn emit_resources_discover(
        &self,
        event: ResourcesDiscoverEvent,
    ) -> DiscoveredResources {
        let ctx = self.context();
        let mut event = event;
        let mut out = DiscoveredResources::default();
        for (path, h) in self.handlers::<ResourcesDiscoverEvent>() {
            match invoke(&h, &mut event, &ctx).await.into_result() {
                Ok(Some(r)) => {
                    let tag = |p: String| DiscoveredPath {
                        path: p,
                        extension_path: path.to_owned(),
                    };
                    out.skill_paths.extend(r.skill_paths.into_iter().map(tag));
                    out.prompt_paths.extend(r.prompt_paths.into_iter().map(tag));
                    out.theme_paths.extend(r.theme_paths.into_iter().map(tag));
                }
                Ok(None) => {}
                Err(e) => self.report(path, "resources_discover", e),
            }
        }
        out
    }

    /// `project_trust`: the first `yes`/`no` wins; `undecided` (or no result) falls
    /// through. Failures are collected (not reported) and returned with the answer, as
    /// pi's `emitProjectTrustEvent` does.
    pub async fn emit_project_trust(
        &self,
        event: ProjectTrustEvent,
    ) -> (Option<ProjectTrustResult>, Vec<ExtensionErrorRecord>) {
        let ctx = self.context();
        let mut event = event;
        let mut errors = Vec::new();
        for (path, h) in self.handlers::<ProjectTrustEvent>() {
            match invoke(&h, &mut event, &ctx).await.into_result() {
                Ok(Some(r)) if r.trusted != TrustDecision::Undecided => return (Some(r), errors),
                Ok(_) => {}
                Err(e) => errors.push(ExtensionErrorRecord {
                    extension_path: path.to_owned(),
                    event: "project_trust".to_owned(),
                    error: e.to_string(),
                }),
            }
        }
        (None, errors)
    }
}
