import { generateDiffString, generateUnifiedPatch } from "/root/.cache/pi-reference/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/edit-diff.js";
let seed = 12345;
function rnd(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }
const words = ["alpha","beta","gamma","delta","","  indented","}","{","return x;","// c"];
const cases = [];
for (let k = 0; k < 60; k++) {
  const n = 1 + rnd(30);
  const old = [];
  for (let i = 0; i < n; i++) old.push(words[rnd(words.length)] + (rnd(3)===0 ? String(i) : ""));
  const nw = old.slice();
  const edits = 1 + rnd(4);
  for (let e = 0; e < edits; e++) {
    const op = rnd(3), at = rnd(nw.length + 1);
    if (op === 0) nw.splice(at, 0, "NEW " + e);
    else if (op === 1 && nw.length > 1) nw.splice(Math.min(at, nw.length - 1), 1);
    else nw[Math.min(at, nw.length - 1)] = "CHANGED " + e;
  }
  const oldT = old.join("\n") + (rnd(2) ? "\n" : "");
  const newT = nw.join("\n") + (rnd(2) ? "\n" : "");
  if (oldT === newT) continue;
  const d = generateDiffString(oldT, newT);
  cases.push({ old: oldT, new: newT, diff: d.diff, firstChangedLine: d.firstChangedLine ?? null, patch: generateUnifiedPatch("f.txt", oldT, newT) });
}
console.log(JSON.stringify(cases, null, 1));
