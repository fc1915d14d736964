//! Every value form, in isolation from the process environment (overlay variables use names
//! no process sets).

use super::*;

fn env(pairs: &[(&str, &str)]) -> EnvOverlay {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn literal_is_returned_as_is() {
    assert_eq!(
        resolve_config_value("sk-plain-123", None).as_deref(),
        Some("sk-plain-123")
    );
    assert_eq!(resolve_config_value("", None).as_deref(), Some(""));
}

#[test]
fn dollar_var_and_braced_var() {
    let e = env(&[("PIRS_T_KEY", "abc"), ("PIRS_T_B", "x")]);
    assert_eq!(
        resolve_config_value("$PIRS_T_KEY", Some(&e)).as_deref(),
        Some("abc")
    );
    assert_eq!(
        resolve_config_value("${PIRS_T_KEY}", Some(&e)).as_deref(),
        Some("abc")
    );
    assert_eq!(
        resolve_config_value("Bearer $PIRS_T_KEY-${PIRS_T_B}z", Some(&e)).as_deref(),
        Some("Bearer abc-xz")
    );
    // `$NAME` takes the longest name: `$PIRS_T_Bz` is another variable.
    assert_eq!(resolve_config_value("$PIRS_T_Bz", Some(&e)), None);
}

#[test]
fn unset_or_empty_variable_makes_the_value_unresolved() {
    let e = env(&[("PIRS_T_EMPTY", "")]);
    assert_eq!(resolve_config_value("$PIRS_T_UNSET_1", Some(&e)), None);
    assert_eq!(resolve_config_value("a${PIRS_T_EMPTY}b", Some(&e)), None);
}

#[test]
fn escapes_and_literal_dollars() {
    assert_eq!(resolve_config_value("a$$b", None).as_deref(), Some("a$b"));
    assert_eq!(resolve_config_value("$!cmd", None).as_deref(), Some("!cmd"));
    assert_eq!(
        resolve_config_value("cost$", None).as_deref(),
        Some("cost$")
    );
    assert_eq!(resolve_config_value("$1x", None).as_deref(), Some("$1x"));
    assert_eq!(
        resolve_config_value("${open", None).as_deref(),
        Some("${open")
    );
    assert_eq!(
        resolve_config_value("${bad-name}", None).as_deref(),
        Some("${bad-name}")
    );
}

#[test]
fn env_var_names() {
    assert_eq!(config_value_env_var_names("$A-${B}-$A"), vec!["A", "B"]);
    assert_eq!(
        config_value_env_var_name("${ONLY}").as_deref(),
        Some("ONLY")
    );
    assert_eq!(config_value_env_var_name("x$ONLY"), None);
    assert!(config_value_env_var_names("!echo $A").is_empty());
    assert!(is_command_config_value("!echo"));
    assert!(!is_command_config_value("$!echo"));
    let e = env(&[("PIRS_T_SET", "1")]);
    assert_eq!(
        missing_config_value_env_var_names("$PIRS_T_SET$PIRS_T_UNSET_2", Some(&e)),
        vec!["PIRS_T_UNSET_2"]
    );
    assert!(is_config_value_configured("literal", None));
    assert!(!is_config_value_configured("$PIRS_T_UNSET_3", None));
}

#[test]
fn command_output_is_trimmed_and_failures_are_unresolved() {
    assert_eq!(
        resolve_config_value_uncached("!printf '  tok \\n'", None).as_deref(),
        Some("tok")
    );
    assert_eq!(resolve_config_value_uncached("!exit 3", None), None);
    assert_eq!(resolve_config_value_uncached("!true", None), None);
    assert_eq!(
        resolve_config_value_uncached("!echo oops; exit 1", None),
        None
    );
}

#[test]
fn cached_commands_run_once_uncached_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("count");
    let cmd = format!("!echo x >> {0}; wc -l < {0}", counter.display());
    assert_eq!(resolve_config_value(&cmd, None).as_deref(), Some("1"));
    assert_eq!(resolve_config_value(&cmd, None).as_deref(), Some("1"));
    assert_eq!(
        resolve_config_value_uncached(&cmd, None).as_deref(),
        Some("2")
    );
    assert_eq!(
        resolve_config_value_uncached(&cmd, None).as_deref(),
        Some("3")
    );
    clear_config_value_cache();
    assert_eq!(resolve_config_value(&cmd, None).as_deref(), Some("4"));
}

#[test]
fn or_throw_messages() {
    assert_eq!(
        resolve_config_value_or_throw("!exit 1", "API key for provider \"p\"", None)
            .map_err(|e| e.to_string()),
        Err("Failed to resolve API key for provider \"p\" from shell command: exit 1".into())
    );
    assert_eq!(
        resolve_config_value_or_throw("$PIRS_T_UNSET_4", "X", None).map_err(|e| e.to_string()),
        Err("Failed to resolve X from environment variable: PIRS_T_UNSET_4".into())
    );
    assert_eq!(
        resolve_config_value_or_throw("$PIRS_T_UNSET_5:$PIRS_T_UNSET_6", "X", None)
            .map_err(|e| e.to_string()),
        Err(
            "Failed to resolve X from environment variables: PIRS_T_UNSET_5, PIRS_T_UNSET_6".into()
        )
    );
    assert_eq!(
        resolve_config_value_or_throw("ok", "X", None).map_err(|e| e.to_string()),
        Ok("ok".into())
    );
}

#[test]
fn headers() {
    let e = env(&[("PIRS_T_H", "v")]);
    let h = vec![
        ("x-a".to_owned(), "$PIRS_T_H".to_owned()),
        ("x-b".to_owned(), "$PIRS_T_UNSET_7".to_owned()),
    ];
    assert_eq!(
        resolve_headers(&h, Some(&e)),
        Some(vec![("x-a".to_owned(), "v".to_owned())])
    );
    assert_eq!(
        resolve_headers_or_throw(&h, "provider \"p\"", Some(&e)).map_err(|e| e.to_string()),
        Err("Failed to resolve provider \"p\" header \"x-b\" from environment variable: PIRS_T_UNSET_7".into())
    );
    assert_eq!(resolve_headers(&[], None), None);
}
