import { createEditTool } from "/root/.cache/pi-reference/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/edit.js";
import { mkdtempSync, writeFileSync, readFileSync } from "fs";
import { join } from "path";
const inputs = [
  ["a\r\nb\r\nc\r\n", [{oldText:"b\n", newText:"B\nB2\n"}]],
  ["\uFEFFx = 1;\ny = 2;\n", [{oldText:"y = 2;", newText:"y = 3;"}]],
  ["if (a) {\n    f(\u201Cq\u201D);   \n}\n", [{oldText:"f(\"q\");\n}", newText:"g();\n}"}]],
  ["a  \nb  \na  \n", [{oldText:"a\nb", newText:"X"}]],
  ["one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n", [{oldText:"two\n", newText:""}, {oldText:"eleven", newText:"ELEVEN"}]],
  ["x\n", [{oldText:"x\n", newText:"x\n"}]],
  ["x y x\n", [{oldText:"x", newText:"z"}]],
  ["tab\there\u00A0 \nend", [{oldText:"tab\there \nend", newText:"done"}]],
  ["α\u2014β\n\u3000indent\n", [{oldText:"α-β\n indent", newText:"ab\nindent"}]],
  ["same\nsame\n", [{oldText:"same\n", newText:"S\n"}, {oldText:"zzz", newText:"q"}]],
  ["k1\nk2\nk3\n", [{oldText:"k1\nk2", newText:"A"}, {oldText:"k2\nk3", newText:"B"}]],
  ["no newline at end", [{oldText:"end", newText:"END\nmore"}]],
  ["\r\n\r\nx\r\n", [{oldText:"\nx", newText:"\ny"}]],
  ["mixed\nline\r\nend\r\n", [{oldText:"line\nend", newText:"L\nE"}]],
  ["ＡＢＣ\n", [{oldText:"ABC", newText:"abc"}]],
];
const dir = mkdtempSync("/tmp/pi-edit-ref-");
const tool = createEditTool(dir);
const out = [];
for (const [content, edits] of inputs) {
  writeFileSync(join(dir, "f.txt"), content);
  let result, error;
  try { result = await tool.execute("id", { path: "f.txt", edits }); } catch (e) { error = e.message; }
  out.push({ content, edits, error: error ?? null, text: result ? result.content[0].text : null, details: result ? result.details : null, after: readFileSync(join(dir, "f.txt"), "utf-8") });
}
console.log(JSON.stringify(out, null, 1));
