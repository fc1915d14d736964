//! What a login shows and asks while it runs (pi-ai 0.85.1's `OAuthInteraction`: `notify`
//! and `prompt`). A login runs as a task; the terminal UI reads [`LoginMessage`]s from the
//! receiver [`LoginUi::new`] returns and answers prompts on the one-shot sender each carries.
//! A UI that drops the sender (Esc, the dialog closed) cancels the prompt: the login ends
//! with `Login cancelled`, pi's text.

use tokio::sync::{mpsc, oneshot};

use super::OAuthError;

/// pi's cancellation text; the UI says nothing more when a login ends with it.
pub const LOGIN_CANCELLED: &str = "Login cancelled";

/// Something a login shows (pi's `notify` events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginEvent {
    /// A browser page to open, and what to do there (`auth_url`).
    AuthUrl {
        /// The authorization URL.
        url: String,
        /// The instructions under it.
        instructions: String,
    },
    /// A device code to enter on a verification page (`device_code`).
    DeviceCode {
        /// The code the user types.
        user_code: String,
        /// The page to type it on.
        verification_uri: String,
    },
    /// A step's progress (`progress`).
    Progress(String),
}

/// How a prompt is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    /// A line of text (pi's `text`).
    Text,
    /// One of these `(id, label)` options; the answer is the id (pi's `select`).
    Select(Vec<(String, String)>),
    /// The paste-the-code fallback of a browser login, open while the callback is awaited
    /// (pi's `manual_code`).
    ManualCode,
}

/// A question a login asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginPrompt {
    /// How it is answered.
    pub kind: PromptKind,
    /// The question.
    pub message: String,
    /// An example answer.
    pub placeholder: Option<String>,
}

/// A login's message to its UI.
#[derive(Debug)]
pub enum LoginMessage {
    /// Show this.
    Event(LoginEvent),
    /// Ask this; the answer goes on the sender (dropping it cancels).
    Prompt(LoginPrompt, oneshot::Sender<String>),
}

/// The login's side of the channel to its UI.
#[derive(Debug, Clone)]
pub struct LoginUi {
    tx: mpsc::UnboundedSender<LoginMessage>,
}

impl LoginUi {
    /// A channel: the login's end and the UI's.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<LoginMessage>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (LoginUi { tx }, rx)
    }

    /// Shows `event` (a UI that is gone is ignored: the login is being cancelled anyway).
    pub fn notify(&self, event: LoginEvent) {
        let _ = self.tx.send(LoginMessage::Event(event));
    }

    /// Asks `prompt` and returns the receiver of the answer at once, for a login that waits
    /// for something else meanwhile (the paste fallback beside the callback server).
    pub fn ask(&self, prompt: LoginPrompt) -> oneshot::Receiver<String> {
        let (reply, answer) = oneshot::channel();
        let _ = self.tx.send(LoginMessage::Prompt(prompt, reply));
        answer
    }

    /// Asks `prompt` and waits for the answer.
    ///
    /// Errors: `Login cancelled` when the UI drops the question.
    pub async fn prompt(&self, prompt: LoginPrompt) -> Result<String, OAuthError> {
        self.ask(prompt)
            .await
            .map_err(|_| OAuthError::new(LOGIN_CANCELLED))
    }
}

/// pi's `parseAuthorizationInput` of the Anthropic and Codex flows: a full redirect URL
/// (its `code` and `state`), `code#state`, a query string with `code=`, or the bare code.
/// Returns `(code, state)`; both `None` for blank input.
pub fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let get = |pairs: url::form_urlencoded::Parse<'_>, name: &str| {
        pairs
            .clone()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Ok(url) = url::Url::parse(value) {
        let pairs = url.query_pairs();
        return (get(pairs, "code"), get(pairs, "state"));
    }
    if let Some((code, state)) = value.split_once('#') {
        // `split("#", 2)`: what follows a second `#` is dropped.
        let state = state.split('#').next().unwrap_or("");
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=") {
        let pairs = url::form_urlencoded::parse(value.as_bytes());
        return (get(pairs, "code"), get(pairs, "state"));
    }
    (Some(value.to_owned()), None)
}

/// The code of a pasted answer whose state, when it carries one, is `expected`.
///
/// Errors: `mismatch` (the provider's text) for another state; `Missing authorization code`.
pub(crate) fn pasted_code(
    input: &str,
    expected: &str,
    mismatch: &str,
) -> Result<(String, String), OAuthError> {
    let (code, state) = parse_authorization_input(input);
    if let Some(state) = &state
        && !state.is_empty()
        && state != expected
    {
        return Err(OAuthError::new(mismatch));
    }
    let code = code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::new("Missing authorization code"))?;
    let state = state
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| expected.to_owned());
    Ok((code, state))
}
