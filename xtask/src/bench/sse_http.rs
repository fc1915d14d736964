//! A minimal HTTP/1.1 server for the workloads that need thousands of model replies: each
//! request's body goes to a function that returns the SSE reply, sent in one write with a
//! `content-length` (keep-alive, no Nagle delay). Unlike the test kit's replay server it records
//! nothing, so its memory does not grow with the run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

/// Appends one SSE event (`event:` and `data:` lines).
pub fn sse_event(out: &mut String, name: &str, data: &Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// What answers a request: its body and its number (from 0) → the SSE body.
pub type Answer = dyn Fn(&[u8], usize) -> String + Send + Sync;

/// Starts the server on 127.0.0.1 and returns its port; it runs until the process ends.
///
/// Errors: the socket could not be bound.
pub fn serve(answer: Arc<Answer>) -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let seq = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (answer, seq) = (answer.clone(), seq.clone());
            std::thread::spawn(move || connection(stream, &*answer, &seq));
        }
    });
    Ok(port)
}

fn connection(stream: TcpStream, answer: &Answer, seq: &AtomicUsize) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    let _ = writer.set_nodelay(true);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let sse = answer(&body, seq.fetch_add(1, Ordering::Relaxed));
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}",
            sse.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// An Anthropic Messages SSE reply reporting `input_tokens`, with `blocks` (`{"type":"text",
/// "text"}` or `{"type":"tool_use","id","name","input"}`, each streamed as one delta) and the
/// `stop` reason (`end_turn`, `tool_use`).
pub fn anthropic_reply(input_tokens: usize, blocks: &[Value], stop: &str) -> String {
    let mut s = String::with_capacity(512 + blocks.len() * 400);
    sse_event(
        &mut s,
        "message_start",
        &json!({"type":"message_start","message":{"id":"msg_bench","type":"message",
            "role":"assistant","model":"replay-model","content":[],"stop_reason":null,
            "usage":{"input_tokens":input_tokens,"output_tokens":1}}}),
    );
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            (
                json!({"type":"tool_use","id":block["id"],"name":block["name"],"input":{}}),
                json!({"type":"input_json_delta","partial_json":block["input"].to_string()}),
            )
        } else {
            (
                json!({"type":"text","text":""}),
                json!({"type":"text_delta","text":block["text"]}),
            )
        };
        sse_event(
            &mut s,
            "content_block_start",
            &json!({"type":"content_block_start","index":index,"content_block":start}),
        );
        sse_event(
            &mut s,
            "content_block_delta",
            &json!({"type":"content_block_delta","index":index,"delta":delta}),
        );
        sse_event(
            &mut s,
            "content_block_stop",
            &json!({"type":"content_block_stop","index":index}),
        );
    }
    sse_event(
        &mut s,
        "message_delta",
        &json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},
            "usage":{"output_tokens":20}}),
    );
    sse_event(&mut s, "message_stop", &json!({"type":"message_stop"}));
    s
}

/// Writes `<root>/agent/models.json` (one `replay-anthropic` model, `replay-model`, with this
/// context window, at the server on `port`) and `<root>/agent/settings.json` (auto-compaction
/// as given, retries off).
///
/// Errors: a file could not be written.
pub fn write_agent_config(
    root: &Path,
    port: u16,
    context_window: u64,
    compaction: bool,
) -> Result<(), String> {
    let models = json!({"providers": {"replay-anthropic": {
        "baseUrl": format!("http://127.0.0.1:{port}"), "api": "anthropic-messages",
        "apiKey": "replay-test-key",
        "models": [{"id": "replay-model", "reasoning": false,
            "contextWindow": context_window, "maxTokens": 4096}]}}});
    std::fs::write(root.join("agent/models.json"), models.to_string())
        .map_err(|e| e.to_string())?;
    let settings = json!({"compaction": {"enabled": compaction}, "retry": {"enabled": false}});
    std::fs::write(root.join("agent/settings.json"), settings.to_string())
        .map_err(|e| e.to_string())
}
