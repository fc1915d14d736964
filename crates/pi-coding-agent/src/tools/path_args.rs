//! The common path rules of the built-in tools.
//!
//! Mirrors pi 0.85.0 `core/tools/path-utils.ts` and `utils/paths.ts` (`normalizePath`,
//! `resolvePath`): Unicode spaces become plain spaces, one leading `@` is stripped, `~` and `~/…`
//! expand to the home directory, `file://` URLs become paths, and relative paths resolve against
//! the tool's working directory with Node's lexical `path.resolve` normalization (`.`/`..`
//! segments, repeated and trailing separators). The read tool additionally tries the macOS
//! spellings of a missing path ([`resolve_read_path`]).

use std::path::{Path, PathBuf};

use crate::platform::lexical_path::lexical_normalize;

/// The Unicode spaces pi maps to U+0020 in paths: U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000.
pub(crate) fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Applies the input rules (Unicode spaces, one leading `@`, `~`, `file://`) to a path as the
/// model wrote it, without resolving it. `home` is the home directory (`$HOME`).
///
/// Mirrors pi 0.85.0 `expandPath`. A `file://` URL is percent-decoded; a URL with a host other
/// than `localhost` is kept verbatim (Node throws there; pi-rs lets the later file access fail).
pub(crate) fn normalize_path_input(input: &str, home: &Path) -> String {
    let mut normalized: String = input
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    if let Some(rest) = normalized.strip_prefix('@') {
        normalized = rest.to_owned();
    }
    if normalized == "~" {
        return home.to_string_lossy().into_owned();
    }
    if let Some(rest) = normalized.strip_prefix("~/") {
        return join_lexically(home, Path::new(rest))
            .to_string_lossy()
            .into_owned();
    }
    if let Some(path) = file_url_to_path(&normalized) {
        return path;
    }
    normalized
}

/// Resolves a path the model wrote against `cwd`, returning an absolute, lexically normalized
/// path. Mirrors pi 0.85.0 `resolveToCwd`.
pub(crate) fn resolve_to_cwd(input: &str, cwd: &Path) -> PathBuf {
    let home = home_dir();
    let normalized = normalize_path_input(input, &home);
    let path = Path::new(&normalized);
    if path.is_absolute() {
        lexical_normalize(path)
    } else {
        let base = normalize_path_input(&cwd.to_string_lossy(), &home);
        lexical_normalize(&Path::new(&base).join(path))
    }
}

/// [`resolve_to_cwd`], then, when nothing exists there, the macOS variants pi tries in order:
/// a narrow no-break space (U+202F) before `AM.`/`PM.` (screenshot names), NFD, `'` → U+2019,
/// and NFD plus `'` → U+2019. Returns the first that exists, else the plain resolution.
///
/// Mirrors pi 0.85.0 `resolveReadPath`.
pub(crate) fn resolve_read_path(input: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(input, cwd);
    if resolved.exists() {
        return resolved;
    }
    let text = resolved.to_string_lossy().into_owned();
    let nfd = icu_normalizer::DecomposingNormalizerBorrowed::new_nfd()
        .normalize(&text)
        .into_owned();
    let candidates = [
        am_pm_variant(&text),
        nfd.clone(),
        text.replace('\'', "\u{2019}"),
        nfd.replace('\'', "\u{2019}"),
    ];
    for candidate in candidates {
        if candidate != text && Path::new(&candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    resolved
}

/// The home directory (`$HOME`, as Node's `os.homedir()`), `/` when unknown.
pub(crate) fn home_dir() -> PathBuf {
    std::env::home_dir().unwrap_or_else(|| PathBuf::from("/"))
}

/// Replaces ` AM.`/` PM.` (any case) with U+202F before the meridiem, as macOS screenshot names
/// are spelled (pi: `/ (AM|PM)\./gi`).
fn am_pm_variant(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(' ') {
        let after = &rest[pos + 1..];
        let meridiem = after.get(..3).filter(|m| {
            let lower = m.to_ascii_lowercase();
            lower == "am." || lower == "pm."
        });
        out.push_str(&rest[..pos]);
        match meridiem {
            Some(m) => {
                out.push('\u{202F}');
                out.push_str(m);
                rest = &after[3..];
            }
            None => {
                out.push(' ');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `file:///a%20b` → `/a b` (host empty or `localhost`); `None` for anything else.
fn file_url_to_path(text: &str) -> Option<String> {
    let rest = text.strip_prefix("file://")?;
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")
            .filter(|p| p.starts_with('/'))?
    };
    Some(percent_decode(path))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn join_lexically(base: &Path, rest: &Path) -> PathBuf {
    lexical_normalize(&base.join(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> PathBuf {
        PathBuf::from("/home/u")
    }

    #[test]
    fn strips_one_leading_at_and_maps_unicode_spaces() {
        assert_eq!(normalize_path_input("@a.txt", &home()), "a.txt");
        assert_eq!(normalize_path_input("@@a.txt", &home()), "@a.txt");
        assert_eq!(
            normalize_path_input("my\u{00A0}file\u{2003}x\u{202F}y\u{3000}z", &home()),
            "my file x y z"
        );
        // The space mapping runs before the `@` strip, as in pi.
        assert_eq!(normalize_path_input("@\u{00A0}a", &home()), " a");
    }

    #[test]
    fn expands_tilde_only_alone_or_before_a_slash() {
        assert_eq!(normalize_path_input("~", &home()), "/home/u");
        assert_eq!(normalize_path_input("~/x/../y", &home()), "/home/u/y");
        assert_eq!(normalize_path_input("~user/x", &home()), "~user/x");
        assert_eq!(normalize_path_input("@~/a", &home()), "/home/u/a");
    }

    #[test]
    fn accepts_file_urls() {
        assert_eq!(
            normalize_path_input("file:///tmp/a%20b.txt", &home()),
            "/tmp/a b.txt"
        );
        assert_eq!(
            normalize_path_input("file://localhost/tmp/x", &home()),
            "/tmp/x"
        );
        assert_eq!(
            normalize_path_input("file://host/tmp/x", &home()),
            "file://host/tmp/x"
        );
    }

    #[test]
    fn resolves_against_cwd_like_node_path_resolve() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            resolve_to_cwd("src/./a.rs", cwd),
            PathBuf::from("/work/project/src/a.rs")
        );
        assert_eq!(resolve_to_cwd("../x/", cwd), PathBuf::from("/work/x"));
        assert_eq!(resolve_to_cwd(".", cwd), PathBuf::from("/work/project"));
        assert_eq!(
            resolve_to_cwd("/etc//hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
        assert_eq!(resolve_to_cwd("/../..", cwd), PathBuf::from("/"));
        assert_eq!(
            resolve_to_cwd("@notes.txt", cwd),
            PathBuf::from("/work/project/notes.txt")
        );
    }

    #[test]
    fn am_pm_variant_inserts_narrow_no_break_space() {
        assert_eq!(
            am_pm_variant("/s/Screenshot 2024 at 10.00.00 AM.png"),
            "/s/Screenshot 2024 at 10.00.00\u{202F}AM.png"
        );
        assert_eq!(am_pm_variant("/s/a pm.png"), "/s/a\u{202F}pm.png");
        assert_eq!(am_pm_variant("/s/a AMx"), "/s/a AMx");
    }

    #[test]
    fn read_path_finds_macos_variants() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("Shot 1.02.03\u{202F}PM.png");
        std::fs::write(&real, b"x").unwrap();
        assert_eq!(resolve_read_path("Shot 1.02.03 PM.png", dir.path()), real);

        let curly = dir.path().join("Capture d\u{2019}e\u{0301}cran.png");
        std::fs::write(&curly, b"x").unwrap();
        assert_eq!(
            resolve_read_path("Capture d'\u{00E9}cran.png", dir.path()),
            curly
        );

        let missing = resolve_read_path("nope.txt", dir.path());
        assert_eq!(missing, dir.path().join("nope.txt"));
    }
}
