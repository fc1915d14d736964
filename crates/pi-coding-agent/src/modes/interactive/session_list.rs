//! What the session selector shows of each file without loading it: the session's name and
//! its first user message, read from the head of the file (at most [`HEAD_BYTES`]), and the
//! file's age.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// How much of a session file the selector reads.
pub(crate) const HEAD_BYTES: u64 = 256 * 1024;

/// The name (the last `session_info` name within the head) and the first user message's
/// text (its first line), when the head has them.
pub(crate) fn summary(path: &Path) -> (Option<String>, Option<String>) {
    let (name, first, _) = summary_with_count(path);
    (name, first)
}

/// [`summary`] and the number of message entries within the head (pi's `messageCount`).
pub(crate) fn summary_with_count(path: &Path) -> (Option<String>, Option<String>, usize) {
    let Ok(file) = std::fs::File::open(path) else {
        return (None, None, 0);
    };
    let (mut name, mut first, mut count) = (None, None, 0);
    for line in BufReader::new(file.take(HEAD_BYTES)).split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(v) = pi_ai::json_depth::from_slice::<Value>(&line, 64) else {
            continue;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("session_info") => {
                if let Some(n) = v.get("name").and_then(Value::as_str) {
                    let n = n.trim();
                    name = (!n.is_empty()).then(|| n.to_owned());
                }
            }
            Some("message") => {
                count += 1;
                let m = &v["message"];
                if first.is_none() && m.get("role").and_then(Value::as_str) == Some("user") {
                    first = user_text(&m["content"]);
                }
            }
            _ => {}
        }
    }
    (name, first, count)
}

/// A parsed session search (pi's `parseSearchQuery`): `re:<pattern>` (case-insensitive), or
/// words matched fuzzily and `"quoted phrases"` matched exactly (whitespace-insensitive).
#[derive(Debug)]
pub(crate) enum SessionQuery {
    /// `re:` with a valid pattern.
    Regex(regex::Regex),
    /// `re:` with no or an invalid pattern: nothing matches.
    BadRegex,
    /// Tokens: (is a phrase, text).
    Tokens(Vec<(bool, String)>),
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl SessionQuery {
    /// Parses `query`; unbalanced quotes fall back to plain words, as in pi.
    pub(crate) fn parse(query: &str) -> Self {
        let q = query.trim();
        if let Some(pattern) = q.strip_prefix("re:") {
            let pattern = pattern.trim();
            return match regex::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
            {
                Ok(r) if !pattern.is_empty() => Self::Regex(r),
                _ => Self::BadRegex,
            };
        }
        let mut tokens = Vec::new();
        let mut buf = String::new();
        let mut in_quote = false;
        let flush = |buf: &mut String, phrase: bool, tokens: &mut Vec<(bool, String)>| {
            let v = buf.trim().to_owned();
            buf.clear();
            if !v.is_empty() {
                tokens.push((phrase, v));
            }
        };
        for ch in q.chars() {
            if ch == '"' {
                flush(&mut buf, in_quote, &mut tokens);
                in_quote = !in_quote;
            } else if !in_quote && ch.is_whitespace() {
                flush(&mut buf, false, &mut tokens);
            } else {
                buf.push(ch);
            }
        }
        if in_quote {
            return Self::Tokens(
                q.split_whitespace()
                    .map(|t| (false, t.to_owned()))
                    .collect(),
            );
        }
        flush(&mut buf, false, &mut tokens);
        Self::Tokens(tokens)
    }

    /// pi's `matchSession`: the score (lower is better) when `text` matches.
    pub(crate) fn score(&self, text: &str) -> Option<f64> {
        match self {
            Self::BadRegex => None,
            Self::Regex(r) => r
                .find(text)
                .map(|m| text[..m.start()].chars().count() as f64 * 0.1),
            Self::Tokens(tokens) => {
                let mut total = 0.0;
                let mut normalized = None;
                for (phrase, value) in tokens {
                    if *phrase {
                        let hay = normalized.get_or_insert_with(|| normalize(text));
                        let needle = normalize(value);
                        if needle.is_empty() {
                            continue;
                        }
                        let idx = hay.find(&needle)?;
                        total += hay[..idx].chars().count() as f64 * 0.1;
                    } else {
                        total += pi_tui::fuzzy::fuzzy_match(value, text)?;
                    }
                }
                Some(total)
            }
        }
    }
}

/// pi's `formatSessionDate`: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y`.
pub(crate) fn session_age(d: Duration) -> String {
    let mins = d.as_secs() / 60;
    let hours = mins / 60;
    let days = hours / 24;
    match () {
        _ if mins < 1 => "now".into(),
        _ if mins < 60 => format!("{mins}m"),
        _ if hours < 24 => format!("{hours}h"),
        _ if days < 7 => format!("{days}d"),
        _ if days < 30 => format!("{}w", days / 7),
        _ if days < 365 => format!("{}mo", days / 30),
        _ => format!("{}y", days / 365),
    }
}

fn user_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_queries_as_pi_parses_them() {
        let text = "id1 Named gamma gamma   node  cve fix /w";
        assert!(SessionQuery::parse("re:GAM+A").score(text).is_some());
        assert!(SessionQuery::parse("re:^zzz").score(text).is_none());
        assert!(SessionQuery::parse("re:(").score(text).is_none());
        assert!(SessionQuery::parse("re:").score(text).is_none());
        assert!(SessionQuery::parse("\"node cve\" gm").score(text).is_some());
        assert!(SessionQuery::parse("\"cve node\"").score(text).is_none());
        // Unbalanced quotes: plain words, the quote kept in the word (as pi does).
        match SessionQuery::parse("\"node cve") {
            SessionQuery::Tokens(t) => {
                assert_eq!(t, [(false, "\"node".to_owned()), (false, "cve".to_owned())])
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(SessionQuery::parse("").score(text), Some(0.0));
    }

    #[test]
    fn name_and_first_message_from_the_head() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.jsonl");
        std::fs::write(
            &p,
            concat!(
                "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
                "not json\n",
                "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\\n  fix the parser\\nplease\"}],\"timestamp\":1}}\n",
                "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"second\",\"timestamp\":2}}\n",
                "{\"type\":\"session_info\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"t\",\"name\":\"Parser work\"}\n",
            ),
        )
        .unwrap();
        assert_eq!(
            summary(&p),
            (Some("Parser work".into()), Some("fix the parser".into()))
        );
        assert_eq!(summary(&d.path().join("missing")), (None, None));
    }
}
