//! Findings of the new-user try-out, side by side with the TypeScript pi 0.85.0 on the same
//! replay server, the same agent dir and the same cwd: each case drives the `pi` binary
//! where the user (or the model) sees the behaviour, with the reference's observed value.

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};

use crate::support::anthropic_sse::{anthropic_text, anthropic_tools};
use crate::support::binary_rig::Rig;

/// The arguments of a json-mode run of `replay-model` with the given tools and no session.
fn json_args(tools: &str) -> Vec<String> {
    [
        "-p",
        "--mode",
        "json",
        "--no-session",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--tools",
        tools,
        "go",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Runs one scripted turn calling `calls` (`(name, input)` each) in a rig whose work dir
/// `setup` filled; returns the text of each `tool_execution_end` result, in call order.
async fn tool_texts(tools: &str, calls: &[(&str, Value)], setup: impl FnOnce(&Rig)) -> Vec<String> {
    let ids: Vec<String> = (0..calls.len()).map(|i| format!("toolu_{i}")).collect();
    let blocks: Vec<(&str, &str, Value)> = calls
        .iter()
        .zip(&ids)
        .map(|((name, input), id)| (id.as_str(), *name, input.clone()))
        .collect();
    let script: Vec<Reply> = vec![anthropic_tools(&blocks), anthropic_text("done")];
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    setup(&rig);
    let args = json_args(tools);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&args).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ends: Vec<Value> = run
        .records()
        .into_iter()
        .filter(|r| r["type"] == "tool_execution_end")
        .collect();
    ids.iter()
        .map(|id| {
            let end = ends
                .iter()
                .find(|r| r["toolCallId"] == id.as_str())
                .unwrap_or_else(|| panic!("no result for {id}: {}", run.stdout));
            end["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn grep_reads_bom_files_as_rg_does() {
    // rg sniffs byte-order marks: a UTF-8 BOM is not part of the first line, and UTF-16
    // files with a BOM are searched as text. Observed with pi 0.85.0 (ripgrep 13).
    let utf16 = |text: &str, big_endian: bool| -> Vec<u8> {
        let units = "\u{feff}".encode_utf16().chain(text.encode_utf16());
        units
            .flat_map(|u| {
                if big_endian {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect()
    };
    let texts = tool_texts(
        "grep",
        &[
            ("grep", json!({"pattern": "^alpha", "path": "bom.txt"})),
            ("grep", json!({"pattern": "alpha", "path": "u16.txt"})),
            ("grep", json!({"pattern": "^alpha", "path": "dir"})),
            (
                "grep",
                json!({"pattern": "alpha", "path": "bom.txt", "context": 1}),
            ),
        ],
        |rig| {
            let work = rig.path("work");
            std::fs::write(work.join("bom.txt"), b"\xef\xbb\xbfalpha\nbeta\n").unwrap();
            std::fs::write(work.join("u16.txt"), utf16("alpha16\nbeta16\n", false)).unwrap();
            std::fs::create_dir(work.join("dir")).unwrap();
            std::fs::write(work.join("dir/le.txt"), utf16("alpha le\n", false)).unwrap();
            std::fs::write(work.join("dir/be.txt"), utf16("alpha be\n", true)).unwrap();
            std::fs::write(work.join("dir/u8.txt"), b"\xef\xbb\xbfalpha u8\n").unwrap();
        },
    )
    .await;
    assert_eq!(texts[0], "bom.txt:1: alpha");
    assert_eq!(texts[1], "u16.txt:1: alpha16");
    // rg's order across files is its threads'; the lines are what count.
    let mut lines: Vec<&str> = texts[2].lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "be.txt:1: alpha be",
            "le.txt:1: alpha le",
            "u8.txt:1: alpha u8"
        ]
    );
    // Context lines come from pi reading the file itself (BOM kept), as in the reference.
    assert_eq!(texts[3], "bom.txt:1: \u{feff}alpha\nbom.txt-2- beta");
}

/// The arguments of a print-mode run of `replay-model`, with `extra` before the prompt.
fn print_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-p",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
    ];
    args.extend_from_slice(extra);
    args.push("hi");
    args
}

/// Every `.jsonl` file under `dir`, recursively.
fn jsonl_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(jsonl_files(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn an_empty_session_dir_flag_means_the_default_directory() {
    // pi 0.85.0: `--session-dir ""` is no directory at all (`parsed.sessionDir ? … : undefined`),
    // so the session goes to `<agent>/sessions/--<cwd>--/`, not into the working directory.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let run = rig.run(&print_args(&["--session-dir", ""])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "hello\n");
    assert!(jsonl_files(&rig.path("work")).is_empty());
    let stored = jsonl_files(&rig.path("agent/sessions"));
    assert_eq!(stored.len(), 1, "{stored:?}");
    let dir_name = stored[0].parent().unwrap().file_name().unwrap();
    assert!(dir_name.to_string_lossy().starts_with("--"), "{dir_name:?}");
}

#[tokio::test]
async fn a_session_dir_that_is_a_file_fails_as_node_does() {
    // pi 0.85.0 skips creating an existing path and fails on the first write of the session:
    // `ENOTDIR: not a directory, open '<dir>/<file>.jsonl'` on stderr, exit status 1.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let file = rig.path("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let file = file.display().to_string();
    let run = rig.run(&print_args(&["--session-dir", &file])).await;
    assert_eq!(run.code, 1, "{run:?}");
    let prefix = format!("ENOTDIR: not a directory, open '{file}/");
    assert!(run.stderr.starts_with(&prefix), "{:?}", run.stderr);
    assert!(run.stderr.ends_with(".jsonl'\n"), "{:?}", run.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[tokio::test]
async fn exporting_a_directory_reports_node_s_read_error() {
    // pi 0.85.0: `pi --export <dir>` → `Error: EISDIR: illegal operation on a directory, read`.
    let rig = Rig::new("http://127.0.0.1:9", &json!({}));
    let dir = rig.path("work").display().to_string();
    let run = rig.run(&["--export", &dir]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "Error: EISDIR: illegal operation on a directory, read\n"
    );
    assert_eq!(run.stdout, "");
}

#[tokio::test]
async fn a_directory_given_to_session_reports_node_s_read_error() {
    // pi 0.85.0 reads the session file with readFileSync: on a directory that fails in `read`.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let dir = rig.path("work").display().to_string();
    let run = rig.run(&print_args(&["--session", &dir])).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "Error: EISDIR: illegal operation on a directory, read\n"
    );
    assert_eq!(run.stdout, "");
    assert!(jsonl_files(&rig.path("agent")).is_empty());
}

#[tokio::test]
async fn big_integers_in_tool_arguments_are_written_as_javascript_numbers() {
    // pi parses the model's arguments into JavaScript numbers: past 2^53 they become the
    // nearest double, and that is what the json-mode lines and the session file hold.
    let input =
        json!({"command": "echo hi", "x": 12345678901234567890u64, "y": 9007199254740993u64});
    let script = vec![
        anthropic_tools(&[("toolu_0", "bash", input)]),
        anthropic_text("done"),
    ];
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let run = rig
        .run(&[
            "-p",
            "--mode",
            "json",
            "--session-dir",
            &sessions,
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            "go",
        ])
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected =
        r#""arguments":{"command":"echo hi","x":12345678901234567000,"y":9007199254740992}"#;
    let end = run
        .stdout
        .lines()
        .find(|l| l.starts_with(r#"{"type":"message_end""#) && l.contains("toolCall"))
        .unwrap();
    assert!(end.contains(expected), "{end}");
    let file = std::fs::read_to_string(&rig.session_files()[0]).unwrap();
    assert!(file.contains(expected), "{file}");
}

#[tokio::test]
async fn rpc_export_html_answers_the_default_path_as_pi_does() {
    // pi 0.85.0 `exportSessionToHtml` writes `pi-session-<file stem>.html` relative to the
    // working directory and answers that relative path; a given path is answered as given.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let first = rig.run(&print_args(&["--session-dir", &sessions])).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let file = rig.session_files()[0].clone();
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let file = file.display().to_string();
    let input = "{\"type\":\"export_html\",\"id\":\"a\"}\n\
                 {\"type\":\"export_html\",\"outputPath\":\"out/x.html\",\"id\":\"b\"}\n";
    std::fs::create_dir(rig.path("work/out")).unwrap();
    let run = rig
        .run_with_input(
            &[
                "--mode",
                "rpc",
                "--session",
                &file,
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
            ],
            Some(input),
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let responses: Vec<Value> = run
        .records()
        .into_iter()
        .filter(|r| r["type"] == "response")
        .collect();
    let default_name = format!("pi-session-{stem}.html");
    assert_eq!(
        responses[0],
        json!({"id": "a", "type": "response", "command": "export_html", "success": true,
               "data": {"path": default_name}})
    );
    assert_eq!(responses[1]["data"], json!({"path": "out/x.html"}));
    assert!(rig.path("work").join(&default_name).is_file());
    assert!(rig.path("work/out/x.html").is_file());
}

#[tokio::test]
async fn a_session_dir_that_cannot_be_made_stops_the_run_before_any_request() {
    // pi 0.85.0 makes a missing session directory when the session manager is built, before
    // the model is called; when that fails it crashes with Node's uncaught
    // `Error: ENOTDIR: not a directory, mkdir '<dir>'` and a stack trace (exit 1). pi-rs
    // stops at the same point with the same first line and no stack trace; it used to call
    // the model first and lose the answer when the session file could not be written.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let file = rig.path("plain-file");
    std::fs::write(&file, "x").unwrap();
    let dir = file.join("sessions").display().to_string();
    for mode in ["text", "json"] {
        let run = rig
            .run(&print_args(&["--mode", mode, "--session-dir", &dir]))
            .await;
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(
            run.stderr,
            format!("Error: ENOTDIR: not a directory, mkdir '{dir}'\n")
        );
        assert_eq!(run.stdout, "");
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_v1_compaction_index_counts_the_header_as_pi_does() {
    // pi 0.85.0 `migrateV1ToV2` maps `firstKeptEntryIndex` into the file's entries with the
    // session header at index 0, so index 1 keeps the first message after the summary.
    let (_, server) = ReplayServer::start(vec![anthropic_text("second answer")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let cwd = rig.path("work").display().to_string();
    let header = json!({"type": "session", "id": "abc-v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd});
    let lines = [
        header,
        json!({"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "hello v1", "timestamp": 1}}),
        json!({"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
                           "api": "anthropic-messages", "provider": "replay-anthropic",
                           "model": "replay-model",
                           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                     "totalTokens": 2, "cost": {"input": 0, "output": 0,
                                     "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                           "stopReason": "stop", "timestamp": 2}}),
        json!({"type": "compaction", "timestamp": "2025-01-01T00:00:03.000Z", "summary": "sum",
               "firstKeptEntryIndex": 1, "tokensBefore": 5}),
    ];
    let file = rig.path("v1.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let file = file.display().to_string();
    let run = rig.run(&print_args(&["--session", &file])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "second answer\n");
    let body = server.requests()[0].body_json().unwrap();
    let sent: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["role"], m["content"]]))
        .collect();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(sent[1], json!(["user", "hello v1"]));
    assert_eq!(sent[2][0], "assistant");
}

#[tokio::test]
async fn grep_suggests_pcre2_for_look_around_and_backreferences_as_rg_does() {
    // ripgrep (built with PCRE2, as its releases are) appends a hint to these two parse
    // errors; pi 0.85.0 passes rg's stderr through as the tool error.
    let hint = "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around.";
    let texts = tool_texts(
        "grep",
        &[
            ("grep", json!({"pattern": "a(?=b)"})),
            ("grep", json!({"pattern": "(a)\\1"})),
            ("grep", json!({"pattern": "("})),
        ],
        |rig| std::fs::write(rig.path("work/a.txt"), "ab\n").unwrap(),
    )
    .await;
    assert_eq!(
        texts[0],
        format!(
            "regex parse error:\n    a(?=b)\n     ^^^\nerror: look-around, including look-ahead and look-behind, is not supported{hint}"
        )
    );
    assert_eq!(
        texts[1],
        format!(
            "regex parse error:\n    (a)\\1\n       ^^\nerror: backreferences are not supported{hint}"
        )
    );
    assert!(!texts[2].contains("PCRE2"), "{}", texts[2]);
}

#[tokio::test]
async fn help_and_list_models_go_to_stderr_once_a_mode_is_asked_for() {
    // pi 0.85.0 takes stdout over (everything written to it goes to stderr) in every
    // non-interactive mode; only a bare `--help` / `--list-models` (no `-p`, no `--mode`)
    // is exempt. So `pi --mode json --list-models` keeps stdout free of non-JSON text.
    let rig = Rig::new("http://127.0.0.1:9", &json!({}));
    for flag in ["--help", "--list-models"] {
        let plain = rig.run(&[flag]).await;
        assert_eq!(plain.code, 0, "{plain:?}");
        assert!(!plain.stdout.is_empty(), "{plain:?}");
        for extra in [
            &["-p"][..],
            &["--mode", "json"],
            &["--mode", "rpc"],
            &["--mode", "text"],
        ] {
            let mut args = extra.to_vec();
            args.push(flag);
            let run = rig.run(&args).await;
            assert_eq!(run.code, 0, "{args:?}: {run:?}");
            assert_eq!(run.stdout, "", "{args:?}");
            assert_eq!(
                run.stderr,
                format!("{}{}", plain.stderr, plain.stdout),
                "{args:?}"
            );
        }
    }
}

#[tokio::test]
async fn read_takes_fractional_and_negative_offsets_as_javascript_does() {
    // pi 0.85.0 does its offset/limit arithmetic on JavaScript numbers: `Array.slice` cuts
    // fractions and counts a negative end from the back, and the notices print the raw sums.
    let texts = tool_texts(
        "read",
        &[
            (
                "read",
                json!({"path": "f.txt", "offset": 2.5, "limit": 1.5}),
            ),
            ("read", json!({"path": "f.txt", "limit": -7})),
            ("read", json!({"path": "f.txt", "offset": 3, "limit": 2})),
        ],
        |rig| {
            let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
            std::fs::write(rig.path("work/f.txt"), text).unwrap();
        },
    )
    .await;
    assert_eq!(
        texts[0],
        "l2\nl3\n\n[8 more lines in file. Use offset=4 to continue.]"
    );
    assert_eq!(
        texts[1],
        "l1\nl2\nl3\nl4\n\n[18 more lines in file. Use offset=-6 to continue.]"
    );
    assert_eq!(
        texts[2],
        "l3\nl4\n\n[7 more lines in file. Use offset=5 to continue.]"
    );
}

#[tokio::test]
async fn a_failed_write_after_a_good_open_is_node_s_write_error() {
    // pi 0.85.0 writes with fs.writeFile: the open succeeds on /dev/full and the write fails,
    // so the message names the `write` call, without a path (as Node words it).
    let texts = tool_texts(
        "write",
        &[("write", json!({"path": "/dev/full", "content": "x"}))],
        |_| {},
    )
    .await;
    assert_eq!(texts[0], "ENOSPC: no space left on device, write");
}

#[tokio::test]
async fn the_name_flag_is_the_first_entry_of_a_new_session() {
    // pi 0.85.0 appends `--name`'s session_info as soon as the session manager exists, before
    // the session is built (whose model_change and thinking_level_change follow).
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let run = rig
        .run(&print_args(&[
            "--session-dir",
            &sessions,
            "--name",
            "  my run  ",
        ]))
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = crate::support::binary_rig::file_records(&rig.session_files()[0]);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "session_info",
            "model_change",
            "thinking_level_change",
            "message",
            "message"
        ]
    );
    assert_eq!(records[1]["name"], "my run");
    assert_eq!(records[1]["parentId"], Value::Null);
    assert_eq!(records[2]["parentId"], records[1]["id"]);
}

#[tokio::test]
async fn session_and_fork_paths_resolve_as_node_s_path_resolve() {
    // pi 0.85.0 resolves `--session`/`--fork` paths with path.resolve (`.`/`..` and a trailing
    // slash folded) and reads a directory given to `--fork` with readFileSync (EISDIR).
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let run = rig
        .run_with_input(
            &[
                "--mode",
                "rpc",
                "--session",
                "../x/./y/../s.jsonl",
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
            ],
            Some("{\"type\":\"get_state\",\"id\":\"g\"}\n"),
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let state = run.records().into_iter().find(|r| r["id"] == "g").unwrap();
    let expected = rig.path("x/s.jsonl").display().to_string();
    assert_eq!(state["data"]["sessionFile"], expected.as_str());

    let dir = rig.path("work").display().to_string();
    let fork = rig.run(&print_args(&["--fork", &dir])).await;
    assert_eq!(fork.code, 1, "{fork:?}");
    assert_eq!(
        fork.stderr,
        "Error: EISDIR: illegal operation on a directory, read\n"
    );
}

#[tokio::test]
async fn rpc_export_html_into_a_missing_directory_is_node_s_open_error() {
    // pi 0.85.0 writes the page with writeFileSync(outputPath): the error names the path as
    // given.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let first = rig.run(&print_args(&["--session-dir", &sessions])).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let file = rig.session_files()[0].display().to_string();
    let input = "{\"type\":\"export_html\",\"outputPath\":\"./a/../o.html\",\"id\":\"e\"}\n";
    let run = rig
        .run_with_input(
            &[
                "--mode",
                "rpc",
                "--session",
                &file,
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
            ],
            Some(input),
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let response = run.records().into_iter().find(|r| r["id"] == "e").unwrap();
    assert_eq!(
        response,
        json!({"id": "e", "type": "response", "command": "export_html", "success": false,
               "error": "ENOENT: no such file or directory, open './a/../o.html'"})
    );
}
