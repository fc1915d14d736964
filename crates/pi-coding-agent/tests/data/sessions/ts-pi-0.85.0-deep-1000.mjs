// Writes ts-pi-0.85.0-deep-1000.jsonl with the TypeScript pi's own SessionManager (pi 0.85.0,
// installed by /work/shared/tools/install-peer.sh): a tool call whose arguments nest 1,000
// levels, its result carrying an image, and a custom entry whose data nests 1,000 levels.
// Run: node ts-pi-0.85.0-deep-1000.mjs (from this directory).
import { SessionManager } from "/root/.cache/pi-reference/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

const dir = mkdtempSync(join(tmpdir(), "pi-deep-"));
const sm = SessionManager.create("/w", dir);
let deep = 1;
for (let i = 0; i < 999; i++) deep = { a: deep };
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
sm.appendMessage({ role: "user", content: [{ type: "text", text: "go deep" }], timestamp: 1 });
sm.appendMessage({ role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "read",
  arguments: { deep } }], api: "anthropic-messages", provider: "anthropic", model: "m", usage,
  stopReason: "toolUse", timestamp: 2 });
// A 1×1 PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "read",
  content: [{ type: "text", text: "Read image file [image/png]" }, { type: "image", data: png, mimeType: "image/png" }],
  isError: false, timestamp: 3 });
let data = [];
for (let i = 0; i < 999; i++) data = [data];
sm.appendCustomEntry("deep-data", data);
const file = readdirSync(dir).find((n) => n.endsWith(".jsonl"));
writeFileSync("ts-pi-0.85.0-deep-1000.jsonl", readFileSync(join(dir, file)));
