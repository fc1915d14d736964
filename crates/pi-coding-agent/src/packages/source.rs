//! Package sources as written in settings and on the command line.
//!
//! Mirrors pi 0.85.0 `core/package-manager.js` (`parseSource`, `parseNpmSpec`) and
//! `utils/git.js` (`parseGitUrl`): `npm:<name>[@version]`; `git:` followed by a URL, an
//! scp-like `git@host:path` or a `host/path` shorthand (the host holds a dot or is
//! `localhost`); an `https://`, `http://`, `ssh://` or `git://` URL; anything else is a
//! local path. A git path needs two segments (`user/repo`) and may end in `@<ref>`.

/// An npm source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpmSource {
    /// `<name>[@version]` as written after `npm:`.
    pub spec: String,
    /// The package name (`@scope/name` or `name`).
    pub name: String,
    /// The version or range after the name.
    pub version: Option<String>,
    /// The version is exact (`1.2.3`): `pi update` leaves it alone.
    pub pinned: bool,
}

/// A git source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSource {
    /// What `git clone` is given.
    pub repo: String,
    /// The host (no port), the first part of where it is cloned.
    pub host: String,
    /// The repository path (`user/repo`, no `.git`).
    pub path: String,
    /// The ref after `@`.
    pub git_ref: Option<String>,
}

/// A parsed source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackageSource {
    /// `npm:…`.
    Npm(NpmSource),
    /// `git:…` or a git URL.
    Git(GitSource),
    /// A file or directory, as written.
    Local(String),
}

/// pi's `isExactNpmVersion` (semver `valid`): `1.2.3`, with an optional prerelease / build.
fn is_exact_version(v: &str) -> bool {
    let v = v.trim().trim_start_matches(['=', 'v']);
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `parseNpmSpec`: the name is everything up to the first `@` after the optional scope.
fn parse_npm_spec(spec: &str) -> (String, Option<String>) {
    let scoped = spec.starts_with('@');
    let body = if scoped { &spec[1..] } else { spec };
    match body.find('@') {
        Some(i) if i > 0 && i + 1 < body.len() => {
            let name = &spec[..i + usize::from(scoped)];
            (name.to_owned(), Some(body[i + 1..].to_owned()))
        }
        _ => (spec.to_owned(), None),
    }
}

/// `isLocalPath`: a source without a known remote prefix.
fn is_local_path(s: &str) -> bool {
    let t = s.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// `parseSource`.
pub fn parse_source(source: &str) -> PackageSource {
    if let Some(spec) = source.strip_prefix("npm:") {
        let spec = spec.trim().to_owned();
        let (name, version) = parse_npm_spec(&spec);
        let pinned = version.as_deref().is_some_and(is_exact_version);
        return PackageSource::Npm(NpmSource {
            spec,
            name,
            version,
            pinned,
        });
    }
    if is_local_path(source) {
        return PackageSource::Local(source.to_owned());
    }
    match parse_git_url(source) {
        Some(g) => PackageSource::Git(g),
        None => PackageSource::Local(source.to_owned()),
    }
}

fn is_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// A URL's scheme + authority, and its path without the leading slashes.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let start = url.find("://")? + 3;
    let slash = url[start..].find('/').map_or(url.len(), |i| start + i);
    Some((&url[..slash], url[slash..].trim_start_matches('/')))
}

/// The host of a URL's authority: no user info, no port.
fn url_host(prefix: &str) -> String {
    let authority = prefix.split("://").nth(1).unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    host.to_ascii_lowercase()
}

/// `splitRef`: the repository and the ref after the path's first `@`.
fn split_ref(url: &str) -> (String, Option<String>) {
    if let Some(rest) = url.strip_prefix("git@")
        && let Some((host, path)) = rest.split_once(':')
    {
        if let Some((repo_path, r)) = path.split_once('@')
            && !repo_path.is_empty()
            && !r.is_empty()
        {
            return (format!("git@{host}:{repo_path}"), Some(r.to_owned()));
        }
        return (url.to_owned(), None);
    }
    if url.contains("://") {
        if let Some((prefix, path)) = split_url(url)
            && let Some((repo_path, r)) = path.split_once('@')
            && !repo_path.is_empty()
            && !r.is_empty()
        {
            return (format!("{prefix}/{repo_path}"), Some(r.to_owned()));
        }
        return (url.to_owned(), None);
    }
    if let Some((host, path)) = url.split_once('/')
        && let Some((repo_path, r)) = path.split_once('@')
        && !repo_path.is_empty()
        && !r.is_empty()
    {
        return (format!("{host}/{repo_path}"), Some(r.to_owned()));
    }
    (url.to_owned(), None)
}

/// `hasUnsafeGitInstallPart`: what would escape the clone directory.
fn unsafe_part(value: &str, allow_slash: bool) -> bool {
    value.contains('\0')
        || value.contains('\\')
        || value.starts_with('/')
        || (!allow_slash && value.contains('/'))
        || value
            .split('/')
            .any(|s| s == ".." || s.contains("%2e%2e") || s.contains("%2E%2E"))
        || value.contains("%2f")
        || value.contains("%2F")
        || value.contains("%5c")
        || value.contains("%5C")
}

/// `parseGitUrl` (without hosted-git-info: hosted shorthands resolve to the same host and
/// path through the generic rules).
pub fn parse_git_url(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (prefixed, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    if !prefixed && !is_url(url) {
        return None;
    }
    let (without_ref, git_ref) = split_ref(url);
    let (repo, host, path) = if let Some(rest) = without_ref.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        (without_ref.clone(), host.to_owned(), path.to_owned())
    } else if is_url(&without_ref) {
        let (prefix, path) = split_url(&without_ref)?;
        (without_ref.clone(), url_host(prefix), path.to_owned())
    } else {
        let (host, path) = without_ref.split_once('/')?;
        if !host.contains('.') && host != "localhost" {
            return None;
        }
        (
            format!("https://{without_ref}"),
            host.to_owned(),
            path.to_owned(),
        )
    };
    if path.starts_with('/') {
        return None;
    }
    let path = path.strip_suffix(".git").unwrap_or(&path);
    let path = path
        .trim_start_matches('/')
        .trim_end_matches('/')
        .to_owned();
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    if unsafe_part(&host, false) || unsafe_part(&path, true) {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref,
    })
}

impl PackageSource {
    /// Whether `pi update` leaves the source alone (an exact npm version).
    pub fn is_pinned_npm(&self) -> bool {
        matches!(self, PackageSource::Npm(n) if n.pinned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(s: &str) -> (String, String, String, Option<String>) {
        match parse_source(s) {
            PackageSource::Git(g) => (g.repo, g.host, g.path, g.git_ref),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn npm_specs_split_name_and_version() {
        let PackageSource::Npm(n) = parse_source("npm:@foo/bar@1.2.3") else {
            panic!()
        };
        assert_eq!(
            (n.name.as_str(), n.version.as_deref()),
            ("@foo/bar", Some("1.2.3"))
        );
        assert!(n.pinned);
        let PackageSource::Npm(n) = parse_source("npm:pi-thing@^2") else {
            panic!()
        };
        assert_eq!(
            (n.name.as_str(), n.version.as_deref(), n.pinned),
            ("pi-thing", Some("^2"), false)
        );
        let PackageSource::Npm(n) = parse_source("npm:@scope/x") else {
            panic!()
        };
        assert_eq!((n.name.as_str(), n.version), ("@scope/x", None));
    }

    #[test]
    fn git_forms_resolve_to_host_and_path() {
        assert_eq!(
            git("git:github.com/user/repo@v1"),
            (
                "https://github.com/user/repo".into(),
                "github.com".into(),
                "user/repo".into(),
                Some("v1".into())
            )
        );
        assert_eq!(
            git("git:git@github.com:user/repo.git"),
            (
                "git@github.com:user/repo.git".into(),
                "github.com".into(),
                "user/repo".into(),
                None
            )
        );
        assert_eq!(
            git("http://127.0.0.1:8123/u/r.git"),
            (
                "http://127.0.0.1:8123/u/r.git".into(),
                "127.0.0.1".into(),
                "u/r".into(),
                None
            )
        );
        assert_eq!(git("git:127.0.0.1/u/r").0, "https://127.0.0.1/u/r");
        // No two-segment path, a bare word host, a traversal: local paths.
        for s in [
            "git:github.com/user",
            "git:host/u/r",
            "git:x.y/../../etc",
            "./dir",
        ] {
            assert!(matches!(parse_source(s), PackageSource::Local(_)), "{s}");
        }
    }
}
