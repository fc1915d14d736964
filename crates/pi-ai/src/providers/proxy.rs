//! The HTTP proxy for a request, from the environment, as pi-ai 0.85.1 chooses it
//! (`utils/node-http-proxy.js` `getProxyForUrl`, `resolveHttpProxyUrlForTarget`).
//!
//! - `no_proxy` / `NO_PROXY` (lower case first, as for every variable here): `*` turns
//!   proxying off; otherwise a comma- or space-separated list of hosts, each optionally with
//!   `:port` and a leading `.`, `*` or `*.` — a host matches itself and its subdomains;
//!   bracketed IPv6 literals are compared without brackets.
//! - then `<scheme>_proxy` (`https_proxy` for `https://` URLs, `http_proxy` for `http://`),
//!   else `all_proxy`; a value without `://` gets the target's scheme.
//! - only `http://` and `https://` proxies: anything else (SOCKS, PAC) fails the request with
//!   pi's `Unsupported proxy protocol…` text, and a value that is not a URL with
//!   `Invalid proxy URL "<value>": Invalid URL`. Nothing is sent then.

use reqwest::Url;

use super::provider_env::ProviderEnv;

/// pi's text for a proxy URL that is neither `http:` nor `https:`.
pub const UNSUPPORTED_PROXY_PROTOCOL: &str = "Unsupported proxy protocol. SOCKS and PAC proxy URLs are not supported; use an HTTP or HTTPS proxy URL.";

/// `name` in lower case, else in upper case.
fn proxy_env(env: &ProviderEnv, name: &str) -> Option<String> {
    env.get(&name.to_ascii_lowercase())
        .or_else(|| env.get(&name.to_ascii_uppercase()))
}

fn strip_brackets(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// One `no_proxy` entry: host (lower case) and port (0 = any).
fn parse_entry(entry: &str) -> Option<(String, u64)> {
    let e = entry.trim().to_ascii_lowercase();
    if e.is_empty() {
        return None;
    }
    if let Some(rest) = e.strip_prefix('[')
        && let Some(close) = rest.find(']')
    {
        let host = rest[..close].to_owned();
        let port = rest[close + 1..]
            .strip_prefix(':')
            .and_then(leading_port)
            .unwrap_or(0);
        return Some((host, port));
    }
    if e.matches(':').count() > 1 {
        return Some((e, 0));
    }
    if let Some((host, port)) = e.split_once(':')
        && let Some(port) = leading_port(port)
    {
        return Some((host.to_owned(), port));
    }
    Some((e, 0))
}

/// `parseInt(text, 10)` for a port: the leading digits (`None` when there are none). A value
/// too large for `u64` saturates; like any value past 65535 it matches no port.
fn leading_port(text: &str) -> Option<u64> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// Whether `no_proxy` lets `host:port` go through a proxy.
fn should_proxy(env: &ProviderEnv, host: &str, port: u16) -> bool {
    let port = u64::from(port);
    let Some(no_proxy) = proxy_env(env, "no_proxy").map(|v| v.to_ascii_lowercase()) else {
        return true;
    };
    if no_proxy == "*" {
        return false;
    }
    let target = strip_brackets(&host.to_ascii_lowercase()).to_owned();
    no_proxy
        .split([',', ' ', '\t', '\n', '\r'])
        .filter_map(parse_entry)
        .all(|(entry_host, entry_port)| {
            if entry_port != 0 && entry_port != port {
                return true;
            }
            let mut domain = strip_brackets(&entry_host);
            if let Some(d) = domain.strip_prefix("*.") {
                domain = d;
            } else if let Some(d) = domain
                .strip_prefix('.')
                .or_else(|| domain.strip_prefix('*'))
            {
                domain = d;
            }
            if domain.is_empty() {
                return true;
            }
            target != domain && !target.ends_with(&format!(".{domain}"))
        })
}

/// A proxy setting pi refuses; the text is pi's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// The proxy variable's value is not a URL (the value shown as a JSON string, as pi does).
    #[error("Invalid proxy URL {}: Invalid URL", serde_json::Value::String(.0.clone()))]
    InvalidUrl(String),
    /// A scheme other than `http`/`https` (SOCKS, PAC, …); carries the scheme.
    #[error("{UNSUPPORTED_PROXY_PROTOCOL} Got {0}:")]
    UnsupportedProtocol(String),
}

/// The proxy for `target`, `None` for a direct connection. `Err` for an unusable proxy
/// setting.
pub fn proxy_for(target: &Url, env: &ProviderEnv) -> Result<Option<Url>, ProxyError> {
    let scheme = target.scheme();
    let Some(host) = target.host_str() else {
        return Ok(None);
    };
    let default_port = match scheme {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        "ftp" => 21,
        "gopher" => 70,
        _ => 0,
    };
    let port = target.port().unwrap_or(default_port);
    if !should_proxy(env, host, port) {
        return Ok(None);
    }
    let Some(mut proxy) =
        proxy_env(env, &format!("{scheme}_proxy")).or_else(|| proxy_env(env, "all_proxy"))
    else {
        return Ok(None);
    };
    if !proxy.contains("://") {
        proxy = format!("{scheme}://{proxy}");
    }
    let url = Url::parse(&proxy).map_err(|_| ProxyError::InvalidUrl(proxy.clone()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(ProxyError::UnsupportedProtocol(url.scheme().to_owned()));
    }
    Ok(Some(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ProviderEnv {
        ProviderEnv::fixed(pairs.iter().copied())
    }

    fn p(url: &str, pairs: &[(&str, &str)]) -> Result<Option<String>, String> {
        proxy_for(&Url::parse(url).unwrap(), &env(pairs))
            .map(|o| o.map(|u| u.to_string()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn scheme_variables_lower_case_first_and_all_proxy() {
        let vars = [
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://lower:2"),
            ("HTTP_PROXY", "plain:3"),
        ];
        assert_eq!(
            p("https://api.x.com/v1", &vars).unwrap().as_deref(),
            Some("http://lower:2/")
        );
        assert_eq!(
            p("http://api.x.com/v1", &vars).unwrap().as_deref(),
            Some("http://plain:3/")
        );
        assert_eq!(
            p("https://a.b/", &[("ALL_PROXY", "http://all:4")])
                .unwrap()
                .as_deref(),
            Some("http://all:4/")
        );
        assert_eq!(p("https://a.b/", &[]).unwrap(), None);
    }

    #[test]
    fn no_proxy_entries() {
        let with = |no: &str, url: &str| {
            p(
                url,
                &[("HTTPS_PROXY", "http://proxy:8080"), ("NO_PROXY", no)],
            )
            .unwrap()
        };
        assert_eq!(with("*", "https://api.x.com/"), None);
        assert_eq!(with("x.com", "https://api.x.com/"), None);
        assert_eq!(with(".x.com", "https://x.com/"), None);
        assert_eq!(with("*.x.com", "https://deep.api.x.com/"), None);
        assert_eq!(with("other.com, x.com:443", "https://api.x.com/"), None);
        assert!(with("x.com:8443", "https://api.x.com/").is_some());
        assert!(with("ax.com", "https://x.com/").is_some());
        assert_eq!(with("[::1]:443", "https://[::1]/"), None);
        assert_eq!(with("localhost 127.0.0.1", "https://127.0.0.1:9/"), None);
        assert!(with("x.com:99999", "https://api.x.com:65535/").is_some());
    }

    #[test]
    fn unusable_proxies_fail_with_pis_texts() {
        assert_eq!(
            p("https://a.b/", &[("HTTPS_PROXY", "socks5://h:1")]).unwrap_err(),
            format!("{UNSUPPORTED_PROXY_PROTOCOL} Got socks5:")
        );
        assert_eq!(
            p("https://a.b/", &[("HTTPS_PROXY", "http://[bad")]).unwrap_err(),
            "Invalid proxy URL \"http://[bad\": Invalid URL"
        );
    }
}
