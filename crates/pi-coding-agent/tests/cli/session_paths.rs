//! Session paths and flags on the command line, through the `pi` binary: `--session-dir`,
//! `--session`, `--fork`, `--name`, `--export` on unusual paths (empty, a file, a directory,
//! not creatable), old compaction indices, and where help goes; each answer is pi 0.85.0's.

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};

use crate::support::anthropic_sse::anthropic_text;
use crate::support::binary_rig::{Rig, print_args};

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
