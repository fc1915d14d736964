//! Request-header helpers shared by the wire APIs: pi's `User-Agent` and case-insensitive
//! header merging.
//!
//! Mirrors pi-ai 0.85.1 `utils/pi-user-agent.ts` (`pi (<platform> <os release>; <arch>)` with
//! Node's `os.platform()`, `os.release()` and `os.arch()` spellings) and the header layering of
//! the adapters: pi's `User-Agent` < adapter defaults < model headers < caller headers, where a
//! later source overrides an earlier one whatever the case of the name, and a caller's `null`
//! deletes a default.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// `pi (<platform> <os release>; <arch>)`, e.g. `pi (linux 6.1.0; x64)`.
///
/// Platform and arch use Node's names (`linux|darwin|win32`, `x64|arm64|ia32`); the release is
/// the kernel release (`uname -r`). Computed once per process.
pub fn pi_user_agent() -> &'static str {
    static UA: OnceLock<String> = OnceLock::new();
    UA.get_or_init(|| format!("pi ({} {}; {})", node_platform(), os_release(), node_arch()))
}

/// Node's `os.platform()` for the running OS.
fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// Node's `os.arch()` for the running CPU.
fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// The kernel release as `uname -r` prints it; empty when unknown.
#[cfg(unix)]
fn os_release() -> String {
    // SAFETY: `uname` fills a caller-owned, zeroed `utsname`; every field is NUL-terminated on
    // success, and we only read `release` after checking the return code.
    unsafe {
        let mut buf: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut buf) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(buf.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// The kernel release; not available without platform APIs here.
#[cfg(not(unix))]
fn os_release() -> String {
    String::new()
}

/// An ordered header list with case-insensitive override and deletion.
///
/// Setting a name removes every earlier entry with that name (ASCII case-insensitive) and
/// appends the new value at the end; [`HeaderList::remove`] only removes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderList(Vec<(String, String)>);

impl HeaderList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to `value`, replacing any entry with the same name.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.remove(name);
        self.0.push((name.to_owned(), value.into()));
    }

    /// Removes every entry named `name`.
    pub fn remove(&mut self, name: &str) {
        self.0.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Applies a model's `headers` map: strings set, `null` deletes, other values are ignored.
    pub fn apply_json(&mut self, headers: Option<&Map<String, Value>>) {
        for (name, value) in headers.into_iter().flatten() {
            match value {
                Value::String(s) => self.set(name, s.clone()),
                Value::Null => self.remove(name),
                _ => {}
            }
        }
    }

    /// Applies caller headers (`StreamOptions::headers`): `Some` sets, `None` deletes.
    pub fn apply_options(&mut self, headers: &[(String, Option<String>)]) {
        for (name, value) in headers {
            match value {
                Some(v) => self.set(name, v.clone()),
                None => self.remove(name),
            }
        }
    }

    /// The entries in order.
    pub fn into_vec(self) -> Vec<(String, String)> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_uses_node_names() {
        let ua = pi_user_agent();
        assert!(ua.starts_with("pi ("), "{ua}");
        assert!(ua.ends_with(')'), "{ua}");
        let inner = &ua[4..ua.len() - 1];
        let (platform_release, arch) = inner.split_once("; ").expect("'; ' separator");
        assert!(
            !arch.contains("x86_64") && !arch.contains("aarch64"),
            "{arch}"
        );
        assert!(!platform_release.starts_with("macos"));
        #[cfg(target_os = "linux")]
        {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
            assert_eq!(platform_release, format!("linux {}", release.trim()));
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(arch, "x64");
    }

    #[test]
    fn later_headers_override_case_insensitively_and_none_deletes() {
        let mut h = HeaderList::new();
        h.set("User-Agent", "a");
        h.set("accept", "application/json");
        let model: Map<String, Value> =
            serde_json::from_str(r#"{"user-agent":"b","Accept":null,"x-n":1}"#).unwrap();
        h.apply_json(Some(&model));
        h.apply_options(&[
            ("X-Extra".into(), Some("1".into())),
            ("USER-AGENT".into(), None),
        ]);
        assert_eq!(h.into_vec(), vec![("X-Extra".to_owned(), "1".to_owned())]);
    }
}
