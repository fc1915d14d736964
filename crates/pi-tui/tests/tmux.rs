//! The chat example in tmux, read back with `capture-pane -p -S -` (history included): tmux
//! keeps erased rows and reflows in ways the screen model does not. CI installs tmux; a
//! missing tmux fails the test rather than skipping it.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{WAIT, answer_lines, chat_binary};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(cols: u16, rows: u16) -> Self {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "tmux is needed for this test (apt-get install tmux)");
        let socket = format!("pi-tui-test-{}-{cols}", std::process::id());
        let t = Tmux { socket };
        let cmd = format!(
            "env PI_TUI_CHAT_DELTA_MS=1 NO_COLOR=1 {}; sleep 60",
            chat_binary().display()
        );
        t.run(&[
            "new-session",
            "-d",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            &cmd,
        ]);
        t
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output();
        match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => panic!("tmux {args:?}: {e}"),
        }
    }

    fn capture_all(&self) -> Vec<String> {
        let s = self.run(&["capture-pane", "-p", "-S", "-"]);
        let mut v: Vec<String> = s.lines().map(|l| l.trim_end().to_owned()).collect();
        while v.last().is_some_and(|l| l.is_empty()) {
            v.pop();
        }
        v
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&[String]) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            let c = self.capture_all();
            if pred(&c) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}:\n{}",
                c.join("\n")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn check_once(capture: &[String], width: u16) {
    let lines = answer_lines(width);
    for l in lines
        .iter()
        .filter(|l| !l.trim().is_empty() && !l.chars().all(|c| c == '─'))
    {
        if lines.iter().filter(|x| *x == l).count() != 1 {
            continue;
        }
        let n = capture.iter().filter(|x| *x == l).count();
        assert_eq!(
            n,
            1,
            "{l:?} appears {n} times at width {width}:\n{}",
            capture.join("\n")
        );
    }
}

fn finished(c: &[String]) -> bool {
    c.iter().any(|l| l.contains("aligned.")) && !c.iter().any(|l| l.contains("Working"))
}

#[test]
fn tmux_history_holds_every_committed_line_once_across_resizes() {
    let t = Tmux::new(100, 30);
    t.wait_for("the prompt", |c| {
        c.iter().any(|l| l.contains("type a prompt"))
    });
    t.run(&["send-keys", "hello", "Enter"]);
    t.wait_for("the answer", finished);
    std::thread::sleep(Duration::from_millis(200));
    check_once(&t.capture_all(), 100);

    // Width change: one replay at the new width.
    t.run(&["resize-window", "-x", "72", "-y", "30"]);
    t.wait_for("the replay", |c| c.iter().any(|l| l.contains("72x30")));
    std::thread::sleep(Duration::from_millis(300));
    check_once(&t.capture_all(), 72);

    // Height only: the live region is redrawn, history stays.
    t.run(&["resize-window", "-x", "72", "-y", "18"]);
    t.wait_for("the redraw", |c| c.iter().any(|l| l.contains("72x18")));
    std::thread::sleep(Duration::from_millis(300));
    let c = t.capture_all();
    check_once(&c, 72);
    assert!(
        c.iter().rev().take(4).any(|l| l.contains("ctrl+o replay"))
            && c.iter().rev().take(5).any(|l| l.starts_with('─')),
        "editor and footer at the bottom"
    );
    t.run(&["send-keys", "C-d"]);
}
