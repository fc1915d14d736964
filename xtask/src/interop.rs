//! `cargo xtask interop`: a session written by pi-rs, continued by the TypeScript pi, then
//! loaded and continued by pi-rs again.
//!
//! Both programs run offline against one local replay server serving a recorded Anthropic
//! reply per prompt. The check: the TS pi appends to the pi-rs file without rewriting it
//! (the pi-rs bytes stay a prefix), its new entries chain onto the pi-rs leaf, and pi-rs then
//! resumes the file the TS pi extended. Needs the TS pi 0.85.0
//! (`../shared/tools/install-peer.sh`, or `--ts <path>`); not part of CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};

const USAGE: &str = "usage: cargo xtask interop [--ts <path to the TS pi>] [--pi <path to pi-rs>]";

use crate::workspace::{build_debug_pi, workspace_root};

fn run(pi: &Path, root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(pi)
        .args(args)
        .current_dir(root.join("work"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .env("TMPDIR", root.join("tmp"))
        .env("PI_CODING_AGENT_DIR", root.join("agent"))
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("PI_TELEMETRY", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", pi.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {args:?} exited {}: {}",
            pi.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn lines(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", path.display())))
        .collect()
}

/// Runs the interop check.
pub fn run_interop(args: &[String]) -> Result<(), String> {
    let mut ts = dirs_home().join(".cache/pi-reference/bin/pi");
    let mut pi: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--ts" => ts = it.next().ok_or(USAGE)?.into(),
            "--pi" => pi = Some(it.next().ok_or(USAGE)?.into()),
            _ => return Err(USAGE.into()),
        }
    }
    if !ts.exists() {
        return Err(format!(
            "the TS pi is not installed at {} (run ../shared/tools/install-peer.sh or pass --ts)",
            ts.display()
        ));
    }
    let root_dir = workspace_root();
    let pi = match pi {
        Some(p) => p,
        None => build_debug_pi(&root_dir)?,
    };
    let sse = std::fs::read(
        root_dir
            .join("crates/pi-ai/tests/data/sse/conformance/scenarios/text_anthropic/01-text.sse"),
    )
    .map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let replies = (0..3).map(|_| Reply::sse(sse.clone())).collect();
        let (_, server) = ReplayServer::start(replies).await.map_err(|e| e.to_string())?;
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let root = tmp.path();
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
        }
        let models = json!({"providers": {"replay-anthropic": {
            "baseUrl": server.base_url(), "api": "anthropic-messages", "apiKey": "replay-test-key",
            "models": [{"id": "replay-model", "reasoning": false, "contextWindow": 128000,
                        "maxTokens": 16384, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}});
        std::fs::write(root.join("agent/models.json"), models.to_string()).map_err(|e| e.to_string())?;
        let sessions = root.join("sessions");
        let s = sessions.display().to_string();
        let common = ["-p", "--provider", "replay-anthropic", "--model", "replay-model"];

        println!("1. pi-rs writes a session");
        run(&pi, root, &[&common[..], &["--session-dir", &s, "Hello"]].concat())?;
        let file = std::fs::read_dir(&sessions)
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .ok_or("pi-rs wrote no session file")?;
        let rs_bytes = std::fs::read(&file).map_err(|e| e.to_string())?;
        let rs_lines = lines(&file)?;
        println!("   {} ({} lines)", file.display(), rs_lines.len());

        println!("2. the TS pi continues it");
        let f = file.display().to_string();
        run(&ts, root, &[&common[..], &["--session", &f, "Again"]].concat())?;
        let ts_bytes = std::fs::read(&file).map_err(|e| e.to_string())?;
        if !ts_bytes.starts_with(&rs_bytes) {
            return Err("the TS pi rewrote lines pi-rs had written".into());
        }
        let all = lines(&file)?;
        let added = &all[rs_lines.len()..];
        let leaf = rs_lines.last().and_then(|l| l["id"].as_str()).unwrap_or_default();
        if added.first().and_then(|e| e["parentId"].as_str()) != Some(leaf) {
            return Err("the TS pi's first new entry does not chain onto the pi-rs leaf".into());
        }
        println!("   +{} entries appended by the TS pi, chained onto {leaf}", added.len());

        println!("3. pi-rs resumes the file the TS pi extended");
        run(&pi, root, &[&common[..], &["--session", &f, "Once more"]].concat())?;
        let again = lines(&file)?;
        if again.len() <= all.len() {
            return Err("pi-rs appended nothing".into());
        }
        let ts_leaf = all.last().and_then(|l| l["id"].as_str()).unwrap_or_default();
        if again[all.len()]["parentId"].as_str() != Some(ts_leaf) {
            return Err("pi-rs's new entry does not chain onto the TS pi's leaf".into());
        }
        println!("   +{} entries appended by pi-rs; {} requests served", again.len() - all.len(), server.request_count());
        println!("interop: ok");
        Ok(())
    })
}

fn dirs_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}
