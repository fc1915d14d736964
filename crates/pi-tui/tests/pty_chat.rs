//! The chat example in a pty, its output in the screen model: what a user sees.

use std::time::Duration;

use pi_tui::components::FRAMES;
use pi_tui::testkit::{Answers, PtySession, ScreenModel};

use crate::support::{WAIT, answer_lines, spawn_chat};

/// Whether the answer finished streaming (no spinner on screen).
fn done(m: &mut ScreenModel) -> bool {
    let s = m.screen_text();
    !FRAMES.iter().any(|f| s.contains(f))
}

fn exchange(s: &mut PtySession, prompt: &str) {
    if let Err(e) = s.wait_for_text("type a prompt", WAIT) {
        panic!("{e}");
    }
    if let Err(e) = s.send(format!("{prompt}\r").as_bytes()) {
        panic!("{e}");
    }
    if let Err(e) = s.wait_for("the answer starts", WAIT, |m| {
        m.screen_text().contains(FRAMES[0])
            || m.all_lines().iter().any(|l| l.contains("Reading a large"))
    }) {
        panic!("{e}");
    }
    if let Err(e) = s.wait_for("the answer ends", WAIT, done) {
        panic!("{e}");
    }
    if let Err(e) = s.settle(Duration::from_millis(200)) {
        panic!("{e}");
    }
}

/// The answer's lines that are distinctive (non-blank, unique within the answer).
fn distinctive(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| {
            // Blank lines and rules (the input line's rules look the same) are not
            // distinctive.
            !l.trim().is_empty()
                && !l.chars().all(|c| c == '─')
                && lines.iter().filter(|x| x == l).count() == 1
        })
        .cloned()
        .collect()
}

/// `lines` without the blank rows directly above the docked editor and footer (its last four
/// rows: rule, input, rule, footer), which a shrunken live region keeps.
fn without_pad(mut lines: Vec<String>) -> Vec<String> {
    let dock = lines
        .iter()
        .rposition(|l| l.contains("ctrl+o replay"))
        .map_or(lines.len(), |f| f.saturating_sub(3));
    let mut start = dock;
    while start > 0 && lines[start - 1].is_empty() {
        start -= 1;
    }
    lines.drain(start..dock);
    lines
}

fn quit_and_check_restored(s: &mut PtySession) {
    if let Err(e) = s.send(b"\x04") {
        panic!("{e}");
    }
    match s.wait_exit(WAIT) {
        Ok(code) => assert_eq!(code, 0),
        Err(e) => panic!("{e}"),
    }
    let m = s.model();
    assert!(!m.cursor_hidden(), "cursor shown again");
    assert!(!m.bracketed_paste(), "bracketed paste off");
    assert!(!m.alternate_screen());
}

#[test]
fn streamed_answer_is_committed_once_and_the_terminal_restored() {
    let mut s = spawn_chat(30, 100, Answers::default(), &[]);
    exchange(&mut s, "hello");
    let want = distinctive(&answer_lines(100));
    assert!(want.len() > 20);
    if let Err(e) = s.model().check_each_once(&want) {
        panic!("{e}");
    }
    assert!(
        s.model().scrollback_clears().is_empty(),
        "no CSI 3J without a width change"
    );
    assert!(s.model().wrapped_rows().is_empty());
    // The user's prompt sits above the answer, once.
    let all = s.model().all_lines();
    assert_eq!(all.iter().filter(|l| l.trim() == "hello").count(), 1);
    quit_and_check_restored(&mut s);
}

#[test]
fn screen_after_a_width_change_equals_a_fresh_run_at_that_width() {
    let mut a = spawn_chat(30, 100, Answers::default(), &[]);
    exchange(&mut a, "hello");
    if let Err(e) = a.resize(30, 70) {
        panic!("{e}");
    }
    if let Err(e) = a.wait_for("replay", WAIT, |m| m.scrollback_clears().len() == 1) {
        panic!("{e}");
    }
    let _ = a.settle(Duration::from_millis(300));
    let mut b = spawn_chat(30, 70, Answers::default(), &[]);
    exchange(&mut b, "hello");
    // The transcript (scrollback + screen) is the same; the screen shows its tail. (A live
    // region that shrinks at the screen's bottom keeps its rows as blank rows above the
    // editor, whether it shrank in the fresh run or before the replay; the replay draws it
    // at its final size.)
    let all_b = without_pad(b.model().all_lines());
    assert_eq!(without_pad(a.model().all_lines()), all_b);
    let mut screen_a = without_pad(a.model().screen_lines());
    while screen_a.last().is_some_and(|l| l.is_empty()) {
        screen_a.pop();
    }
    assert_eq!(screen_a, all_b[all_b.len() - screen_a.len()..]);
    quit_and_check_restored(&mut a);
    quit_and_check_restored(&mut b);
}

#[test]
fn height_change_keeps_history_and_writes_no_scrollback_clear() {
    let mut s = spawn_chat(30, 90, Answers::default(), &[]);
    exchange(&mut s, "hello");
    for rows in [20u16, 34, 12] {
        if let Err(e) = s.resize(rows, 90) {
            panic!("{e}");
        }
        let _ = s.settle(Duration::from_millis(300));
        let want = distinctive(&answer_lines(90));
        if let Err(e) = s.model().check_each_once(&want) {
            panic!("rows {rows}: {e}");
        }
        let screen = s.model().screen_lines();
        assert!(
            screen.last().is_some_and(|l| l.contains("ctrl+o replay"))
                && screen.iter().any(|l| l.starts_with('─')),
            "editor and footer at the bottom at {rows} rows:\n{}",
            screen.join("\n")
        );
    }
    assert!(s.model().scrollback_clears().is_empty());
    quit_and_check_restored(&mut s);
}

#[test]
fn sigterm_restores_the_terminal() {
    let mut s = spawn_chat(20, 60, Answers::default(), &[]);
    if let Err(e) = s.wait_for_text("type a prompt", WAIT) {
        panic!("{e}");
    }
    assert!(s.model().bracketed_paste());
    let pid = s.pid().unwrap_or(0) as i32;
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    match s.wait_exit(WAIT) {
        Ok(code) => assert_eq!(code, 128 + 15),
        Err(e) => panic!("{e}"),
    }
    assert!(!s.model().bracketed_paste() && !s.model().cursor_hidden());
}

#[test]
fn a_panic_restores_the_terminal() {
    let mut s = spawn_chat(20, 60, Answers::default(), &[]);
    if let Err(e) = s.wait_for_text("type a prompt", WAIT) {
        panic!("{e}");
    }
    let _ = s.send(b"/panic\r");
    match s.wait_exit(WAIT) {
        Ok(code) => assert_ne!(code, 0),
        Err(e) => panic!("{e}"),
    }
    let m = s.model();
    assert!(!m.bracketed_paste() && !m.cursor_hidden());
    assert!(m.all_lines().iter().any(|l| l.contains("panic requested")));
}

#[test]
fn ctrl_z_restores_then_sets_up_again() {
    let mut s = spawn_chat(20, 60, Answers::default(), &[]);
    if let Err(e) = s.wait_for_text("type a prompt", WAIT) {
        panic!("{e}");
    }
    let before = s.model().bytes().len();
    let _ = s.send(b"\x1a");
    let pid = s.pid().unwrap_or(0) as i32;
    // In a pty without a job-control shell the stop may be ignored (orphaned process
    // group); continue it either way.
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(pid, libc::SIGCONT);
    }
    if let Err(e) = s.wait_for("set up again", WAIT, |m| {
        let b = String::from_utf8_lossy(&m.bytes()[before..]).into_owned();
        match b.find("\x1b[?2004l") {
            Some(i) => b[i..].contains("\x1b[?2004h"),
            None => false,
        }
    }) {
        panic!("{e}");
    }
    // Still usable afterwards.
    exchange(&mut s, "again");
    quit_and_check_restored(&mut s);
}

#[test]
fn silent_terminal_and_tiny_sizes_work() {
    for (rows, cols) in [(5u16, 10u16), (0, 0), (3, 1)] {
        let mut s = spawn_chat(rows, cols, Answers::silent(), &[]);
        let _ = s.settle(Duration::from_millis(300));
        let _ = s.send(b"hi\r");
        if let Err(e) = s.wait_for("answer streamed", WAIT, |m| {
            m.all_lines().len() > 30 && done(m)
        }) {
            panic!("{rows}x{cols}: {e}");
        }
        let _ = s.settle(Duration::from_millis(200));
        assert!(
            s.model().wrapped_rows().is_empty(),
            "{rows}x{cols}: no line wider than the screen"
        );
        quit_and_check_restored(&mut s);
    }
}

#[test]
fn the_example_edits_with_the_toolkit_editor_and_decoder() {
    let mut s = spawn_chat(24, 80, Answers::default(), &[]);
    if let Err(e) = s.wait_for_text("type a prompt", WAIT) {
        panic!("{e}");
    }
    // A large bracketed paste collapses to pi's marker in the editor.
    let pasted: String = (1..=12).map(|i| format!("pasted {i}\n")).collect();
    if let Err(e) = s.send(format!("\x1b[200~{pasted}\x1b[201~").as_bytes()) {
        panic!("{e}");
    }
    if let Err(e) = s.wait_for_text("[paste #1 +13 lines]", WAIT) {
        panic!("{e}");
    }
    // Ctrl+C clears the editor instead of quitting while it holds text.
    if let Err(e) = s.send(b"\x03") {
        panic!("{e}");
    }
    if let Err(e) = s.wait_for("the editor to clear", WAIT, |m| {
        !m.screen_text().contains("[paste #1")
    }) {
        panic!("{e}");
    }
    // Shift+Enter as xterm's modifyOtherKeys sends it (what tmux forwards) inserts a new
    // line; Ctrl+W deletes the word before the cursor; Enter submits both lines.
    if let Err(e) = s.send(b"first line\x1b[27;2;13~second oops\x17line\r") {
        panic!("{e}");
    }
    if let Err(e) = s.wait_for("the answer ends", WAIT, |m| {
        done(m) && m.all_lines().iter().any(|l| l.contains("Reading a large"))
    }) {
        panic!("{e}");
    }
    let lines = s.model().all_lines();
    let first = lines.iter().position(|l| l.trim() == "first line");
    let second = lines.iter().position(|l| l.trim() == "second line");
    assert!(
        matches!((first, second), (Some(a), Some(b)) if b == a + 1),
        "the prompt's two lines in the transcript:\n{}",
        lines.join("\n")
    );
    assert!(!lines.iter().any(|l| l.contains("oops")));
    quit_and_check_restored(&mut s);
}
