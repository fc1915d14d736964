//! What the session selector shows of each file without loading it: the session's name and
//! its first user message, read from the head of the file (at most [`HEAD_BYTES`]), and the
//! file's age.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// How much of a session file the selector reads.
pub const HEAD_BYTES: u64 = 256 * 1024;

/// The name (the last `session_info` name within the head) and the first user message's
/// text (its first line), when the head has them.
pub fn summary(path: &Path) -> (Option<String>, Option<String>) {
    let (name, first, _) = summary_with_count(path);
    (name, first)
}

/// [`summary`] and the number of message entries within the head (pi's `messageCount`).
pub fn summary_with_count(path: &Path) -> (Option<String>, Option<String>, usize) {
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

/// pi's `formatSessionDate`: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y`.
pub fn session_age(d: Duration) -> String {
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

/// `just now`, `5m ago`, `3h ago`, `2d ago`.
pub fn age(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => "just now".into(),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn ages() {
        assert_eq!(age(Duration::from_secs(5)), "just now");
        assert_eq!(age(Duration::from_secs(125)), "2m ago");
        assert_eq!(age(Duration::from_secs(7300)), "2h ago");
        assert_eq!(age(Duration::from_secs(200_000)), "2d ago");
    }
}
