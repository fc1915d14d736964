//! The interactive mode under use, pi-rs alone, in a 100×30 pseudo-terminal:
//!
//! - keystroke to echo: a session of 10,000 messages is resumed, then 200 letters are typed
//!   one at a time; each is timed from the write to the end of the frame that shows it (the
//!   synchronized-output end, `CSI ?2026 l`, after the letter was drawn). Goal: p99 ≤ 5 ms.
//! - full-screen redraws: a prompt streamed from the replay server, then one width change
//!   and one height change; the output is searched for the clears of a full redraw
//!   (`CSI 2J`, `CSI 3J`). Goal: 1 (the width change).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Child;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use pi_ai::testkit::{ReplayServer, Reply, SseBuilder};
use serde_json::json;

use super::interactive::{openpty, pty_command};
use super::workloads::models_json;

/// Longest anything may take before the measurement counts as failed.
const LIMIT: Duration = Duration::from_secs(30);

/// Letters typed for the echo figures.
const KEYSTROKES: usize = 200;

/// What was measured.
#[derive(Clone, Debug)]
pub struct KeyFigures {
    /// Keystroke to echo, milliseconds: median.
    pub echo_p50_ms: f64,
    /// Keystroke to echo, milliseconds: 99th percentile.
    pub echo_p99_ms: f64,
    /// `CSI 2J` written during the scripted exchange.
    pub clear_screen: usize,
    /// `CSI 3J` (scrollback cleared) written during it.
    pub clear_scrollback: usize,
}

/// A running `pi` on a pty, its output read on a thread.
struct Running {
    child: Child,
    master: std::fs::File,
    out: Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Running {
    fn spawn(pi: &Path, root: &Path, extra: &[&str]) -> Result<Running, String> {
        let (master, slave) = openpty(30, 100)?;
        let mut cmd = pty_command(pi, root, extra, &slave)?;
        let child = cmd.spawn().map_err(|e| format!("{}: {e}", pi.display()))?;
        drop(slave);
        let mut reader = master.try_clone().map_err(|e| e.to_string())?;
        let (tx, out) = channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Ok(Running {
            child,
            master,
            out,
            seen: Vec::new(),
        })
    }

    /// Reads until `done` holds for the output after `from`; answers cursor queries.
    fn wait(&mut self, from: usize, done: impl Fn(&[u8]) -> bool) -> Result<(), String> {
        let end = Instant::now() + LIMIT;
        loop {
            if done(&self.seen[from.min(self.seen.len())..]) {
                return Ok(());
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("the screen did not show what was waited for".into());
            }
            let chunk = self
                .out
                .recv_timeout(left)
                .map_err(|_| "the program went quiet or away".to_owned())?;
            if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                self.send(b"\x1b[1;1R")?;
            }
            self.seen.extend_from_slice(&chunk);
        }
    }

    /// Reads whatever arrives for `time`.
    fn drain_for(&mut self, time: Duration) {
        let end = Instant::now() + time;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.out.recv_timeout(left) {
                Ok(chunk) => self.seen.extend_from_slice(&chunk),
                Err(_) => break,
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.master
            .write_all(bytes)
            .map_err(|e| format!("pty write: {e}"))
    }

    fn resize(&self, rows: u16, cols: u16) -> Result<(), String> {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: sets the window size of a descriptor we own from a winsize we own; the
        // kernel signals the terminal's foreground group (SIGWINCH).
        let r = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        if r != 0 {
            return Err(format!("resize: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Ctrl+C (clears the editor), Ctrl+D, and the exit.
    fn quit(mut self) -> Result<(), String> {
        self.send(b"\x03")?;
        std::thread::sleep(Duration::from_millis(600));
        self.send(b"\x04")?;
        let end = Instant::now() + LIMIT;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ok(());
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err("the program did not exit".into());
            }
            self.drain_for(Duration::from_millis(20));
        }
    }
}

/// A root with agent, home, tmp and work directories and models pointing at `base_url`.
fn root(base_url: &str) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::Builder::new()
        .prefix("pi-bench-keys-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    for sub in ["agent", "home", "tmp", "work", "sessions"] {
        std::fs::create_dir_all(dir.path().join(sub)).map_err(|e| e.to_string())?;
    }
    let write = |rel: &str, text: String| {
        std::fs::write(dir.path().join(rel), text).map_err(|e| e.to_string())
    };
    write("agent/models.json", models_json(base_url).to_string())?;
    write(
        "agent/settings.json",
        r#"{"retry":{"enabled":false}}"#.to_owned(),
    )?;
    Ok(dir)
}

/// A session file of `messages` alternating user and assistant messages, all in the context.
fn session_of(path: &Path, cwd: &Path, messages: usize) -> Result<(), String> {
    let mut out = String::new();
    let header = json!({"type": "session", "version": 3, "id": "0195f3c1-0000-7000-8000-00000000b001",
        "timestamp": "2026-12-01T00:00:00.000Z", "cwd": cwd.display().to_string()});
    out.push_str(&header.to_string());
    out.push('\n');
    let mut parent: Option<String> = None;
    for i in 0..messages {
        let id = format!("{i:08x}");
        let message = if i % 2 == 0 {
            json!({"role": "user", "content": [{"type": "text", "text": format!("question {i}: how does part {i} work?")}],
                   "timestamp": 1_764_547_200_000_i64 + i as i64})
        } else {
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Part {i} reads its input, checks it and writes the **result**.")}],
                   "api": "anthropic-messages", "provider": "replay-anthropic", "model": "replay-model",
                   "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                   "stopReason": "stop", "timestamp": 1_764_547_200_000_i64 + i as i64})
        };
        let entry = json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-12-01T00:00:00.000Z",
                           "message": message});
        out.push_str(&entry.to_string());
        out.push('\n');
        parent = Some(id);
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// `bytes` without escape sequences (CSI, OSC, APC and two-byte ones).
fn visible(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0x1b {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'[') => {
                i += 2;
                while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
                i += 1;
            }
            Some(b']' | b'_' | b'P') => {
                i += 2;
                while i < bytes.len() && bytes[i] != 0x07 && bytes[i] != 0x1b {
                    i += 1;
                }
                i += if bytes.get(i) == Some(&0x1b) { 2 } else { 1 };
            }
            _ => i += 2,
        }
    }
    out
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// The percentile `p` (0–100) of sorted `v`, nearest rank.
fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

fn echo_times(pi: &Path) -> Result<Vec<f64>, String> {
    let dir = root("http://127.0.0.1:9")?;
    let session = dir.path().join("sessions/long.jsonl");
    session_of(&session, &dir.path().join("work"), 10_000)?;
    let s = session.display().to_string();
    let mut p = Running::spawn(pi, dir.path(), &["--session", &s])?;
    p.wait(0, |b| count(b, b"(auto)") > 0)?;
    p.drain_for(Duration::from_millis(500));
    let mut times = Vec::with_capacity(KEYSTROKES);
    for i in 0..KEYSTROKES {
        let c = b"etaoinshrdlu"[i % 12];
        let from = p.seen.len();
        let t = Instant::now();
        p.send(&[c])?;
        p.wait(from, |b| {
            b.windows(8).any(|w| w == b"\x1b[?2026l") && visible(b).contains(&c)
        })?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        // Whatever else the frame brings (none expected) is not the next key's.
        p.drain_for(Duration::from_millis(2));
    }
    p.quit()?;
    Ok(times)
}

fn answer(text: &str) -> Reply {
    let sse = SseBuilder::new()
        .event("message_start", &json!({"type":"message_start","message":{"id":"msg_b","type":"message",
            "role":"assistant","model":"replay-model","content":[],"stop_reason":null,"stop_sequence":null,
            "usage":{"input_tokens":10,"output_tokens":1}}}))
        .event("content_block_start", &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}));
    let mut sse = sse;
    for word in text.split_inclusive(' ') {
        sse = sse.event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":word}}),
        );
    }
    Reply::sse(
        sse.event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":0}),
        )
        .event(
            "message_delta",
            &json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},
                "usage":{"output_tokens":5}}),
        )
        .event("message_stop", &json!({"type":"message_stop"}))
        .build(),
    )
}

fn redraws(pi: &Path, rt: &tokio::runtime::Runtime) -> Result<(usize, usize), String> {
    let text = "The answer comes in many small words so that the stream takes a while. ".repeat(20);
    let (_, server) = rt
        .block_on(async { ReplayServer::start(vec![answer(&text)]).await })
        .map_err(|e| format!("replay server: {e}"))?;
    let dir = root(&server.base_url())?;
    let mut p = Running::spawn(pi, dir.path(), &[])?;
    p.wait(0, |b| count(b, b"(auto)") > 0)?;
    let start = p.seen.len();
    p.send(b"tell me something long\r")?;
    // The run's end: the footer shows the answer's usage (a count of the answer's words
    // would depend on where the lines wrap).
    p.wait(start, |b| count(&visible(b), "↑10 ↓".as_bytes()) > 0)?;
    p.drain_for(Duration::from_millis(300));
    p.resize(30, 80)?;
    p.drain_for(Duration::from_millis(600));
    p.resize(24, 80)?;
    p.drain_for(Duration::from_millis(600));
    let out = p.seen[start..].to_vec();
    p.quit()?;
    Ok((count(&out, b"\x1b[2J"), count(&out, b"\x1b[3J")))
}

/// Measures both figures with `pi`.
///
/// Errors: the program did not start, echo, answer or exit in time.
pub fn run(pi: &Path, rt: &tokio::runtime::Runtime) -> Result<KeyFigures, String> {
    eprintln!("== interactive keys: echo with 10,000 messages, redraws on resize");
    let mut times = echo_times(pi)?;
    times.sort_by(f64::total_cmp);
    let (clear_screen, clear_scrollback) = redraws(pi, rt)?;
    Ok(KeyFigures {
        echo_p50_ms: percentile(&times, 50.0),
        echo_p99_ms: percentile(&times, 99.0),
        clear_screen,
        clear_scrollback,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_not_text_and_percentiles_are_nearest_rank() {
        let frame = b"\x1b[?2026h\x1b[5Ga\x1b]8;;x\x07b\x1b_Gq=2;AA\x1b\\c\x1b[?2026l";
        assert_eq!(visible(frame), b"abc");
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        assert_eq!(count(b"\x1b[2J\x1b[H\x1b[3J\x1b[2J", b"\x1b[2J"), 2);
    }
}
