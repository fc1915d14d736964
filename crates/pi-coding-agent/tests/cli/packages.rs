//! `pi install|remove|list|update` through the binary, and a package's resources loading in a
//! run. The npm registry and the git host are small HTTP servers on 127.0.0.1 started by the
//! tests; the settings files are compared byte for byte with what pi 0.85.0 writes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};

use crate::support;
use support::anthropic_sse::{anthropic_text, anthropic_tools};
use support::binary_rig::{Rig, file_records};
use support::node_host::{node_host, skip_or_fail};

/// A static HTTP server on 127.0.0.1: path → body; anything else is a 404.
struct StaticServer {
    port: u16,
}

impl StaticServer {
    fn start(listener: TcpListener, routes: HashMap<String, Vec<u8>>) -> StaticServer {
        let port = listener.local_addr().unwrap().port();
        let routes = Arc::new(routes);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let routes = routes.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/");
                    let path = path.split('?').next().unwrap_or("/");
                    let path = path.replace("%2f", "/").replace("%2F", "/");
                    let (status, body) = match routes.get(&path) {
                        Some(b) => ("200 OK", b.clone()),
                        None => ("404 Not Found", b"not found".to_vec()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&body);
                });
            }
        });
        StaticServer { port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const EXTENSION: &str = r#"export default function (pi) {
  pi.registerTool({
    name: "pkg_hello",
    label: "Package hello",
    description: "Says hello from the package",
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: "hello from the package" }], details: {} };
    },
  });
}
"#;

/// A package with an extension, a skill and a prompt template in pi's directories.
fn fixture(dir: &Path) {
    write(
        &dir.join("package.json"),
        r#"{"name":"pkg-fixture","version":"1.0.0"}"#,
    );
    write(&dir.join("extensions/hello.ts"), EXTENSION);
    write(
        &dir.join("skills/pkg-skill/SKILL.md"),
        "---\nname: pkg-skill\ndescription: A skill that came in a package\n---\nDo the package thing.\n",
    );
    write(
        &dir.join("prompts/pkg-greet.md"),
        "---\ndescription: Greets\n---\nPlease greet the package user warmly.\n",
    );
}

fn fresh_rig(base_url: &str) -> Rig {
    let rig = Rig::new(base_url, &json!({}));
    // No settings file: the first write creates it, as for a new pi user.
    std::fs::remove_file(rig.path("agent/settings.json")).unwrap();
    rig
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_package_installs_lists_loads_and_removes() {
    let script = vec![
        anthropic_tools(&[("call_1", "pkg_hello", json!({}))]),
        anthropic_text("done"),
    ];
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let mut rig = fresh_rig(&server.base_url());
    fixture(&rig.path("work/fixture"));
    let run = rig.run(&["install", "./fixture"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "Installing ./fixture...\nInstalled ./fixture\n", "")
    );
    // pi 0.85.0 writes exactly this (relative to the agent directory, two-space JSON, no
    // final newline).
    assert_eq!(
        read(&rig.path("agent/settings.json")),
        "{\n  \"packages\": [\n    \"../work/fixture\"\n  ]\n}"
    );
    // A second install changes nothing.
    let again = rig.run(&["install", "./fixture"]).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(
        read(&rig.path("agent/settings.json")),
        "{\n  \"packages\": [\n    \"../work/fixture\"\n  ]\n}"
    );
    let list = rig.run(&["list"]).await;
    assert_eq!(
        list.stdout,
        format!(
            "User packages:\n  ../work/fixture\n    {}\n",
            rig.path("work/fixture").display()
        )
    );
    assert_eq!(list.code, 0);

    if let Some(host) = node_host() {
        rig.env.extend(host.env());
        let sessions = rig.sessions();
        let run = rig
            .run(&[
                "--mode",
                "json",
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
                "--session-dir",
                &sessions,
                "/pkg-greet",
            ])
            .await;
        assert_eq!(run.code, 0, "{run:?}");
        let files = rig.session_files();
        let records = file_records(&files[0]);
        // The prompt template expanded, the extension's tool ran.
        let user = records
            .iter()
            .find(|r| r["message"]["role"] == "user")
            .unwrap();
        assert!(
            user["message"]
                .to_string()
                .contains("Please greet the package user warmly."),
            "{user}"
        );
        let result = records
            .iter()
            .find(|r| r["message"]["role"] == "toolResult")
            .unwrap_or_else(|| panic!("no tool result: {run:?}"));
        assert_eq!(result["message"]["isError"], false, "{result}");
        assert_eq!(
            result["message"]["content"][0]["text"],
            "hello from the package"
        );
        // The skill is in the system prompt the model got.
        let body: Value = server.requests()[0].body_json().unwrap();
        assert!(body["system"].to_string().contains("pkg-skill"), "{body}");
        assert!(body["tools"].to_string().contains("pkg_hello"));
    }

    let run = rig.run(&["remove", "./fixture"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Removing ./fixture...\nRemoved ./fixture\n")
    );
    assert_eq!(
        read(&rig.path("agent/settings.json")),
        "{\n  \"packages\": []\n}"
    );
    let run = rig.run(&["uninstall", "./fixture"]).await;
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "No matching package found for ./fixture\n");
    assert_eq!(rig.run(&["list"]).await.stdout, "No packages installed.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_installs_write_the_project_settings_once_trusted() {
    let rig = fresh_rig("http://127.0.0.1:9");
    fixture(&rig.path("work/fixture"));
    // No `.pi` yet: nothing to distrust.
    let run = rig.run(&["install", "./fixture", "-l"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        read(&rig.path("work/.pi/settings.json")),
        "{\n  \"packages\": [\n    \"../fixture\"\n  ]\n}"
    );
    assert!(!rig.path("agent/settings.json").exists());
    // Now the project has settings: without a trust decision they are off limits.
    let run = rig.run(&["remove", "./fixture", "-l"]).await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            1,
            "Project is not trusted. Use --approve to modify local package config.\n"
        )
    );
    let list = rig.run(&["list", "--approve"]).await;
    assert_eq!(
        list.stdout,
        format!(
            "Project packages:\n  ../fixture\n    {}\n",
            rig.path("work/fixture").display()
        )
    );
    let run = rig.run(&["remove", "./fixture", "-l", "--approve"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        read(&rig.path("work/.pi/settings.json")),
        "{\n  \"packages\": []\n}"
    );
}

fn tarball(dir: &Path, out: &Path) {
    let status = std::process::Command::new("tar")
        .arg("czf")
        .arg(out)
        .arg("--transform")
        .arg("s,^\\.,package,")
        .arg("-C")
        .arg(dir)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
}

fn has(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_npm_package_installs_from_a_loopback_registry() {
    if !has("npm") {
        skip_or_fail("npm is not installed");
        return;
    }
    let mut rig = fresh_rig("http://127.0.0.1:9");
    let src = rig.path("tmp/src");
    fixture(&src);
    let tgz = rig.path("tmp/pkg.tgz");
    tarball(&src, &tgz);
    // The registry is bound first so the packument can name the tarball's URL.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let packument = json!({
        "name": "pkg-fixture",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {
            "name": "pkg-fixture",
            "version": "1.0.0",
            "dist": {"tarball": format!("{base}/pkg-fixture/-/pkg-fixture-1.0.0.tgz")}
        }}
    });
    let mut routes = HashMap::new();
    routes.insert(
        "/pkg-fixture".to_owned(),
        packument.to_string().into_bytes(),
    );
    routes.insert(
        "/pkg-fixture/-/pkg-fixture-1.0.0.tgz".to_owned(),
        std::fs::read(&tgz).unwrap(),
    );
    let server = StaticServer::start(listener, routes);
    rig.env.extend([
        (
            "npm_config_registry".to_owned(),
            format!("{}/", server.url()),
        ),
        (
            "npm_config_cache".to_owned(),
            rig.path("tmp/npm-cache").display().to_string(),
        ),
        ("npm_config_audit".to_owned(), "false".to_owned()),
        ("npm_config_fund".to_owned(), "false".to_owned()),
        ("npm_config_update_notifier".to_owned(), "false".to_owned()),
    ]);
    if let Ok(path) = std::env::var("PATH") {
        rig.env.push(("PATH".to_owned(), path));
    }
    let run = rig.run(&["install", "npm:pkg-fixture"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Installing npm:pkg-fixture...\n"),
        "{run:?}"
    );
    assert!(
        run.stdout.ends_with("Installed npm:pkg-fixture\n"),
        "{run:?}"
    );
    let root = rig.path("agent/npm");
    assert_eq!(
        read(&root.join(".gitignore")),
        "*\n!.gitignore\n",
        "the npm root is kept out of git"
    );
    let root_pkg: Value = serde_json::from_str(&read(&root.join("package.json"))).unwrap();
    assert_eq!(
        root_pkg["dependencies"]["pkg-fixture"], "^1.0.0",
        "{root_pkg}"
    );
    assert_eq!(root_pkg["name"], "pi-extensions");
    let installed = root.join("node_modules/pkg-fixture");
    assert_eq!(
        read(&installed.join("prompts/pkg-greet.md")),
        read(&src.join("prompts/pkg-greet.md"))
    );
    assert_eq!(
        read(&rig.path("agent/settings.json")),
        "{\n  \"packages\": [\n    \"npm:pkg-fixture\"\n  ]\n}"
    );
    let list = rig.run(&["list"]).await;
    assert_eq!(
        list.stdout,
        format!(
            "User packages:\n  npm:pkg-fixture\n    {}\n",
            installed.display()
        )
    );
    // A custom npmCommand (the settings key pi reads) runs instead of npm.
    write(
        &rig.path("agent/settings.json"),
        r#"{"packages":["npm:pkg-fixture"],"npmCommand":["/nonexistent/npm-wrapper"]}"#,
    );
    let run = rig.run(&["remove", "npm:pkg-fixture"]).await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("Error: spawn /nonexistent/npm-wrapper ENOENT"),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_source_on_an_unreachable_host_fails_clearly() {
    let rig = fresh_rig("http://127.0.0.1:9");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let source = format!("git:http://127.0.0.1:{port}/user/repo");
    let run = rig.run(&["install", &source]).await;
    assert_eq!(run.code, 1, "{run:?}");
    let target = rig.path("agent/git/127.0.0.1/user/repo");
    assert!(
        run.stderr.contains(&format!(
            "Error: git clone http://127.0.0.1:{port}/user/repo {} failed with code 128",
            target.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("Failed to connect to 127.0.0.1"),
        "{run:?}"
    );
    assert!(!target.exists() && !rig.path("agent/git/127.0.0.1").exists());
    assert!(!rig.path("agent/settings.json").exists());
}

/// A bare repository of `work` (committed) served over git's "dumb" HTTP protocol (static
/// files) at `<url>/user/repo.git`.
fn serve_repo(rig: &Rig, work: &Path) -> StaticServer {
    let git = |args: &[&str], dir: &Path| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"], work);
    git(&["add", "."], work);
    git(&["commit", "-q", "-m", "fixture"], work);
    let bare = rig.path("tmp/bare.git");
    git(
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
        &rig.path("tmp"),
    );
    git(&["update-server-info"], &bare);
    let mut routes = HashMap::new();
    let mut stack = vec![bare.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&bare).unwrap().display().to_string();
                routes.insert(format!("/user/repo.git/{rel}"), std::fs::read(&p).unwrap());
            }
        }
    }
    StaticServer::start(TcpListener::bind("127.0.0.1:0").unwrap(), routes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_source_clones_from_a_loopback_host() {
    let rig = fresh_rig("http://127.0.0.1:9");
    let work = rig.path("tmp/repo");
    fixture(&work);
    // No package.json in the repository: no npm install after the clone.
    std::fs::remove_file(work.join("package.json")).unwrap();
    let server = serve_repo(&rig, &work);
    let source = format!("git:{}/user/repo.git", server.url());
    let run = rig.run(&["install", &source]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.ends_with(&format!("Installed {source}\n")),
        "{run:?}"
    );
    let clone = rig.path("agent/git/127.0.0.1/user/repo");
    assert_eq!(read(&clone.join("extensions/hello.ts")), EXTENSION);
    assert_eq!(read(&rig.path("agent/git/.gitignore")), "*\n!.gitignore\n");
    let list = rig.run(&["list"]).await;
    assert_eq!(
        list.stdout,
        format!("User packages:\n  {source}\n    {}\n", clone.display())
    );
    let run = rig.run(&["remove", &source]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!clone.exists() && !rig.path("agent/git/127.0.0.1").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_says_how_to_update_pi_rs_and_checks_its_arguments() {
    let rig = fresh_rig("http://127.0.0.1:9");
    let run = rig.run(&["update"]).await;
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "Extensions are skipped. Run pi update --extensions to update extensions.\n"
    );
    assert!(
        run.stderr
            .starts_with("error: pi cannot self-update this installation.\n"),
        "{run:?}"
    );
    let run = rig.run(&["update", "--extensions"]).await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "Updated packages\n"));
    let run = rig.run(&["update", "npm:nothing"]).await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "Error: No matching package found for npm:nothing\n")
    );
    let run = rig.run(&["update", "--models", "--all"]).await;
    assert_eq!(
        run.stderr,
        "--all cannot be combined with --self, --extensions, --models, or --extension\n\
         Usage: pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]\n"
    );
    let run = rig.run(&["install"]).await;
    assert_eq!(
        run.stderr,
        "Missing install source.\nUsage: pi install <source> [-l] [--approve|--no-approve]\n"
    );
    let run = rig.run(&["install", "./nope"]).await;
    assert_eq!(
        run.stderr,
        format!(
            "Error: Path does not exist: {}\n",
            rig.path("work/nope").display()
        )
    );
}

fn prompt_args(sessions: &str) -> Vec<String> {
    [
        "-ne",
        "--mode",
        "json",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--session-dir",
        sessions,
        "/pkg-greet",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// The text of the first user message of the run's session.
fn first_user_text(rig: &Rig) -> String {
    let files = rig.session_files();
    let records = file_records(files.last().unwrap());
    records
        .iter()
        .find(|r| r["message"]["role"] == "user")
        .map(|r| r["message"].to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_git_package_installs_when_a_run_starts() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("ok")])
        .await
        .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({}));
    let work = rig.path("tmp/repo");
    fixture(&work);
    std::fs::remove_file(work.join("package.json")).unwrap();
    std::fs::remove_dir_all(work.join("extensions")).unwrap();
    let host = serve_repo(&rig, &work);
    let source = format!("git:{}/user/repo.git", host.url());
    write(
        &rig.path("agent/settings.json"),
        &json!({"packages": [source]}).to_string(),
    );
    // Under PI_OFFLINE nothing is fetched: the package is simply absent.
    let sessions = rig.sessions();
    let args = prompt_args(&sessions);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&args).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!rig.path("agent/git/127.0.0.1/user/repo").exists());
    assert!(!first_user_text(&rig).contains("greet the package user"));
    rig.env.push(("PI_OFFLINE".to_owned(), "0".to_owned()));
    let (_, server2) = ReplayServer::start(vec![anthropic_text("ok")])
        .await
        .unwrap();
    write(
        &rig.path("agent/models.json"),
        &support::binary_rig::models_json(&server2.base_url(), Some(support::binary_rig::KEY))
            .to_string(),
    );
    let run = rig.run(&args).await;
    assert_eq!(run.code, 0, "{run:?}");
    // git's and npm's output stay off the JSONL stream.
    assert!(!run.records().is_empty());
    assert!(
        rig.path("agent/git/127.0.0.1/user/repo/prompts/pkg-greet.md")
            .is_file()
    );
    assert!(first_user_text(&rig).contains("Please greet the package user warmly."));
    let body: Value = server2.requests()[0].body_json().unwrap();
    assert!(body["system"].to_string().contains("pkg-skill"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_entry_of_a_package_wins_once_trusted() {
    let script = vec![anthropic_text("one"), anthropic_text("two")];
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let rig = Rig::new(
        &server.base_url(),
        &json!({"packages": ["../work/fixture"]}),
    );
    fixture(&rig.path("work/fixture"));
    // The same package in the project, filtered: no prompt templates from it.
    write(
        &rig.path("work/.pi/settings.json"),
        r#"{"packages":[{"source":"../fixture","prompts":[]}]}"#,
    );
    let sessions = rig.sessions();
    let mut args = prompt_args(&sessions);
    // Untrusted project: the user entry counts, the template expands.
    args.insert(0, "--no-approve".to_owned());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&a).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(first_user_text(&rig).contains("Please greet the package user warmly."));
    args[0] = "--approve".to_owned();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&a).await;
    assert_eq!(run.code, 0, "{run:?}");
    let text = first_user_text(&rig);
    assert!(
        !text.contains("greet the package user") && text.contains("/pkg-greet"),
        "{text}"
    );
    // `pi list` marks the object entry as filtered.
    let list = rig.run(&["list", "--approve"]).await;
    assert!(
        list.stdout
            .contains("Project packages:\n  ../fixture (filtered)\n"),
        "{list:?}"
    );
}
