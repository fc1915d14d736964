//! What `pi.get_commands()` and RPC `get_commands` report: the extensions' commands, then the
//! prompt templates, then the skills (`skill:<name>`).
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession` `getCommands`: `{name, description?, source,
//! sourceInfo}` with `source` `extension`, `prompt` or `skill`. pi-rs's `sourceInfo` carries
//! the path only.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::runner::ExtensionRunner;
use crate::config::skills::Skill;
use crate::config::templates::PromptTemplate;

/// Where a command comes from (pi's `source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSource {
    /// Registered by an extension (`registerCommand`).
    Extension,
    /// A prompt template (`/name`).
    Prompt,
    /// A skill (`/skill:name`).
    Skill,
}

impl CommandSource {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandSource::Extension => "extension",
            CommandSource::Prompt => "prompt",
            CommandSource::Skill => "skill",
        }
    }
}

/// One command (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandInfo {
    /// The name to type after `/` (an extension command's invocation name, `skill:<name>`).
    pub name: String,
    /// Help text (always set for templates and skills).
    pub description: Option<String>,
    /// Where it comes from.
    pub source: CommandSource,
    /// The registering extension's path, or the template's or skill's file.
    pub path: PathBuf,
}

impl CommandInfo {
    /// pi's JSON: `{name, description?, source, sourceInfo: {path}}`, keys in that order.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone().into());
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone().into());
        }
        m.insert("source".into(), self.source.as_str().into());
        m.insert(
            "sourceInfo".into(),
            json!({"path": self.path.display().to_string()}),
        );
        Value::Object(m)
    }
}

/// The templates' and skills' commands, in that order.
pub fn resource_commands(templates: &[PromptTemplate], skills: &[Skill]) -> Vec<CommandInfo> {
    let templates = templates.iter().map(|t| CommandInfo {
        name: t.name.clone(),
        description: Some(t.description.clone()),
        source: CommandSource::Prompt,
        path: t.file_path.clone(),
    });
    let skills = skills.iter().map(|s| CommandInfo {
        name: format!("skill:{}", s.name),
        description: Some(s.description.clone()),
        source: CommandSource::Skill,
        path: s.file_path.clone(),
    });
    templates.chain(skills).collect()
}

/// `runner`'s commands, by invocation name (`name`, or `name:<n>` for duplicates).
pub fn extension_commands(runner: &ExtensionRunner) -> Vec<CommandInfo> {
    runner
        .commands()
        .into_iter()
        .map(|c| CommandInfo {
            name: c.invocation_name,
            description: c.spec.description,
            source: CommandSource::Extension,
            path: PathBuf::from(c.spec.extension_path),
        })
        .collect()
}

/// [`extension_commands`] (when there is a runner), then [`resource_commands`].
pub fn command_infos(
    runner: Option<&ExtensionRunner>,
    templates: &[PromptTemplate],
    skills: &[Skill],
) -> Vec<CommandInfo> {
    let mut out = runner.map(extension_commands).unwrap_or_default();
    out.extend(resource_commands(templates, skills));
    out
}
