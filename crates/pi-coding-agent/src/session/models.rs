//! Model control: the model and thinking-level switches and cycling, in one place.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.cycleModel` / `cycleThinkingLevel` /
//! `getAvailableThinkingLevels`: cycling walks the scoped models that are
//! available (else every available model), wrapping around; one model or none → `None`. The
//! level for the switch is the scoped model's level, else the settings' per-model level, the
//! default level, or the current one, clamped to the model.

use pi_ai::{Model, ModelThinkingLevel};
use serde::Serialize;

use super::agent_session::{AgentSession, lock};
use super::events::AgentSessionEvent;
use super::prompt::SessionError;
use crate::storage::EntryKind;

/// A model of the `--models` scope, with its optional `:level` (the resolver's type).
pub use crate::config::model_resolver::ScopedModel;

/// `{model, thinkingLevel, isScoped}` of a cycle.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleResult {
    /// The new model.
    pub model: Model,
    /// The effective level after the switch.
    pub thinking_level: ModelThinkingLevel,
    /// Whether the scope was cycled.
    pub is_scoped: bool,
}

impl AgentSession {
    /// The levels the current model supports (every level without a model).
    pub fn available_thinking_levels(&self) -> Vec<ModelThinkingLevel> {
        match self.model() {
            Some(m) => m.supported_thinking_levels(),
            None => ModelThinkingLevel::ALL.to_vec(),
        }
    }

    /// The next supported level (wrapping); `None` for a model that does not reason.
    ///
    /// # Errors
    /// Store or listener failures.
    pub fn cycle_thinking_level(&self) -> Result<Option<ModelThinkingLevel>, SessionError> {
        if !self.model().is_some_and(|m| m.reasoning) {
            return Ok(None);
        }
        let levels = self.available_thinking_levels();
        if levels.is_empty() {
            return Ok(None);
        }
        let current = self.thinking_level();
        let next = match levels.iter().position(|l| *l == current) {
            Some(i) => levels[(i + 1) % levels.len()],
            None => levels[0],
        };
        self.set_thinking_level(next)?;
        Ok(Some(next))
    }

    /// The `--models` scope used by [`AgentSession::cycle_model`].
    pub fn set_scoped_models(&self, scoped: Vec<ScopedModel>) {
        self.state().scoped_models = scoped;
    }

    /// The `--models` scope.
    pub fn scoped_models(&self) -> Vec<ScopedModel> {
        self.state().scoped_models.clone()
    }

    /// `cycleModel(direction)` over `available` (the models with auth, in registry order).
    ///
    /// # Errors
    /// Store or listener failures.
    pub async fn cycle_model(
        &self,
        forward: bool,
        available: &[Model],
        persist: bool,
    ) -> Result<Option<CycleResult>, SessionError> {
        let scoped: Vec<ScopedModel> = self
            .scoped_models()
            .into_iter()
            .filter(|s| available.iter().any(|a| a.same_as(&s.model)))
            .collect();
        let is_scoped = !self.state().scoped_models.is_empty();
        let candidates: Vec<(Model, Option<ModelThinkingLevel>)> = if is_scoped {
            scoped
                .into_iter()
                .map(|s| (s.model, s.thinking_level))
                .collect()
        } else {
            available.iter().cloned().map(|m| (m, None)).collect()
        };
        if candidates.len() <= 1 {
            return Ok(None);
        }
        let current = self.model();
        let index = current
            .as_ref()
            .and_then(|c| candidates.iter().position(|(m, _)| m.same_as(c)))
            .unwrap_or(0);
        let len = candidates.len();
        let next = if forward {
            (index + 1) % len
        } else {
            (index + len - 1) % len
        };
        let (model, explicit) = candidates[next].clone();
        let level = match explicit {
            Some(l) => l,
            None => self.level_for_switch(&model),
        };
        self.switch_to(&model, level, persist, current, "cycle")
            .await?;
        Ok(Some(CycleResult {
            model,
            thinking_level: self.thinking_level(),
            is_scoped,
        }))
    }

    /// Sets the thinking level, clamped to the model (`off` without a model). Only on a
    /// change: appends `thinking_level_change` and emits `thinking_level_changed`.
    ///
    /// # Errors
    /// Store or listener failures.
    pub fn set_thinking_level(&self, level: ModelThinkingLevel) -> Result<(), SessionError> {
        let effective = match self.model() {
            Some(m) => m.clamp_thinking_level(level),
            None => ModelThinkingLevel::Off,
        };
        let previous = self.thinking_level();
        if effective == previous {
            return Ok(());
        }
        self.inner.agent.set_thinking_level(effective);
        lock(&self.inner.store).append(EntryKind::ThinkingLevelChange {
            thinking_level: effective.as_str().to_owned(),
        })?;
        self.emit_event(&AgentSessionEvent::ThinkingLevelChanged { level: effective })
            .map_err(SessionError::Listener)?;
        self.inner.hooks.thinking_level_select(effective, previous);
        Ok(())
    }

    /// `setModel`: refuses a provider without auth (`No API key for <p>/<id>`); sets the
    /// model, appends `model_change`, with `persist` writes `defaultProvider`/`defaultModel`,
    /// applies the level for the switch (the settings' per-model level, else the default
    /// level, else the current one; clamped), and awaits the `model_select` hook when the
    /// provider or id changed.
    ///
    /// # Errors
    /// No auth; store or listener failures.
    pub async fn set_model(&self, model: Model, persist: bool) -> Result<(), SessionError> {
        if !self.inner.auth.has_auth(&model.provider) {
            return Err(SessionError::Refused(format!(
                "No API key for {}/{}",
                model.provider, model.id
            )));
        }
        let previous = self.model();
        let level = self.level_for_switch(&model);
        self.switch_to(&model, level, persist, previous, "set")
            .await
    }

    /// The switch shared by [`AgentSession::set_model`] and [`AgentSession::cycle_model`]:
    /// sets the model, appends `model_change`, with `persist` writes
    /// `defaultProvider`/`defaultModel`, applies `level`, and awaits the `model_select` hook
    /// (`source`: `set` or `cycle`) when the provider or id changed from `previous`.
    async fn switch_to(
        &self,
        model: &Model,
        level: ModelThinkingLevel,
        persist: bool,
        previous: Option<Model>,
        source: &str,
    ) -> Result<(), SessionError> {
        self.inner.agent.set_model(model.clone());
        self.state().has_model = true;
        lock(&self.inner.store).append(EntryKind::ModelChange {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
        })?;
        if persist {
            lock(&self.inner.settings).set_default_model_and_provider(&model.provider, &model.id);
        }
        self.set_thinking_level(level)?;
        if previous.as_ref().is_none_or(|p| !p.same_as(model)) {
            self.inner
                .hooks
                .model_select(model.clone(), previous, source)
                .await;
        }
        Ok(())
    }

    /// The settings' per-model level, else the default level, else the current one.
    pub(super) fn level_for_switch(&self, model: &Model) -> ModelThinkingLevel {
        let s = lock(&self.inner.settings);
        s.model_thinking_level(&model.provider, &model.id)
            .or_else(|| s.default_thinking_level())
            .unwrap_or_else(|| self.thinking_level())
    }
}
