// See fuzz.py.
import { readFileSync, writeFileSync } from "node:fs";
const { parseStreamingJson } = await import(`${process.env.PI_AI}/dist/utils/json-parse.js`);
const inputs = JSON.parse(readFileSync("/tmp/partial-json-fuzz-inputs.json", "utf8"));
const lines = inputs.map((text) => JSON.stringify({ text, pi: parseStreamingJson(text) }));
writeFileSync("lenient-fuzz.jsonl", lines.join("\n") + "\n");
