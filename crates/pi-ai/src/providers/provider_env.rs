//! Where a wire API reads its provider settings (`AZURE_OPENAI_BASE_URL`, `AWS_REGION`, …).
//!
//! Mirrors pi-ai 0.85.1 `utils/provider-env.js` `getProviderEnvValue`: an empty variable counts
//! as unset.

use std::collections::HashMap;
use std::sync::Arc;

/// The source of provider environment variables. `Debug` prints variable names only (values
/// may be credentials).
#[derive(Clone, Default)]
pub enum ProviderEnv {
    /// The process environment (what the `pi` binary uses).
    #[default]
    Process,
    /// Only these variables, never the process environment: for tests and embedders that must
    /// not pick up ambient settings.
    Fixed(Arc<HashMap<String, String>>),
}

impl std::fmt::Debug for ProviderEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderEnv::Process => f.write_str("Process"),
            ProviderEnv::Fixed(map) => {
                let mut names: Vec<&String> = map.keys().collect();
                names.sort();
                f.debug_tuple("Fixed").field(&names).finish()
            }
        }
    }
}

impl ProviderEnv {
    /// A fixed environment of `pairs`.
    pub fn fixed<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        ProviderEnv::Fixed(Arc::new(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ))
    }

    /// The value of `name`; `None` when unset or empty.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match self {
            ProviderEnv::Process => std::env::var(name).ok(),
            ProviderEnv::Fixed(map) => map.get(name).cloned(),
        };
        value.filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_counts_as_unset_and_fixed_ignores_the_process() {
        let env = ProviderEnv::fixed([("A", "1"), ("B", "")]);
        assert_eq!(env.get("A").as_deref(), Some("1"));
        assert_eq!(env.get("B"), None);
        assert_eq!(env.get("PATH"), None);
        assert!(ProviderEnv::Process.get("PATH").is_some());
        let shown = format!(
            "{:?}",
            ProviderEnv::fixed([("AWS_SECRET_ACCESS_KEY", "s3cr3t")])
        );
        assert_eq!(shown, r#"Fixed(["AWS_SECRET_ACCESS_KEY"])"#);
    }
}
