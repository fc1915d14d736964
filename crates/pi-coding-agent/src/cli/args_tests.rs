//! Unit tests of the argument scanner, with the values pi 0.85.0's `parseArgs` gives.

use super::*;

fn parse(args: &[&str]) -> Args {
    parse_args(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
}

fn errors(a: &Args) -> Vec<String> {
    a.diagnostics.iter().map(Diagnostic::render).collect()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[test]
fn every_boolean_flag_in_both_spellings() {
    let long = parse(&[
        "--help",
        "--version",
        "--print",
        "--continue",
        "--resume",
        "--no-session",
        "--no-tools",
        "--no-builtin-tools",
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
        "--no-context-files",
        "--verbose",
        "--offline",
        "--approve",
    ]);
    let short = parse(&[
        "-h",
        "-v",
        "-p",
        "-c",
        "-r",
        "--no-session",
        "-nt",
        "-nbt",
        "-ne",
        "-ns",
        "-np",
        "--no-themes",
        "-nc",
        "--verbose",
        "--offline",
        "-a",
    ]);
    for a in [&long, &short] {
        assert!(a.help && a.version && a.print && a.continue_session && a.resume);
        assert!(a.no_session && a.no_tools && a.no_builtin_tools && a.no_extensions);
        assert!(a.no_skills && a.no_prompt_templates && a.no_themes && a.no_context_files);
        assert!(a.verbose && a.offline);
        assert_eq!(a.project_trust_override, Some(true));
        assert!(a.diagnostics.is_empty() && a.unknown_flags.is_empty() && a.messages.is_empty());
    }
    assert_eq!(parse(&["-a", "-na"]).project_trust_override, Some(false));
    assert_eq!(
        parse(&["--no-approve", "--approve"]).project_trust_override,
        Some(true)
    );
}

#[test]
fn every_value_option() {
    let a = parse(&[
        "--provider",
        "openai",
        "--model",
        "gpt-4o:high",
        "--api-key",
        "k",
        "--system-prompt",
        "sys",
        "--append-system-prompt",
        "one",
        "--append-system-prompt",
        "two",
        "-n",
        "My name",
        "--session",
        "abc",
        "--session-id",
        "id-1",
        "--fork",
        "f.jsonl",
        "--session-dir",
        "/s",
        "--models",
        "a, b,,c",
        "-t",
        "read, ls,,",
        "-xt",
        "bash",
        "--thinking",
        "xhigh",
        "--export",
        "x.jsonl",
        "-e",
        "e1.ts",
        "--extension",
        "e2.ts",
        "--skill",
        "sk",
        "--prompt-template",
        "pt",
        "--theme",
        "th",
        "--use-theme",
        "dark",
        "--tui-mode",
        "fullscreen",
        "--mode",
        "json",
    ]);
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    assert_eq!(a.provider, s("openai"));
    assert_eq!(a.model, s("gpt-4o:high"));
    assert_eq!(a.api_key, s("k"));
    assert_eq!(a.system_prompt, s("sys"));
    assert_eq!(a.append_system_prompt, ["one", "two"]);
    assert_eq!(a.name, s("My name"));
    assert_eq!(a.session, s("abc"));
    assert_eq!(a.session_id, s("id-1"));
    assert_eq!(a.fork, s("f.jsonl"));
    assert_eq!(a.session_dir, s("/s"));
    assert_eq!(
        a.models,
        Some(vec!["a".into(), "b".into(), String::new(), "c".into()])
    );
    assert_eq!(a.tools, Some(vec!["read".into(), "ls".into()]));
    assert_eq!(a.exclude_tools, Some(vec!["bash".into()]));
    assert_eq!(a.thinking, s("xhigh"));
    assert_eq!(a.export, s("x.jsonl"));
    assert_eq!(a.extensions, ["e1.ts", "e2.ts"]);
    assert_eq!(a.skills, ["sk"]);
    assert_eq!(a.prompt_templates, ["pt"]);
    assert_eq!(a.themes, ["th"]);
    assert_eq!(a.use_theme, s("dark"));
    assert_eq!(a.tui_mode, s("fullscreen"));
    assert_eq!(a.mode, Some(OutputMode::Json));
    assert!(a.messages.is_empty() && a.unknown_flags.is_empty());
}

#[test]
fn a_value_option_takes_the_next_argument_whatever_it_looks_like() {
    let a = parse(&["--model", "-x", "--provider", "@f", "--tools", ""]);
    assert_eq!(a.model, s("-x"));
    assert_eq!(a.provider, s("@f"));
    assert_eq!(a.tools, Some(vec![]));
    assert!(a.diagnostics.is_empty() && a.file_args.is_empty());
}

#[test]
fn mode_values() {
    assert_eq!(parse(&["--mode", "text"]).mode, Some(OutputMode::Text));
    assert_eq!(parse(&["--mode", "rpc"]).mode, Some(OutputMode::Rpc));
    let bad = parse(&["--mode", "json", "--mode", "bogus", "hi"]);
    assert_eq!(
        bad.mode,
        Some(OutputMode::Json),
        "an invalid mode is consumed and ignored"
    );
    assert_eq!(bad.messages, ["hi"]);
    assert!(bad.diagnostics.is_empty());
}

#[test]
fn a_value_option_at_the_end_becomes_an_unknown_long_option() {
    for opt in [
        "--provider",
        "--model",
        "--api-key",
        "--system-prompt",
        "--append-system-prompt",
        "--session",
        "--session-id",
        "--fork",
        "--session-dir",
        "--models",
        "--tools",
        "--exclude-tools",
        "--thinking",
        "--export",
        "--extension",
        "--skill",
        "--prompt-template",
        "--theme",
        "--mode",
    ] {
        let a = parse(&["-p", "hi", opt]);
        assert_eq!(
            a.unknown_flags,
            [(opt[2..].to_owned(), FlagValue::Present)],
            "{opt}"
        );
        assert!(a.diagnostics.is_empty(), "{opt}");
    }
    for opt in ["-t", "-xt", "-e"] {
        let a = parse(&[opt]);
        assert_eq!(errors(&a), [format!("Error: Unknown option: {opt}")]);
    }
}

#[test]
fn name_without_a_value_is_an_error() {
    for opt in ["--name", "-n"] {
        let a = parse(&["--foo", opt]);
        assert_eq!(errors(&a), ["Error: --name requires a value"]);
        assert!(a.has_errors());
        assert_eq!(a.unknown_flags, [("foo".to_owned(), FlagValue::Present)]);
    }
    assert_eq!(parse(&["-n", "-x"]).name, s("-x"));
}

#[test]
fn short_flags_do_not_bundle() {
    for bundled in ["-pc", "-cp", "-hv", "-x", "-", "-nx", "-ntt", "-P"] {
        let a = parse(&[bundled, "hi"]);
        assert_eq!(errors(&a), [format!("Error: Unknown option: {bundled}")]);
        assert!(!a.print && !a.continue_session && !a.help);
        assert_eq!(a.messages, ["hi"]);
    }
}

#[test]
fn unknown_long_options_are_collected_with_their_values() {
    let a = parse(&[
        "--foo",
        "--bar",
        "v",
        "--baz=1=2",
        "--qux",
        "@f",
        "--foo=again",
        "--z",
        "-p",
    ]);
    assert_eq!(
        a.unknown_flags,
        [
            ("foo".to_owned(), FlagValue::Value("again".into())),
            ("bar".to_owned(), FlagValue::Value("v".into())),
            ("baz".to_owned(), FlagValue::Value("1=2".into())),
            ("qux".to_owned(), FlagValue::Present),
            ("z".to_owned(), FlagValue::Present),
        ]
    );
    assert_eq!(a.file_args, ["f"]);
    assert!(a.print && a.messages.is_empty() && a.diagnostics.is_empty());
    assert_eq!(
        unknown_options_message(&a.unknown_flags).as_deref(),
        Some("Unknown options: --foo, --bar, --baz, --qux, --z")
    );
}

#[test]
fn there_is_no_equals_form_for_known_options() {
    let a = parse(&["--provider=x", "--mode=json", "-p", "hi"]);
    assert_eq!(a.provider, None);
    assert_eq!(a.mode, None);
    assert_eq!(
        unknown_options_message(&a.unknown_flags).as_deref(),
        Some("Unknown options: --provider, --mode")
    );
    assert_eq!(
        unknown_options_message(&parse(&["--provider=x"]).unknown_flags).as_deref(),
        Some("Unknown option: --provider")
    );
    assert_eq!(unknown_options_message(&[]), None);
}

#[test]
fn diagnostics_keep_their_order_and_short_errors_do_not_stop_parsing() {
    let a = parse(&["--thinking", "bogus", "-x", "--name"]);
    assert_eq!(
        errors(&a),
        [
            "Warning: Invalid thinking level \"bogus\". Valid values: off, minimal, low, medium, \
             high, xhigh, max",
            "Error: Unknown option: -x",
            "Error: --name requires a value",
        ]
    );
    let warn_only = parse(&["--thinking", "HIGH", "hi"]);
    assert!(!warn_only.has_errors());
    assert_eq!(warn_only.thinking, None);
    assert_eq!(warn_only.messages, ["hi"]);
    for level in THINKING_LEVELS {
        assert_eq!(parse(&["--thinking", level]).thinking, s(level));
    }
}

#[test]
fn print_swallows_the_next_word_unless_it_is_a_file_or_an_option() {
    assert_eq!(
        parse(&["-p", "hello", "world"]).messages,
        ["hello", "world"]
    );
    assert_eq!(parse(&["-p", "---dashes"]).messages, ["---dashes"]);
    assert_eq!(parse(&["--print", "list"]).messages, ["list"]);
    let file = parse(&["-p", "@a.txt", "q"]);
    assert_eq!(
        (file.file_args, file.messages),
        (vec!["a.txt".into()], vec!["q".into()])
    );
    let opt = parse(&["-p", "-c"]);
    assert!(opt.print && opt.continue_session && opt.messages.is_empty());
    let dashdash = parse(&["-p", "--", "- point"]);
    assert_eq!(dashdash.messages, ["- point"]);
}

#[test]
fn double_dash_ends_options() {
    let a = parse(&["--", "--foo", "-x", "@f.txt", "--help", "@"]);
    assert_eq!(a.messages, ["--foo", "-x", "--help"]);
    assert_eq!(a.file_args, ["f.txt", ""]);
    assert!(!a.help && a.diagnostics.is_empty() && a.unknown_flags.is_empty());
}

#[test]
fn files_and_messages() {
    let a = parse(&["@one", "two", "@three", "four"]);
    assert_eq!(a.file_args, ["one", "three"]);
    assert_eq!(a.messages, ["two", "four"]);
}

#[test]
fn list_models_takes_a_search_only_when_it_looks_like_one() {
    assert_eq!(parse(&["--list-models"]).list_models, Some(ListModels::All));
    assert_eq!(
        parse(&["--list-models", "sonnet"]).list_models,
        Some(ListModels::Search("sonnet".into()))
    );
    let flag = parse(&["--list-models", "-p"]);
    assert_eq!(
        (flag.list_models, flag.print),
        (Some(ListModels::All), true)
    );
    let file = parse(&["--list-models", "@f"]);
    assert_eq!(
        (file.list_models, file.file_args),
        (Some(ListModels::All), vec!["f".into()])
    );
}

#[test]
fn tui_options_validate_their_values() {
    let e = |args: &[&str]| errors(&parse(args));
    assert_eq!(
        e(&["--use-theme"]),
        ["Error: --use-theme requires a theme name"]
    );
    assert_eq!(
        e(&["--use-theme", "-x"]),
        [
            "Error: --use-theme requires a theme name",
            "Error: Unknown option: -x"
        ]
    );
    assert_eq!(
        e(&["--tui-mode"]),
        ["Error: --tui-mode requires regular or fullscreen"]
    );
    assert_eq!(
        e(&["--tui-mode", "--verbose"]),
        ["Error: --tui-mode requires regular or fullscreen"]
    );
    assert_eq!(
        e(&["--tui-mode", "tiny", "hi"]),
        ["Error: Invalid TUI mode \"tiny\". Valid values: regular, fullscreen"]
    );
    assert_eq!(parse(&["--tui-mode", "tiny", "hi"]).messages, ["hi"]);
    assert_eq!(parse(&["--tui-mode", "regular"]).tui_mode, s("regular"));
}

#[test]
fn js_trim_matches_javascript() {
    assert_eq!(trim_js("\u{feff}\u{2028} a b\t\u{3000}"), "a b");
    assert_eq!(
        trim_js("\u{85}x\u{85}"),
        "\u{85}x\u{85}",
        "NEL is not JavaScript white space"
    );
}
