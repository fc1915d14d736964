use super::*;

#[test]
fn sanitize_strips_ansi_controls_and_cr() {
    assert_eq!(
        sanitize("\x1b[31mred\x1b[0m\r\n\x01ok\tx\x07\n"),
        "red\nok\tx\n"
    );
    assert_eq!(sanitize("\x1b]0;title\x07after"), "after");
    assert_eq!(sanitize("\x1b]8;;http://x\x1b\\link"), "link");
    assert_eq!(sanitize("a\u{fff9}b\u{fffb}c"), "abc");
    assert_eq!(sanitize("keep é 😀 \u{7f}"), "keep é 😀 \u{7f}");
}

#[test]
fn incomplete_escape_is_held_for_the_next_chunk() {
    assert_eq!(split_incomplete_escape("abc\x1b["), ("abc", "\x1b["));
    assert_eq!(split_incomplete_escape("abc\x1b[3"), ("abc", "\x1b[3"));
    assert_eq!(split_incomplete_escape("abc\x1b"), ("abc", "\x1b"));
    assert_eq!(split_incomplete_escape("x\x1b]0;ti"), ("x", "\x1b]0;ti"));
    assert_eq!(split_incomplete_escape("abc\x1b[31m"), ("abc\x1b[31m", ""));
    assert_eq!(split_incomplete_escape("plain"), ("plain", ""));
}

#[test]
fn sink_joins_escapes_and_utf8_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = SanitizedSink::new(dir.path().to_path_buf());
    let mut seen = Vec::new();
    for chunk in [&b"re\x1b[3"[..], b"1mred \xc3", b"\xa9\r\n"] {
        if let Some(text) = sink.push(chunk) {
            seen.push(text);
        }
    }
    if let Some(text) = sink.flush() {
        seen.push(text);
    }
    assert_eq!(seen.concat(), "rered é\n");
    let result = sink.into_result(Some(0), false);
    assert_eq!(result.output, "rered é\n");
    assert!(!result.truncated);
    assert_eq!(result.full_output_path, None);
}

#[test]
fn bash_result_serializes_like_pi() {
    let r = BashResult {
        output: "x".into(),
        exit_code: None,
        cancelled: true,
        truncated: false,
        full_output_path: None,
    };
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::json!({"output": "x", "cancelled": true, "truncated": false})
    );
}

#[tokio::test]
async fn user_bash_sanitizes_and_reports_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let opts = UserBashOptions {
        temp_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let mut chunks = Vec::new();
    let result = execute_bash(
        r"printf '\033[1mbold\033[0m\r\n'; echo err >&2; exit 4",
        dir.path(),
        &opts,
        &CancellationToken::new(),
        |c| chunks.push(c.to_owned()),
    )
    .await
    .unwrap();
    assert_eq!(result.output, "bold\nerr\n");
    assert_eq!(chunks.concat(), "bold\nerr\n");
    assert_eq!(result.exit_code, Some(4));
    assert!(!result.cancelled && !result.truncated);
}

#[tokio::test]
async fn user_bash_has_markers_but_no_session_vars_added() {
    let dir = tempfile::tempdir().unwrap();
    let opts = UserBashOptions {
        command_prefix: Some("X=prefixed".into()),
        agent_dir: Some(dir.path().join("agent")),
        ..Default::default()
    };
    let result = execute_bash(
        r#"echo "$X|$AI_AGENT|$PI_CODING_AGENT"; echo "$PATH""#,
        dir.path(),
        &opts,
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let mut lines = result.output.lines();
    assert_eq!(lines.next(), Some("prefixed|pi|true"));
    let bin = dir.path().join("agent/bin");
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with(&format!("{}:", bin.display()))
    );
}

#[tokio::test]
async fn user_bash_cancel_keeps_output() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let result = execute_bash(
        "echo started; sleep 30",
        dir.path(),
        &UserBashOptions::default(),
        &cancel,
        move |_| trigger.cancel(),
    )
    .await
    .unwrap();
    assert_eq!(result.output, "started\n");
    assert!(result.cancelled);
    assert_eq!(result.exit_code, None);
}

#[tokio::test]
async fn user_bash_errors_and_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = execute_bash(
        "echo x",
        &gone,
        &UserBashOptions::default(),
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.0,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );

    let opts = UserBashOptions {
        temp_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let result = execute_bash(
        "seq 1 30000",
        dir.path(),
        &opts,
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    assert!(result.truncated);
    assert_eq!(result.exit_code, Some(0));
    let expected: Vec<String> = (28001..=30000).map(|i| i.to_string()).collect();
    assert_eq!(result.output, expected.join("\n"));
    let path = result.full_output_path.unwrap();
    let full: String = (1..=30000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(path).unwrap(), full);
}
