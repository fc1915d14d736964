//! `pi.exec` (pi 0.85.0 `core/exec.js`): no shell, the runner's cwd by default, exit codes,
//! a program that cannot start, and kills by timeout and by signal.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_coding_agent::extensions::*;
use tokio_util::sync::CancellationToken;

use crate::extensions_rig::{BoxedExtension, ext};

/// A `pi` handle of a runner in `cwd` (kept alive with it).
fn handle(cwd: &std::path::Path) -> (ExtensionRunner, Pi) {
    let kept: Arc<Mutex<Option<Pi>>> = Arc::default();
    let keep = kept.clone();
    let runner = ExtensionRunner::builder(cwd)
        .extension(BoxedExtension(ext("exec.ts", move |pi| {
            *keep.lock().unwrap() = Some(pi.pi());
            Ok(())
        })))
        .build();
    let pi = kept.lock().unwrap().clone().unwrap();
    (runner, pi)
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn runs_without_a_shell_in_the_runner_cwd_and_reports_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (_runner, pi) = handle(dir.path());
    // No shell: `$HOME` and the space stay as given.
    let r = pi
        .exec(
            "printf",
            &args(&["%s|", "a b", "$HOME"]),
            ExecOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        r,
        ExecResult {
            stdout: "a b|$HOME|".into(),
            stderr: String::new(),
            code: 0,
            killed: false,
        }
    );
    let r = pi.exec("pwd", &[], ExecOptions::default()).await.unwrap();
    assert_eq!(
        r.stdout.trim_end(),
        dir.path().canonicalize().unwrap().display().to_string()
    );
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let r = pi
        .exec(
            "sh",
            &args(&["-c", "pwd; echo oops >&2; exit 3"]),
            ExecOptions {
                cwd: Some(sub.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.code, 3);
    assert_eq!(r.stderr, "oops\n");
    assert!(r.stdout.trim_end().ends_with("/sub"), "{r:?}");
    assert!(!r.killed);
}

#[tokio::test]
async fn a_program_that_cannot_start_gives_code_1_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let (_runner, pi) = handle(dir.path());
    let r = pi
        .exec("no-such-program-pi-rs", &[], ExecOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r,
        ExecResult {
            code: 1,
            ..ExecResult::default()
        }
    );
}

/// A timeout or a cancelled signal sends SIGTERM: `killed: true`, and the code of a process
/// ended by a signal is 0 (Node's `null ?? 0`); output written before the kill is kept.
#[tokio::test]
async fn the_timeout_and_the_signal_kill_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let (_runner, pi) = handle(dir.path());
    let r = pi
        .exec(
            "sh",
            &args(&["-c", "echo started; exec sleep 30"]),
            ExecOptions {
                timeout: Some(Duration::from_millis(300)),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        r,
        ExecResult {
            stdout: "started\n".into(),
            stderr: String::new(),
            code: 0,
            killed: true,
        }
    );

    let signal = CancellationToken::new();
    let cancel = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let r = pi
        .exec(
            "sleep",
            &args(&["30"]),
            ExecOptions {
                signal: Some(signal),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.killed);
    assert_eq!(r.code, 0);

    // Already cancelled: killed at once.
    let gone = CancellationToken::new();
    gone.cancel();
    let r = pi
        .exec(
            "sleep",
            &args(&["30"]),
            ExecOptions {
                signal: Some(gone),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.killed);
    // A zero timeout is no limit.
    let r = pi
        .exec(
            "true",
            &[],
            ExecOptions {
                timeout: Some(Duration::ZERO),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(!r.killed);
    assert_eq!(r.code, 0);
}
