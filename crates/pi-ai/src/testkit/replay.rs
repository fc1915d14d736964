//! [`ReplayServer`]: scripted HTTP/1.1 replies on a local socket.
//!
//! Mirrors `conformance/replay_server.py`: the N-th request (0-based, whatever the route or
//! method) gets the N-th [`Reply`]; SSE bodies are sent chunked (`Transfer-Encoding:
//! chunked`), split into events on blank lines so a delay can precede each event;
//! `disconnect_after_bytes` cuts the body without the final chunk; an exhausted script
//! answers `400 {"error":{"type":"invalid_request_error","message":"replay script exhausted
//! at request #N"}}`. Additions for transport tests: chunk sizes within an event, a stall
//! after N body bytes, a reset or a stall before the headers, and a record of which
//! connections the client closed early. Unlike the Python server the default per-event
//! delay is 0.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Largest request head accepted, in bytes.
const MAX_HEAD: usize = 1 << 20;

#[derive(Clone, Debug)]
enum Body {
    /// Streamed chunked, event by event.
    Sse(Vec<u8>),
    /// An AWS binary event stream, streamed chunked message by message.
    EventStream(Vec<u8>),
    /// Sent at once with `Content-Length`.
    Fixed {
        content_type: String,
        bytes: Vec<u8>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum BeforeHeaders {
    Reset,
    Stall,
}

/// One scripted reply. Build with [`Reply::sse`], [`Reply::json`], [`Reply::text`],
/// [`Reply::reset_before_headers`] or [`Reply::stall_before_headers`], then adjust.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    chunk_size: Option<usize>,
    event_delay: Duration,
    disconnect_after_bytes: Option<usize>,
    stall_after_bytes: Option<usize>,
    before_headers: Option<BeforeHeaders>,
}

impl Reply {
    fn new(status: u16, body: Body) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body,
            chunk_size: None,
            event_delay: Duration::ZERO,
            disconnect_after_bytes: None,
            stall_after_bytes: None,
            before_headers: None,
        }
    }

    /// `200 text/event-stream` streaming `body` byte for byte.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, Body::Sse(body.into()))
    }

    /// `200 application/vnd.amazon.eventstream` streaming `body` (binary event-stream
    /// messages, e.g. from [`super::EventStreamBuilder`]) byte for byte; chunking, delays,
    /// cuts and stalls apply per message as they do per SSE event.
    pub fn event_stream(body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, Body::EventStream(body.into()))
    }

    /// A JSON reply with `status`.
    pub fn json(status: u16, body: &Value) -> Self {
        let bytes = crate::json::to_vec(body).unwrap_or_default();
        Self::new(
            status,
            Body::Fixed {
                content_type: "application/json".into(),
                bytes,
            },
        )
    }

    /// A `text/plain` reply with `status`.
    pub fn text(status: u16, body: &str) -> Self {
        Self::new(
            status,
            Body::Fixed {
                content_type: "text/plain".into(),
                bytes: body.as_bytes().to_vec(),
            },
        )
    }

    /// Resets the connection (TCP RST) after reading the request, before any header.
    pub fn reset_before_headers() -> Self {
        let mut reply = Self::text(500, "");
        reply.before_headers = Some(BeforeHeaders::Reset);
        reply
    }

    /// Reads the request and then sends nothing, holding the connection open.
    pub fn stall_before_headers() -> Self {
        let mut reply = Self::text(500, "");
        reply.before_headers = Some(BeforeHeaders::Stall);
        reply
    }

    /// Replaces the status (an SSE body with status 500, say).
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sends each SSE event in HTTP chunks of at most `n` bytes (default: one per event).
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.chunk_size = Some(n.max(1));
        self
    }

    /// Pauses before each SSE event.
    pub fn event_delay(mut self, delay: Duration) -> Self {
        self.event_delay = delay;
        self
    }

    /// Closes the connection after `n` body bytes, without the final chunk.
    pub fn disconnect_after_bytes(mut self, n: usize) -> Self {
        self.disconnect_after_bytes = Some(n);
        self
    }

    /// Stops sending after `n` body bytes and holds the connection open.
    pub fn stall_after_bytes(mut self, n: usize) -> Self {
        self.stall_after_bytes = Some(n);
        self
    }
}

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// 0-based arrival number.
    pub seq: usize,
    /// `POST`, `GET`, …
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Query string without `?` (empty when none).
    pub query: String,
    /// Headers with lower-cased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// Raw body (chunked bodies decoded).
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    pub fn body_json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

struct Shared {
    script: Vec<Reply>,
    next: AtomicUsize,
    log: Mutex<Vec<RecordedRequest>>,
    closed: Mutex<HashSet<usize>>,
    changed: Notify,
    shutdown: CancellationToken,
}

use crate::sync::lock;

impl Shared {
    fn mark_closed(&self, seq: usize) {
        lock(&self.closed).insert(seq);
        self.changed.notify_waiters();
    }
}

/// The scripted server.
pub struct ReplayServer;

impl ReplayServer {
    /// Binds `127.0.0.1:0` and serves `script` on a task of the current runtime until the
    /// handle is dropped.
    pub async fn start(script: Vec<Reply>) -> std::io::Result<(SocketAddr, ReplayHandle)> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script,
            next: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            closed: Mutex::new(HashSet::new()),
            changed: Notify::new(),
            shutdown: CancellationToken::new(),
        });
        let accept_shared = shared.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = accept_shared.shutdown.cancelled() => return,
                    a = listener.accept() => a,
                };
                if let Ok((socket, _)) = accepted {
                    tokio::spawn(serve(socket, accept_shared.clone()));
                }
            }
        });
        Ok((addr, ReplayHandle { addr, shared }))
    }
}

/// Access to a running [`ReplayServer`]; dropping it stops the server and its connections.
pub struct ReplayHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl ReplayHandle {
    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.log).clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        lock(&self.shared.log).len()
    }

    /// Whether the client closed request `seq`'s connection before the reply was complete.
    pub fn client_closed(&self, seq: usize) -> bool {
        lock(&self.shared.closed).contains(&seq)
    }

    /// Waits until the client closes request `seq`'s connection before the reply is
    /// complete (detected while the server stalls or writes).
    pub async fn wait_client_closed(&self, seq: usize) {
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.client_closed(seq) {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for ReplayHandle {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

/// A parsed request head plus body.
struct Incoming {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn serve(mut socket: TcpStream, shared: Arc<Shared>) {
    let request = tokio::select! {
        _ = shared.shutdown.cancelled() => return,
        r = read_request(&mut socket) => r,
    };
    let Some(request) = request else { return };
    let seq = shared.next.fetch_add(1, Ordering::SeqCst);
    let (path, query) = match request.target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (request.target.clone(), String::new()),
    };
    lock(&shared.log).push(RecordedRequest {
        seq,
        method: request.method,
        path,
        query,
        headers: request.headers,
        body: request.body,
    });
    let Some(reply) = shared.script.get(seq).cloned() else {
        let message = format!("replay script exhausted at request #{seq}");
        let body = json!({"error": {"type": "invalid_request_error", "message": message}});
        let _ = send_fixed(&mut socket, &Reply::json(400, &body)).await;
        return;
    };
    tokio::select! {
        _ = shared.shutdown.cancelled() => {}
        _ = send_reply(&mut socket, &reply, &shared, seq) => {}
    }
}

async fn send_reply(socket: &mut TcpStream, reply: &Reply, shared: &Shared, seq: usize) {
    match reply.before_headers {
        Some(BeforeHeaders::Reset) => {
            // Linger 0: closing sends RST instead of FIN.
            #[allow(deprecated)]
            let _ = socket.set_linger(Some(Duration::ZERO));
            return;
        }
        Some(BeforeHeaders::Stall) => return hold_open(socket, shared, seq).await,
        None => {}
    }
    let events = match &reply.body {
        Body::Fixed { .. } => {
            if send_fixed(socket, reply).await.is_err() {
                shared.mark_closed(seq);
            }
            return;
        }
        Body::Sse(bytes) => split_events(bytes),
        Body::EventStream(bytes) => split_frames(bytes),
    };
    let content_type = match &reply.body {
        Body::EventStream(_) => "application/vnd.amazon.eventstream",
        _ => "text/event-stream",
    };
    let mut head = status_line(reply.status);
    head.push_str(&format!(
        "Content-Type: {content_type}\r\nCache-Control: no-cache\r\n"
    ));
    push_headers(&mut head, &reply.headers);
    head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    if write_all(socket, head.as_bytes()).await.is_err() {
        return shared.mark_closed(seq);
    }
    let mut cut_budget = reply.disconnect_after_bytes;
    let mut stall_budget = reply.stall_after_bytes;
    for event in events {
        if !reply.event_delay.is_zero() {
            tokio::time::sleep(reply.event_delay).await;
        }
        let mut event = event;
        for budget in [&mut cut_budget, &mut stall_budget].into_iter().flatten() {
            event = &event[..event.len().min(*budget)];
        }
        for budget in [&mut cut_budget, &mut stall_budget].into_iter().flatten() {
            *budget -= event.len();
        }
        for piece in event.chunks(reply.chunk_size.unwrap_or(usize::MAX).max(1)) {
            let mut frame = format!("{:x}\r\n", piece.len()).into_bytes();
            frame.extend_from_slice(piece);
            frame.extend_from_slice(b"\r\n");
            if write_all(socket, &frame).await.is_err() {
                return shared.mark_closed(seq);
            }
        }
        if cut_budget == Some(0) {
            let _ = socket.shutdown().await;
            return;
        }
        if stall_budget == Some(0) {
            return hold_open(socket, shared, seq).await;
        }
    }
    if write_all(socket, b"0\r\n\r\n").await.is_err() {
        return shared.mark_closed(seq);
    }
    let _ = socket.shutdown().await;
}

/// Sends nothing more; returns when the client closes (recording it) or on shutdown.
async fn hold_open(socket: &mut TcpStream, shared: &Shared, seq: usize) {
    let mut buf = [0u8; 1024];
    loop {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return shared.mark_closed(seq),
            Ok(_) => {}
        }
    }
}

async fn send_fixed(socket: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let Body::Fixed {
        content_type,
        bytes,
    } = &reply.body
    else {
        return Ok(());
    };
    let mut head = status_line(reply.status);
    if !reply
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    push_headers(&mut head, &reply.headers);
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        bytes.len()
    ));
    let mut data = head.into_bytes();
    data.extend_from_slice(bytes);
    write_all(socket, &data).await?;
    socket.shutdown().await
}

fn status_line(status: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    format!("HTTP/1.1 {status} {reason}\r\n")
}

fn push_headers(head: &mut String, headers: &[(String, String)]) {
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
}

async fn write_all(socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    socket.write_all(bytes).await?;
    socket.flush().await
}

/// Splits raw SSE bytes into events, each keeping its trailing blank line (`\r\n\r\n`,
/// `\n\n` or `\r\r`, tried in that order at each position, as the Python server's regex).
/// Splits an event-stream body at message boundaries (each message starts with its total
/// length); a tail shorter than its stated length is the last piece.
fn split_frames(data: &[u8]) -> Vec<&[u8]> {
    let mut frames = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let stated = rest
            .get(..4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .unwrap_or(rest.len());
        let (frame, tail) = rest.split_at(stated.clamp(1, rest.len()));
        frames.push(frame);
        rest = tail;
    }
    frames
}

fn split_events(data: &[u8]) -> Vec<&[u8]> {
    let mut events = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        let rest = &data[i..];
        let sep = if rest.starts_with(b"\r\n\r\n") {
            4
        } else if rest.starts_with(b"\n\n") || rest.starts_with(b"\r\r") {
            2
        } else {
            0
        };
        if sep > 0 {
            events.push(&data[start..i + sep]);
            i += sep;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < data.len() {
        events.push(&data[start..]);
    }
    events
}

/// Reads one request (head + body by `Content-Length` or chunked); `None` on EOF or junk.
async fn read_request(socket: &mut TcpStream) -> Option<Incoming> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD || read_more(socket, &mut buf).await == 0 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = buf.split_off(head_end + 4);
    let get = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let body = if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(socket, rest).await?
    } else {
        let len: usize = get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while rest.len() < len {
            if read_more(socket, &mut rest).await == 0 {
                return None;
            }
        }
        rest.truncate(len);
        rest
    };
    Some(Incoming {
        method,
        target,
        headers,
        body,
    })
}

async fn read_chunked(socket: &mut TcpStream, mut buf: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(pos) = find(&buf, b"\r\n") {
                break pos;
            }
            if read_more(socket, &mut buf).await == 0 {
                return None;
            }
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size_hex = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).ok()?;
        buf.drain(..line_end + 2);
        while buf.len() < size + 2 {
            if read_more(socket, &mut buf).await == 0 {
                return None;
            }
        }
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

async fn read_more(socket: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 8192];
    match socket.read(&mut chunk).await {
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            n
        }
        Err(_) => 0,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_events_like_the_python_server() {
        let data = b"data: a\n\ndata: b\r\n\r\ndata: c\r\rtail";
        let events = split_events(data);
        assert_eq!(
            events,
            vec![
                &b"data: a\n\n"[..],
                &b"data: b\r\n\r\n"[..],
                &b"data: c\r\r"[..],
                &b"tail"[..]
            ]
        );
    }

    async fn raw_post(addr: SocketAddr, body: &str) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\nContent-Length: {}\r\n\r\n{}",
            body.len(),
            body
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn serves_the_script_in_order_then_reports_exhaustion() {
        let (addr, handle) = ReplayServer::start(vec![
            Reply::sse("data: 1\n\ndata: 2\n\n").chunk_size(4),
            Reply::json(429, &json!({"error": "slow"})).header("retry-after", "3"),
        ])
        .await
        .unwrap();
        let first = raw_post(addr, "{\"a\":1}").await;
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(first.contains("Transfer-Encoding: chunked"));
        // 9-byte events in 4-byte chunks.
        assert!(first.ends_with("4\r\ndata\r\n4\r\n: 1\n\r\n1\r\n\n\r\n4\r\ndata\r\n4\r\n: 2\n\r\n1\r\n\n\r\n0\r\n\r\n"), "{first}");
        let second = raw_post(addr, "").await;
        assert!(second.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(second.contains("retry-after: 3\r\n"));
        assert!(second.ends_with("{\"error\":\"slow\"}"));
        let third = raw_post(addr, "").await;
        assert!(third.starts_with("HTTP/1.1 400 Bad Request\r\n"));
        assert!(third.ends_with(
            "{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"replay script exhausted at request #2\"}}"
        ));
        let log = handle.requests();
        assert_eq!(log.len(), 3);
        assert_eq!(log[0].method, "POST");
        assert_eq!(log[0].path, "/v1/messages");
        assert_eq!(log[0].query, "beta=true");
        assert_eq!(log[0].header("x-api-key"), Some("k"));
        assert_eq!(log[0].body_json(), Some(json!({"a": 1})));
        assert_eq!(log[2].seq, 2);
    }

    #[tokio::test]
    async fn cuts_after_n_bytes_without_the_final_chunk() {
        let (addr, _handle) = ReplayServer::start(vec![
            Reply::sse("data: abc\n\ndata: def\n\n").disconnect_after_bytes(12),
        ])
        .await
        .unwrap();
        let out = raw_post(addr, "").await;
        assert!(out.ends_with("b\r\ndata: abc\n\n\r\n1\r\nd\r\n"), "{out}");
        assert!(!out.contains("0\r\n\r\n"));
    }

    #[tokio::test]
    async fn a_stall_notices_the_client_leaving() {
        let (addr, handle) = ReplayServer::start(vec![
            Reply::sse("data: abc\n\ndata: def\n\n").stall_after_bytes(11),
        ])
        .await
        .unwrap();
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            .await
            .unwrap();
        let mut buf = Vec::new();
        while !String::from_utf8_lossy(&buf).contains("data: abc") {
            let mut chunk = [0u8; 256];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "server closed during a stall");
            buf.extend_from_slice(&chunk[..n]);
        }
        assert!(!handle.client_closed(0));
        drop(s);
        handle.wait_client_closed(0).await;
        assert!(handle.client_closed(0));
    }
}
