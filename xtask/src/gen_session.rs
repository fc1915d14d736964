//! `cargo xtask gen-session <out.jsonl> [--mb N] [--cwd DIR]`: writes a large, valid pi v3
//! session file for the resume benchmarks (generated files stay out of the repository).
//!
//! The entry mix is that of the project's `gen_session.py`: cycles of user (~60 words) /
//! assistant with text and a `read` tool call / tool result (~250 words) / assistant text
//! (~80 words), about 2.4 KB per cycle, with a compaction after every 5,000 entries and one
//! at the end whose `firstKeptEntryId` is the last cycle's user message, so the live context
//! is small while the file is big. Deterministic: the same size gives the same file.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

/// 2026-06-01T10:00:00Z, the time of the first entry, in seconds since the epoch.
const T0_SECS: i64 = 1_780_308_000;

const WORDS: [&str; 15] = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "while",
    "reading",
    "files",
    "and",
    "editing",
    "code",
    "carefully",
];

/// SplitMix64: a small deterministic generator (no dependency needed for benchmark data).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn text(&mut self, words: usize) -> String {
        let mut out = String::with_capacity(words * 6);
        for i in 0..words {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[(self.next() % WORDS.len() as u64) as usize]);
        }
        out
    }
}

/// What [`generate`] wrote.
#[derive(Clone, Copy, Debug)]
pub struct Generated {
    /// Bytes written, header included.
    pub bytes: u64,
    /// Entries written, header excluded.
    pub entries: usize,
}

/// Writer state: the open file, the chain of ids and the clock.
struct Gen {
    out: BufWriter<File>,
    rng: Rng,
    seen: HashSet<String>,
    parent: Option<String>,
    i: i64,
    size: u64,
}

impl Gen {
    fn iso(&self) -> String {
        chrono::DateTime::from_timestamp(T0_SECS + self.i, 0)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default()
    }

    fn ms(&self) -> i64 {
        (T0_SECS + self.i) * 1000
    }

    fn new_id(&mut self) -> String {
        loop {
            let id = format!("{:08x}", self.rng.next() as u32);
            if self.seen.insert(id.clone()) {
                return id;
            }
        }
    }

    /// Writes one entry (`type`, `id`, `parentId`, `timestamp`, then `rest`, pi's key order).
    fn put(&mut self, kind: &str, rest: Value) -> std::io::Result<String> {
        let id = self.new_id();
        let mut entry = Map::new();
        entry.insert("type".into(), kind.into());
        entry.insert("id".into(), id.clone().into());
        entry.insert("parentId".into(), self.parent.clone().into());
        entry.insert("timestamp".into(), self.iso().into());
        if let Value::Object(rest) = rest {
            entry.extend(rest);
        }
        let mut line = Value::Object(entry).to_string();
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.size += line.len() as u64;
        self.parent = Some(id.clone());
        self.i += 1;
        Ok(id)
    }
}

fn usage() -> Value {
    json!({"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1500,
           "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0, "cacheWrite": 0, "total": 0.0081}})
}

/// Writes a session of at least `mb` MiB to `out` whose header names `cwd`.
///
/// Errors: any I/O error creating or writing `out`.
pub fn generate(out: &Path, mb: f64, cwd: &str) -> std::io::Result<Generated> {
    let file = File::create(out)?;
    let mut g = Gen {
        out: BufWriter::with_capacity(1 << 20, file),
        rng: Rng(7),
        seen: HashSet::new(),
        parent: None,
        i: 0,
        size: 0,
    };
    let r = g.rng.next();
    let session_id = format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        r >> 32,
        (r >> 16) & 0xffff,
        r & 0xfff,
        (r >> 20) & 0xfff,
        g.rng.next() & 0xffff_ffff_ffff
    );
    let header = json!({"type": "session", "version": 3, "id": session_id, "timestamp": g.iso(), "cwd": cwd});
    writeln!(g.out, "{header}")?;
    let target = (mb * 1024.0 * 1024.0) as u64;
    let mut since = 0;
    let mut recent: Vec<String> = Vec::new();
    while g.size < target {
        let user = json!({"message": {"role": "user", "content": [{"type": "text", "text": g.rng.text(60)}], "timestamp": g.ms()}});
        recent.push(g.put("message", user)?);
        let call_id = format!(
            "toolu_{:024x}",
            u128::from(g.rng.next()) << 32 | u128::from(g.rng.next() as u32)
        );
        let call = json!({"message": {"role": "assistant", "content": [
                {"type": "text", "text": g.rng.text(40)},
                {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": format!("src/file{}.rs", g.i)}}],
            "api": "anthropic-messages", "provider": "replay-anthropic", "model": "replay-model", "usage": usage(),
            "stopReason": "toolUse", "timestamp": g.ms()}});
        recent.push(g.put("message", call)?);
        let result = json!({"message": {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
            "content": [{"type": "text", "text": g.rng.text(250)}], "isError": false, "timestamp": g.ms()}});
        recent.push(g.put("message", result)?);
        let answer = json!({"message": {"role": "assistant", "content": [{"type": "text", "text": g.rng.text(80)}],
            "api": "anthropic-messages", "provider": "replay-anthropic", "model": "replay-model", "usage": usage(),
            "stopReason": "stop", "timestamp": g.ms()}});
        recent.push(g.put("message", answer)?);
        since += 4;
        if since >= 5000 || g.size >= target {
            // The last cycle's user message is the first entry kept.
            let keep = recent[recent.len() - 4].clone();
            let compaction = json!({"summary": format!("## Goal\n{}", g.rng.text(200)), "firstKeptEntryId": keep,
                "tokensBefore": 150000, "details": {"readFiles": ["src/a.rs"], "modifiedFiles": []}});
            g.put("compaction", compaction)?;
            since = 0;
            recent.clear();
        }
    }
    g.out.flush()?;
    Ok(Generated {
        bytes: g.size + header.to_string().len() as u64 + 1,
        entries: g.i as usize,
    })
}

/// `gen-session` command line: `<out> [--mb N] [--cwd DIR]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut out = None;
    let mut mb = 100.0;
    let mut cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| ".".into());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--mb" => {
                mb = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|v: &f64| *v > 0.0)
                    .ok_or("--mb needs a positive number")?;
            }
            "--cwd" => cwd = it.next().ok_or("--cwd needs a directory")?.clone(),
            other if out.is_none() && !other.starts_with("--") => out = Some(other.to_owned()),
            other => return Err(format!("unexpected argument: {other}")),
        }
    }
    let out = out.ok_or("usage: cargo xtask gen-session <out.jsonl> [--mb N] [--cwd DIR]")?;
    let g = generate(Path::new(&out), mb, &cwd).map_err(|e| format!("{out}: {e}"))?;
    println!(
        "{out}: {:.1} MiB, {} entries",
        g.bytes as f64 / 1048576.0,
        g.entries
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_session_is_valid_jsonl_with_a_final_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let g = generate(&path, 0.05, "/w").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.len() as u64, g.bytes);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), g.entries + 1);
        assert_eq!(lines[0]["type"], "session");
        assert_eq!(lines[0]["cwd"], "/w");
        let last = lines.last().unwrap();
        assert_eq!(last["type"], "compaction");
        // Every entry's parent is the previous entry; the kept entry is a user message.
        for w in lines[1..].windows(2) {
            assert_eq!(w[1]["parentId"], w[0]["id"]);
        }
        let kept = lines
            .iter()
            .find(|l| l["id"] == last["firstKeptEntryId"])
            .unwrap();
        assert_eq!(kept["message"]["role"], "user");
        assert_eq!(lines[1]["timestamp"], "2026-06-01T10:00:00.000Z");
    }

    #[test]
    fn generated_session_opens_with_a_small_live_context() {
        use pi_coding_agent::storage::{SessionStore, build_session_context};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let g = generate(&path, 0.3, "/w").unwrap();
        let store = SessionStore::open(&path, "/w").unwrap();
        assert_eq!(store.len(), g.entries);
        assert!(store.warnings().is_empty(), "{:?}", store.warnings());
        let ctx = build_session_context(&store).unwrap();
        // The compaction summary plus the kept last cycle (user, assistant, toolResult,
        // assistant).
        assert_eq!(ctx.messages.len(), 5);
    }

    #[test]
    fn same_size_gives_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        generate(&a, 0.02, "/w").unwrap();
        generate(&b, 0.02, "/w").unwrap();
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    }
}
