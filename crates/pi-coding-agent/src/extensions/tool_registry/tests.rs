use futures::future::BoxFuture;
use pi_agent_core::{AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::*;

/// A tool known by its name and where it comes from (`label`).
struct T(&'static str, &'static str);

impl AgentTool for T {
    fn name(&self) -> &str {
        self.0
    }
    fn label(&self) -> &str {
        self.1
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> &Value {
        &Value::Null
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        _args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async { Err(ToolError::new("unused")) })
    }
}

fn builtin(name: &'static str) -> Arc<dyn AgentTool> {
    Arc::new(T(name, "builtin"))
}
fn ext(name: &'static str) -> Arc<dyn AgentTool> {
    Arc::new(T(name, "ext"))
}
/// An extension tool with the path of the extension registering it.
fn from_ext(name: &'static str) -> (String, Arc<dyn AgentTool>) {
    ("ext.ts".to_owned(), ext(name))
}
fn builtins(names: &[&'static str]) -> Vec<Arc<dyn AgentTool>> {
    names.iter().map(|n| builtin(n)).collect()
}

/// `name:origin` of each tool.
fn show(tools: &[Arc<dyn AgentTool>]) -> Vec<String> {
    tools
        .iter()
        .map(|t| format!("{}:{}", t.name(), t.label()))
        .collect()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

const ALL: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// No filter: the active built-ins stay, every extension tool is added; inactive built-ins
/// can be activated later, in the order named.
#[test]
fn without_a_filter_every_extension_tool_starts_active() {
    let mut r = ToolRegistry::default();
    let active = builtins(&["read", "bash", "edit", "write"]);
    let next = r.build(
        &builtins(&ALL),
        &active,
        vec![from_ext("deploy"), from_ext("lint")],
    );
    assert_eq!(
        show(&next),
        [
            "read:builtin",
            "bash:builtin",
            "edit:builtin",
            "write:builtin",
            "deploy:ext",
            "lint:ext"
        ]
    );
    let chosen = r.select(&names(&["lint", "grep", "nope", "read", "lint"]));
    assert_eq!(show(&chosen), ["lint:ext", "grep:builtin", "read:builtin"]);
}

/// An extension tool named like a built-in replaces it (in the registry and among the active
/// tools); among extension tools the first registration wins.
#[test]
fn an_extension_tool_overrides_a_builtin_of_the_same_name() {
    let mut r = ToolRegistry::default();
    let active = builtins(&["read", "bash"]);
    let first: Arc<dyn AgentTool> = Arc::new(T("read", "ext-first"));
    let second: Arc<dyn AgentTool> = Arc::new(T("read", "ext-second"));
    let next = r.build(
        &builtins(&ALL),
        &active,
        vec![("a.ts".into(), first), ("b.ts".into(), second)],
    );
    assert_eq!(show(&next), ["read:ext-first", "bash:builtin"]);
    // A run-time registration of that name changes nothing.
    assert!(
        r.register("ext.ts", Arc::new(T("read", "late")), &next)
            .is_none()
    );
    // One named like an inactive built-in replaces it and stays inactive (the name is not new).
    let after = r.register("ext.ts", ext("grep"), &next).unwrap();
    assert_eq!(show(&after), ["read:ext-first", "bash:builtin"]);
    assert_eq!(show(&r.select(&names(&["grep"]))), ["grep:ext"]);
}

/// `--tools read,deploy`: only allowlisted tools exist; all of them start active.
#[test]
fn an_allowlist_limits_the_registry_and_activates_all_of_it() {
    let mut r = ToolRegistry::default();
    r.set_filter(ToolFilter::new(
        Some(["read", "grep", "deploy"]),
        Vec::<String>::new(),
    ));
    let active = builtins(&["read"]);
    let next = r.build(
        &builtins(&ALL),
        &active,
        vec![from_ext("deploy"), from_ext("lint")],
    );
    assert_eq!(show(&next), ["read:builtin", "grep:builtin", "deploy:ext"]);
    assert!(r.select(&names(&["bash", "lint"])).is_empty());
    // Run time: a tool outside the allowlist is not registered; an allowed one re-activates
    // every allowed tool (pi's `_refreshToolRegistry` with an allowlist).
    let narrowed = r.select(&names(&["read"]));
    assert!(r.register("ext.ts", ext("lint"), &narrowed).is_none());
    let mut r2 = ToolRegistry::default();
    r2.set_filter(ToolFilter::new(
        Some(["read", "late"]),
        Vec::<String>::new(),
    ));
    let start = r2.build(&builtins(&ALL), &builtins(&["read"]), vec![]);
    assert_eq!(show(&start), ["read:builtin"]);
    let next = r2.register("ext.ts", ext("late"), &[]).unwrap();
    assert_eq!(show(&next), ["read:builtin", "late:ext"]);
}

/// `--no-tools` is an empty allowlist: nothing at all, extension tools included.
#[test]
fn no_tools_leaves_nothing() {
    let mut r = ToolRegistry::default();
    r.set_filter(ToolFilter::new(
        Some(Vec::<String>::new()),
        Vec::<String>::new(),
    ));
    let next = r.build(&builtins(&ALL), &[], vec![from_ext("deploy")]);
    assert!(next.is_empty());
    assert!(r.register("ext.ts", ext("late"), &[]).is_none());
    assert!(r.select(&names(&["read", "deploy"])).is_empty());
}

/// `--exclude-tools bash,deploy`: those names are gone everywhere, also from the session's
/// active tools; a new name registered at run time is activated.
#[test]
fn a_denylist_removes_names_everywhere() {
    let mut r = ToolRegistry::default();
    r.set_filter(ToolFilter::new(None::<Vec<String>>, ["bash", "deploy"]));
    let active = builtins(&["read", "bash"]);
    let next = r.build(
        &builtins(&ALL),
        &active,
        vec![from_ext("deploy"), from_ext("lint")],
    );
    assert_eq!(show(&next), ["read:builtin", "lint:ext"]);
    assert!(r.select(&names(&["bash", "deploy"])).is_empty());
    assert!(r.register("ext.ts", ext("deploy"), &next).is_none());
    let after = r.register("ext.ts", ext("fmt"), &next).unwrap();
    assert_eq!(show(&after), ["read:builtin", "lint:ext", "fmt:ext"]);
}

/// `getAllTools`: every registry tool in registry order with its source — an extension tool
/// that replaced a built-in is the extension's, a session tool with another name is `Sdk`.
#[test]
fn infos_list_the_registry_with_sources() {
    let mut r = ToolRegistry::default();
    let active = vec![
        builtin("read"),
        Arc::new(T("echo", "sdk")) as Arc<dyn AgentTool>,
    ];
    r.build(
        &builtins(&["read", "bash"]),
        &active,
        vec![
            (
                "a.ts".into(),
                Arc::new(T("bash", "ext")) as Arc<dyn AgentTool>,
            ),
            from_ext("deploy"),
        ],
    );
    r.register("late.ts", ext("late"), &active);
    let infos: Vec<(String, ToolSource)> =
        r.infos().into_iter().map(|i| (i.name, i.source)).collect();
    let ext_source = |p: &str| ToolSource::Extension { path: p.into() };
    assert_eq!(
        infos,
        [
            ("read".into(), ToolSource::Builtin),
            ("bash".into(), ext_source("a.ts")),
            ("echo".into(), ToolSource::Sdk),
            ("deploy".into(), ext_source("ext.ts")),
            ("late".into(), ext_source("late.ts")),
        ]
    );
}
