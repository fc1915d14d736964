//! `AgentSession`: the product layer's session around the agent.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/agent-session.ts` and `core/sdk.ts`.
//!
//! | module | concept |
//! |---|---|
//! | [`events`] | the 23 `AgentSessionEvent`s, their JSON and the json-mode projection |
//! | [`agent_session`] | the session handle: listeners, state, idle, abort |
//! | [`auto_compaction`] | when a compaction runs: threshold, overflow with one retry, between turns, manual (`AutoCompactor`) |
//! | [`durability`] | when an entry an event reports is in the file: pending writes, barriers |
//! | `handler` | the agent listener (contractual per-event order) and the agent hooks |
//! | `run` | `prompt()` preflight, the product run and `postRun`, queues, injected messages |
//! | [`auto_retry`] | auto-retry |
//! | [`bash`] | user bash (`!`, RPC `bash`) and `bash_execution_update` |
//! | [`models`] | model control: `set_model`, `set_thinking_level`, cycling, the level for a switch |
//! | [`modes`] | queue modes, auto-compaction/retry toggles, name, counts |
//! | [`stats`] | session statistics and context usage |
//! | [`queues`] | the display side of the steering/follow-up queues |
//! | [`hooks`] | the extension seam ([`SessionHooks`]) and the compaction seam ([`Compactor`]) |
//! | [`prompt`] | prompt options, errors, user-facing texts, the auth seam |
//! | [`request_auth`] | the API key of each request, resolved as the request is set up |
//! | [`builder`] | construction and initial entries |
//! | `summarizer` | the summarizer of compactions and branch summaries (model, key, retries) |
//! | [`tree`] | tree navigation (`navigate_tree`) with branch summaries |

pub mod agent_session;
pub mod auto_compaction;
pub mod auto_retry;
pub mod bash;
pub mod builder;
pub mod convert;
pub mod durability;
pub mod events;
mod handler;
mod handler_error;
pub mod hooks;
pub mod models;
pub mod modes;
pub mod prompt;
pub mod queues;
pub mod request_auth;
mod run;
pub mod stats;
mod summarizer;
pub mod tree;

pub use agent_session::{
    AgentSession, SessionListener, SessionSubscription, SystemPromptFn, WeakAgentSession,
};
pub use bash::{ExecuteBashOptions, bash_execution_message};
pub use builder::{AgentSessionBuilder, default_stream_fn};
pub use durability::{Durability, StoreBarrier};
pub use events::{AgentSessionEvent, CompactionReason, CompactionResult, SummarizationSource};
pub use handler_error::HandlerError;
pub use hooks::{
    BeforeAgentStartEvent, BeforeAgentStartResult, CheckPhase, Compactor, CustomMessageSpec,
    ExtensionErrorInfo, InputAction, InputEvent, InputSource, NoCompaction, NoHooks, ReplaceReason,
    SessionHooks, SessionStartReason, ShutdownReason, StreamingBehavior, SwitchReason,
    ToolCallEvent, ToolResultEvent, TurnInfo,
};
pub use models::{CycleResult, ScopedModel};
pub use prompt::{AnyProviderAuth, AuthSource, PromptOptions, RegistryAuth, SessionError};
pub use run::{CustomMessageOptions, DeliverAs, UserMessageOptions};
pub use stats::{ContextUsage, SessionStats, TokenTotals};
pub use tree::{NavigateTreeOptions, NavigateTreeResult};
