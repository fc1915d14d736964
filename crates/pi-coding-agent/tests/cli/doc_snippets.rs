//! The Rust code blocks of `docs/session.md` and `docs/extensions.md` (as rustfmt lays them
//! out) between the `// --- docs/… ---` markers, with only the bindings a reader has in scope
//! around them: if the API drifts from the docs, this file stops compiling.

use std::error::Error;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use pi_agent_core::AgentTool;
use pi_ai::Model;
use pi_coding_agent::config::registry::ModelRegistry;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::config::skills::Skill;
use pi_coding_agent::config::templates::PromptTemplate;
use pi_coding_agent::extensions::errors::{Mode, mode_error_listener};
use pi_coding_agent::extensions::{Extension, ExtensionHooks, ExtensionRunner};
use pi_coding_agent::session::SessionStartReason;
use pi_coding_agent::session::{AgentSession, Compactor, PromptOptions, RegistryAuth};
use pi_coding_agent::storage::SessionStore;

/// docs/session.md, "Using it".
#[allow(dead_code, clippy::too_many_arguments)]
async fn session_md(
    model: Model,
    settings: Arc<Mutex<SettingsManager>>,
    store: Arc<Mutex<SessionStore>>,
    tools: Vec<Arc<dyn AgentTool>>,
    prompt: String,
    extension_hooks: Arc<ExtensionHooks>,
    compactor: Arc<dyn Compactor>,
    registry: Arc<RwLock<ModelRegistry>>,
    docs: PathBuf,
    skills: Vec<Skill>,
    templates: Vec<PromptTemplate>,
) -> Result<(), Box<dyn Error>> {
    // --- docs/session.md ---
    let session = AgentSession::builder()
        .model(model) // none: pi's `unknown` placeholder
        .settings(settings) // Arc<Mutex<SettingsManager>>
        .store(store) // Arc<Mutex<SessionStore>>
        .tools(tools)
        .system_prompt(prompt) // or .system_prompt_for_tools(f): built from the tools
        .hooks(extension_hooks) // Arc<dyn SessionHooks> (ExtensionHooks), default NoHooks
        .compactor(compactor) // Arc<dyn Compactor>, default NoCompaction
        .auth(Arc::new(RegistryAuth(registry))) // default AnyProviderAuth
        .docs_dir(docs) // for the login help texts
        .skills(skills)
        .prompt_templates(templates)
        .build()?; // stream_fn default: pi-ai registry stream_simple
    session.subscribe(|event| {
        println!("{}", event.to_json_line());
        Ok(())
    });
    session.prompt("hello", PromptOptions::default()).await?; // returns after agent_settled
    // --- end ---
    Ok(())
}

/// docs/extensions.md, "Writing one".
fn writing_one() -> impl Extension {
    // --- docs/extensions.md ---
    use pi_coding_agent::extensions::{
        FnExtension,
        events::{ToolCallEvent, ToolCallResult},
    };

    let guard = FnExtension::new("guard-bash", |pi| {
        pi.on::<ToolCallEvent, _>(|event, _ctx| {
            Box::pin(async move {
                let cmd = event.input["command"].as_str().unwrap_or_default();
                if event.tool_name == "bash" && cmd.contains("rm -rf") {
                    return Ok(Some(ToolCallResult::block(
                        "Recursive deletion is disabled.",
                    )));
                }
                Ok(None) // pi: returning undefined
            })
        });
        Ok(())
    });
    // --- end ---
    guard
}

/// docs/extensions.md, "Running them".
#[allow(dead_code)]
async fn running_them(
    cwd: PathBuf,
    guard: impl Extension + 'static,
    stream_fn: pi_agent_core::StreamFn,
) -> Result<(), Box<dyn Error>> {
    // --- docs/extensions.md ---
    let runner = ExtensionRunner::builder(cwd)
        .mode(Mode::Print)
        .extension(guard)
        .build();
    runner.on_error(mode_error_listener(
        Mode::Print,
        Box::new(std::io::stderr()),
    ));
    let hooks = ExtensionHooks::new(runner.clone());
    let session = AgentSession::builder()
        // …
        .stream_fn(runner.wrap_stream_fn(stream_fn)) // before_provider_headers
        .hooks(hooks.clone())
        .build()?;
    // attach (ctx reads the session; queued pi requests run against it), then
    // session_start and resources_discover (pi's bindExtensions)
    let discovered = hooks
        .bind(&session, SessionStartReason::Startup, None)
        .await;
    // --- end ---
    let _ = discovered;
    Ok(())
}

#[test]
fn the_documented_guard_extension_loads() {
    let runner = ExtensionRunner::builder(".")
        .extension(writing_one())
        .build();
    assert!(
        runner.load_errors().is_empty(),
        "{:?}",
        runner.load_errors()
    );
    assert_eq!(runner.extension_paths(), ["guard-bash"]);
}
