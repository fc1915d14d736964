import { createReadTool } from "/root/.cache/pi-reference/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/read.js";
import { createLsTool } from "/root/.cache/pi-reference/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/ls.js";
import { mkdtempSync, writeFileSync, mkdirSync } from "fs";
import { join } from "path";
const L = (n, f) => Array.from({length:n}, (_, i) => f(i + 1)).join("\n");
const files = {
  "small.txt": "a\nb\nc\n",
  "lines.txt": L(2100, i => `row ${i}`),
  "bytes.txt": L(300, i => `${i}:` + "é".repeat(150)),
  "wide.txt": "x".repeat(60000) + "\nshort\n",
  "empty.txt": "",
  "crlf.txt": "a\r\nb\r\n",
  "bad.txt": Buffer.from([0x61, 0xff, 0xfe, 0x0a, 0x62]),
};
const reads = [
  {path:"small.txt"}, {path:"small.txt", offset:2}, {path:"small.txt", offset:4}, {path:"small.txt", offset:5},
  {path:"small.txt", limit:1}, {path:"small.txt", limit:0}, {path:"small.txt", offset:-3}, {path:"small.txt", offset:2, limit:100},
  {path:"lines.txt"}, {path:"lines.txt", offset:2001}, {path:"lines.txt", offset:50, limit:2000}, {path:"lines.txt", limit:2050},
  {path:"bytes.txt"}, {path:"bytes.txt", offset:200, limit:10},
  {path:"wide.txt"}, {path:"wide.txt", offset:2}, {path:"empty.txt"}, {path:"empty.txt", offset:1}, {path:"empty.txt", offset:2},
  {path:"crlf.txt"}, {path:"bad.txt"}, {path:"@small.txt"}, {path:"missing.txt"},
];
const dir = mkdtempSync("/tmp/pi-read-ref-");
for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
const tool = createReadTool(dir);
const out = { files: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString("base64")])), reads: [], ls: [] };
const clean = (s) => s.split(dir).join("<DIR>");
for (const args of reads) {
  let r, e; try { r = await tool.execute("id", args); } catch (x) { e = x.message; }
  out.reads.push({ args, error: e ? clean(e) : null, content: r ? r.content : null, details: r ? (r.details ?? null) : null });
}
const lsDir = join(dir, "lsdir"); mkdirSync(lsDir);
for (let i = 0; i < 300; i++) writeFileSync(join(lsDir, `f${String(i).padStart(3, "0")}` + "z".repeat(200)), "");
mkdirSync(join(lsDir, "Sub"));
const ls = createLsTool(dir);
for (const args of [{path:"lsdir"}, {path:"lsdir", limit:5}, {path:"lsdir", limit:2.5}, {path:"lsdir", limit:0}, {path:""}, {path:"small.txt"}, {path:"nope"}, {path:"lsdir", limit:1000}]) {
  let r, e; try { r = await ls.execute("id", args); } catch (x) { e = x.message; }
  out.ls.push({ args, error: e ? clean(e) : null, content: r ? r.content : null, details: r ? (r.details ?? null) : null });
}
console.log(JSON.stringify(out));
