//! Prompt templates and skills through the `pi` binary, as a user lays them out: which file a
//! `/name` or `/skill:name` expands to when several places hold one of that name, and where
//! the settings' `prompts` / `skills` entries are looked for. The expectations are those of
//! pi 0.85.0 (checked side by side with the reference binary, same replay server):
//! `DefaultPackageManager.resolve` ranks project settings entries, then the project's
//! `.pi/` directories, then the global settings entries, then the agent directory; the first
//! of a name wins; a settings entry is relative to its file's base (`<cwd>/.pi` for the
//! project file, the agent directory for the global one), not to the working directory.

use crate::support;

use pi_ai::testkit::ReplayServer;
use serde_json::json;
use support::anthropic_sse::anthropic_text;
use support::binary_rig::Rig;

fn write(rig: &Rig, sub: &str, text: &str) {
    let path = rig.path(sub);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `-p <prompt>` in `rig` (project trusted) and returns the user text the request
/// carried.
async fn sent_text(rig: &Rig, server: &pi_ai::testkit::ReplayHandle, prompt: &str) -> String {
    let run = rig
        .run(&[
            "--no-session",
            "-a",
            "--model",
            "replay-anthropic/replay-model",
            "-p",
            prompt,
        ])
        .await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "ok\n"), "{run:?}");
    let body = server.requests().last().unwrap().body_json().unwrap();
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn server(replies: usize) -> pi_ai::testkit::ReplayHandle {
    let script = (0..replies).map(|_| anthropic_text("ok")).collect();
    ReplayServer::start(script).await.unwrap().1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_template_wins_over_the_agent_dirs_namesake() {
    let server = server(1).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    write(&rig, "work/.pi/prompts/x.md", "from the project $1\n");
    write(&rig, "agent/prompts/x.md", "from the agent dir $1\n");
    assert_eq!(
        sent_text(&rig, &server, "/x a").await,
        "from the project a\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn global_settings_entries_are_relative_to_the_agent_dir_and_walked_recursively() {
    let server = server(2).await;
    let settings =
        json!({"retry": {"enabled": false}, "prompts": ["mine"], "skills": ["myskills"]});
    let rig = Rig::new(&server.base_url(), &settings);
    write(&rig, "agent/mine/sub/y.md", "agent-relative\n");
    write(&rig, "work/mine/y.md", "cwd-relative\n");
    let skill = |body: &str| format!("---\nname: s1\ndescription: d\n---\n{body}\n");
    write(&rig, "agent/myskills/s1/SKILL.md", &skill("agent-relative"));
    write(&rig, "work/myskills/s1/SKILL.md", &skill("cwd-relative"));
    assert_eq!(sent_text(&rig, &server, "/y").await, "agent-relative\n");
    let dir = rig.path("agent/myskills/s1");
    assert_eq!(
        sent_text(&rig, &server, "/skill:s1").await,
        format!(
            "<skill name=\"s1\" location=\"{}/SKILL.md\">\nReferences are relative to {}.\n\nagent-relative\n</skill>",
            dir.display(),
            dir.display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_settings_entries_are_relative_to_dot_pi() {
    let server = server(1).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    write(&rig, "work/.pi/settings.json", r#"{"prompts": ["team"]}"#);
    write(&rig, "work/.pi/team/y.md", "dot-pi-relative\n");
    write(&rig, "work/team/y.md", "cwd-relative\n");
    assert_eq!(sent_text(&rig, &server, "/y").await, "dot-pi-relative\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_dirs_rank_above_global_settings_entries() {
    let server = server(2).await;
    let settings =
        json!({"retry": {"enabled": false}, "prompts": ["mine"], "skills": ["myskills"]});
    let rig = Rig::new(&server.base_url(), &settings);
    write(&rig, "agent/mine/y.md", "global settings\n");
    write(&rig, "work/.pi/prompts/y.md", "project dir\n");
    let skill = |body: &str| format!("---\nname: s1\ndescription: d\n---\n{body}\n");
    write(
        &rig,
        "agent/myskills/s1/SKILL.md",
        &skill("global settings"),
    );
    write(&rig, "work/.pi/skills/s1/SKILL.md", &skill("project dir"));
    assert_eq!(sent_text(&rig, &server, "/y").await, "project dir\n");
    assert!(
        sent_text(&rig, &server, "/skill:s1")
            .await
            .ends_with("\n\nproject dir\n</skill>")
    );
}

/// pi parses frontmatter with a YAML parser and skips a template whose frontmatter does not
/// parse; the common case is an unquoted `: ` in a description. A document that is not a
/// mapping parses (no fields).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_with_invalid_yaml_frontmatter_is_not_loaded() {
    let server = server(3).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    write(
        &rig,
        "work/.pi/prompts/bad.md",
        "---\ndescription: Review: a file\n---\nbad $1\n",
    );
    write(
        &rig,
        "work/.pi/prompts/dup.md",
        "---\ndescription: one\ndescription: two\n---\ndup $1\n",
    );
    write(
        &rig,
        "work/.pi/prompts/words.md",
        "---\njust words\n---\nwords $1\n",
    );
    assert_eq!(sent_text(&rig, &server, "/bad a").await, "/bad a");
    assert_eq!(sent_text(&rig, &server, "/dup a").await, "/dup a");
    assert_eq!(sent_text(&rig, &server, "/words a").await, "words a");
}

/// A `--system-prompt` / `--append-system-prompt` path that exists but cannot be read: one
/// warning each, worded as pi 0.85.0 does (the JavaScript error's `String()`), and the run
/// goes on with the argument as literal text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_system_prompt_file_warns_once_in_pis_words() {
    let server = server(1).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    std::fs::create_dir_all(rig.path("work/sd")).unwrap();
    std::fs::create_dir_all(rig.path("work/.pi/APPEND_SYSTEM.md")).unwrap();
    let run = rig
        .run(&[
            "--no-session",
            "-a",
            "--model",
            "replay-anthropic/replay-model",
            "--system-prompt",
            "sd",
            "-p",
            "hi",
        ])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "Warning: Could not read system prompt file sd: Error: EISDIR: illegal operation on a directory, read\n\
             Warning: Could not read append system prompt file {}: Error: EISDIR: illegal operation on a directory, read\n",
            rig.path("work/.pi/APPEND_SYSTEM.md").display()
        )
    );
    let body = server.requests()[0].body_json().unwrap();
    let system = body["system"][0]["text"].as_str().unwrap();
    let append = rig.path("work/.pi/APPEND_SYSTEM.md").display().to_string();
    assert!(system.starts_with(&format!("sd\n\n{append}")), "{system}");
}

/// Node reads a prompt file as UTF-8 with replacement characters; so does pi-rs (no warning).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_prompt_file_that_is_not_utf8_is_read_lossily() {
    let server = server(1).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    std::fs::write(rig.path("work/s.txt"), b"sys \xff end").unwrap();
    std::fs::write(rig.path("work/a.txt"), b"app \xfe").unwrap();
    let run = rig
        .run(&[
            "--no-session",
            "--model",
            "replay-anthropic/replay-model",
            "--system-prompt",
            "s.txt",
            "--append-system-prompt",
            "a.txt",
            "-p",
            "hi",
        ])
        .await;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let body = server.requests()[0].body_json().unwrap();
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.starts_with("sys \u{fffd} end"), "{system}");
    assert!(system.contains("app \u{fffd}"), "{system}");
}

/// Node reads templates and skills as UTF-8 with replacement characters; a stray byte does not
/// make the file disappear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_and_skills_that_are_not_utf8_still_load() {
    let server = server(2).await;
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    std::fs::create_dir_all(rig.path("work/.pi/prompts")).unwrap();
    std::fs::write(rig.path("work/.pi/prompts/x.md"), b"tmpl \xff $1").unwrap();
    std::fs::create_dir_all(rig.path("work/.pi/skills/s")).unwrap();
    std::fs::write(
        rig.path("work/.pi/skills/s/SKILL.md"),
        b"---\nname: s\ndescription: d \xff\n---\nbody \xfe",
    )
    .unwrap();
    assert_eq!(sent_text(&rig, &server, "/x a").await, "tmpl \u{fffd} a");
    let dir = rig.path("work/.pi/skills/s");
    assert_eq!(
        sent_text(&rig, &server, "/skill:s").await,
        format!(
            "<skill name=\"s\" location=\"{}/SKILL.md\">\nReferences are relative to {}.\n\nbody \u{fffd}\n</skill>",
            dir.display(),
            dir.display()
        )
    );
}

/// The settings' pattern entries switch templates and skills off (`!glob`, `-path`) and back
/// on (`+path`), relative to the settings file's base.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_patterns_switch_templates_and_skills_off_and_on() {
    let server = server(7).await;
    let settings = json!({"retry": {"enabled": false},
        "prompts": ["mine", "!mine/b.md", "!z.md"], "skills": ["!foo"]});
    let rig = Rig::new(&server.base_url(), &settings);
    write(&rig, "agent/mine/a.md", "a\n");
    write(&rig, "agent/mine/b.md", "b\n");
    write(&rig, "agent/prompts/z.md", "z\n");
    write(
        &rig,
        "agent/skills/foo/SKILL.md",
        "---\nname: foo\ndescription: d\n---\nF\n",
    );
    write(
        &rig,
        "work/.pi/skills/bar/SKILL.md",
        "---\nname: bar\ndescription: d\n---\nB\n",
    );
    write(
        &rig,
        "work/.pi/settings.json",
        r#"{"skills": ["-skills/bar"]}"#,
    );
    assert_eq!(sent_text(&rig, &server, "/a").await, "a\n");
    assert_eq!(sent_text(&rig, &server, "/b").await, "/b");
    assert_eq!(sent_text(&rig, &server, "/z").await, "/z");
    assert_eq!(sent_text(&rig, &server, "/skill:foo").await, "/skill:foo");
    assert_eq!(sent_text(&rig, &server, "/skill:bar").await, "/skill:bar");
}
