//! The built-in tools on edge-case inputs, through the `pi` binary in json mode against the
//! replay server: byte-order marks, regex features ripgrep refuses, JavaScript number and
//! offset semantics, and Node's wording of write errors, each as pi 0.85.0 behaves.

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
