//! Bedrock credentials, region and endpoint as pi-ai 0.85.1 resolves them
//! (`api/bedrock-converse-stream.js` with the AWS SDK's default chain), limited to what needs
//! no network: pi-rs never asks an instance-metadata or container credentials service.
//!
//! Credentials, first match:
//! 1. `AWS_BEDROCK_SKIP_AUTH=1`: signed with dummy keys (for proxies that need none);
//! 2. a key (`api_key`, else `AWS_BEARER_TOKEN_BEDROCK`): `Authorization: Bearer <key>`;
//! 3. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`): SigV4;
//! 4. the static keys of profile `AWS_PROFILE` (else `default`) in the shared credentials file
//!    (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) or config file
//!    (`AWS_CONFIG_FILE`, else `~/.aws/config`): SigV4;
//! 5. otherwise `Could not load credentials from any providers` (SSO, `credential_process`,
//!    roles and metadata services are not consulted).
//!
//! Region: from an inference-profile ARN model id; else `AWS_REGION`, `AWS_DEFAULT_REGION`;
//! else the region of a standard `bedrock-runtime.<region>.amazonaws.com` base URL; else
//! `us-east-1` — unless `AWS_PROFILE` is set, when the profile's `region` is used.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::providers::StreamError;
use crate::providers::provider_env::ProviderEnv;

/// The key value the model registry reports for ambient credentials: not a Bedrock API key.
pub const AUTHENTICATED_MARKER: &str = "<authenticated>";

/// Static AWS keys.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsKeys {
    /// `aws_access_key_id`.
    pub access_key_id: String,
    /// `aws_secret_access_key`.
    pub secret_access_key: String,
    /// `aws_session_token`, when temporary.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for AwsKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsKeys")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// How a request authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BedrockAuth {
    /// A Bedrock API key, sent as `Authorization: Bearer`.
    Bearer(String),
    /// SigV4 with these keys.
    SigV4(AwsKeys),
}

/// One INI file's sections: name → key → value.
type Ini = HashMap<String, HashMap<String, String>>;

/// Parses the AWS shared-file INI dialect (sections, `key = value`, `#`/`;` comments).
fn parse_ini(text: &str) -> Ini {
    let mut out: Ini = HashMap::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(name.trim().to_owned());
            continue;
        }
        if let (Some(s), Some((k, v))) = (&section, line.split_once('=')) {
            out.entry(s.clone())
                .or_default()
                .insert(k.trim().to_lowercase(), v.trim().to_owned());
        }
    }
    out
}

fn home(env: &ProviderEnv) -> Option<PathBuf> {
    env.get("HOME")
        .or_else(|| env.get("USERPROFILE"))
        .map(PathBuf::from)
}

/// Reads one shared file; a file that is absent is empty, one that cannot be read fails.
fn read_ini(path: Option<PathBuf>) -> Result<Ini, StreamError> {
    let Some(path) = path else {
        return Ok(Ini::new());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse_ini(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ini::new()),
        Err(e) => Err(StreamError::Credentials(format!(
            "Could not read AWS shared file {}: {e}",
            path.display()
        ))),
    }
}

/// The profile's settings: the credentials file's `[name]`, then the config file's
/// `[profile name]` (`[default]` for the default profile).
fn profile_settings(env: &ProviderEnv, name: &str) -> Result<HashMap<String, String>, StreamError> {
    let credentials = read_ini(
        env.get("AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .or_else(|| home(env).map(|h| h.join(".aws").join("credentials"))),
    )?;
    let config = read_ini(
        env.get("AWS_CONFIG_FILE")
            .map(PathBuf::from)
            .or_else(|| home(env).map(|h| h.join(".aws").join("config"))),
    )?;
    let mut merged = HashMap::new();
    let config_section = if name == "default" {
        config.get("default")
    } else {
        config.get(&format!("profile {name}"))
    };
    if let Some(s) = config_section {
        merged.extend(s.clone());
    }
    if let Some(s) = credentials.get(name) {
        merged.extend(s.clone());
    }
    Ok(merged)
}

fn profile_name(env: &ProviderEnv) -> String {
    env.get("AWS_PROFILE")
        .unwrap_or_else(|| "default".to_owned())
}

/// The credentials for one request; `api_key` is the resolved key (may be empty or the
/// ambient-credentials marker).
pub fn resolve_auth(api_key: &str, env: &ProviderEnv) -> Result<BedrockAuth, StreamError> {
    if env.get("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1") {
        return Ok(BedrockAuth::SigV4(AwsKeys {
            access_key_id: "dummy-access-key".into(),
            secret_access_key: "dummy-secret-key".into(),
            session_token: None,
        }));
    }
    let key = Some(api_key)
        .filter(|k| !k.is_empty() && *k != AUTHENTICATED_MARKER)
        .map(str::to_owned)
        .or_else(|| env.get("AWS_BEARER_TOKEN_BEDROCK"));
    if let Some(key) = key {
        return Ok(BedrockAuth::Bearer(key));
    }
    if let (Some(id), Some(secret)) = (
        env.get("AWS_ACCESS_KEY_ID"),
        env.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        return Ok(BedrockAuth::SigV4(AwsKeys {
            access_key_id: id,
            secret_access_key: secret,
            session_token: env.get("AWS_SESSION_TOKEN"),
        }));
    }
    let settings = profile_settings(env, &profile_name(env))?;
    let get = |k: &str| settings.get(k).filter(|v| !v.is_empty()).cloned();
    match (get("aws_access_key_id"), get("aws_secret_access_key")) {
        (Some(id), Some(secret)) => Ok(BedrockAuth::SigV4(AwsKeys {
            access_key_id: id,
            secret_access_key: secret,
            session_token: get("aws_session_token"),
        })),
        _ => Err(StreamError::Credentials(
            "Could not load credentials from any providers".into(),
        )),
    }
}

/// The region of an inference-profile ARN (`arn:aws[-…]:bedrock:<region>:…`).
fn arn_region(model_id: &str) -> Option<&str> {
    let rest = model_id.strip_prefix("arn:aws")?;
    let rest = match rest.strip_prefix('-') {
        Some(partition) => {
            let (p, tail) = partition.split_once(':')?;
            (!p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .then_some(tail)?
        }
        None => rest.strip_prefix(':')?,
    };
    let rest = rest.strip_prefix("bedrock:")?;
    let (region, _) = rest.split_once(':')?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    .then_some(region)
}

/// The region of a standard Bedrock runtime endpoint
/// (`bedrock-runtime[-fips].<region>.amazonaws.com[.cn]`).
pub(crate) fn endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_lowercase();
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com.cn")
        .or_else(|| rest.strip_suffix(".amazonaws.com"))?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    .then(|| region.to_owned())
}

/// Where a request goes and which region signs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The endpoint (scheme, host, optional base path), without a trailing `/`.
    pub endpoint: String,
    /// The signing region.
    pub region: String,
}

/// pi's region and endpoint choice for `model_id` at `base_url`.
pub fn resolve_target(
    model_id: &str,
    base_url: &str,
    env: &ProviderEnv,
) -> Result<Target, StreamError> {
    let configured = env
        .get("AWS_REGION")
        .or_else(|| env.get("AWS_DEFAULT_REGION"));
    let ambient_profile = env.get("AWS_PROFILE").is_some();
    let from_endpoint = endpoint_region(base_url);
    // A custom endpoint (proxy, VPC) is always kept; a standard one only when nothing else
    // names the region.
    let explicit = from_endpoint.is_none() || (configured.is_none() && !ambient_profile);
    let region = if let Some(r) = arn_region(model_id) {
        r.to_owned()
    } else if let Some(r) = configured {
        r
    } else if let Some(r) = from_endpoint.filter(|_| explicit) {
        r
    } else if !ambient_profile {
        "us-east-1".to_owned()
    } else {
        profile_settings(env, &profile_name(env))?
            .get("region")
            .filter(|r| !r.is_empty())
            .cloned()
            .ok_or_else(|| StreamError::Config("Region is missing".into()))?
    };
    let endpoint = if explicit {
        base_url.trim_end_matches('/').to_owned()
    } else if region.starts_with("cn-") {
        format!("https://bedrock-runtime.{region}.amazonaws.com.cn")
    } else {
        format!("https://bedrock-runtime.{region}.amazonaws.com")
    };
    Ok(Target { endpoint, region })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ProviderEnv {
        ProviderEnv::fixed(pairs.iter().copied())
    }

    const STD: &str = "https://bedrock-runtime.us-east-1.amazonaws.com";

    #[test]
    fn region_and_endpoint_as_pi_picks_them() {
        let t = resolve_target("anthropic.claude", STD, &env(&[])).unwrap();
        assert_eq!((t.endpoint.as_str(), t.region.as_str()), (STD, "us-east-1"));
        let t = resolve_target("m", STD, &env(&[("AWS_REGION", "eu-west-1")])).unwrap();
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime.eu-west-1.amazonaws.com"
        );
        assert_eq!(t.region, "eu-west-1");
        let t = resolve_target("m", STD, &env(&[("AWS_DEFAULT_REGION", "cn-north-1")])).unwrap();
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
        );
        let t = resolve_target(
            "arn:aws:bedrock:ap-south-1:123:application-inference-profile/x",
            STD,
            &env(&[("AWS_REGION", "eu-west-1")]),
        )
        .unwrap();
        assert_eq!(t.region, "ap-south-1");
        let t = resolve_target(
            "arn:aws-us-gov:bedrock:us-gov-west-1:1:x",
            "https://bedrock-runtime.us-gov-west-1.amazonaws.com",
            &env(&[]),
        )
        .unwrap();
        assert_eq!(t.region, "us-gov-west-1");
        // A custom endpoint is kept, signed for the configured region or us-east-1.
        let t = resolve_target(
            "m",
            "http://127.0.0.1:9/",
            &env(&[("AWS_REGION", "eu-west-3")]),
        )
        .unwrap();
        assert_eq!(
            (t.endpoint.as_str(), t.region.as_str()),
            ("http://127.0.0.1:9", "eu-west-3")
        );
        let t = resolve_target("m", "http://127.0.0.1:9", &env(&[])).unwrap();
        assert_eq!(t.region, "us-east-1");
        let t = resolve_target(
            "m",
            "https://bedrock-runtime-fips.us-west-2.amazonaws.com",
            &env(&[]),
        )
        .unwrap();
        assert_eq!(t.region, "us-west-2");
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime-fips.us-west-2.amazonaws.com"
        );
    }

    #[test]
    fn a_profile_supplies_region_and_keys() {
        let dir = std::env::temp_dir().join(format!("pi-bedrock-cred-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let creds = dir.join("credentials");
        let config = dir.join("config");
        std::fs::write(
            &creds,
            "[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = secret\n# note\n[default]\naws_access_key_id=AKIDDEF\naws_secret_access_key=s2\naws_session_token=tok\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[profile work]\nregion = eu-central-1\n[default]\nregion=us-west-1\n",
        )
        .unwrap();
        let files = [
            ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ];
        let mut with_profile = files.to_vec();
        with_profile.push(("AWS_PROFILE", "work"));
        let e = env(&with_profile);
        let t = resolve_target("m", STD, &e).unwrap();
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime.eu-central-1.amazonaws.com"
        );
        let BedrockAuth::SigV4(keys) = resolve_auth("<authenticated>", &e).unwrap() else {
            panic!("sigv4");
        };
        assert_eq!(keys.access_key_id, "AKIDWORK");
        assert_eq!(keys.session_token, None);
        let BedrockAuth::SigV4(keys) = resolve_auth("", &env(&files)).unwrap() else {
            panic!("sigv4");
        };
        assert_eq!(keys.access_key_id, "AKIDDEF");
        assert_eq!(keys.session_token.as_deref(), Some("tok"));
        // Environment keys win over the profile (pi passes them to the client itself).
        let mut both = with_profile.clone();
        both.extend([
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
        ]);
        let BedrockAuth::SigV4(keys) = resolve_auth("", &env(&both)).unwrap() else {
            panic!("sigv4");
        };
        assert_eq!(keys.access_key_id, "AKIDENV");
        // A profile without keys or region.
        let e = env(&[
            ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config.to_str().unwrap()),
            ("AWS_PROFILE", "missing"),
        ]);
        assert_eq!(
            resolve_auth("", &e).unwrap_err().to_string(),
            "Could not load credentials from any providers"
        );
        assert_eq!(
            resolve_target("m", STD, &e).unwrap_err().to_string(),
            "Region is missing"
        );
        // A credentials path that is a directory cannot be read.
        let e = env(&[("AWS_SHARED_CREDENTIALS_FILE", dir.to_str().unwrap())]);
        let err = resolve_auth("", &e).unwrap_err().to_string();
        assert!(err.starts_with("Could not read AWS shared file "), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bearer_and_skip_auth() {
        assert_eq!(
            resolve_auth("key-1", &env(&[("AWS_BEARER_TOKEN_BEDROCK", "env-key")])).unwrap(),
            BedrockAuth::Bearer("key-1".into())
        );
        assert_eq!(
            resolve_auth(
                AUTHENTICATED_MARKER,
                &env(&[("AWS_BEARER_TOKEN_BEDROCK", "env-key")])
            )
            .unwrap(),
            BedrockAuth::Bearer("env-key".into())
        );
        let skip = resolve_auth("key-1", &env(&[("AWS_BEDROCK_SKIP_AUTH", "1")])).unwrap();
        let BedrockAuth::SigV4(keys) = skip else {
            panic!("dummy keys");
        };
        assert_eq!(keys.access_key_id, "dummy-access-key");
        assert_eq!(
            resolve_auth("", &env(&[("HOME", "/nonexistent-home")]))
                .unwrap_err()
                .to_string(),
            "Could not load credentials from any providers"
        );
    }
}
