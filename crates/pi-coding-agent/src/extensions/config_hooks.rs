//! `project_trust` and `resources_discover` plugged into the configuration layer's seams.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/project-trust.ts` (the extension answer and its
//! `Extension "<path>" project_trust error: <error>` diagnostics) and
//! `core/resource-loader.ts` `extendResources` (discovered paths merged after the known
//! ones, without duplicates).

use std::path::Path;

use super::dispatch::DiscoveredResources;
use super::events::{ProjectTrustEvent, TrustDecision};
use super::runner::ExtensionRunner;
use crate::config::trust::{
    ProjectTrustHook, TrustHookAnswer, has_trust_requiring_project_resources,
};

/// The handlers' answer, computed up front (the trust resolver's hook is synchronous).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunnerTrustAnswer {
    answer: Option<TrustHookAnswer>,
    diagnostics: Vec<String>,
}

impl ProjectTrustHook for RunnerTrustAnswer {
    fn project_trust(&mut self, _cwd: &Path) -> (Option<TrustHookAnswer>, Vec<String>) {
        (self.answer, std::mem::take(&mut self.diagnostics))
    }
}

impl ExtensionRunner {
    /// Runs the `project_trust` handlers when
    /// [`resolve_project_trusted`](crate::config::trust::resolve_project_trusted) would
    /// consult them — no `--approve`/`--no-approve` override, and the project has resources
    /// that need trust — and returns the hook to pass in its `TrustInputs::hook`. `None`
    /// when the resolver would not ask (the handlers then do not run, as in pi) or no
    /// handler exists.
    pub async fn project_trust_hook(
        &self,
        cwd: &Path,
        home: &Path,
        trust_override: Option<bool>,
    ) -> Option<RunnerTrustAnswer> {
        if trust_override.is_some()
            || !self.has_handlers::<ProjectTrustEvent>()
            || !has_trust_requiring_project_resources(cwd, home)
        {
            return None;
        }
        let (result, errors) = self
            .emit_project_trust(ProjectTrustEvent {
                cwd: cwd.display().to_string(),
            })
            .await;
        Some(RunnerTrustAnswer {
            answer: result.map(|r| TrustHookAnswer {
                trusted: r.trusted == TrustDecision::Yes,
                remember: r.remember == Some(true),
            }),
            diagnostics: errors
                .into_iter()
                .map(|e| {
                    format!(
                        "Extension \"{}\" project_trust error: {}",
                        e.extension_path, e.error
                    )
                })
                .collect(),
        })
    }
}

impl DiscoveredResources {
    /// `existing` followed by the discovered skill paths not already in it (pi's
    /// `mergePaths`), e.g. as [`SkillSources::cli_paths`](crate::config::skills::SkillSources).
    pub fn merged_skill_paths(&self, existing: &[String]) -> Vec<String> {
        merge(existing, self.skill_path_strings())
    }

    /// `existing` followed by the discovered prompt paths not already in it.
    pub fn merged_prompt_paths(&self, existing: &[String]) -> Vec<String> {
        merge(existing, self.prompt_path_strings())
    }
}

fn merge(existing: &[String], extra: Vec<String>) -> Vec<String> {
    let mut out = existing.to_vec();
    for p in extra {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}
