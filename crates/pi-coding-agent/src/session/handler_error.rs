//! The failure of a hook handler: an extension's handler, command or shortcut (pi: a thrown
//! value; its text is the error message). It sits in the session layer because the session's
//! hooks (`SessionHooks::run_command`) return it; the extension API re-exports it.

use std::fmt;

/// A handler failure (pi: a thrown value; its text is the error message).
///
/// `String`, `&str`, `std::io::Error` and `serde_json::Error` convert into it, so handlers
/// can use `?`; anything else displayable goes through [`HandlerError::new`] (e.g.
/// `.map_err(|e| HandlerError::new(e.to_string()))`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerError(String);

impl HandlerError {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HandlerError {}

impl From<String> for HandlerError {
    fn from(s: String) -> Self {
        HandlerError(s)
    }
}

impl From<&str> for HandlerError {
    fn from(s: &str) -> Self {
        HandlerError(s.to_owned())
    }
}

impl From<std::io::Error> for HandlerError {
    fn from(e: std::io::Error) -> Self {
        HandlerError(e.to_string())
    }
}

impl From<serde_json::Error> for HandlerError {
    fn from(e: serde_json::Error) -> Self {
        HandlerError(e.to_string())
    }
}

impl From<HandlerError> for String {
    fn from(e: HandlerError) -> Self {
        e.0
    }
}
