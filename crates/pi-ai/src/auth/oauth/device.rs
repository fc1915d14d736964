//! The polling loop of the device-code logins (RFC 8628), as pi-ai 0.85.1
//! `auth/oauth/device-code.js` runs it for GitHub Copilot, xAI and Kimi: at least 1 s between
//! polls (5 s when the server names no interval), `slow_down` takes the server's new interval
//! or adds 5 s, and the code's lifetime bounds the whole wait.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::OAuthError;

const MINIMUM_INTERVAL: Duration = Duration::from_secs(1);
const DEFAULT_INTERVAL_SECONDS: f64 = 5.0;
const SLOW_DOWN_INCREMENT: Duration = Duration::from_secs(5);
const TIMEOUT_MESSAGE: &str = "Device flow timed out";
const SLOW_DOWN_TIMEOUT_MESSAGE: &str = "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.";

/// One poll's answer.
#[derive(Debug)]
pub(crate) enum Poll<T> {
    /// Authorized: the result.
    Complete(T),
    /// Not yet (`authorization_pending`).
    Pending,
    /// Poll less often (`slow_down`), with the server's new interval in seconds if it gave one.
    SlowDown(Option<f64>),
    /// Denied, expired or broken: the login's error text.
    Failed(String),
}

fn interval_of(seconds: f64) -> Duration {
    Duration::from_millis((seconds * 1000.0).floor().max(0.0) as u64).max(MINIMUM_INTERVAL)
}

/// Polls with `poll` until it completes or fails, or the device code expires
/// (`expires_in` seconds; `None`: never).
///
/// Errors: the poll's failure; `Device flow timed out` (with pi's clock-drift hint after a
/// `slow_down`); a poll's own error.
pub(crate) async fn poll_device_flow<T, F, Fut>(
    interval: Option<f64>,
    expires_in: Option<f64>,
    wait_before_first_poll: bool,
    mut poll: F,
) -> Result<T, OAuthError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll<T>, OAuthError>>,
{
    let start = Instant::now();
    let deadline = expires_in
        .filter(|s| s.is_finite())
        .map(|s| start + Duration::from_millis((s.max(0.0) * 1000.0) as u64));
    let remaining =
        |deadline: Option<Instant>| deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let mut interval = interval_of(interval.unwrap_or(DEFAULT_INTERVAL_SECONDS));
    let mut slow_downs = 0u32;
    if wait_before_first_poll {
        let left = remaining(deadline);
        if left.is_none_or(|l| !l.is_zero()) {
            tokio::time::sleep(left.map_or(interval, |l| l.min(interval))).await;
        }
    }
    while deadline.is_none_or(|d| Instant::now() < d) {
        match poll().await? {
            Poll::Complete(value) => return Ok(value),
            Poll::Failed(message) => return Err(OAuthError::new(message)),
            Poll::Pending => {}
            Poll::SlowDown(server) => {
                slow_downs += 1;
                interval = match server.filter(|s| s.is_finite() && *s > 0.0) {
                    Some(s) => interval_of(s),
                    None => (interval + SLOW_DOWN_INCREMENT).max(MINIMUM_INTERVAL),
                };
            }
        }
        let left = remaining(deadline);
        if left.is_some_and(|l| l.is_zero()) {
            break;
        }
        tokio::time::sleep(left.map_or(interval, |l| l.min(interval))).await;
    }
    Err(OAuthError::new(if slow_downs > 0 {
        SLOW_DOWN_TIMEOUT_MESSAGE
    } else {
        TIMEOUT_MESSAGE
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    type Answer = std::future::Ready<Result<Poll<&'static str>, OAuthError>>;
    type Times = Arc<Mutex<Vec<Duration>>>;

    /// A scripted server: each poll takes the next answer and records when it came.
    fn scripted(answers: Vec<Poll<&'static str>>) -> (Times, impl FnMut() -> Answer) {
        let start = Instant::now();
        let times = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&times);
        let mut answers = answers.into_iter();
        let poll = move || {
            seen.lock().unwrap().push(Instant::now() - start);
            std::future::ready(Ok(answers.next().unwrap_or(Poll::Pending)))
        };
        (times, poll)
    }

    #[tokio::test(start_paused = true)]
    async fn polls_at_the_interval_and_slows_down_as_told() {
        let (times, poll) = scripted(vec![
            Poll::Pending,
            Poll::SlowDown(Some(7.0)),
            Poll::SlowDown(None),
            Poll::Complete("token"),
        ]);
        let got = poll_device_flow(Some(2.0), Some(900.0), true, poll).await;
        assert_eq!(got.unwrap(), "token");
        let secs: Vec<u64> = times.lock().unwrap().iter().map(|d| d.as_secs()).collect();
        // Waits one interval first; 2 s; the server's 7 s; then 7 + 5 s.
        assert_eq!(secs, vec![2, 4, 11, 23]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_interval_below_a_second_or_missing_is_raised() {
        let (times, poll) = scripted(vec![Poll::Pending, Poll::Complete("t")]);
        poll_device_flow(Some(0.0), None, false, poll)
            .await
            .unwrap();
        assert_eq!(
            times.lock().unwrap().clone(),
            vec![Duration::ZERO, Duration::from_secs(1)]
        );
        let (times, poll) = scripted(vec![Poll::Pending, Poll::Complete("t")]);
        poll_device_flow(None, None, false, poll).await.unwrap();
        assert_eq!(times.lock().unwrap()[1], Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn the_code_expires_with_pis_texts() {
        let (times, poll) = scripted(vec![]);
        let err = poll_device_flow(Some(2.0), Some(5.0), true, poll)
            .await
            .unwrap_err();
        assert_eq!(err.message(), "Device flow timed out");
        // Polled at 2 s and 4 s; the last wait is cut to the code's end at 5 s.
        assert_eq!(times.lock().unwrap().len(), 2);
        let (_, poll) = scripted(vec![Poll::SlowDown(None)]);
        let err = poll_device_flow(Some(1.0), Some(3.0), false, poll)
            .await
            .unwrap_err();
        assert!(
            err.message()
                .starts_with("Device flow timed out after one or more slow_down responses."),
            "{err}"
        );
        let (_, poll) = scripted(vec![Poll::Failed(
            "Device flow failed: expired_token".into(),
        )]);
        let err = poll_device_flow(Some(1.0), Some(30.0), true, poll)
            .await
            .unwrap_err();
        assert_eq!(err.message(), "Device flow failed: expired_token");
    }
}
