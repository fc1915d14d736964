//! pi's start-up check of tmux's keyboard settings: inside tmux, modified keys (Shift+Enter,
//! Alt+Enter, Ctrl+Enter) reach pi only with `extended-keys` on, and pi decodes them best in
//! the `csi-u` format. pi-coding-agent 0.85.0 `dist/modes/interactive/interactive-mode.js`
//! (`checkTmuxKeyboardSetup`) asks tmux with `tmux show -gv <option>` and warns once.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `tmux show` may take before it is killed and counted as unanswered (pi's 2 s).
const SHOW_TIMEOUT: Duration = Duration::from_secs(2);

/// pi's warning when `extended-keys` is neither `on` nor `always`.
pub(super) const EXTENDED_KEYS_OFF: &str = "tmux extended-keys is off. Modified Enter keys may not work. Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux.";

/// pi's warning when `extended-keys-format` is `xterm`.
pub(super) const FORMAT_XTERM: &str = "tmux extended-keys-format is xterm. Pi works best with csi-u. Add `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux.";

/// The warning to show for tmux's keyboard settings, if any. `None` outside tmux (no `TMUX`
/// in the environment), when tmux cannot be asked, or when the settings suit pi. Blocks for up
/// to two `tmux show` runs (each at most [`SHOW_TIMEOUT`]): call it off the UI thread.
pub(super) fn warning() -> Option<&'static str> {
    std::env::var_os("TMUX")?;
    let keys = show("extended-keys")?;
    judge(&keys, show("extended-keys-format").as_deref())
}

/// pi's rule: the `extended-keys` value decides first, then the format; an unanswered format
/// says nothing.
pub(super) fn judge(extended_keys: &str, format: Option<&str>) -> Option<&'static str> {
    if extended_keys != "on" && extended_keys != "always" {
        return Some(EXTENDED_KEYS_OFF);
    }
    (format == Some("xterm")).then_some(FORMAT_XTERM)
}

/// `tmux show -gv <option>`, trimmed; `None` when tmux is missing, fails, or takes too long.
fn show(option: &str) -> Option<String> {
    let mut child = Command::new("tmux")
        .args(["show", "-gv", option])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + SHOW_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    let mut out = String::new();
    // The value is one short line: it fits the pipe, so reading after the exit loses nothing.
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    Some(out.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_and_the_xterm_format_warn_as_pi_does() {
        assert_eq!(judge("off", Some("csi-u")), Some(EXTENDED_KEYS_OFF));
        assert_eq!(judge("", None), Some(EXTENDED_KEYS_OFF));
        assert_eq!(judge("on", Some("xterm")), Some(FORMAT_XTERM));
        assert_eq!(judge("always", Some("xterm")), Some(FORMAT_XTERM));
        assert_eq!(judge("on", Some("csi-u")), None);
        assert_eq!(judge("always", None), None);
    }
}
