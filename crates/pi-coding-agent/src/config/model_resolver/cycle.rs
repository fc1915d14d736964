//! Model cycling and the thinking level chosen when the model changes.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.cycleModel` (`_cycleScopedModel`,
//! `_cycleAvailableModel`) and `_getThinkingLevelForModelSwitch`.

use pi_ai::{Model, ModelThinkingLevel};

use super::{DEFAULT_THINKING_LEVEL, ModelSource, ScopedModel};

/// The next model of a cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct CycleStep {
    /// The model to switch to.
    pub model: Model,
    /// The scoped pattern's level (`None` = use the switch rules).
    pub scoped_level: Option<ModelThinkingLevel>,
    /// Whether the cycle ran over the `--models` scope.
    pub is_scoped: bool,
}

fn step(len: usize, current: Option<usize>, forward: bool) -> usize {
    let i = current.unwrap_or(0);
    if forward {
        (i + 1) % len
    } else {
        (i + len - 1) % len
    }
}

/// The next model: over the scoped models that are available (when a scope is set), else
/// over all available models; `None` when there are one or fewer; an unknown current model
/// counts as the first.
pub fn next_model_in_cycle(
    scoped: &[ScopedModel],
    current: Option<&Model>,
    forward: bool,
    source: &dyn ModelSource,
) -> Option<CycleStep> {
    let available = source.available_models();
    if !scoped.is_empty() {
        let usable: Vec<&ScopedModel> = scoped
            .iter()
            .filter(|s| available.iter().any(|m| m.same_as(&s.model)))
            .collect();
        if usable.len() <= 1 {
            return None;
        }
        let cur = current.and_then(|c| usable.iter().position(|s| s.model.same_as(c)));
        let next = usable[step(usable.len(), cur, forward)];
        return Some(CycleStep {
            model: next.model.clone(),
            scoped_level: next.thinking_level,
            is_scoped: true,
        });
    }
    if available.len() <= 1 {
        return None;
    }
    let cur = current.and_then(|c| available.iter().position(|m| m.same_as(c)));
    Some(CycleStep {
        model: available[step(available.len(), cur, forward)].clone(),
        scoped_level: None,
        is_scoped: false,
    })
}

/// The level requested when switching to `target` (before clamping): an explicit (scoped)
/// level; else `modelThinkingLevels["p/id"]`; else `defaultThinkingLevel`; else the current
/// level; else `medium`.
pub fn thinking_level_for_switch(
    target: &Model,
    explicit: Option<ModelThinkingLevel>,
    per_model: &[(String, ModelThinkingLevel)],
    default_level: Option<ModelThinkingLevel>,
    current: Option<ModelThinkingLevel>,
) -> ModelThinkingLevel {
    let key = format!("{}/{}", target.provider, target.id);
    explicit
        .or_else(|| per_model.iter().find(|(k, _)| *k == key).map(|(_, l)| *l))
        .or(default_level)
        .or(current)
        .unwrap_or(DEFAULT_THINKING_LEVEL)
}
