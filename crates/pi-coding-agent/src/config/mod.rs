//! Configuration: agent directory, settings, credentials, models and their resolution,
//! project trust, context files, system prompt, skills and prompt templates.
//!
//! Mirrors pi-coding-agent 0.85.0 configuration (`core/settings-manager.js`,
//! `core/model-registry.js`, …) and the model choice of `core/sdk.js` / `core/model-resolver.js`.
//!
//! | module | what (pi 0.85.0 source) |
//! |---|---|
//! | [`agent_paths`] | agent dir (`PI_CODING_AGENT_DIR`, `~/.pi/agent`) and its files (`config.js`) |
//! | [`settings`] | `settings.json`: merge, migrations, diagnostics, locked writes, typed keys |
//! | [`resolve_value`] | literal / `$VAR` / `${VAR}` / `$$` / `$!` / `!command` values |
//! | [`auth`] | `auth.json` (0600) and run-time `--api-key` keys (`auth-storage.js`) |
//! | [`models_json`] | custom providers/models/overrides and the schema texts (`model-config.js`) |
//! | [`registry`] | catalog + `models.json`, availability by auth, request auth |
//! | [`model_resolver`] | patterns, scope, CLI model, start-up choice, cycling, no-key texts |
//! | `login_providers` | the providers `/login` offers, pi's names and key prompts (`providers/*.js`) |
//! | [`list_models`] | `--list-models [search]` (`cli/list-models.js`, pi-tui fuzzy) |
//! | [`trust`] | `trust.json`, trust decision, the `project_trust` seam |
//! | `context_files` | `AGENTS.md` / `CLAUDE.md` discovery |
//! | [`skills`], [`templates`], `frontmatter`, `yaml_subset` | skills and `/name args` templates |
//! | [`system_prompt`] | prompt assembly and `SYSTEM.md` / `APPEND_SYSTEM.md` sources |
//! | `themes` | custom theme discovery and loading by name (`resource-loader.js`, `theme.js`) |
//! | [`resources`] | one-call resource loading and the `resources_discover` seam |
//! | `migrations` | start-up migrations of old layouts (`migrations.js`) |
//! | `lock`, `replace` | file lock; atomic rewrite (temporary file + rename) |
//! | [`text`], `collate` | BOM/JSONC helpers, `localeCompare` |

pub mod agent_paths;
pub mod auth;
pub(crate) mod collate;
pub(crate) mod context_files;
pub(crate) mod frontmatter;
pub(crate) mod ignore_rules;
pub(crate) mod js_json;
pub mod list_models;
pub(crate) mod lock;
pub(crate) mod login_providers;
pub(crate) mod migrations;
pub mod model_resolver;
pub mod models_json;
pub mod oauth;
pub mod registry;
pub(crate) mod replace;
pub mod resolve_value;
pub(crate) mod resource_filter;
pub mod resources;
pub mod settings;
pub mod skills;
pub mod system_prompt;
pub mod templates;
pub mod text;
pub(crate) mod themes;
pub mod trust;
pub(crate) mod yaml_subset;
