//! The tools' prompt snippets and guidelines in the default system prompt (pi 0.85.0
//! `ToolDefinition.promptSnippet` / `promptGuidelines`, `_rebuildSystemPrompt`): built-in and
//! extension tools alike, rebuilt when an extension changes the active tools.

use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::providers::faux::{FauxOptions, FauxProvider};
use pi_coding_agent::config::system_prompt::ToolPromptParts;
use pi_coding_agent::extensions::events::AgentEndEvent;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::AgentSession;
use pi_coding_agent::storage::SessionStore;
use pi_coding_agent::tools::{BuiltinToolOptions, create_builtin_tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::extensions_rig::{BoxedExtension, ext};

/// An extension tool with an optional snippet and guidelines.
struct Prompted {
    name: &'static str,
    snippet: Option<&'static str>,
    guidelines: Vec<&'static str>,
}

impl AgentTool for Prompted {
    fn name(&self) -> &str {
        self.name
    }
    fn label(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "a test tool"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type": "object"}))
    }
    fn prompt_snippet(&self) -> Option<&str> {
        self.snippet
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.guidelines.iter().map(|g| g.to_string()).collect()
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move { Ok(AgentToolResult::text(self.name, None)) })
    }
}

/// The lines of one section of the prompt (`Available tools:`, `Guidelines:`).
fn section(prompt: &str, heading: &str) -> Vec<String> {
    let start = prompt.find(heading).expect(heading) + heading.len();
    prompt[start..]
        .trim_start_matches('\n')
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn snippets_and_guidelines_of_active_tools_reach_the_prompt_and_follow_set_active_tools() {
    let dir = tempfile::tempdir().unwrap();
    let builtin =
        |name: &str| create_builtin_tool(name, dir.path(), &BuiltinToolOptions::default()).unwrap();
    let tools = vec![builtin("read"), builtin("grep"), builtin("edit")];
    let runner = ExtensionRunner::builder("/tmp")
        .extension(BoxedExtension(ext("deploy.ts", |pi| {
            pi.register_tool(Arc::new(Prompted {
                name: "deploy",
                snippet: Some("  Deploy the app\n   to staging  "),
                guidelines: vec![
                    "  Deploy only after the tests pass ",
                    "   ",
                    "Deploy only after the tests pass",
                ],
            }));
            pi.register_tool(Arc::new(Prompted {
                name: "quiet",
                snippet: None,
                guidelines: vec![],
            }));
            pi.register_tool(Arc::new(Prompted {
                name: "blank",
                snippet: Some(" \n "),
                guidelines: vec!["Keep answers short and to the point"],
            }));
            let handle = pi.pi();
            pi.on::<AgentEndEvent, _>(move |_, _| {
                let handle = handle.clone();
                Box::pin(async move {
                    handle
                        .set_active_tools(vec!["quiet".into(), "grep".into()])
                        .unwrap();
                    Ok(None)
                })
            });
            Ok(())
        })))
        .build();
    let hooks = ExtensionHooks::new(runner.clone());
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![crate::session_support::text("done")]);
    let f = faux.clone();
    let rebuild = crate::session_support::default_prompt_fn();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(Arc::new(Mutex::new(SessionStore::in_memory("/tmp"))))
        .tools(tools.clone())
        .system_prompt(rebuild(&tools))
        .system_prompt_for_tools(rebuild)
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    let before = session.system_prompt();
    assert_eq!(
        section(&before, "Available tools:"),
        [
            "- read: Read file contents (text and images)",
            "- grep: Search file contents by regex or literal text (honours .gitignore)",
            "- edit: Make exact text replacements in a file, several separate ones in one call",
        ]
    );
    hooks.attach(&session);

    // The extension tools join the active ones: `deploy` listed on one line, `quiet` (no
    // snippet) and `blank` (only whitespace) not listed; guidelines trimmed, once each, in
    // tool order, a guideline equal to a fixed one not repeated.
    let prompt = session.system_prompt();
    assert_eq!(
        section(&prompt, "Available tools:"),
        [
            "- read: Read file contents (text and images)",
            "- grep: Search file contents by regex or literal text (honours .gitignore)",
            "- edit: Make exact text replacements in a file, several separate ones in one call",
            "- deploy: Deploy the app to staging",
        ]
    );
    let guidelines = section(&prompt, "Guidelines:");
    assert_eq!(
        guidelines[0],
        "- Prefer read over cat or sed to look at a file."
    );
    assert_eq!(guidelines.len(), 8, "{guidelines:?}");
    assert_eq!(guidelines[5], "- Deploy only after the tests pass");
    assert_eq!(
        guidelines[6..],
        [
            "- Keep answers short and to the point",
            "- Name file paths explicitly when you work with files",
        ]
    );

    // `setActiveTools(["quiet", "grep"])` rebuilds it: only grep listed, no tool guideline.
    session.prompt("go", Default::default()).await.unwrap();
    hooks.flush_requests().await;
    let prompt = session.system_prompt();
    assert_eq!(
        section(&prompt, "Available tools:"),
        ["- grep: Search file contents by regex or literal text (honours .gitignore)"]
    );
    assert_eq!(
        section(&prompt, "Guidelines:"),
        [
            "- Keep answers short and to the point",
            "- Name file paths explicitly when you work with files",
        ]
    );
}

/// The bash tool's guideline about the `PI_*` variables comes with the session environment
/// (pi's `exposeSessionEnvironment`), and only then.
#[test]
fn the_bash_guideline_follows_the_session_environment() {
    let mut options = BuiltinToolOptions::default();
    let plain = create_builtin_tool("bash", Path::new("/tmp"), &options).unwrap();
    assert_eq!(
        plain.prompt_snippet(),
        Some("Execute bash commands (ls, grep, find, etc.)")
    );
    assert!(plain.prompt_guidelines().is_empty());
    options.bash.session_env = Some(Arc::new(Default::default));
    let exposed = create_builtin_tool("bash", Path::new("/tmp"), &options).unwrap();
    assert_eq!(exposed.prompt_guidelines().len(), 1);
    assert!(exposed.prompt_guidelines()[0].contains("PI_*"));
    let parts = ToolPromptParts::of(std::slice::from_ref(&exposed));
    assert_eq!(parts.names, ["bash"]);
    assert_eq!(parts.guidelines, exposed.prompt_guidelines());
}
