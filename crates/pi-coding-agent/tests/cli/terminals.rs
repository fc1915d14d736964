//! Mode selection through the real binary with terminals (pseudo-terminals), pipes and
//! `/dev/null` on stdin and stdout (pi 0.85.0 `resolveAppMode`).
//!
//! The sandbox has no credentials, so a run that reaches a mode ends at its first prompt with
//! pi's no-key refusal; [`reached_mode`] tells the modes apart by what they wrote before it
//! (json mode: the session header line); rpc mode ends at end of input (exit 0, no output).

use crate::support;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

use support::pi_bin::{Output, Sandbox};

/// A pseudo-terminal pair: (master, slave).
fn openpty() -> (File, File) {
    // SAFETY: plain libc calls on descriptors we own; results are checked.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(slave >= 0, "open slave");
        (
            File::from(OwnedFd::from_raw_fd(master)),
            File::from(OwnedFd::from_raw_fd(slave)),
        )
    }
}

#[derive(Clone, Copy)]
enum End {
    Tty,
    Pipe,
    Null,
}

/// Runs pi with stdin and stdout as asked (stderr always a pipe); `input` is written to a
/// piped stdin. Terminal output is collected from the master side.
fn run(args: &[&str], stdin: End, stdout: End, input: &str) -> Output {
    let sb = Sandbox::new();
    let (master, slave) = openpty();
    let mut cmd = sb.command(args);
    cmd.stderr(Stdio::piped());
    cmd.stdin(match stdin {
        End::Tty => Stdio::from(slave.try_clone().unwrap()),
        End::Pipe => Stdio::piped(),
        End::Null => Stdio::null(),
    });
    cmd.stdout(match stdout {
        End::Tty => Stdio::from(slave.try_clone().unwrap()),
        End::Pipe => Stdio::piped(),
        End::Null => Stdio::null(),
    });
    let mut child = cmd.spawn().unwrap();
    // On a terminal stdin, `input` is typed at the master (`\x04` at a line start is EOF).
    if matches!(stdin, End::Tty) && !input.is_empty() {
        master
            .try_clone()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    // The command keeps its copies of the slave open; the master sees EOF only when the
    // child's are the last ones.
    drop(cmd);
    drop(slave);
    let reader = std::thread::spawn(move || {
        let mut master = master;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        // EIO once the last slave descriptor (the child's) is closed.
        while let Ok(n) = master.read(&mut chunk) {
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        buf
    });
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(input.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let mut result = Output::from(out);
    if matches!(stdout, End::Tty) {
        let tty = reader.join().unwrap();
        result.stdout = String::from_utf8_lossy(&tty).replace("\r\n", "\n");
    }
    result
}

/// The mode `run_mode` was entered with: print mode writes only the no-key refusal (stderr,
/// exit 1), json mode writes the session header line first, rpc mode waits for commands and
/// exits 0 without a word at end of input.
fn reached_mode(out: &Output) -> Option<String> {
    if let Some(rest) = out.stderr.split("cannot run the ").nth(1) {
        return Some(rest.split(' ').next()?.to_owned());
    }
    if out.code == 0 && out.stderr.is_empty() && out.stdout.is_empty() {
        return Some("rpc".into());
    }
    if out.code != 1
        || !out
            .stderr
            .starts_with("No API key found for the selected model.\n")
    {
        return None;
    }
    if out.stdout.is_empty() {
        return Some("print".into());
    }
    let header: serde_json::Value = serde_json::from_str(out.stdout.lines().next()?).ok()?;
    (header["type"] == "session" && out.stdout.lines().count() == 1).then(|| "json".into())
}

#[test]
fn print_flag_selects_print_mode_on_terminals() {
    let out = run(&["-p", "hello"], End::Tty, End::Tty, "");
    assert_eq!(reached_mode(&out).as_deref(), Some("print"), "{out:?}");
}

#[test]
fn json_and_rpc_modes_hold_on_terminals_and_pipes() {
    for (stdin, stdout) in [(End::Tty, End::Tty), (End::Null, End::Pipe)] {
        let json = run(&["--mode", "json", "hello"], stdin, stdout, "");
        assert_eq!(reached_mode(&json).as_deref(), Some("json"), "{json:?}");
        let rpc = run(&["--mode", "rpc"], stdin, stdout, "\x04");
        assert_eq!(reached_mode(&rpc).as_deref(), Some("rpc"), "{rpc:?}");
    }
}

#[test]
fn a_non_terminal_end_selects_print_mode() {
    for (stdin, stdout) in [
        (End::Tty, End::Pipe),
        (End::Null, End::Tty),
        (End::Pipe, End::Tty),
        (End::Null, End::Null),
    ] {
        let out = run(&["hello"], stdin, stdout, "piped text");
        assert_eq!(reached_mode(&out).as_deref(), Some("print"), "{out:?}");
    }
}

#[test]
fn metadata_commands_work_on_terminals() {
    let help = run(&["--help"], End::Tty, End::Tty, "");
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Usage:\n  pi [options]"), "{help:?}");
    let version = run(&["-v"], End::Tty, End::Tty, "");
    assert_eq!(
        (version.code, version.stdout.trim()),
        (0, pi_coding_agent::VERSION)
    );
}

#[test]
fn resume_outside_the_interactive_mode_gives_the_notice() {
    // On terminals `-r` opens the picker (the interactive tests drive it); without them
    // there is no picker to show.
    for (stdin, stdout) in [(End::Null, End::Pipe), (End::Tty, End::Pipe)] {
        let out = run(&["-r"], stdin, stdout, "");
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stderr
                .starts_with("Error: the session picker (--resume) needs the interactive mode"),
            "{out:?}"
        );
    }
}
