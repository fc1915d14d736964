//! The one-request HTTP exchanges of the OAuth flows, with a deadline and the failure
//! descriptions pi's `fetch` gives.

use std::time::Duration;

use tokio::time::Instant;

/// A finished HTTP exchange: status, reason phrase and body text.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub status_text: String,
    pub body: String,
}

impl Reply {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Why an exchange produced no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// The deadline passed (pi: `AbortSignal.timeout` → `TimeoutError`).
    Timeout,
    /// No connection, a reset, a bad URL… (undici: `TypeError: fetch failed`), with the cause.
    Failed(String),
}

impl FetchError {
    /// `error.message` of the JavaScript error.
    pub(crate) fn message(&self) -> &'static str {
        match self {
            FetchError::Timeout => "The operation was aborted due to timeout",
            FetchError::Failed(_) => "fetch failed",
        }
    }

    /// `name: message` plus the cause, as pi's Anthropic flow describes errors.
    pub(crate) fn details(&self) -> String {
        match self {
            FetchError::Timeout => format!("TimeoutError: {}", self.message()),
            FetchError::Failed(cause) => format!("TypeError: fetch failed; cause=Error: {cause}"),
        }
    }
}

/// One request: method, URL, headers and an optional body.
pub(crate) struct Exchange<'a> {
    pub method: reqwest::Method,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<String>,
}

/// Sends `exchange` and reads the whole body, all before `deadline`.
pub(crate) async fn send(exchange: Exchange<'_>, deadline: Instant) -> Result<Reply, FetchError> {
    let Some(client) = crate::providers::driver::http_client() else {
        return Err(FetchError::Failed("no HTTP client".into()));
    };
    let mut request = client.request(exchange.method, exchange.url);
    for (name, value) in exchange.headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = exchange.body {
        request = request.body(body);
    }
    let work = async {
        let response = request.send().await.map_err(describe)?;
        let status = response.status();
        let body = response.text().await.map_err(describe)?;
        Ok(Reply {
            status: status.as_u16(),
            status_text: status.canonical_reason().unwrap_or("").to_owned(),
            body,
        })
    };
    match tokio::time::timeout_at(deadline, work).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout),
    }
}

fn describe(error: reqwest::Error) -> FetchError {
    use std::error::Error as _;
    let mut cause = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        cause = inner.to_string();
        source = inner.source();
    }
    FetchError::Failed(cause)
}

/// `application/x-www-form-urlencoded` of `fields`, in order (`URLSearchParams`).
pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in fields {
        out.append_pair(k, v);
    }
    out.finish()
}

/// `Date.now()` in milliseconds.
pub(crate) fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

/// Waits `delay`, but never past `deadline`; `false` when the deadline cut it short.
pub(crate) async fn sleep_before(delay: Duration, deadline: Instant) -> bool {
    let wake = Instant::now() + delay;
    if wake > deadline {
        tokio::time::sleep_until(deadline).await;
        return false;
    }
    tokio::time::sleep_until(wake).await;
    true
}
