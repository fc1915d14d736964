//! Sections present and ordered; custom base; prompt sources in temp dirs.

use super::*;
use std::fs;

fn docs() -> DocsPaths {
    DocsPaths {
        readme: "/pkg/README.md".into(),
        docs: "/pkg/docs".into(),
        examples: "/pkg/examples".into(),
    }
}

fn snippets() -> Vec<(String, String)> {
    [
        ("read", "Read file contents"),
        ("bash", "Execute bash commands (ls, grep, find, etc.)"),
        ("edit", "Make precise file edits with exact text replacement, including multiple disjoint edits in one call"),
        ("write", "Create or overwrite files"),
        ("grep", "Search file contents for patterns (respects .gitignore)"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

fn skill() -> Skill {
    Skill {
        name: "s1".into(),
        description: "d".into(),
        file_path: "/sk/s1/SKILL.md".into(),
        base_dir: "/sk/s1".into(),
        disable_model_invocation: false,
    }
}

fn opts<'a>(
    d: &'a DocsPaths,
    sn: &'a [(String, String)],
    ctx: &'a [ContextFile],
    skills: &'a [Skill],
) -> SystemPromptOptions<'a> {
    SystemPromptOptions {
        custom_prompt: None,
        selected_tools: None,
        tool_snippets: sn,
        prompt_guidelines: &[],
        append_system_prompt: None,
        cwd: Path::new("/work/proj"),
        context_files: ctx,
        skills,
        docs: d,
    }
}

fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("missing {needle:?} in:\n{hay}"))
}

#[test]
fn default_prompt_sections_in_order() {
    let d = docs();
    let sn = snippets();
    let ctx = vec![ContextFile {
        path: "/work/AGENTS.md".into(),
        content: "Use tabs.".into(),
    }];
    let skills = vec![skill()];
    let mut o = opts(&d, &sn, &ctx, &skills);
    o.append_system_prompt = Some("APPENDED");
    let p = build_system_prompt(&o);
    let order = [
        "Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: ",
        "\n- write: Create or overwrite files\n\n",
        "Guidelines:\n- Use bash (ls, rg, find) to list, search and find files\n- Keep answers short",
        "- Main documentation: /pkg/README.md",
        "\n\nAPPENDED",
        "\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n<project_instructions path=\"/work/AGENTS.md\">\nUse tabs.\n</project_instructions>\n\n</project_context>\n",
        "<available_skills>",
        "\nCurrent working directory: /work/proj",
    ];
    let mut last = 0;
    for s in order {
        let at = pos(&p, s);
        assert!(at >= last, "{s:?} out of order");
        last = at;
    }
    assert!(p.ends_with("\nCurrent working directory: /work/proj"));
    assert!(!p.contains("- grep:"), "inactive tools are not listed");
}

#[test]
fn guidelines_dedup_and_exploration_hint_rules() {
    let d = docs();
    let sn = snippets();
    let tools: Vec<String> = ["read", "bash", "grep"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let g = vec![
        "Prefer grep".to_owned(),
        "  Prefer grep ".to_owned(),
        "Keep answers short and to the point".to_owned(),
    ];
    let mut o = opts(&d, &sn, &[], &[]);
    o.selected_tools = Some(&tools);
    o.prompt_guidelines = &g;
    let p = build_system_prompt(&o);
    assert!(!p.contains("Use bash (ls, rg, find)"));
    assert_eq!(p.matches("- Prefer grep\n").count(), 1);
    assert_eq!(p.matches("Keep answers short and to the point").count(), 1);
    assert!(p.contains("- grep: Search file contents"));
}

#[test]
fn no_snippets_lists_none_and_skills_need_read_or_bash() {
    let d = docs();
    let skills = vec![skill()];
    let tools: Vec<String> = vec!["edit".into()];
    let mut o = opts(&d, &[], &[], &skills);
    o.selected_tools = Some(&tools);
    let p = build_system_prompt(&o);
    assert!(p.contains("Available tools:\n(none)\n"));
    assert!(!p.contains("<available_skills>"));
}

#[test]
fn custom_prompt_replaces_the_base() {
    let d = docs();
    let sn = snippets();
    let mut o = opts(&d, &sn, &[], &[]);
    o.custom_prompt = Some("CUSTOM");
    o.append_system_prompt = Some("MORE");
    let p = build_system_prompt(&o);
    assert_eq!(p, "CUSTOM\n\nMORE\nCurrent working directory: /work/proj\n");
}

#[test]
fn prompt_sources_discovery_and_trust() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("proj");
    let agent = tmp.path().join("agent");
    fs::create_dir_all(cwd.join(".pi")).unwrap();
    fs::create_dir_all(&agent).unwrap();
    fs::write(agent.join("SYSTEM.md"), "global sys").unwrap();
    fs::write(agent.join("APPEND_SYSTEM.md"), "global append").unwrap();
    fs::write(cwd.join(".pi/SYSTEM.md"), "\u{feff}project sys").unwrap();
    let s = resolve_prompt_sources(&cwd, &agent, true, None, &[]);
    assert_eq!(s.system_prompt.as_deref(), Some("project sys"));
    assert_eq!(s.append_system_prompt.as_deref(), Some("global append"));
    let s = resolve_prompt_sources(&cwd, &agent, false, None, &[]);
    assert_eq!(s.system_prompt.as_deref(), Some("global sys"));
    let file = tmp.path().join("extra.txt");
    fs::write(&file, "from file").unwrap();
    let s = resolve_prompt_sources(
        &cwd,
        &agent,
        true,
        Some("inline base"),
        &["inline".into(), file.to_string_lossy().into_owned()],
    );
    assert_eq!(s.system_prompt.as_deref(), Some("inline base"));
    assert_eq!(
        s.append_system_prompt.as_deref(),
        Some("inline\n\nfrom file")
    );
    assert!(s.warnings.is_empty());
}

#[test]
fn snippets_collapse_to_one_line() {
    assert_eq!(one_line("  a\n  b\tc "), "a b c");
}
