//! `/share`: the session's HTML viewer uploaded as a secret GitHub gist with the GitHub CLI,
//! as pi's `modes/interactive/session-share.js` does it after its own share service (Radius,
//! which pi-rs does not have): `gh auth status` first, then `gh gist create --public=false`,
//! and the viewer link `$PI_SHARE_VIEWER_URL#<gist id>` (default `https://pi.dev/session/`).
//! Esc while the gist is created cancels it (the `gh` process is killed).

use tokio::process::Command;

use super::{App, UiMsg};

/// pi's default share viewer.
const DEFAULT_VIEWER_URL: &str = "https://pi.dev/session/";

/// How a share ended: the text of pi's status line, or of its error.
pub(super) type ShareOutcome = Result<String, ShareError>;

/// Why `/share` made no gist; the text is shown as pi's `Error: …` notice.
#[derive(Debug, thiserror::Error)]
pub(super) enum ShareError {
    #[error("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/")]
    NoGh,
    #[error("GitHub CLI is not logged in. Run 'gh auth login' first.")]
    NotLoggedIn,
    #[error("Failed to export session: {0}")]
    Export(std::io::Error),
    #[error("Failed to create gist: gh could not be started")]
    GhNotStarted,
    #[error("Failed to create gist: {0}")]
    Gist(String),
    #[error("Failed to parse gist ID from gh output")]
    NoGistId,
}

/// The viewer link for a gist URL (its last path segment is the id), or `None` if the URL has
/// no id.
fn share_url(gist_url: &str, viewer: Option<&str>) -> Option<String> {
    let id = gist_url.rsplit('/').next().filter(|s| !s.is_empty())?;
    Some(format!("{}#{id}", viewer.unwrap_or(DEFAULT_VIEWER_URL)))
}

/// `gh` with `args`; `None` when it cannot be started (not installed).
async fn gh(args: &[&str]) -> Option<std::process::Output> {
    Command::new("gh")
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .ok()
}

async fn share(html: String, tx: &std::sync::mpsc::Sender<UiMsg>, wake: impl Fn()) -> ShareOutcome {
    match gh(&["auth", "status"]).await {
        None => {
            return Err(ShareError::NoGh);
        }
        Some(o) if !o.status.success() => {
            return Err(ShareError::NotLoggedIn);
        }
        Some(_) => {}
    }
    let dir = tempfile::Builder::new()
        .prefix("pi-share-")
        .tempdir()
        .map_err(ShareError::Export)?;
    let file = dir.path().join("session.html");
    std::fs::write(&file, html).map_err(ShareError::Export)?;
    let _ = tx.send(UiMsg::Status("Creating gist...".into()));
    wake();
    let path = file.to_string_lossy().into_owned();
    let out = gh(&["gist", "create", "--public=false", &path])
        .await
        .ok_or(ShareError::GhNotStarted)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr.trim();
        return Err(ShareError::Gist(
            if why.is_empty() { "Unknown error" } else { why }.to_owned(),
        ));
    }
    let gist = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let viewer = std::env::var("PI_SHARE_VIEWER_URL").ok();
    let url = share_url(&gist, viewer.as_deref().filter(|v| !v.is_empty()))
        .ok_or(ShareError::NoGistId)?;
    Ok(format!("Share URL: {url}\nGist: {gist}"))
}

impl App {
    /// `/share`.
    pub(super) fn share_command(&mut self) {
        if self.share.is_some() {
            self.transcript
                .notice("Warning: A share is already in progress", "warning");
            return;
        }
        let extras = self.session.html_extras();
        let rendered =
            crate::storage::export::render_html(&crate::sync::lock(self.session.store()), &extras);
        let html = match rendered {
            Ok(h) => h,
            Err(e) => {
                self.error_notice(format!("Failed to export session: {e}"));
                return;
            }
        };
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        let task = self.handle.spawn(async move {
            let w = waker.clone();
            let outcome = share(html, &tx, move || w.wake()).await;
            let _ = tx.send(UiMsg::Shared(outcome));
            waker.wake();
        });
        self.share = Some(task.abort_handle());
    }

    /// Esc while a share runs: it is cancelled. Returns whether one was.
    pub(super) fn cancel_share(&mut self) -> bool {
        let Some(task) = self.share.take() else {
            return false;
        };
        task.abort();
        self.status_notice("Share cancelled");
        true
    }

    /// A share ended.
    pub(super) fn shared(&mut self, outcome: ShareOutcome) {
        if self.share.take().is_none() {
            return;
        }
        match outcome {
            Ok(text) => self.status_notice(text),
            Err(e) => self.error_notice(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_link_carries_the_gist_id() {
        assert_eq!(
            share_url("https://gist.github.com/u/abc123", None).as_deref(),
            Some("https://pi.dev/session/#abc123")
        );
        assert_eq!(
            share_url("https://gist.github.com/u/abc123", Some("http://v/")).as_deref(),
            Some("http://v/#abc123")
        );
        assert_eq!(share_url("https://gist.github.com/u/", None), None);
        assert_eq!(share_url("", None), None);
    }
}
