//! The interactive mode's start, side by side: time from spawn to the first frame with the
//! editor ready (the footer's `(auto)` on the terminal), and the peak RSS at that moment
//! (`VmHWM`), in a 100×30 pseudo-terminal that answers the cursor-position query the way a
//! terminal does. Each run then sends Ctrl+D and waits for the exit.
//!
//! The resume variant starts with `--session` on a kept copy of the generated 100 MiB session
//! (one per program, resumed again every run, as a user resumes their session): the first
//! frame then also holds the resumed transcript.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::process::{Sample, Summary, alternate};
use super::workloads::{Outcome, copy_session, models_json};

/// Longest a start may take before the run counts as failed.
const START_LIMIT: Duration = Duration::from_secs(20);

/// A pseudo-terminal pair of `rows`×`cols`: (master, slave).
pub(super) fn openpty(rows: u16, cols: u16) -> Result<(std::fs::File, OwnedFd), String> {
    let mut master = -1;
    let mut slave = -1;
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: out-pointers to two ints and a winsize we own; no name buffer or termios.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &ws,
        )
    };
    if r != 0 {
        return Err(format!("openpty: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: openpty returned two descriptors that nothing else owns.
    unsafe {
        Ok((
            std::fs::File::from(OwnedFd::from_raw_fd(master)),
            OwnedFd::from_raw_fd(slave),
        ))
    }
}

/// `VmHWM` of `pid` in KiB (0 when unreadable).
/// `program --provider replay-anthropic --model replay-model <extra>` in `root/work` with the
/// scratch `HOME`, `TMPDIR` and agent dir under `root`, a clean environment, and `slave` as its
/// controlling terminal (stdin, stdout and stderr): the pi under test in the pty workloads.
pub(super) fn pty_command<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    root: &Path,
    extra: &[S],
    slave: &OwnedFd,
) -> Result<Command, String> {
    let io = |fd: &OwnedFd| -> Result<Stdio, String> {
        Ok(Stdio::from(fd.try_clone().map_err(|e| e.to_string())?))
    };
    let p = |sub: &str| root.join(sub).display().to_string();
    let mut cmd = Command::new(program);
    cmd.args(["--provider", "replay-anthropic", "--model", "replay-model"])
        .args(extra)
        .current_dir(root.join("work"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", p("home"))
        .env("TMPDIR", p("tmp"))
        .env("PI_CODING_AGENT_DIR", p("agent"))
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("TERM", "xterm-256color")
        .stdin(io(slave)?)
        .stdout(io(slave)?)
        .stderr(io(slave)?);
    // SAFETY: runs in the forked child before exec; setsid and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(cmd)
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A kept root for resuming `session` with `program`: `<dir>/again-interactive-<program>/`,
/// made afresh (with its session copy) when this is called.
fn resume_root(program: &Path, session: &Path) -> Result<PathBuf, String> {
    let dir = session.parent().ok_or("the session has no directory")?;
    let tag: String = program
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let root = dir.join(format!("again-interactive-{tag}"));
    match std::fs::remove_dir_all(&root) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", root.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(root.join("work")).map_err(|e| e.to_string())?;
    copy_session(session, &root.join("sess.jsonl"), &root.join("work"))?;
    Ok(root)
}

/// One start of `program` in a fresh root, or in the kept root `resume` with `--session` on
/// its `sess.jsonl`.
fn once(program: &Path, resume: Option<&Path>) -> Result<Sample, String> {
    let temp;
    let r = match resume {
        Some(r) => r,
        None => {
            temp = tempfile::Builder::new()
                .prefix("pi-bench-tui-")
                .tempdir()
                .map_err(|e| e.to_string())?;
            temp.path()
        }
    };
    for sub in ["agent", "home", "tmp", "work"] {
        std::fs::create_dir_all(r.join(sub)).map_err(|e| e.to_string())?;
    }
    // No request is made: the provider only has to exist.
    std::fs::write(
        r.join("agent/models.json"),
        models_json("http://127.0.0.1:9").to_string(),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(
        r.join("agent/settings.json"),
        r#"{"retry":{"enabled":false}}"#,
    )
    .map_err(|e| e.to_string())?;
    let (mut master, slave) = openpty(30, 100)?;
    let mut extra: Vec<std::ffi::OsString> = Vec::new();
    if resume.is_some() {
        extra.push("--session".into());
        extra.push(r.join("sess.jsonl").into());
    }
    let mut cmd = pty_command(program, r, &extra, &slave)?;
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    drop(slave);
    drop(cmd);
    let pid = child.id();
    let mut seen = Vec::new();
    let mut buf = [0u8; 65536];
    let (wall_s, rss) = loop {
        if start.elapsed() > START_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no first frame within {START_LIMIT:?}"));
        }
        let n = master
            .read(&mut buf)
            .map_err(|e| format!("pty read: {e}"))?;
        if n == 0 {
            return Err("the program closed the terminal before its first frame".into());
        }
        let chunk = &buf[..n];
        if chunk.windows(4).any(|w| w == b"\x1b[6n") {
            master
                .write_all(b"\x1b[1;1R")
                .map_err(|e| format!("pty write: {e}"))?;
        }
        seen.extend_from_slice(chunk);
        if seen.windows(6).any(|w| w == b"(auto)") {
            break (start.elapsed().as_secs_f64(), peak_rss_kib(pid));
        }
    };
    master
        .write_all(b"\x04")
        .map_err(|e| format!("pty write: {e}"))?;
    // Keep reading so the program never blocks on a full terminal while it exits.
    let reader =
        std::thread::spawn(move || while matches!(master.read(&mut buf), Ok(n) if n > 0) {});
    let status = child.wait().map_err(|e| e.to_string())?;
    drop(reader);
    Ok(Sample {
        wall_s,
        peak_rss_kib: rss,
        exit_code: status.code().unwrap_or(-1),
    })
}

/// Starts pi-rs and, if given, the TS pi `runs` times each, alternating, after one warm-up
/// start of each; with `session`, each resumes its kept copy of it.
pub fn run(rs: &Path, ts: Result<&Path, String>, runs: usize, session: Option<&Path>) -> Outcome {
    eprintln!(
        "== side by side: interactive {}",
        if session.is_some() { "resume" } else { "start" }
    );
    let root = |p: &Path| session.map(|s| resume_root(p, s)).transpose();
    let rs_root = match root(rs) {
        Ok(r) => r,
        Err(why) => return Outcome::Skipped(why),
    };
    if let Err(why) = once(rs, rs_root.as_deref()) {
        return Outcome::Skipped(format!(
            "target/release/pi cannot start interactively ({why})"
        ));
    }
    let ts = ts.and_then(|p| {
        let r = root(p)?;
        once(p, r.as_deref())
            .map(|_| (p, r))
            .map_err(|why| format!("the TS pi failed: {why}"))
    });
    let result = match &ts {
        Ok((p, r)) => {
            let mut b = || once(p, r.as_deref());
            alternate(runs, || once(rs, rs_root.as_deref()), Some(&mut b))
        }
        Err(_) => alternate(runs, || once(rs, rs_root.as_deref()), None),
    };
    match result {
        Ok((a, b)) => Outcome::Measured {
            rs: Summary::of(&a),
            ts: ts.map(|_| Summary::of(&b)),
        },
        Err(why) => Outcome::Skipped(format!("a measured run failed: {why}")),
    }
}
