//! A small styling seam: a [`Paint`] wraps text in the escape sequences that colour it, so
//! components take colours from a theme without knowing about themes.

/// A pair of escape sequences put around text (`start` + text + `end`). The default paints
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paint {
    /// Written before the text, e.g. `\x1b[38;5;244m`.
    pub start: String,
    /// Written after it, e.g. `\x1b[39m` (resets only what `start` set).
    pub end: String,
}

impl Paint {
    /// A paint from its two sequences.
    pub fn new(start: impl Into<String>, end: impl Into<String>) -> Self {
        Self {
            start: start.into(),
            end: end.into(),
        }
    }

    /// No styling.
    pub fn plain() -> Self {
        Self::default()
    }

    /// Whether this paint changes nothing.
    pub fn is_plain(&self) -> bool {
        self.start.is_empty() && self.end.is_empty()
    }

    /// `text` with the paint around it (unchanged when plain or empty).
    pub fn apply(&self, text: &str) -> String {
        if self.is_plain() || text.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(self.start.len() + text.len() + self.end.len());
        out.push_str(&self.start);
        out.push_str(text);
        out.push_str(&self.end);
        out
    }
}
