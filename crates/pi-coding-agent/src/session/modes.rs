//! Queue modes and the automatic-behaviour toggles.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.setSteeringMode` / `setFollowUpMode` /
//! `syncQueueModesFromSettings` / `setAutoCompactionEnabled` and the RPC `get_state` fields:
//! setting a mode changes the agent at once and saves it to the settings.

use pi_agent_core::QueueMode;

use super::agent_session::{AgentSession, lock};
use crate::storage::tree::session_name;

impl AgentSession {
    /// How steering messages are delivered (`one-at-a-time` by default).
    pub fn steering_mode(&self) -> QueueMode {
        self.inner.agent.options().steering_mode
    }

    /// How follow-up messages are delivered (`one-at-a-time` by default).
    pub fn follow_up_mode(&self) -> QueueMode {
        self.inner.agent.options().follow_up_mode
    }

    /// Sets the steering mode on the agent and in the settings (`steeringMode`).
    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.inner.agent.update_options(|o| o.steering_mode = mode);
        lock(&self.inner.settings).set_steering_mode(mode);
    }

    /// Sets the follow-up mode on the agent and in the settings (`followUpMode`).
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.inner.agent.update_options(|o| o.follow_up_mode = mode);
        lock(&self.inner.settings).set_follow_up_mode(mode);
    }

    /// Re-reads both queue modes from the settings.
    pub fn sync_queue_modes_from_settings(&self) {
        let (steering, follow_up) = {
            let s = lock(&self.inner.settings);
            (s.steering_mode(), s.follow_up_mode())
        };
        self.inner.agent.update_options(|o| {
            o.steering_mode = steering;
            o.follow_up_mode = follow_up;
        });
    }

    /// `compaction.enabled` (gates automatic compaction only).
    pub fn auto_compaction_enabled(&self) -> bool {
        lock(&self.inner.settings).compaction().enabled
    }

    /// Sets `compaction.enabled`.
    pub fn set_auto_compaction_enabled(&self, enabled: bool) {
        lock(&self.inner.settings).set_compaction_enabled(enabled);
    }

    /// The session name (latest `session_info`), if set.
    pub fn session_name(&self) -> Option<String> {
        session_name(&lock(&self.inner.store)).ok().flatten()
    }

    /// Number of messages in the agent state (`get_state.messageCount`).
    pub fn message_count(&self) -> usize {
        self.inner.agent.with_state(|s| s.messages.len())
    }
}
