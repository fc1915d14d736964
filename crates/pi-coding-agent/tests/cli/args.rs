//! The `pi` command line through the real binary: parsing rules, error texts and exit codes
//! as pi 0.85.0 prints them (each expected text was checked against the installed reference).

use crate::support;

use support::pi_bin::{Output, Sandbox, write};

/// What the user reads when a `.ts`/`.js` extension cannot load for want of the Node host.
const NODE_HOST_MISSING: &str = "TypeScript and JavaScript extensions run in pi-rs's Node extension host, which needs Node >= 22.19 and @earendil-works/pi-coding-agent with jiti installed in the host's node_modules (see docs/extensions.md)";

const SESSION_PICKER: &str = "Error: the session picker (--resume) needs the interactive mode \
                              (a terminal); use --continue or --session <path|id> instead\n";

fn run(args: &[&str]) -> Output {
    Sandbox::new().run(args)
}

/// Exit 1 with exactly `stderr` and nothing on stdout.
fn assert_fails(out: &Output, stderr: &str) {
    assert_eq!(out.stderr, stderr, "{out:?}");
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
}

/// The command line was accepted: no start-up error, the run went on to a mode.
fn assert_accepted(out: &Output) {
    for bad in [
        "Unknown option",
        "requires",
        "not supported",
        "File not found",
        "Hint:",
    ] {
        assert!(!out.stderr.contains(bad), "{out:?}");
    }
}

#[test]
fn bundled_short_flags_are_unknown_options() {
    assert_fails(&run(&["-pc", "hi"]), "Error: Unknown option: -pc\n");
    assert_fails(&run(&["-p", "hi", "-x"]), "Error: Unknown option: -x\n");
}

#[test]
fn unknown_long_options_are_listed_together() {
    assert_fails(&run(&["--foo", "hi"]), "Error: Unknown option: --foo\n");
    assert_fails(
        &run(&["--foo", "--bar", "-p", "hi"]),
        "Error: Unknown options: --foo, --bar\n",
    );
    assert_fails(
        &run(&["--provider=x", "-p", "hi"]),
        "Error: Unknown option: --provider\n",
    );
    // A value option at the very end has no value and becomes an unknown option.
    assert_fails(
        &run(&["-p", "hi", "--model"]),
        "Error: Unknown option: --model\n",
    );
}

#[test]
fn short_option_errors_and_missing_values_win_over_unknown_long_options() {
    assert_fails(
        &run(&["--foo", "-x", "-p", "hi"]),
        "Error: Unknown option: -x\n",
    );
    assert_fails(
        &run(&["--foo", "--name"]),
        "Error: --name requires a value\n",
    );
    assert_fails(&run(&["-n"]), "Error: --name requires a value\n");
    assert_fails(
        &run(&["-x", "--name"]),
        "Error: Unknown option: -x\nError: --name requires a value\n",
    );
}

#[test]
fn a_bad_thinking_level_only_warns() {
    let out = run(&["--thinking", "bogus", "--version"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, format!("{}\n", pi_coding_agent::VERSION));
    assert_eq!(
        out.stderr,
        "Warning: Invalid thinking level \"bogus\". Valid values: off, minimal, low, medium, high, \
         xhigh, max\n"
    );
    let out = run(&["--thinking", "bogus", "-x"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("Warning: Invalid thinking level \"bogus\".")
    );
    assert!(out.stderr.ends_with("\nError: Unknown option: -x\n"));
}

#[test]
fn version_and_help_come_before_unknown_long_options() {
    for flag in ["--version", "-v"] {
        let out = run(&["--foo", flag]);
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, format!("{}\n", pi_coding_agent::VERSION).as_str())
        );
        assert_eq!(out.stderr, "");
    }
    let out = run(&["--help", "--foo"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(
        out.stdout
            .contains("Usage:\n  pi [options] [--] [@files...] [messages...]")
    );
}

/// Every option of pi 0.85.0's `--help`, in both spellings, appears in ours.
#[test]
fn help_lists_every_option() {
    let out = run(&["-h"]);
    assert_eq!(out.code, 0);
    for opt in [
        "--provider",
        "--model",
        "--api-key",
        "--system-prompt",
        "--append-system-prompt",
        "--mode",
        "--print, -p",
        "--continue, -c",
        "--resume, -r",
        "--session ",
        "--session-id",
        "--fork",
        "--session-dir",
        "--no-session",
        "--name, -n",
        "--models",
        "--no-tools, -nt",
        "--no-builtin-tools, -nbt",
        "--tools, -t",
        "--exclude-tools, -xt",
        "--thinking",
        "--extension, -e",
        "--no-extensions, -ne",
        "--skill",
        "--no-skills, -ns",
        "--prompt-template",
        "--no-prompt-templates, -np",
        "--theme",
        "--use-theme",
        "--no-themes",
        "--no-context-files, -nc",
        "--export",
        "--list-models",
        "--verbose",
        "--tui-mode",
        "--approve, -a",
        "--no-approve, -na",
        "--offline",
        "--help, -h",
        "--version, -v",
        "\n  --  ",
    ] {
        assert!(out.stdout.contains(opt), "help lacks {opt:?}");
    }
}

#[test]
fn double_dash_ends_options() {
    let out = run(&["-p", "hi", "--", "--foo", "-x", "--help"]);
    assert_eq!(out.code, 1, "no model is configured: {out:?}");
    assert_accepted(&out);
    assert_eq!(out.stdout, "");
}

#[test]
fn every_option_with_a_value_is_accepted() {
    let sb = Sandbox::new();
    write(&sb.work().join("sys.md"), "system");
    let out = sb.run(&[
        "-p",
        "--provider",
        "p",
        "--model",
        "m",
        "--api-key",
        "k",
        "--system-prompt",
        "sys.md",
        "--append-system-prompt",
        "a",
        "--mode",
        "text",
        "--no-session",
        "--session-dir",
        "s",
        "-n",
        "name",
        "--models",
        "a,b",
        "-nt",
        "-nbt",
        "-t",
        "read",
        "-xt",
        "bash",
        "--thinking",
        "high",
        "-ne",
        "--skill",
        "sk",
        "-ns",
        "--prompt-template",
        "pt",
        "-np",
        "--theme",
        "t",
        "--use-theme",
        "dark",
        "--no-themes",
        "--tui-mode",
        "regular",
        "-nc",
        "--verbose",
        "-a",
        "-na",
        "--offline",
        "-c",
        "hello",
    ]);
    assert_accepted(&out);
    assert_eq!(out.code, 1, "{out:?}");
}

#[test]
fn resume_needs_the_session_picker() {
    assert_fails(&run(&["-r"]), SESSION_PICKER);
    assert_fails(&run(&["--resume", "-p", "hi"]), SESSION_PICKER);
}

#[test]
fn extensions_fail_with_the_reference_shape() {
    let sb = Sandbox::new();
    let abs = sb.work().join("ext.ts");
    let expected = format!(
        "Error: Failed to load extension \"{}\": {NODE_HOST_MISSING} (looked in {})\n\
         Hint: Start without extensions using \"pi -ne\".\n",
        abs.display(),
        sb.agent().join("extension-host/node_modules").display()
    );
    assert_fails(&sb.run(&["-e", "./ext.ts", "-p", "hi"]), &expected);
    assert_fails(
        &sb.run(&["-ne", "--extension", "sub/../ext.ts", "-p", "hi"]),
        &expected,
    );
    // Unknown options come first, then the extension errors, then the hint.
    let both = sb.run(&["--foo", "-e", "ext.ts", "-p", "hi"]);
    assert_fails(&both, &format!("Error: Unknown option: --foo\n{expected}"));
    // A manifest that does not exist, or is not one.
    std::fs::write(sb.work().join("bad.json"), "{}").unwrap();
    let missing = sb.run(&["-e", "gone.json", "-e", "bad.json", "-p", "hi"]);
    assert_fails(
        &missing,
        &format!(
            "Error: Failed to load extension \"{}\": No such file or directory (os error 2)\n\
             Error: Failed to load extension \"{}\": invalid manifest: missing field `command` at line 1 column 2\n\
             Hint: Start without extensions using \"pi -ne\".\n",
            sb.work().join("gone.json").display(),
            sb.work().join("bad.json").display()
        ),
    );
}

#[test]
fn subcommands_check_their_arguments_as_pi_does() {
    assert_fails(
        &run(&["install", "a", "b"]),
        "Unexpected argument b.\nUsage: pi install <source> [-l] [--approve|--no-approve]\n",
    );
    assert_fails(
        &run(&["list", "--x"]),
        "Unknown option --x for \"list\".\nUse \"pi --help\" or \"pi list [--approve|--no-approve]\".\n",
    );
    // `config` is pi's resource screen; its argument errors are pi's.
    assert_fails(
        &run(&["config", "x"]),
        "Unexpected argument x.\nUsage: pi config [-l] [--approve|--no-approve]\n",
    );
    assert_fails(
        &run(&["config", "--nope"]),
        "Unknown option --nope for \"config\".\nUse \"pi --help\" or \"pi config [-l] [--approve|--no-approve]\".\n",
    );
    // Only as the first argument: after -p it is the prompt.
    assert_accepted(&run(&["-p", "list"]));
}

#[test]
fn missing_files_fail_before_unknown_options() {
    let sb = Sandbox::new();
    let abs = sb.work().join("missing.txt");
    let expected = format!("Error: File not found: {}\n", abs.display());
    assert_fails(&sb.run(&["-p", "--foo", "@missing.txt"]), &expected);
    assert_fails(&sb.run(&["@missing.txt", "hi"]), &expected);
    write(&sb.work().join("there.txt"), "x");
    assert_accepted(&sb.run(&["@there.txt", "hi"]));
}

#[test]
fn file_arguments_are_refused_in_rpc_mode() {
    assert_fails(
        &run(&["--mode", "rpc", "@f.txt"]),
        "Error: @file arguments are not supported in RPC mode\n",
    );
}

#[test]
fn session_flag_conflicts() {
    assert_fails(
        &run(&["--fork", "x", "--session", "y", "-c", "-r", "--no-session"]),
        "Error: --fork cannot be combined with --session, --continue, --resume, --no-session\n",
    );
    assert_fails(
        &run(&["--session-id", "abc", "-c"]),
        "Error: --session-id cannot be combined with --continue\n",
    );
    assert_fails(
        &run(&["--session-id", "-bad-", "-p", "hi"]),
        "Error: Session id must be non-empty, contain only alphanumeric characters, '-', '_', \
         and '.', and start and end with an alphanumeric character\n",
    );
    assert_fails(
        &run(&["--name", "  ", "-p", "hi"]),
        "Error: --name requires a non-empty value\n",
    );
}

#[test]
fn list_models_prints_the_reference_table() {
    let sb = Sandbox::new();
    write(
        &sb.agent().join("models.json"),
        r#"{"providers":{"local":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions",
        "apiKey":"x","models":[{"id":"m-small","contextWindow":8192,"maxTokens":2048},
        {"id":"big","reasoning":true,"input":["text","image"],"contextWindow":200000,
        "maxTokens":64000}]}}}"#,
    );
    let all = sb.run(&["--list-models"]);
    assert_eq!(
        (all.code, all.stdout.as_str(), all.stderr.as_str()),
        (
            0,
            "provider  model    context  max-out  thinking  images\n\
             local     big      200K     64K      yes       yes   \n\
             local     m-small  8.2K     2.0K     no        no    \n",
            ""
        )
    );
    let some = sb.run(&["--list-models", "big"]);
    assert_eq!(
        some.stdout,
        "provider  model  context  max-out  thinking  images\nlocal     big    200K     64K      yes       yes   \n"
    );
    let none = sb.run(&["--list-models", "zzz"]);
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (0, "No models matching \"zzz\"\n")
    );
    let empty = run(&["--list-models"]);
    assert_eq!(empty.code, 0);
    assert!(
        empty.stdout.starts_with("No models available. "),
        "{empty:?}"
    );
}

#[test]
fn export_writes_html_next_to_the_caller() {
    let sb = Sandbox::new();
    write(
        &sb.work().join("s1.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000\",\
         \"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n\
         {\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\
         \"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hello export\",\
         \"timestamp\":1}}\n",
    );
    let out = sb.run(&["--export", "s1.jsonl"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "Exported to: pi-session-s1.html\n", "")
    );
    let html = std::fs::read_to_string(sb.work().join("pi-session-s1.html")).unwrap();
    assert!(html.contains("hello export"));
    let named = sb.run(&["--export", "s1.jsonl", "named.html"]);
    assert_eq!(named.stdout, "Exported to: named.html\n");
    assert!(sb.work().join("named.html").is_file());
    assert_fails(
        &sb.run(&["--export", "s1.jsonl", "out/x.html"]),
        "Error: ENOENT: no such file or directory, open 'out/x.html'\n",
    );
    assert_fails(
        &sb.run(&["--export", "nope.jsonl"]),
        &format!(
            "Error: File not found: {}\n",
            sb.work().join("nope.jsonl").display()
        ),
    );
}

/// A sandbox whose `models.json` provider `x` (model `m`) takes its key from `!exit 3`.
fn failing_key_command() -> Sandbox {
    let sb = Sandbox::new();
    write(
        &sb.agent().join("models.json"),
        r#"{"providers":{"x":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions",
            "apiKey":"!exit 3","models":[{"id":"m"}]}}}"#,
    );
    sb
}

/// Observed on pi 0.85.0: a `models.json` key given as a failing shell command (`!cmd`) ends
/// the request with the resolver's text, not a generic missing-key error; nothing is sent.
#[test]
fn a_failing_api_key_command_names_the_command() {
    let sb = failing_key_command();
    assert_fails(
        &sb.run(&["-p", "--no-session", "--model", "x/m", "hi"]),
        "API key auth failed for provider x: Failed to resolve API key for provider \"x\" \
         from shell command: exit 3\n",
    );
}

/// The same failure in json mode, as pi 0.85.0 writes it (pi-ai's `lazyStream` setup error):
/// the request ends as a stream error, not a failed run — an assistant message with no
/// content and `errorMessage` before `timestamp`, then `turn_end` and an `agent_end` that
/// carries the user message too; exit 0.
#[test]
fn a_failing_api_key_command_in_json_mode_is_a_stream_error() {
    let sb = failing_key_command();
    let out = sb.run(&["--mode", "json", "--no-session", "--model", "x/m", "hi"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    let masked: Vec<String> = out
        .stdout
        .lines()
        .skip(1) // the session header
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            mask_timestamps(&mut v);
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    let error = "API key auth failed for provider x: Failed to resolve API key for provider \\\"x\\\" from shell command: exit 3";
    let usage = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
    let user = r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":0}"#;
    let assistant = format!(
        r#"{{"role":"assistant","content":[],"api":"openai-completions","provider":"x","model":"m","usage":{usage},"stopReason":"error","errorMessage":"{error}","timestamp":0}}"#
    );
    assert_eq!(
        masked,
        [
            r#"{"type":"agent_start"}"#.to_owned(),
            r#"{"type":"turn_start"}"#.to_owned(),
            format!(r#"{{"type":"message_start","message":{user}}}"#),
            format!(r#"{{"type":"message_end","message":{user}}}"#),
            format!(r#"{{"type":"message_start","message":{assistant}}}"#),
            format!(r#"{{"type":"message_end","message":{assistant}}}"#),
            format!(r#"{{"type":"turn_end","message":{assistant},"toolResults":[]}}"#),
            format!(r#"{{"type":"agent_end","messages":[{user},{assistant}],"willRetry":false}}"#),
            r#"{"type":"agent_settled"}"#.to_owned(),
        ]
    );
}

/// Sets every `timestamp` number to 0 (key order is kept: serde_json's `preserve_order`).
fn mask_timestamps(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "timestamp" && x.is_number() {
                    *x = 0.into();
                } else {
                    mask_timestamps(x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(mask_timestamps),
        _ => {}
    }
}

/// Observed on pi 0.85.0: a `models.json` `baseUrl` without its scheme fails every API with
/// `Invalid URL` (not a connection error); nothing is sent.
#[test]
fn a_base_url_without_a_scheme_is_an_invalid_url() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        let sb = Sandbox::new();
        write(
            &sb.agent().join("models.json"),
            &format!(
                r#"{{"providers":{{"x":{{"baseUrl":"127.0.0.1:9/v1","api":"{api}",
                    "apiKey":"k","models":[{{"id":"m"}}]}}}}}}"#
            ),
        );
        assert_fails(
            &sb.run(&["-p", "--no-session", "--model", "x/m", "hi"]),
            "Invalid URL\n",
        );
    }
}
