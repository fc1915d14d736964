//! Loading `replay_server.py` scripts (`script.json` of the conformance scenarios).
//!
//! A script is a list of entries, or `{"responses": [...], "delay_ms"?: n}`. Entries:
//! `{"sse": "<file>"}` streams the file (relative to the script) as `text/event-stream`;
//! `{"status": n, "body": <JSON or string>}` answers at once; optional `status`,
//! `headers`, `delay_ms` (pause before each SSE event; default the script's `delay_ms`,
//! else 5 ms, as the Python server) and `disconnect_after_bytes`.

use std::io;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::Reply;

/// The Python server's default pause before each SSE event, in ms.
pub const SCRIPT_DEFAULT_DELAY_MS: u64 = 5;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Reply {
    /// Loads the replies of a `replay_server.py` script file.
    pub fn load_script(path: &Path) -> io::Result<Vec<Reply>> {
        let text = std::fs::read_to_string(path)?;
        let script: Value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Reply::from_script(&script, dir)
    }

    /// The replies of a parsed script whose SSE files live in `dir`.
    pub fn from_script(script: &Value, dir: &Path) -> io::Result<Vec<Reply>> {
        let (entries, default_delay) = match script {
            Value::Array(entries) => (entries.as_slice(), SCRIPT_DEFAULT_DELAY_MS),
            Value::Object(map) => (
                map.get("responses")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice),
                map.get("delay_ms")
                    .and_then(Value::as_u64)
                    .unwrap_or(SCRIPT_DEFAULT_DELAY_MS),
            ),
            _ => return Err(invalid("a script is a list or an object".into())),
        };
        entries
            .iter()
            .map(|entry| Reply::from_script_entry(entry, dir, default_delay))
            .collect()
    }

    fn from_script_entry(entry: &Value, dir: &Path, default_delay_ms: u64) -> io::Result<Reply> {
        let status = entry
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(200);
        let mut reply = match entry.get("sse").and_then(Value::as_str) {
            Some(file) => {
                let delay = entry
                    .get("delay_ms")
                    .and_then(Value::as_u64)
                    .unwrap_or(default_delay_ms);
                Reply::sse(std::fs::read(dir.join(file))?)
                    .with_status(status)
                    .event_delay(Duration::from_millis(delay))
            }
            None => match entry.get("body") {
                Some(body @ (Value::Object(_) | Value::Array(_))) => Reply::json(status, body),
                Some(Value::String(s)) => Reply::text(status, s),
                Some(other) => Reply::text(status, &other.to_string()),
                None => Reply::text(status, ""),
            },
        };
        if let Some(headers) = entry.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                let value = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                reply = reply.header(name, &value);
            }
        }
        if let Some(n) = entry.get("disconnect_after_bytes").and_then(Value::as_u64) {
            reply = reply.disconnect_after_bytes(usize::try_from(n).unwrap_or(usize::MAX));
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ReplayServer;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn scenario_scripts_replay_in_order() {
        let dir = std::env::temp_dir().join(format!("pi-ai-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("02-text.sse"), "data: {\"x\":1}\n\n").unwrap();
        let script = json!({
            "delay_ms": 0,
            "responses": [
                {"status": 500, "body": {"error": {"message": "server error"}}, "headers": {"retry-after": 1}},
                {"sse": "02-text.sse"}
            ]
        });
        std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
        let replies = Reply::load_script(&dir.join("script.json")).unwrap();
        assert_eq!(replies.len(), 2);
        let (addr, _handle) = ReplayServer::start(replies).await.unwrap();
        let mut outputs = Vec::new();
        for _ in 0..2 {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(b"POST /chat/completions HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            outputs.push(out);
        }
        assert!(outputs[0].starts_with("HTTP/1.1 500 "));
        assert!(outputs[0].contains("retry-after: 1\r\n"));
        assert!(outputs[0].ends_with("{\"error\":{\"message\":\"server error\"}}"));
        assert!(outputs[1].starts_with("HTTP/1.1 200 OK"));
        assert!(outputs[1].ends_with("f\r\ndata: {\"x\":1}\n\n\r\n0\r\n\r\n"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(Reply::from_script(&json!("nope"), &dir).is_err());
    }
}
