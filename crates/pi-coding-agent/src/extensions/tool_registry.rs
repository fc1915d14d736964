//! The tools a session with extensions can activate, and which of them are active.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession._refreshToolRegistry` and
//! `setActiveToolsByName`:
//! - the registry holds the base tools (the built-ins a session may use, then the session's
//!   own tools; the first tool of a name wins) and the extensions' tools, all passing the
//!   `--tools` allowlist and `--exclude-tools` denylist ([`ToolFilter`]); an extension tool
//!   named like a base tool replaces it in place, and among extension tools the first
//!   registration of a name wins;
//! - at the initial build the session's active tools stay active (those the filter lets
//!   through), then every registry tool when there is an allowlist, else every extension tool;
//! - a tool registered at run time joins the registry if the filter lets it through; then
//!   every allowed registry tool is active when there is an allowlist (pi re-activates them
//!   all), else the new name is added to the active ones;
//! - `setActiveTools(names)` activates the registry tools named, in the order named; unknown
//!   names are skipped.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::tool_info::{ToolInfo, ToolSource};
use crate::tools::{ALL_TOOL_NAMES, ToolFilter};

/// The registry (see the module docs).
#[derive(Default)]
pub(crate) struct ToolRegistry {
    filter: ToolFilter,
    tools: Vec<Arc<dyn AgentTool>>,
    /// Extension tool name → the registering extension's path.
    from_extensions: HashMap<String, String>,
}

impl ToolRegistry {
    /// The filter applied from the next build on.
    pub(crate) fn set_filter(&mut self, filter: ToolFilter) {
        self.filter = filter;
    }

    /// Rebuilds the registry from `available` base tools, the session's `active` tools and
    /// the extensions' tools (first registration first, with the registering extension's path);
    /// returns the tools to activate.
    pub(crate) fn build(
        &mut self,
        available: &[Arc<dyn AgentTool>],
        active: &[Arc<dyn AgentTool>],
        extension_tools: Vec<(String, Arc<dyn AgentTool>)>,
    ) -> Vec<Arc<dyn AgentTool>> {
        self.tools.clear();
        self.from_extensions.clear();
        for tool in available.iter().chain(active) {
            if self.filter.allows(tool.name()) && self.position(tool.name()).is_none() {
                self.tools.push(Arc::clone(tool));
            }
        }
        let mut extension_names = Vec::new();
        for (path, tool) in extension_tools {
            let name = tool.name().to_owned();
            if !self.filter.allows(&name) || self.from_extensions.contains_key(&name) {
                continue;
            }
            self.upsert(tool);
            self.from_extensions.insert(name.clone(), path);
            extension_names.push(name);
        }
        self.next_active(active, extension_names)
    }

    /// A tool the extension at `path` registers at run time. Returns the new active tools
    /// when they change (`None`: filtered out, or an extension tool of that name exists
    /// already).
    pub(crate) fn register(
        &mut self,
        path: &str,
        tool: Arc<dyn AgentTool>,
        active: &[Arc<dyn AgentTool>],
    ) -> Option<Vec<Arc<dyn AgentTool>>> {
        let name = tool.name().to_owned();
        if !self.filter.allows(&name) || self.from_extensions.contains_key(&name) {
            return None;
        }
        let known = self.position(&name).is_some();
        self.upsert(tool);
        self.from_extensions.insert(name.clone(), path.to_owned());
        let added = if known { Vec::new() } else { vec![name] };
        Some(self.next_active(active, added))
    }

    /// The registry tools named in `names`, in that order, each once; unknown names skipped.
    pub(crate) fn select(&self, names: &[String]) -> Vec<Arc<dyn AgentTool>> {
        let mut seen = HashSet::new();
        names
            .iter()
            .filter(|n| seen.insert(n.as_str()))
            .filter_map(|n| self.position(n).map(|i| Arc::clone(&self.tools[i])))
            .collect()
    }

    /// Every registry tool in registry order, with where it comes from (`getAllTools`).
    pub(crate) fn infos(&self) -> Vec<ToolInfo> {
        self.tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
                parameters: t.parameters().clone(),
                prompt_guidelines: t.prompt_guidelines(),
                source: match self.from_extensions.get(t.name()) {
                    Some(path) => ToolSource::Extension { path: path.clone() },
                    None if ALL_TOOL_NAMES.contains(&t.name()) => ToolSource::Builtin,
                    None => ToolSource::Sdk,
                },
            })
            .collect()
    }

    /// The active tools after a build or a registration: the allowed ones of `active`, then
    /// every registry tool when there is an allowlist, else the names in `added`.
    fn next_active(
        &self,
        active: &[Arc<dyn AgentTool>],
        added: Vec<String>,
    ) -> Vec<Arc<dyn AgentTool>> {
        let mut names: Vec<String> = active
            .iter()
            .map(|t| t.name().to_owned())
            .filter(|n| self.filter.allows(n))
            .collect();
        if self.filter.has_allowlist() {
            names.extend(self.tools.iter().map(|t| t.name().to_owned()));
        } else {
            names.extend(added);
        }
        self.select(&names)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.name() == name)
    }

    /// Replaces the tool of the same name in place, or appends.
    fn upsert(&mut self, tool: Arc<dyn AgentTool>) {
        match self.position(tool.name()) {
            Some(i) => self.tools[i] = tool,
            None => self.tools.push(tool),
        }
    }
}

#[cfg(test)]
mod tests;
