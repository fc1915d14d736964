// Regenerates reference-prefixes.jsonl: pi 0.85.1's parseStreamingJson on every prefix of each
// text below. Run from this directory with the installed reference:
//   PI_AI=~/.cache/pi-reference/node_modules/@earendil-works/pi-ai node generate.mjs
// Each line: {"text": <full text>, "cut": <UTF-16 length of the prefix>, "pi": <result>}.
// Prefixes ending inside a surrogate pair are skipped (Rust strings cannot split there).
import { writeFileSync } from "node:fs";
const { parseStreamingJson } = await import(`${process.env.PI_AI}/dist/utils/json-parse.js`);

const texts = [
  '{"path":"/tmp/notes.txt","content":"line 1\\nline 2\\nline 3"}',
  '{"command": "ls -la", "timeout": 30}',
  '{"answers": [{"label": "Capital", "answer": "Mexico City."}, {"label": "W", "answer": "cu"}]}',
  '{\n  "a": [1, -2.5, 3e2, -0.5E-3, 0],\n  "b": {"c": [true, false, null]},\n  "d": ""\n}',
  '{"q":"say \\"hi\\" \\\\ \\/ \\b\\f\\r\\t","u":"\\u00e9\\u4e2d\\ud83d\\ude00!"}',
  '{"emoji":"24°C 😀 ok","nested":{"deep":{"deeper":[[[],[1]],{}]}}}',
  '{"n": 12345678, "f": 1.25, "e": 1e5, "neg": -7, "z": 0.0}',
  '{"a":1,"a":"dup","b":[{"x":null},{"y":true}]}',
  '{"raw":"line1\nline2\ttab","ok":1}',
  '{"bad":"C:\\Users\\x","more":2}',
  '{"a":"x"}{"b":2}',
  '{"lone":"\\ud83d","after":1}',
  '[1, "two", {"three": 3}]',
  '{"k" : [ "v" , 2 ] , "m" : { } }',
];
const lines = [];
for (const text of texts) {
  for (let cut = 0; cut <= text.length; cut++) {
    const code = text.charCodeAt(cut - 1);
    if (cut > 0 && cut < text.length && code >= 0xd800 && code <= 0xdbff) continue;
    const prefix = text.slice(0, cut);
    lines.push(JSON.stringify({ text, cut, pi: parseStreamingJson(prefix) }));
  }
}
writeFileSync("reference-prefixes.jsonl", lines.join("\n") + "\n");
