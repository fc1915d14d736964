//! Skill discovery, validation, prompt block and `/skill:` expansion in temp dirs.

use super::*;
use std::fs;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn skill_md(name: &str, desc: &str) -> String {
    format!("---\nname: {name}\ndescription: {desc}\n---\n# {name}\nDo it.\n")
}

#[test]
fn skill_root_stops_recursion_and_root_md_files_load() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("skills");
    write(&d.join("alpha/SKILL.md"), &skill_md("alpha", "A"));
    write(&d.join("alpha/nested/SKILL.md"), &skill_md("nested", "N"));
    write(&d.join("group/beta/SKILL.md"), &skill_md("beta", "B"));
    write(
        &d.join("loose.md"),
        "---\ndescription: loose one\n---\nbody",
    );
    write(&d.join("nodesc.md"), "just text");
    write(&d.join(".hidden/SKILL.md"), &skill_md("hidden", "H"));
    write(&d.join("node_modules/x/SKILL.md"), &skill_md("nm", "X"));
    let (skills, diags) = load_skills_from_dir(&d, SkillDirMode::Pi);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    // A loose file without `name` is named after its directory, as in the reference.
    assert_eq!(names, vec!["alpha", "beta", "skills"]);
    assert!(diags.is_empty(), "{diags:?}");
    // `.agents` style: root files are skipped, but `.md` files in subdirectories count.
    write(
        &d.join("group/extra.md"),
        "---\nname: extra\ndescription: e\n---\nbody",
    );
    let (skills, _) = load_skills_from_dir(&d, SkillDirMode::Agents);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["alpha", "beta", "extra"]);
    let (skills, _) = load_skills_from_dir(&d, SkillDirMode::Pi);
    assert!(skills.iter().all(|s| s.name != "extra"));
}

#[test]
fn name_defaults_to_directory_and_validation_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("skills");
    write(&d.join("my-dir/SKILL.md"), "---\ndescription: x\n---\nb");
    write(&d.join("Bad_Name/SKILL.md"), "---\ndescription: x\n---\nb");
    write(&d.join("nodesc/SKILL.md"), "---\nname: nodesc\n---\nb");
    let (skills, diags) = load_skills_from_dir(&d, SkillDirMode::Pi);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["Bad_Name", "my-dir"]);
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
            "description is required"
        ]
    );
}

#[test]
fn discovery_order_first_name_wins_and_trust_gates_project() {
    let tmp = tempfile::tempdir().unwrap();
    let root = canonicalize(tmp.path());
    let home = root.join("home");
    let agent = home.join(".pi/agent");
    let cwd = root.join("repo/sub");
    fs::create_dir_all(root.join("repo/.git")).unwrap();
    write(
        &cwd.join(".pi/skills/dup/SKILL.md"),
        &skill_md("dup", "project"),
    );
    write(
        &root.join("repo/.agents/skills/repo-skill/SKILL.md"),
        &skill_md("repo-skill", "R"),
    );
    write(
        &root.join(".agents/skills/above-git/SKILL.md"),
        &skill_md("above-git", "no"),
    );
    write(&agent.join("skills/dup/SKILL.md"), &skill_md("dup", "user"));
    write(&home.join(".agents/skills/u/SKILL.md"), &skill_md("u", "U"));
    let src = SkillSources::new(&cwd, &agent, &home);
    let loaded = load_skills(&src);
    let names: Vec<(&str, &str)> = loaded
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![("dup", "project"), ("repo-skill", "R"), ("u", "U")]
    );
    assert_eq!(
        loaded.diagnostics.last().unwrap().message,
        "name \"dup\" collision"
    );
    let untrusted = load_skills(&SkillSources {
        project_trusted: false,
        ..src.clone()
    });
    let names: Vec<&str> = untrusted.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["dup", "u"]);
    assert_eq!(untrusted.skills[0].description, "user");
}

#[test]
fn explicit_paths_and_missing_path_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let root = canonicalize(tmp.path());
    write(
        &root.join("extra/one.md"),
        "---\nname: one\ndescription: d\n---\nb",
    );
    let cli = vec!["extra/one.md".to_owned(), "missing".to_owned()];
    let (agent, home) = (root.join("agent"), root.join("home"));
    let loaded = load_skills(&SkillSources {
        cli_paths: &cli,
        no_skills: true,
        ..SkillSources::new(&root, &agent, &home)
    });
    assert_eq!(loaded.skills.len(), 1);
    assert_eq!(loaded.diagnostics[0].message, "skill path does not exist");
}

#[test]
fn prompt_block_hides_disabled_and_escapes() {
    let skills = vec![
        Skill {
            name: "a".into(),
            description: "x < y & \"z\"".into(),
            file_path: "/s/a/SKILL.md".into(),
            base_dir: "/s/a".into(),
            disable_model_invocation: false,
        },
        Skill {
            name: "hidden".into(),
            description: "h".into(),
            file_path: "/s/h/SKILL.md".into(),
            base_dir: "/s/h".into(),
            disable_model_invocation: true,
        },
    ];
    let block = format_skills_for_prompt(&skills, "read");
    assert!(block.starts_with("\n\n"));
    assert!(block.contains(
        "<available_skills>\n  <skill>\n    <name>a</name>\n    <description>x &lt; y &amp; &quot;z&quot;</description>\n    <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>"
    ));
    assert!(!block.contains("hidden"));
    assert_eq!(format_skills_for_prompt(&skills[1..], "read"), "");
}

#[test]
fn skill_command_expansion() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s/pdf");
    write(
        &dir.join("SKILL.md"),
        "---\nname: pdf\ndescription: d\n---\n\nUse tools.\n\n",
    );
    let skills = vec![Skill {
        name: "pdf".into(),
        description: "d".into(),
        file_path: dir.join("SKILL.md"),
        base_dir: dir.clone(),
        disable_model_invocation: false,
    }];
    let expected = format!(
        "<skill name=\"pdf\" location=\"{}\">\nReferences are relative to {}.\n\nUse tools.\n</skill>",
        dir.join("SKILL.md").display(),
        dir.display()
    );
    assert_eq!(
        expand_skill_command("/skill:pdf", &skills).unwrap(),
        expected
    );
    assert_eq!(
        expand_skill_command("/skill:pdf  merge a b ", &skills).unwrap(),
        format!("{expected}\n\nmerge a b")
    );
    assert_eq!(
        expand_skill_command("/skill:nope x", &skills).unwrap(),
        "/skill:nope x"
    );
    assert_eq!(expand_skill_command("hello", &skills).unwrap(), "hello");

    // A skill file gone since discovery: the error names it and reads as the I/O error.
    std::fs::remove_file(dir.join("SKILL.md")).unwrap();
    let err = expand_skill_command("/skill:pdf", &skills).unwrap_err();
    assert_eq!(err.path, dir.join("SKILL.md"));
    assert_eq!(err.source.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(err.to_string(), err.source.to_string());
}

#[test]
fn ignore_files_exclude_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("skills");
    write(&d.join("keep/SKILL.md"), &skill_md("keep", "K"));
    write(&d.join("drop/SKILL.md"), &skill_md("drop", "D"));
    write(&d.join("group/inner/SKILL.md"), &skill_md("inner", "I"));
    write(&d.join("group/other/SKILL.md"), &skill_md("other", "O"));
    write(&d.join(".gitignore"), "drop/\n# comment\n");
    write(&d.join("group/.ignore"), "/inner\n");
    let (skills, _) = load_skills_from_dir(&d, SkillDirMode::Pi);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["other", "keep"]);
}

#[test]
fn ignore_pattern_prefixing() {
    assert_eq!(prefix_ignore_pattern("/a", "x/").as_deref(), Some("x/a"));
    assert_eq!(prefix_ignore_pattern("!b", "x/").as_deref(), Some("!x/b"));
    assert_eq!(prefix_ignore_pattern("# c", ""), None);
    assert_eq!(prefix_ignore_pattern("   ", ""), None);
    assert_eq!(prefix_ignore_pattern("\\#d", "").as_deref(), Some("\\#d"));
    assert_eq!(prefix_ignore_pattern("\\!e", "p/").as_deref(), Some("p/!e"));
}
