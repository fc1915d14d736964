//! The `pi auth` argument grammar (pi's `parseAuthCommand` / `validateAuthCommandArgs`).

use std::time::Duration;

use crate::cli::args::Args;

/// Which `pi auth` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `check`.
    Check,
    /// `print-api-key`.
    ApiKey,
    /// `print-bearer-token`.
    BearerToken,
}

impl Kind {
    /// `auth check`, `auth print-api-key`, `auth print-bearer-token`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Check => "auth check",
            Kind::ApiKey => "auth print-api-key",
            Kind::BearerToken => "auth print-bearer-token",
        }
    }

    /// The one-line usage pi prints after an unknown option.
    pub(crate) fn usage(self) -> &'static str {
        match self {
            Kind::Check => {
                "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]"
            }
            Kind::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Kind::BearerToken => {
                "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]"
            }
        }
    }
}

/// A parsed `pi auth` command: its own flags, and the rest for the main argument parser.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuthCommand {
    /// The command.
    pub kind: Kind,
    /// Arguments left for the main parser (`--provider`, `--model`, …).
    pub args: Vec<String>,
    /// `--json`.
    pub json: bool,
    /// `--credentials`.
    pub credentials: bool,
    /// `--no-refresh`.
    pub no_refresh: bool,
    /// `--min-expiry`.
    pub min_expiry: Option<Duration>,
}

/// A usage error, with pi's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct AuthCommandError(pub String);

/// pi's `isAuthCommandHelp`: `auth`, `auth help`, or any `--help` / `-h`.
pub(super) fn is_help(argv: &[String]) -> bool {
    argv.first().map(String::as_str) == Some("auth")
        && (argv.len() < 2 || argv[1] == "help" || argv.iter().any(|a| a == "--help" || a == "-h"))
}

/// Parses `auth <command> …`.
///
/// Errors: `Unknown auth command "<c>". Use …`, `--min-expiry is only supported by
/// print-bearer-token`, `--min-expiry must use a duration such as 30m or 1h`,
/// `--json is only supported by auth check` (and `--credentials`, `--no-refresh`).
pub(crate) fn parse_auth_command(argv: &[String]) -> Result<AuthCommand, AuthCommandError> {
    let kind = match argv.get(1).map(String::as_str) {
        Some("check") => Kind::Check,
        Some("print-api-key") => Kind::ApiKey,
        Some("print-bearer-token") => Kind::BearerToken,
        other => {
            return Err(AuthCommandError(format!(
                "Unknown auth command \"{}\". Use \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".",
                other.unwrap_or("")
            )));
        }
    };
    let mut command = AuthCommand {
        kind,
        args: Vec::new(),
        json: false,
        credentials: false,
        no_refresh: false,
        min_expiry: None,
    };
    let mut rest = argv.iter().skip(2);
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--min-expiry" => {
                if kind != Kind::BearerToken {
                    return Err(AuthCommandError(
                        "--min-expiry is only supported by print-bearer-token".into(),
                    ));
                }
                let value = rest.next().map(String::as_str).unwrap_or("");
                command.min_expiry = Some(parse_duration(value).ok_or_else(|| {
                    AuthCommandError("--min-expiry must use a duration such as 30m or 1h".into())
                })?);
            }
            "--json" | "--credentials" | "--no-refresh" => {
                if kind != Kind::Check {
                    return Err(AuthCommandError(format!(
                        "{arg} is only supported by auth check"
                    )));
                }
                match arg.as_str() {
                    "--json" => command.json = true,
                    "--credentials" => command.credentials = true,
                    _ => command.no_refresh = true,
                }
            }
            _ => command.args.push(arg.clone()),
        }
    }
    Ok(command)
}

/// `/^(\d+)(ms|s|m|h)$/i`.
fn parse_duration(value: &str) -> Option<Duration> {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let amount: u64 = value[..digits].parse().ok()?;
    let unit = value[digits..].to_ascii_lowercase();
    let ms = match unit.as_str() {
        "ms" => Some(1),
        "s" => Some(1_000),
        "m" => Some(60_000),
        "h" => Some(3_600_000),
        _ => None,
    }?;
    Some(Duration::from_millis(amount.checked_mul(ms)?))
}

/// pi's `validateAuthCommandArgs`: the trimmed `--provider` / `--model`.
///
/// Errors: `Auth commands only accept --provider and --model` (an `--api-key`, a message or an
/// `@file`), `Auth checks require --provider <provider> or --model <model>`,
/// `Credential printing requires --provider <provider> or --model <model>`.
pub(super) fn validate(
    args: &Args,
    kind: Kind,
) -> Result<(Option<String>, Option<String>), AuthCommandError> {
    let trim = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let provider = trim(&args.provider);
    let model = trim(&args.model);
    if args.api_key.is_some() || !args.messages.is_empty() || !args.file_args.is_empty() {
        return Err(AuthCommandError(
            "Auth commands only accept --provider and --model".into(),
        ));
    }
    if provider.is_none() && model.is_none() {
        return Err(AuthCommandError(if kind == Kind::Check {
            "Auth checks require --provider <provider> or --model <model>".into()
        } else {
            "Credential printing requires --provider <provider> or --model <model>".into()
        }));
    }
    Ok((provider, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn durations_and_flag_placement() {
        assert_eq!(parse_duration("30m"), Some(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("m"), None);
        assert_eq!(parse_duration("99999999999999999999h"), None);
        let c = parse_auth_command(&argv("auth check --provider p --json --no-refresh")).unwrap();
        assert!(c.json && c.no_refresh && !c.credentials);
        assert_eq!(c.args, ["--provider", "p"]);
        assert_eq!(
            parse_auth_command(&argv("auth check --min-expiry 1h"))
                .unwrap_err()
                .0,
            "--min-expiry is only supported by print-bearer-token"
        );
        assert_eq!(
            parse_auth_command(&argv("auth print-api-key --json"))
                .unwrap_err()
                .0,
            "--json is only supported by auth check"
        );
        assert!(
            is_help(&argv("auth"))
                && is_help(&argv("auth check -h"))
                && !is_help(&argv("auth check"))
        );
    }
}
