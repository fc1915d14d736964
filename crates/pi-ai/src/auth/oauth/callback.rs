//! The local callback server of a browser login: one `GET <path>?code=…&state=…` on a fixed
//! port, answered with a small page of our own, as pi-ai 0.85.1's Anthropic (port 53692,
//! `/callback`) and Codex (port 1455, `/auth/callback`) flows run it. The host is
//! `PI_OAUTH_CALLBACK_HOST`, else `127.0.0.1`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::OAuthError;

/// The code (and state) the browser brought back.
#[derive(Clone, PartialEq, Eq)]
pub struct Callback {
    /// The authorization code.
    pub code: String,
    /// The `state` parameter.
    pub state: String,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback").finish_non_exhaustive()
    }
}

/// A bound callback server.
#[derive(Debug)]
pub struct CallbackServer {
    listener: TcpListener,
    path: String,
    /// The state a callback must bring (`None`: the flow has none, e.g. OpenRouter's).
    expected_state: Option<String>,
    /// The login's error text for an `error` parameter (its description).
    denied: fn(&str) -> String,
}

fn did_not_complete(error: &str) -> String {
    format!("Authentication did not complete. Error: {error}")
}

/// pi's callback host: `PI_OAUTH_CALLBACK_HOST`, else `127.0.0.1`.
pub fn callback_host() -> String {
    std::env::var("PI_OAUTH_CALLBACK_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".to_owned())
}

const MAX_REQUEST: usize = 16 * 1024;

fn page(title: &str, message: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{message}</p></body></html>"
    )
}

impl CallbackServer {
    /// Binds `host:port`. Errors: the port is taken, or the host does not resolve.
    pub async fn bind(
        host: &str,
        port: u16,
        path: &str,
        expected_state: &str,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind((host, port)).await?;
        Ok(CallbackServer {
            listener,
            path: path.to_owned(),
            expected_state: Some(expected_state.to_owned()),
            denied: did_not_complete,
        })
    }

    /// Accepts a callback without a `state` (a flow that sends none); `denied` makes the
    /// error text of an `error` parameter (given its `error_description`, else the error).
    pub fn without_state(mut self, denied: fn(&str) -> String) -> Self {
        self.expected_state = None;
        self.denied = denied;
        self
    }

    /// The bound port.
    pub fn port(&self) -> Option<u16> {
        self.listener.local_addr().ok().map(|a| a.port())
    }

    /// Serves requests until one brings a code with the expected state (other paths get a
    /// 404, a wrong state or a missing code a 400 and the wait goes on), at most `timeout`.
    ///
    /// Errors: `Login timed out`; an `error` parameter: `Authentication did not complete. Error: <e>`.
    pub async fn wait(&self, timeout: Duration) -> Result<Callback, OAuthError> {
        let work = async {
            loop {
                let Ok((mut socket, _)) = self.listener.accept().await else {
                    continue;
                };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 2048];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&buf);
                let target = text.split_whitespace().nth(1).unwrap_or("/");
                let url = url::Url::parse(&format!("http://localhost{target}")).ok();
                let (status, body, outcome) = match url {
                    Some(url) if url.path() == self.path => {
                        let get = |k: &str| {
                            url.query_pairs()
                                .find(|(n, _)| n == k)
                                .map(|(_, v)| v.into_owned())
                        };
                        let state = match &self.expected_state {
                            Some(_) => get("state"),
                            None => Some(String::new()),
                        };
                        let described = if self.expected_state.is_some() {
                            get("error")
                        } else {
                            get("error_description").or_else(|| get("error"))
                        };
                        match (get("error").and(described), get("code"), state) {
                            (Some(e), _, _) => (
                                400,
                                page("Sign-in failed", "Authentication did not complete."),
                                Some(Err(OAuthError::new((self.denied)(&e)))),
                            ),
                            (None, Some(code), Some(state))
                                if self.expected_state.as_ref().is_none_or(|s| *s == state)
                                    && !code.is_empty() =>
                            {
                                (
                                    200,
                                    page(
                                        "Signed in",
                                        "Authentication completed. You can close this window.",
                                    ),
                                    Some(Ok(Callback { code, state })),
                                )
                            }
                            (None, Some(_), Some(_)) => {
                                (400, page("Sign-in failed", "State mismatch."), None)
                            }
                            _ => (
                                400,
                                page("Sign-in failed", "Missing code or state parameter."),
                                None,
                            ),
                        }
                    }
                    _ => (404, page("Not found", "Callback route not found."), None),
                };
                let reason = match status {
                    200 => "OK",
                    400 => "Bad Request",
                    _ => "Not Found",
                };
                let response = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
                if let Some(outcome) = outcome {
                    return outcome;
                }
            }
        };
        tokio::time::timeout(timeout, work)
            .await
            .unwrap_or_else(|_| Err(OAuthError::new("Login timed out")))
    }
}
