//! Configuration: agent directory, settings, credentials, models and their resolution,
//! project trust, context files, system prompt, skills and prompt templates.
//!
//! Mirrors pi-coding-agent 0.85.0 §8 (configuration) and the model choice of §1.1/§1.7.

pub mod auth;
pub mod collate;
pub mod context_files;
pub mod frontmatter;
pub mod list_models;
pub mod lock;
pub mod migrations;
pub mod model_resolver;
pub mod models_json;
pub mod paths;
pub mod registry;
pub mod resolve_value;
pub mod resources;
pub mod settings;
pub mod skills;
pub mod system_prompt;
pub mod templates;
pub mod text;
pub mod trust;
